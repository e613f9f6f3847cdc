/*
 * kstacks.h — kernel stacks: a second perf event per thread, CPU clock,
 * kernel only (exclude_user), sampling kernel callchains into a small ring
 * and raising no signal, so it never interrupts a system call.  The sampling
 * handler drains the ring into the sample it writes (cbn_format.h,
 * CBN_SAMPLE_KSTACKS).
 *
 * SIGNAL-SAFE: everything here (raw system calls, plain reads of the ring
 * with acquire/release on its head and tail; no malloc, no lock, no
 * descriptor kept).  kstacks_parse is pure, for the unit test.
 */
#ifndef CBN_KSTACKS_H
#define CBN_KSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"

/* Data pages of a ring (a power of two): 32 KiB, ~150 kernel samples of a
 * system call's depth between two samples of the thread's user time. */
#define KSTACKS_DATA_PAGES 8u
/* Bytes of kernel stacks one sample may carry (after its user frames). */
#define KSTACKS_MAX_BYTES 4096u

/* Bytes of the user stack each kernel sample copies at its entry
 * (PERF_SAMPLE_STACK_USER): the frames of the system call's callers that may
 * have returned by the next user sample (a wrapper and its caller or two). */
#define KSTACKS_USER_STACK 256u

/* One thread's kernel event: its mapping (control page + data), or NULL;
 * regs: its records carry the user registers and stack at kernel entry. */
struct kstacks_ring {
	void *base;
	size_t len;
	int regs;
};

/* User mode at a kernel sample's entry: ip, sp, bp, and the copy of the
 * stack from sp (nstack words). */
struct kstacks_user {
	uint64_t ip, sp, bp;
	const uint64_t *stack;
	uint32_t nstack;
};

/*
 * Where to put a kernel stack: place() fills pc[0..CBN_KPLACE_MAX_FRAMES) with
 * the user stack at entry down to a frame still live in the sample, sets
 * *drop (the sample's frames that are not on it) and returns how many pcs
 * (0: not placed).  Called once per distinct entry state of a drain (at most
 * KSTACKS_PLACE_MAX of them; the rest are not placed).  Must be signal-safe.
 * placed / unplaced: kernel samples kept, by outcome.
 */
#define KSTACKS_PLACE_MAX 8
struct kstacks_placer {
	int (*place)(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop);
	void *ctx;
	uint32_t placed, unplaced;
};

/* Open the kernel event of thread tid (0: the calling one; any thread of the
 * process may open it for another), period ns, map its ring and close the
 * fd.  Returns 0 or -errno (EACCES: perf_event_paranoid, EPERM: seccomp
 * or no CAP_PERFMON, ...; ENOMEM when the ring cannot be mapped, which is
 * mostly the user's perf_event_mlock_kb). */
int kstacks_open(struct kstacks_ring *r, uint64_t period_ns, uint32_t tid);
void kstacks_close(struct kstacks_ring *r);

/*
 * Read the records in [tail, head) of a ring's data area (size bytes, a power
 * of two, records may wrap) into out: distinct kernel stacks with counts,
 * leaf first, context markers dropped, at most cap bytes from out.
 * Counted in *lost: PERF_RECORD_LOST's counts, samples with a malformed
 * callchain, stacks that did not fit.  Returns the bytes used at out (0 when
 * no stack was kept).
 */
size_t kstacks_parse(const unsigned char *data, uint64_t size, uint64_t tail, uint64_t head,
		     struct cbn_kstacks *out, size_t cap, uint32_t *lost);

/* The same for records that also carry PERF_SAMPLE_REGS_USER (bp, sp, ip)
 * and PERF_SAMPLE_STACK_USER (regs nonzero): with a placer, each stack also
 * gets its struct cbn_kplace (CBN_KSTACKS_PLACED; equal kernel stacks with
 * different placements are different stacks). */
size_t kstacks_parse_placed(const unsigned char *data, uint64_t size, uint64_t tail,
			    uint64_t head, int regs, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t *lost);

/* Is anything waiting in the ring? */
int kstacks_pending(const struct kstacks_ring *r);

/* Drain the ring (kstacks_parse_placed, then release the space to the
 * kernel).  out may be NULL: the stacks are only counted as lost (thread
 * end).  pl may be NULL (no placement).  *kept: kernel samples whose stacks
 * are in out. */
size_t kstacks_drain(struct kstacks_ring *r, struct kstacks_placer *pl, struct cbn_kstacks *out,
		     size_t cap, uint32_t *kept, uint32_t *lost);

#endif
