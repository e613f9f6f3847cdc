/*
 * auxv_walk.c — finds the auxiliary vector the way a runtime with its own
 * start does (Go's, in a program built with cgo: "failed to get system page
 * size" when it is not there): past argv, past the environment's NULL, in
 * the array the kernel put on the stack, after every constructor has run.
 * Then burns CPU.  Must hold: the vector found there is the one getauxval
 * answers from, the environment read from there has no variable the plain
 * run lacks, and the views are the same as without the profiler.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "hostile.h"

extern char **environ;

int main(int argc, char **argv)
{
	char **e = argv + argc + 1;
	int nenv = 0, nempty = 0, agree = 0, pairs = 0, pagesz = 0, odd = 0;

	print_views("start");
	for (; *e; e++) {
		nenv++;
		nempty += **e == '\0';
	}
	for (unsigned long *a = (unsigned long *)(e + 1); a[0] != AT_NULL && pairs < 256;
	     a += 2, pairs++) {
		odd += a[0] > 4096; /* a pointer where a type should be */
		if (a[0] == AT_PAGESZ)
			pagesz = (long)a[1] == getpagesize();
		if (a[0] == AT_PAGESZ || a[0] == AT_PHDR || a[0] == AT_ENTRY || a[0] == AT_RANDOM)
			agree += a[1] == getauxval(a[0]);
	}
	say("auxv: AT_PAGESZ %s, %d of 4 entries as getauxval, %d types out of range, %s\n",
	    pagesz ? "found" : "missing", agree, odd, pairs < 256 ? "ended" : "no AT_NULL");
	/* what the stack's array holds that environ does not: cleared entries only */
	int nenviron = 0;
	for (char **v = environ; *v; v++)
		nenviron++;
	say("env: %s\n", nenv - nempty == nenviron ? "the stack's entries are environ's"
						   : "the stack's entries differ from environ");
	burn_cpu_deep(0.4, 8);
	print_views("end");
	return 0;
}
