/*
 * hot.c — libhot.so, loaded at run time by dlopen_hot: hot_spin() burns the CPU
 * it is asked to, so samples land in a module that was not there at start-up.
 */
#include "burn.h"

__attribute__((noinline)) void hot_spin(double seconds)
{
	BURN_CPU(seconds * 1e9);
}
