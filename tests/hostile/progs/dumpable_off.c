/*
 * dumpable_off.c — prctl(PR_SET_DUMPABLE, 0) (what ssh-agent and password
 * managers do; /proc/self becomes root-owned), then burns CPU and reads its
 * own /proc views.  Must hold: the same as without the profiler.
 */
#include <sys/prctl.h>

#include "hostile.h"

int main(void)
{
	print_views("start");
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		die("prctl");
	burn_cpu_deep(0.4, 8);
	say("dumpable=%d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
	print_views("end");
	return 0;
}
