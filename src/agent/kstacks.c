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

#include "floor.h"
#include "kstacks.h"

#define KSTACKS_PAGE 4096u
/* PERF_SAMPLE_REGS_USER on x86-64 (asm/perf_regs.h): bp, sp, ip, in that
 * order in the record (increasing bit). */
#define KSTACKS_REG_BP 6
#define KSTACKS_REG_SP 7
#define KSTACKS_REG_IP 8
#define KSTACKS_REGS_MASK (1ull << KSTACKS_REG_BP | 1ull << KSTACKS_REG_SP | 1ull << KSTACKS_REG_IP)

int kstacks_open(struct kstacks_ring *r, uint64_t period_ns, uint32_t tid)
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
	/* Where user mode entered the kernel: its ip, sp, bp and the top of its
	 * stack, so the handler can put the kernel stack on the user stack that
	 * made the system call rather than on the one it returned to. */
	a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.sample_regs_user = KSTACKS_REGS_MASK;
	a.sample_stack_user = KSTACKS_USER_STACK;
	/* No O_ASYNC, no F_SETSIG: this event never signals, so a system call
	 * is never interrupted by it (sampler-safety.md §4, EINTR). */
	fd = (int)agent_syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EINVAL || errno == E2BIG)) {
		a.remove_on_exec = 0; /* before Linux 5.13 */
		fd = (int)agent_syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0 && errno == EINVAL) {
		/* No user registers or stack with this event here: kernel
		 * stacks on the next sample's stack, as before. */
		a.sample_type = PERF_SAMPLE_CALLCHAIN;
		a.sample_regs_user = 0;
		a.sample_stack_user = 0;
		fd = (int)agent_syscall(SYS_perf_event_open, &a, (pid_t)tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* Writable: the kernel then honours data_tail and never overwrites
	 * what the handler has not read. */
	m = agent_syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == -1 || (m < 0 && m > -4096)) {
		/* Mostly EPERM past the user's perf_event_mlock_kb and
		 * RLIMIT_MEMLOCK: a limit of this thread's, not a refusal of
		 * kernel stacks for the process. */
		agent_syscall(SYS_close, fd);
		return -ENOMEM;
	}
	agent_syscall(SYS_close, fd);
	r->base = (void *)m;
	r->len = len;
	r->regs = (a.sample_type & PERF_SAMPLE_REGS_USER) != 0;
	return 0;
}

