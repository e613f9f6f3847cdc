/*
 * crash_segv.c — writes a file, burns CPU, then writes through a null pointer.
 * Must hold: the process dies of SIGSEGV (status 139), the file is complete,
 * and everything printed before is there, as without the profiler.
 */
#include <fcntl.h>

#include "hostile.h"

int main(void)
{
	FILE *f;
	volatile int *volatile p = NULL;

	print_views("start");
	f = fopen("before_crash.txt", "w");
	if (!f)
		die("fopen");
	fprintf(f, "written before the crash\n");
	fclose(f);
	burn_cpu_deep(0.4, 8);
	say("crashing now\n");
	*p = 1;
	say("not reached\n");
	return 0;
}
