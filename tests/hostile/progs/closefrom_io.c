/*
 * closefrom_io.c — a closefrom()-style loop: close(fd) for every fd from 3 up
 * to the soft RLIMIT_NOFILE (how older daemons and shells do it), then the
 * same byte-by-byte copy as closefds_io.c.  Must hold: offsets, sizes and
 * checksums are as without the profiler.
 */
#include "copy_io.h"

int main(void)
{
	struct rlimit r;
	long top;

	print_views("start");
	getrlimit(RLIMIT_NOFILE, &r);
	top = r.rlim_cur == RLIM_INFINITY || r.rlim_cur > 65536 ? 65536 : (long)r.rlim_cur;
	for (long fd = 3; fd < top; fd++)
		close((int)fd);
	print_fds("closed");
	copy_io_run();
	print_threads("end");
	print_signals("end");
	return 0;
}
