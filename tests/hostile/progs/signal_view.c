/*
 * signal_view.c — does nothing but burn CPU and look at its own signal state:
 * dispositions, blocked and pending sets, sigaltstack, and the SigBlk/SigIgn
 * lines of /proc/self/status.  Must hold: all as without the profiler (it
 * must not change what the program sees, not even in /proc).
 */
#include "hostile.h"

static void proc_sig_lines(const char *tag)
{
	char buf[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		die("fopen /proc/self/status");
	while (fgets(buf, sizeof(buf), f))
		if (!strncmp(buf, "SigBlk:", 7) || !strncmp(buf, "SigIgn:", 7))
			say("status[%s]: %s", tag, buf);
	fclose(f);
}

int main(void)
{
	print_views("start");
	proc_sig_lines("start");
	burn_cpu_deep(0.3, 8);
	print_signals("middle");
	burn_cpu(0.3);
	proc_sig_lines("end");
	print_views("end");
	return 0;
}
