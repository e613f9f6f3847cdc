/*
 * mem_mremap.c — mremap with every flag: MAYMOVE growing a mapping,
 * FIXED to a chosen address, and DONTUNMAP with an address hint (the pages
 * move there and the old range stays mapped, empty).  Must hold: the same
 * results (addresses compared to the ones asked for, contents).  Before:
 * the hooks dropped the hint of MREMAP_DONTUNMAP.
 */
#include <sys/mman.h>

#include "hostile.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

int main(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *a, *b, *c, *hole, *d;

	burn_cpu_deep(0.3, 8);
	a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		die("mmap");
	memset(a, 'a', 4 * pg);
	b = mremap(a, 4 * pg, 64 * pg, MREMAP_MAYMOVE);
	say("MAYMOVE: %s, content kept: %s\n", b != MAP_FAILED ? "ok" : "failed",
	    b != MAP_FAILED && b[3 * pg] == 'a' ? "yes" : "no");
	/* a free range to move to */
	hole = mmap(NULL, 128 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap");
	munmap(hole, 128 * pg);
	c = mremap(b, 64 * pg, 64 * pg, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	say("FIXED: at the address asked: %s, content kept: %s\n", c == hole ? "yes" : "no",
	    c != MAP_FAILED && c[3 * pg] == 'a' ? "yes" : "no");
	hole = mmap(NULL, 16 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap");
	munmap(hole, 16 * pg);
	d = mremap(c, 4 * pg, 4 * pg, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, hole);
	if (d == MAP_FAILED) {
		say("DONTUNMAP: %s\n", strerrorname_np(errno));
	} else {
		say("DONTUNMAP: at the hint: %s, moved content: %s, old range empty: %s\n",
		    d == hole ? "yes" : "no", d[pg] == 'a' ? "yes" : "no", c[pg] == 0 ? "yes" : "no");
		munmap(d, 4 * pg);
	}
	munmap(c, 64 * pg);
	burn_cpu(0.1);
	return 0;
}
