/*
 * wait_names.c — the names of the waiting view's activities, off-CPU kinds
 * and verdicts (wait.h), static strings that the rules (wait_rules.c), the
 * run's verdict and every writer print.  Calls nothing.
 */
#include "wait.h"

const char *wait_activity_name(int act)
{
	static const char *const n[WAIT_ACT_N] = { "compute", "spin", "kernel", "allocator",
						   "memcpy/memset", "start-up" };

	return act >= 0 && act < WAIT_ACT_N ? n[act] : "";
}

const char *wait_kind_name(int kind)
{
	static const char *const n[CBN_OFF_NKINDS] = { "other", "futex", "io", "poll",
						       "sleep", "child", "fault", "runnable" };

	return kind >= 0 && kind < CBN_OFF_NKINDS ? n[kind] : "";
}

const char *wait_verdict_name(int verdict)
{
	static const char *const n[] = { "", "compute-bound", "synchronization-bound",
					 "I/O-bound", "allocator-bound", "start-up-bound",
					 "serial", "idle", "system-bound" };

	return verdict >= 0 && verdict < (int)(sizeof(n) / sizeof(n[0])) ? n[verdict] : "";
}
