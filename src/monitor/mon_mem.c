/*
 * mon_mem.c — the memory counters' timeline (--memory), from outside: every
 * CBN_MEM_COUNTER_NS, for each image whose allocation hooks run (header.mem
 * ON), one MEM_COUNTERS record in its side file: the resident bytes from
 * /proc/PID/statm (kept open here: the program's descriptor table never
 * sees it) and the header's exact counters, which the hooks keep in the
 * shared mapping.  The agent writes the first point (when the hooks start)
 * and the last (exit, exec) itself; the program break is in those two only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "mon_int.h"

static uint64_t mon_rss(struct mon_image *im)
{
	unsigned long size, res;
	char path[64], buf[128];
	ssize_t n;

	if (im->statm < 0) {
		snprintf(path, sizeof(path), "/proc/%u/statm", im->pid);
		im->statm = open(path, O_RDONLY | O_CLOEXEC);
		if (im->statm < 0)
			return 0;
	}
	n = pread(im->statm, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%lu %lu", &size, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void mon_mem_point(struct mon_image *im, uint64_t now)
{
	struct cbn_file_header *h = im->hdr;
	struct cbn_rec_mem_counters r;
	struct writer *w;
	uint64_t peak;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_MEM_COUNTERS;
	r.h.size = sizeof(r);
	r.ts = now;
	r.rss = mon_rss(im);
	if (!r.rss)
		return; /* gone (a zombie has no memory), or unreadable */
	r.host_live = atomic_load_explicit(&h->mem.host_live, memory_order_relaxed);
	r.mmap_live = atomic_load_explicit(&h->mem.mmap_live, memory_order_relaxed);
	r.allocs = atomic_load_explicit(&h->mem.allocs, memory_order_relaxed);
	r.frees = atomic_load_explicit(&h->mem.frees, memory_order_relaxed);
	r.alloc_bytes = atomic_load_explicit(&h->mem.alloc_bytes, memory_order_relaxed);
	peak = atomic_load(&h->mem.rss_peak);
	while (r.rss > peak && !atomic_compare_exchange_weak(&h->mem.rss_peak, &peak, r.rss))
		;
	w = mon_side(im);
	if (w)
		writer_append_event(w, &r, sizeof(r));
}

uint64_t mon_mem_turn(struct mon *m, uint64_t now)
{
	uint64_t next = 0;
	size_t i;

	if (!m->o.memory)
		return 0;
	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (im->ended || !im->hdr ||
		    atomic_load_explicit(&im->hdr->mem.state, memory_order_acquire) != CBN_MEM_ON)
			continue;
		if (now >= im->next_mem) {
			/* the agent wrote the first point when the hooks started */
			if (im->next_mem)
				mon_mem_point(im, now);
			im->next_mem = now + CBN_MEM_COUNTER_NS;
		}
		if (!next || im->next_mem < next)
			next = im->next_mem;
	}
	/* Images whose hooks have not started yet are looked at again soon. */
	return next ? next : now + CBN_MEM_COUNTER_NS;
}

void mon_mem_end(struct mon_image *im)
{
	if (im->statm >= 0)
		close(im->statm);
	im->statm = -1;
}
