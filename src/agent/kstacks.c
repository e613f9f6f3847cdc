/*
 * kstacks.c — the per-thread kernel-stack event and the drain of its ring
 * (kstacks.h).  The event is opened, mapped and its fd closed within a few
 * system calls, like the sampling event (timer.c): the mapping holds it, the
 * kernel marks it VM_DONTCOPY (a fork child does not inherit it), and
 * remove_on_exec ends it at exec.
 *
 * SIGNAL-SAFE throughout: raw system calls only.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kstacks.h"

#define KSTACKS_PAGE 4096u

int kstacks_open(struct kstacks_ring *r, uint64_t period_ns)
{
	struct perf_event_attr a;
	size_t len = (1 + KSTACKS_DATA_PAGES) * KSTACKS_PAGE;
	long m;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period_ns;
	a.sample_type = PERF_SAMPLE_CALLCHAIN;
	a.exclude_user = 1;            /* the sampling event covers user mode */
	a.exclude_hv = 1;
	a.exclude_callchain_user = 1;  /* the handler unwinds user mode itself */
	a.sample_max_stack = CBN_KSTACK_MAX_FRAMES + 1; /* + the context marker */
	a.remove_on_exec = 1;
	/* No O_ASYNC, no F_SETSIG: this event never signals, so a system call
	 * is never interrupted by it (sampler-safety.md §4, EINTR). */
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EINVAL || errno == E2BIG)) {
		a.remove_on_exec = 0; /* before Linux 5.13 */
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* Writable: the kernel then honours data_tail and never overwrites
	 * what the handler has not read. */
	m = syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == -1 || (m < 0 && m > -4096)) {
		/* Mostly EPERM past the user's perf_event_mlock_kb and
		 * RLIMIT_MEMLOCK: a limit of this thread's, not a refusal of
		 * kernel stacks for the process. */
		syscall(SYS_close, fd);
		return -ENOMEM;
	}
	syscall(SYS_close, fd);
	r->base = (void *)m;
	r->len = len;
	return 0;
}

void kstacks_close(struct kstacks_ring *r)
{
	if (r->base)
		syscall(SYS_munmap, r->base, r->len);
	r->base = NULL;
	r->len = 0;
}

/* Copy len bytes at ring offset off (wrapping) into dst. */
static void ring_copy(void *dst, const unsigned char *data, uint64_t size, uint64_t off, size_t len)
{
	uint64_t o = off & (size - 1);
	size_t first = (size_t)(size - o) < len ? (size_t)(size - o) : len;

	memcpy(dst, data + o, first);
	if (first < len)
		memcpy((unsigned char *)dst + first, data, len - first);
}

/* Add one stack (n frames) to out, or count it with an equal one. */
static size_t kstacks_add(struct cbn_kstacks *out, size_t used, size_t cap, const uint64_t *pc,
			  uint16_t n, uint16_t flags, uint32_t *lost)
{
	unsigned char *base = (unsigned char *)out;
	struct cbn_kstack *k;
	size_t off = sizeof(*out), need = sizeof(*k) + (size_t)n * 8;
	uint16_t i;

	for (i = 0; i < out->nstacks; i++) {
		k = (struct cbn_kstack *)(base + off);
		if (k->nframes == n && k->flags == flags && !memcmp(k->pc, pc, (size_t)n * 8)) {
			k->count++;
			return used;
		}
		off += sizeof(*k) + (size_t)k->nframes * 8;
	}
	if (out->nstacks >= CBN_KSTACK_MAX_STACKS || used + need > cap) {
		(*lost)++;
		return used;
	}
	k = (struct cbn_kstack *)(base + used);
	k->count = 1;
	k->nframes = n;
	k->flags = flags;
	memcpy(k->pc, pc, (size_t)n * 8);
	out->nstacks++;
	return used + need;
}

size_t kstacks_parse(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
		     struct cbn_kstacks *out, size_t cap, uint32_t *lost)
{
	uint64_t pos = tail, pc[CBN_KSTACK_MAX_FRAMES];
	size_t used = sizeof(*out);

	if (!out || cap < sizeof(*out) || size == 0 || (size & (size - 1)))
		return 0;
	memset(out, 0, sizeof(*out));
	/* A ring the kernel wrote more than size of since tail is garbage. */
	if (head - tail > size)
		return 0;
	while (head - pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t nr, i, w[2];
		uint16_t n = 0, flags = 0;

		ring_copy(&h, data, size, pos, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - pos)
			break; /* torn or corrupt: nothing after it can be trusted */
		if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
			ring_copy(w, data, size, pos + sizeof(h), 16);
			*lost += w[1] > UINT32_MAX - *lost ? UINT32_MAX - *lost : (uint32_t)w[1];
		} else if (h.type == PERF_RECORD_SAMPLE) {
			if (h.size < sizeof(h) + 8) {
				(*lost)++;
				goto next;
			}
			ring_copy(&nr, data, size, pos + sizeof(h), 8);
			if (nr > (h.size - sizeof(h) - 8) / 8) {
				(*lost)++; /* callchain longer than its record */
				goto next;
			}
			for (i = 0; i < nr; i++) {
				uint64_t ip;

				ring_copy(&ip, data, size, pos + sizeof(h) + 8 + i * 8, 8);
				if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
					if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
						continue;
					break; /* user or guest context: not ours */
				}
				if (n == CBN_KSTACK_MAX_FRAMES) {
					flags |= CBN_KSTACK_TRUNCATED;
					break;
				}
				pc[n++] = ip;
			}
			if (n == 0)
				(*lost)++;
			else
				used = kstacks_add(out, used, cap, pc, n, flags, lost);
		}
next:
		pos += h.size;
	}
	return out->nstacks ? used : 0;
}

size_t kstacks_drain(struct kstacks_ring *r, struct cbn_kstacks *out, size_t cap, uint32_t *kept,
		     uint32_t *lost)
{
	struct perf_event_mmap_page *pg = r->base;
	struct cbn_kstacks scratch;
	uint64_t head, tail, size, off;
	size_t used;
	uint32_t i;
	const unsigned char *p;

	*kept = 0;
	if (!pg)
		return 0;
	/* perf_event_mmap_page: read data_head, then a read barrier before the
	 * data (acquire); data_tail is stored after the data was read (release). */
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	size = pg->data_size ? pg->data_size : KSTACKS_DATA_PAGES * KSTACKS_PAGE;
	off = pg->data_offset ? pg->data_offset : KSTACKS_PAGE;
	if (!out) {
		out = &scratch;
		cap = sizeof(scratch);
	}
	used = kstacks_parse((const unsigned char *)pg + off, size, tail, head, out, cap, lost);
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	if (!used)
		return 0;
	p = (const unsigned char *)(out + 1);
	for (i = 0; i < out->nstacks; i++) {
		const struct cbn_kstack *k = (const void *)p;

		*kept += k->count;
		p += sizeof(*k) + (size_t)k->nframes * 8;
	}
	if (out == &scratch) {
		*lost += *kept;
		*kept = 0;
		return 0;
	}
	out->lost = *lost;
	return used;
}
