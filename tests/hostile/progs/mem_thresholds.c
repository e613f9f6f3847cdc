/*
 * mem_thresholds.c — what glibc's malloc decides for itself must not change
 * under the allocation hooks: a 256 KiB block is mmapped (mallinfo2's
 * hblks counts it), a touched 4 MiB block is returned to the system when
 * freed (RSS drops), and a 1 MiB block after freeing a 2 MiB one is still
 * mmapped as long as the program never set M_MMAP_THRESHOLD.  Must hold:
 * the same output.  Before: the hooks' start-up probe freed blocks of 1 and
 * 8 MiB, which raised glibc's dynamic mmap and trim thresholds for the whole
 * run (no hblks, RSS kept).
 */
#include <malloc.h>

#include "hostile.h"

static long rss_kib(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &size, &res) != 2)
		die("statm");
	fclose(f);
	return res * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Through a volatile pointer: the compiler may drop a malloc whose block
 * is only freed, and a memset before a free. */
static void *(*volatile do_malloc)(size_t) = malloc;

static void touch(char *p, size_t n)
{
	volatile char *v = p;

	for (size_t i = 0; i < n; i += 4096)
		v[i] = 7;
}

int main(void)
{
	struct mallinfo2 a, b;
	char *p;
	long r0, r1, r2;

	burn_cpu_deep(0.3, 8);
	a = mallinfo2();
	p = do_malloc(256 << 10);
	b = mallinfo2();
	say("256 KiB block mmapped: %s\n", b.hblks == a.hblks + 1 ? "yes" : "no");
	free(p);
	r0 = rss_kib();
	p = do_malloc(4 << 20);
	touch(p, 4 << 20);
	r1 = rss_kib();
	free(p);
	r2 = rss_kib();
	say("4 MiB touched: RSS grew by >= 3 MiB: %s, back after free: %s\n",
	    r1 - r0 >= 3 * 1024 ? "yes" : "no", r1 - r2 >= 3 * 1024 ? "yes" : "no");
	p = do_malloc(2 << 20);
	free(p);
	a = mallinfo2();
	p = do_malloc(1 << 20);
	b = mallinfo2();
	say("1 MiB after freeing 2 MiB mmapped: %s\n", b.hblks == a.hblks + 1 ? "yes" : "no");
	free(p);
	burn_cpu(0.1);
	return 0;
}
