/*
 * rlimit_nofile.c N — lowers the soft RLIMIT_NOFILE to N (8 or 16), opens
 * /dev/null until EMFILE and burns CPU with every slot taken.  Must hold: the
 * program gets exactly as many fds, with the same numbers, as without the
 * profiler, and nothing breaks while no fd is left.
 */
#include <fcntl.h>

#include "hostile.h"

int main(int argc, char **argv)
{
	struct rlimit r;
	int fds[1024], n = 0, err = 0;
	char list[4096];
	size_t len = 0;

	if (argc != 2)
		die("usage: rlimit_nofile N");
	print_views("start");
	getrlimit(RLIMIT_NOFILE, &r);
	r.rlim_cur = (rlim_t)atoi(argv[1]);
	if (setrlimit(RLIMIT_NOFILE, &r) < 0)
		die("setrlimit");
	print_rlimit_nofile();
	while (n < 1024) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0) {
			err = errno;
			break;
		}
		fds[n++] = fd;
	}
	for (int i = 0; i < n; i++)
		len +=
		    (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", i ? "," : "", fds[i]);
	say("opened=%d fds=%s stopped_by=%s\n", n, n ? list : "none", strerrorname_np(err));
	/* Every slot is taken while the CPU burns. */
	burn_cpu_deep(0.5, 16);
	{
		int fd = open("/dev/null", O_RDONLY);

		say("after burn: open %s\n", fd < 0 ? strerrorname_np(errno) : "succeeded");
		if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	print_views("end");
	return 0;
}