void kstacks_close(struct kstacks_ring *r)
{
	if (r->base)
		agent_syscall(SYS_munmap, r->base, r->len);
	r->base = NULL;
	r->len = 0;
	r->regs = 0;
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

/* The placement of each stack of a parse, in the order of the stacks. */
struct kstacks_places {
	uint16_t nuser[CBN_KSTACK_MAX_STACKS];
	uint16_t drop[CBN_KSTACK_MAX_STACKS];
	uint64_t pc[CBN_KSTACK_MAX_STACKS][CBN_KPLACE_MAX_FRAMES];
};

/* The placement computed for one entry state, kept for the rest of a drain:
 * the kernel samples of one system call all share it. */
struct kstacks_memo {
	uint64_t ip, sp, bp;
	uint16_t nuser, drop;
	uint64_t pc[CBN_KPLACE_MAX_FRAMES];
};

/* Add one stack (n frames, placed as nuser/drop/upc when pls) to out, or
 * count it with an equal one.  *idx: its index, or -1 when lost. */
static size_t kstacks_add(struct cbn_kstacks *out, size_t used, size_t cap, const uint64_t *pc,
			  uint16_t n, uint16_t flags, struct kstacks_places *pls, uint16_t nuser,
			  uint16_t drop, const uint64_t *upc, size_t *pbytes, uint32_t *lost, int *idx)
{
	unsigned char *base = (unsigned char *)out;
	struct cbn_kstack *k;
	size_t off = sizeof(*out), need = sizeof(*k) + (size_t)n * 8, pneed = 0;
	uint16_t i;

	*idx = -1;
	/* the placements follow the stacks (written at the end): room for
	 * this one's too */
	if (pls)
		pneed = sizeof(struct cbn_kplace) + (size_t)nuser * 8;
	for (i = 0; i < out->nstacks; i++) {
		k = (struct cbn_kstack *)(base + off);
		if (k->nframes == n && k->flags == flags && !memcmp(k->pc, pc, (size_t)n * 8) &&
		    (!pls || (pls->nuser[i] == nuser && pls->drop[i] == drop &&
			      !memcmp(pls->pc[i], upc, (size_t)nuser * 8)))) {
			k->count++;
			*idx = i;
			return used;
		}
		off += sizeof(*k) + (size_t)k->nframes * 8;
	}
	if (out->nstacks >= CBN_KSTACK_MAX_STACKS || used + *pbytes + need + pneed > cap) {
		(*lost)++;
		return used;
	}
	if (pls) {
		pls->nuser[out->nstacks] = nuser;
		pls->drop[out->nstacks] = drop;
		memcpy(pls->pc[out->nstacks], upc, (size_t)nuser * 8);
		*pbytes += pneed;
	}
	*idx = out->nstacks;
	k = (struct cbn_kstack *)(base + used);
	k->count = 1;
	k->nframes = n;
	k->flags = flags;
	memcpy(k->pc, pc, (size_t)n * 8);
	out->nstacks++;
	return used + need;
}

/* The placement of entry state u: from the memo, else computed (and kept). */
static uint16_t kstacks_place(struct kstacks_placer *pl, const struct kstacks_user *u,
			      struct kstacks_memo *memo, unsigned *nmemo, uint64_t **upc,
			      uint16_t *drop)
{
	struct kstacks_memo *m;
	unsigned i;
	int n;

	for (i = 0; i < *nmemo; i++) {
		m = &memo[i];
		if (m->ip == u->ip && m->sp == u->sp && m->bp == u->bp)
			goto out;
	}
	if (*nmemo >= KSTACKS_PLACE_MAX) {
		*drop = 0;
		return 0;
	}
	m = &memo[(*nmemo)++];
	m->ip = u->ip;
	m->sp = u->sp;
	m->bp = u->bp;
	m->drop = 0;
	n = pl->place(pl->ctx, u, m->pc, &m->drop);
	m->nuser = (uint16_t)(n > 0 && n <= CBN_KPLACE_MAX_FRAMES ? n : 0);
out:
	*upc = m->pc;
	*drop = m->nuser ? m->drop : 0;
	return m->nuser;
}

/* The kernel frames of a callchain of nr entries at ring offset off, up to
 * the first user or guest context marker, into pc (CBN_KSTACK_TRUNCATED in
 * *flags past CBN_KSTACK_MAX_FRAMES).  Returns how many. */
static uint16_t kstacks_callchain(const unsigned char *data, uint64_t size, uint64_t off,
				  uint64_t nr, uint64_t *pc, uint16_t *flags)
{
	uint16_t n = 0;
	uint64_t i;

	for (i = 0; i < nr; i++) {
		uint64_t ip;

		ring_copy(&ip, data, size, off + i * 8, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				continue;
			break; /* user or guest context: not ours */
		}
		if (n == CBN_KSTACK_MAX_FRAMES) {
			*flags |= CBN_KSTACK_TRUNCATED;
			break;
		}
		pc[n++] = ip;
	}
	return n;
}

/*
 * Where user mode entered the kernel, from the record's tail at ring offset
 * off (up to end): PERF_SAMPLE_REGS_USER { abi; bp, sp, ip }, then
 * PERF_SAMPLE_STACK_USER { size; data[size]; dyn_size }; abi NONE (a kernel
 * thread) has no registers and a stack of size 0 with no dyn_size.  Fills u
 * (its stack copied into u->stack, KSTACKS_USER_STACK bytes at most); u->ip
 * stays 0 when there is none.
 */
static void kstacks_user_read(const unsigned char *data, uint64_t size, uint64_t off,
			      uint64_t end, struct kstacks_user *u, uint64_t *ustack)
{
	uint64_t abi, r[3], sz = 0, dyn = 0;

	if (end - off < 8)
		return;
	ring_copy(&abi, data, size, off, 8);
	off += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || end - off < 24)
		return;
	ring_copy(r, data, size, off, 24);
	off += 24;
	if (end - off >= 8) {
		ring_copy(&sz, data, size, off, 8);
		off += 8;
	}
	if (sz && sz <= end - off && end - off - sz >= 8)
		ring_copy(&dyn, data, size, off + sz, 8);
	else
		sz = 0;
	if (dyn > sz)
		dyn = sz;
	if (dyn > KSTACKS_USER_STACK / 8 * 8)
		dyn = KSTACKS_USER_STACK / 8 * 8;
	u->bp = r[0];
	u->sp = r[1];
	u->ip = r[2];
	u->nstack = (uint32_t)(dyn / 8);
	if (u->nstack)
		ring_copy(ustack, data, size, off, (size_t)u->nstack * 8);
}

