/*
 * sigkill — SIGKILLs itself after burning ≈ SCALE seconds of CPU in
 * before_kill(); nothing can run at exit, the samples must survive anyway.
 * Usage: sigkill [SCALE].
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "burn.h"

__attribute__((noinline)) void before_kill(uint64_t ns)
{
	BURN_CPU(ns);
}

int main(int argc, char **argv)
{
	double scale = burn_arg(argc, argv, 1, 1.0);

	before_kill((uint64_t)(scale * 1e9));
	printf("sigkill: killing myself\n");
	fflush(stdout);
	kill(getpid(), SIGKILL);
	return 0;
}
