/*
 * closefds_io.c — close_range(3, ~0U, 0) at start (as ssh, systemd and daemons
 * do), then the program's own input and output files land on fds 3 and 4 and
 * are copied byte by byte while the CPU burns.  Must hold: offsets, sizes and
 * checksums are as without the profiler (nothing reads or writes our fds).
 */
#include <linux/close_range.h>
#include <sys/syscall.h>

#include "copy_io.h"

int main(void)
{
	print_views("start");
	if (syscall(SYS_close_range, 3u, ~0u, 0u) < 0)
		die("close_range");
	print_fds("closed");
	copy_io_run();
	print_threads("end");
	print_signals("end");
	return 0;
}