/* The placements, one per stack, after the stacks (at used); returns the
 * bytes of out in all. */
static size_t kstacks_places_write(struct cbn_kstacks *out, size_t used,
				   const struct kstacks_places *pls)
{
	unsigned char *p = (unsigned char *)out + used;
	uint16_t s;

	out->flags |= CBN_KSTACKS_PLACED;
	for (s = 0; s < out->nstacks; s++) {
		struct cbn_kplace *kp = (struct cbn_kplace *)p;

		kp->nuser = pls->nuser[s];
		kp->drop = pls->drop[s];
		kp->reserved = 0;
		memcpy(kp->pc, pls->pc[s], (size_t)kp->nuser * 8);
		p += sizeof(*kp) + (size_t)kp->nuser * 8;
	}
	return (size_t)(p - (unsigned char *)out);
}

size_t kstacks_parse_placed(const unsigned char *data, uint64_t size, uint64_t tail,
			    uint64_t head, int regs, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t *lost)
{
	uint64_t pos = tail, pc[CBN_KSTACK_MAX_FRAMES];
	uint64_t ustack[KSTACKS_USER_STACK / 8];
	struct kstacks_places pls;
	struct kstacks_memo memo[KSTACKS_PLACE_MAX];
	unsigned nmemo = 0;
	size_t used = sizeof(*out), pbytes = 0;

	if (!out || cap < sizeof(*out) || size == 0 || (size & (size - 1)))
		return 0;
	memset(out, 0, sizeof(*out));
	if (!regs)
		pl = NULL;
	/* A ring the kernel wrote more than size of since tail is garbage. */
	if (head - tail > size)
		return 0;
	while (head - pos >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t nr, w[2], end;
		uint16_t n, flags = 0, nuser = 0, drop = 0;
		uint64_t *upc = NULL;
		struct kstacks_user u = {0, 0, 0, ustack, 0};
		int idx;

		ring_copy(&h, data, size, pos, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - pos)
			break; /* torn or corrupt: nothing after it can be trusted */
		end = pos + h.size;
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
			n = kstacks_callchain(data, size, pos + sizeof(h) + 8, nr, pc, &flags);
			if (n == 0) {
				(*lost)++;
				goto next;
			}
			if (pl) {
				kstacks_user_read(data, size, pos + sizeof(h) + 8 + nr * 8, end, &u,
						  ustack);
				if (u.ip)
					nuser = kstacks_place(pl, &u, memo, &nmemo, &upc, &drop);
			}
			used = kstacks_add(out, used, cap, pc, n, flags, pl ? &pls : NULL, nuser, drop,
					   upc, &pbytes, lost, &idx);
			if (pl && idx >= 0) {
				if (nuser)
					pl->placed++;
				else
					pl->unplaced++;
			}
		}
next:
		pos = end;
	}
	if (!out->nstacks)
		return 0;
	return pl ? kstacks_places_write(out, used, &pls) : used;
}

size_t kstacks_parse(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
		     struct cbn_kstacks *out, size_t cap, uint32_t *lost)
{
	return kstacks_parse_placed(data, size, tail, head, 0, NULL, out, cap, lost);
}

int kstacks_pending(const struct kstacks_ring *r)
{
	const struct perf_event_mmap_page *pg = r->base;

	return pg && __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE) != pg->data_tail;
}

size_t kstacks_drain(struct kstacks_ring *r, struct kstacks_placer *pl, struct cbn_kstacks *out,
		     size_t cap, uint32_t *kept, uint32_t *lost)
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
		pl = NULL;
	}
	used = kstacks_parse_placed((const unsigned char *)pg + off, size, tail, head, r->regs, pl,
				    out, cap, lost);
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
