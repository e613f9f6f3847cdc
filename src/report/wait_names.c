/*
 * wait_names.c — weak stand-ins for the names wait.h promises (analysis/
 * wait.c defines the real ones), so the writers link and their tests run in
 * a tree where the analysis is not built yet.  A strong definition wins at
 * link time; the strings are the ones wait.h documents.
 */
#include "wait.h"

__attribute__((weak)) const char *wait_activity_name(int act)
{
	static const char *const n[WAIT_ACT_N] = {
		"compute", "spin", "kernel", "allocator", "memcpy/memset", "start-up",
	};

	return act >= 0 && act < WAIT_ACT_N ? n[act] : "";
}

__attribute__((weak)) const char *wait_kind_name(int kind)
{
	static const char *const n[CBN_OFF_NKINDS] = {
		"other", "futex", "io", "poll", "sleep", "child", "fault", "runnable",
	};

	return kind >= 0 && kind < CBN_OFF_NKINDS ? n[kind] : "other";
}

__attribute__((weak)) const char *wait_verdict_name(int verdict)
{
	static const char *const n[] = {
		"", "compute-bound", "synchronization-bound", "I/O-bound", "allocator-bound",
		"start-up-bound", "serial", "idle", "system-bound",
	};

	return verdict >= 0 && verdict < (int)(sizeof(n) / sizeof(n[0])) ? n[verdict] : "";
}
