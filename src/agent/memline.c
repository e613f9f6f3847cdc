/*
 * memline.c — the memory counters' timeline points the agent writes
 * itself (MEM_COUNTERS: the resident bytes and header.mem's counters): the
 * first when the allocation hooks start, the last before an exec and at
 * the exit.  The points between come from the launcher (src/monitor/
 * mon_mem.c): the agent has no thread of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "aside.h"
#include "floor.h"
#include "memline.h"

static _Atomic int mem_started;     /* the hooks set header.mem ON (this image) */

/*
 * Resident bytes from /proc/self/statm.  The session file's pages are the
 * profiler's: the writer drops them from the mapping as chunks fill
 * (writer.c), so what it adds here is a few pages per thread.  Read on a
 * thread of the program (the hooks' start, exit, exec), aside (aside.c), so
 * that no number of the program's table is taken even for a moment.  0 when
 * it cannot be read.
 */
static int agent_statm_read(void *p)
{
	char *buf = p;
	ssize_t n;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, 127);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	return 0;
}

static uint64_t agent_rss(void)
{
	char buf[128];
	unsigned long size, res;

	if (aside_run(agent_statm_read, buf) != 0 || sscanf(buf, "%lu %lu", &size, &res) != 2)
		return 0;
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* One MEM_COUNTERS record (the hooks' start, exit, exec) while header.mem
 * is ON.  rss: read it, or leave it 0. */
void agent_mem_counters(int rss)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_rec_mem_counters r;
	uint64_t peak;
	long brk;

	if (!h || atomic_load(&h->mem.state) != CBN_MEM_ON)
		return;
	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_MEM_COUNTERS;
	r.h.size = sizeof(r);
	r.ts = agent_now();
	r.rss = rss ? agent_rss() : 0;
	r.host_live = atomic_load_explicit(&h->mem.host_live, memory_order_relaxed);
	r.mmap_live = atomic_load_explicit(&h->mem.mmap_live, memory_order_relaxed);
	/* The raw system call: sbrk would go through the hooks. */
	brk = agent_syscall(SYS_brk, 0);
	if (brk > 0 && (uint64_t)brk > h->mem.brk_start && h->mem.brk_start)
		r.brk = (uint64_t)brk - h->mem.brk_start;
	r.allocs = atomic_load_explicit(&h->mem.allocs, memory_order_relaxed);
	r.frees = atomic_load_explicit(&h->mem.frees, memory_order_relaxed);
	r.alloc_bytes = atomic_load_explicit(&h->mem.alloc_bytes, memory_order_relaxed);
	peak = atomic_load(&h->mem.rss_peak);
	while (r.rss > peak && !atomic_compare_exchange_weak(&h->mem.rss_peak, &peak, r.rss))
		;
	agent_event(&r, sizeof(r));
}

/* Before an exec replaces this image: its last point of the timeline. */
void agent_mem_counters_now(void)
{
	if (atomic_load(&mem_started))
		agent_mem_counters(1);
}

/* The hooks set header.mem ON: the timeline's first point, now; the
 * launcher adds the next ones from outside (src/monitor/mon_mem.c), and the
 * exit or an exec the last. */
void agent_mem_start(void)
{
	atomic_store(&mem_started, 1);
	agent_mem_counters(1);
}

/* In a fork child: its hooks have not started yet. */
void agent_mem_after_fork_child(void)
{
	atomic_store(&mem_started, 0);
}
