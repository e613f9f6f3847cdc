/*
 * sampler.c — CPU sampling: the signal handler that unwinds and appends a
 * sample to the thread's chunk, its entry stub (which moves to the thread's
 * agent stack), and the thread begin/end bookkeeping around it.
 *
 * SIGNAL CONTEXT: sampler_entry, sampler_handler and everything they call
 * (sigpath.h).  No malloc, no locks, no stdio, no dlsym there; errno is saved
 * and restored.
 */
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "capture.h"
#include "floor.h"
#include "kernel.h"
#include "kstacks.h"
#include "python_find.h"
#include "python_walk.h"
#include "sampler.h"
#include "sigwrap.h"
#include "stacks.h"
#include "threads.h"
#include "timer.h"
#include "unwind.h"
#include "unwind_nocfi.h"
#include "unwind_check.h"
#include "fastwalk.h"
#include "../format/cbn_share.h"
#include "../format/cbn_time.h"

int sigpath_active(void)
{
	return agent_tls.in_sigpath;
}

/* Normal code changes the thread's sampler and stack with every signal
 * blocked (floor.h): raw system calls, the program's mask restored as it was. */
static void sampler_block(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, old, _NSIG / 8);
}

static void sampler_unblock(const sigset_t *old)
{
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, old, NULL, _NSIG / 8);
}

/*
 * The handler the kernel calls.  On the program's alternate stack (or a thread
 * stack) it moves to the thread's agent stack before anything else, so the
 * program's stack holds only the kernel's frame and this stub's saved %rbp.
 * CFA = %rbp + 16 throughout the call: libunwind walks back through it to the
 * signal frame like any frame-pointer frame.
 */
#if defined(__x86_64__)
__asm__(".text\n"
	".globl sampler_entry\n"
	".hidden sampler_entry\n"
	".type sampler_entry, @function\n"
	"sampler_entry:\n"
	".cfi_startproc\n"
	"	pushq %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"	movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	movq agent_switch_top@gottpoff(%rip), %rax\n"
	"	movq %fs:(%rax), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	movq %rax, %rsp\n"
	"1:	andq $-16, %rsp\n"
	"	call sampler_handler\n"
	"	movq %rbp, %rsp\n"
	".cfi_def_cfa_register %rsp\n"
	"	popq %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size sampler_entry, .-sampler_entry\n");
#else
#error "sampler_entry: x86-64 only"
#endif

static uint64_t sample_now(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC); /* vDSO; async-signal-safe */
}

/*
 * Turn libunwind's trace (which starts in this handler, then the entry stub
 * and the signal trampoline) into the interrupted thread's stack, in place:
 * pc[0] = the interrupted pc, then return addresses, at most max.
 */
static int sample_frames(uint64_t *pc, int n, uint64_t rip, int max, int *flags)
{
	int i, k = -1, m, prepend = 0;

	for (i = 0; i < n; i++) {
		if (pc[i] == rip) {
			k = i;
			break;
		}
	}
	if (k < 0) {
		/* The trace lost the signal frame's pc.  Skip our own frames and
		 * the trampoline, prepend rip. */
		int last_self = -1;

		for (i = 0; i < n; i++)
			if (agent_is_self(pc[i]))
				last_self = i;
		if (last_self < 0 || last_self + 2 > n) {
			pc[0] = rip;
			*flags |= CBN_SAMPLE_PC_ONLY;
			return 1;
		}
		k = last_self + 2; /* past the trampoline (__restore_rt) */
		prepend = 1;
	}
	m = n - k;
	if (m + prepend > max) {
		m = max - prepend;
		*flags |= CBN_SAMPLE_TRUNCATED;
	}
	memmove(pc + prepend, pc + k, (size_t)m * sizeof(uint64_t));
	pc[0] = rip;
	return m + prepend;
}

/* Stack the unwinder may need below the handler's frame (measured ~8 KiB). */
#define SAMPLE_HEADROOM (16u << 10)

static struct cbn_rec_sample *sample_reserve(struct agent_thread *t, uint32_t max_size)
{
	struct writer *w = &agent.w;
	struct cbn_rec_sample *r = t->chunk ? writer_reserve(t->chunk, max_size) : NULL;
	int i;

	if (r)
		return r;
	writer_chunk_retire(w, t->chunk);
	t->chunk = writer_chunk_new(w, CBN_CHUNK_SAMPLES, t->tid);
	/* Out of allocated space: grow here (no descriptor, try-lock); other
	 * threads may take what one growth added, so a few times. */
	for (i = 0; !t->chunk && i < 4; i++) {
		if (writer_grow_signal(w, 4 * CBN_CHUNK_SIZE) != 0 && i)
			break;
		t->chunk = writer_chunk_new(w, CBN_CHUNK_SAMPLES, t->tid);
	}
	/* The chunk's pages in one system call, not a fault each at the
	 * samples that first touch them: a page fault costs a VM about as
	 * much as the call, and a 100-frame sample fills a page in four.
	 * The blocks are allocated already (below file_size): nothing fails. */
	if (t->chunk && w->populate)
		agent_syscall(SYS_madvise, t->chunk, (long)CBN_CHUNK_SIZE, MADV_POPULATE_WRITE);
	return t->chunk ? writer_reserve(t->chunk, max_size) : NULL;
}

/* SIGNAL-SAFE.  0 when t may not take a sample now (the loss counted by
 * reason), else 1. */
static int sample_admit(struct agent_thread *t)
{
	struct writer *w = &agent.w;

	if (!atomic_load_explicit(&agent.active, memory_order_relaxed)) {
		writer_lost(w, CBN_LOST_DISABLED);
		return 0;
	}
	if (!t->tid) {
		writer_lost(w, CBN_LOST_NO_THREAD);
		return 0;
	}
	if (t->pid != agent.pid) {
		writer_lost(w, CBN_LOST_FOREIGN_PID);
		return 0;
	}
	if (t->in_handler || t->in_agent) {
		writer_lost(w, CBN_LOST_REENTRANT);
		return 0;
	}
	if (t->ended) {
		/* its sampler's last signal, after THREAD_END */
		writer_lost(w, CBN_LOST_NO_THREAD);
		return 0;
	}
	return 1;
}

/* SIGNAL-SAFE.  The thread's sampler follows a moved signal, moves from a
 * POSIX timer to a perf event at its first sample, and is counted by kind
 * then. */
static void sample_sampler(struct agent_thread *t, ucontext_t *uc)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (t->signo != atomic_load_explicit(&agent.signo, memory_order_relaxed))
		timer_rearm_signal(t, uc);
	if (t->backend == AGENT_BACKEND_TIMER && !t->sampled)
		timer_upgrade(t);
	if (!t->sampled) {
		t->sampled = 1;
		atomic_fetch_add_explicit(t->backend == AGENT_BACKEND_PERF ? &h->threads_perf
									: &h->threads_timer,
					  1, memory_order_relaxed);
	}
}

/* SIGNAL-SAFE.  Why this sample can only be its pc (a CBN_PCONLY_* reason),
 * or -1 when the caller may unwind: unwind_begin has then been called, and
 * the caller must call unwind_end.  here: the handler's stack pointer. */
static int sample_why(struct agent_thread *t, ucontext_t *uc, uintptr_t here)
{
	if (!unwind_available())
		return CBN_PCONLY_NO_UNWINDER;
	if (t->no_unwind)
		return CBN_PCONLY_HELD;
	if (here < (uintptr_t)t->stack_lo + SAMPLE_HEADROOM || here > (uintptr_t)t->stack_hi)
		return CBN_PCONLY_LOW_STACK;
	if (!unwind_begin((uint64_t)uc->uc_mcontext.gregs[REG_RSP]))
		return CBN_PCONLY_HELD;
	return -1;
}

/* SIGNAL-SAFE.  The thread's Python frames (python_walk.c); one walk in
 * eight timed (two vDSO clock reads), for the report's cost per frame.  A
 * walk that met code objects for the first time also copied their names
 * (system calls, once per object): it is left out of the figure, which is
 * what a walk costs once the program's code has been seen; its time is in
 * the handler's all the same. */
static int sample_python(uint64_t *pyw, int cap, uintptr_t sp)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint64_t t0;
	int n;

	if (!python_active() || !h || (agent_tls.nweigh & 7) != 0)
		return python_stack_for(pyw, cap, sp);
	t0 = cbn_clock_ns(CLOCK_MONOTONIC);
	n = python_stack_for(pyw, cap, sp);
	if (n > 0 && !python_last_fresh()) {
		atomic_fetch_add_explicit(&h->overhead.site_ns[CBN_OVH_PYWALK],
					  cbn_clock_ns(CLOCK_MONOTONIC) - t0, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->overhead.site_calls[CBN_OVH_PYWALK], 1,
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&h->overhead.site_calls[CBN_OVH_PYFRAMES], (uint64_t)n,
					  memory_order_relaxed);
	}
	return n;
}

/* SIGNAL-SAFE, between unwind_begin and unwind_end.  The interrupted stack
 * into r->pc: the native frames (at most cap less the Python ones), then the
 * Python frames (python_walk.c), *npy of them.  Returns the native ones;
 * CBN_SAMPLE_PC_ONLY in *flags when only rip was had. */
static int sample_unwind(struct cbn_rec_sample *r, ucontext_t *uc, int cap, int *flags, int *npy)
{
	uint64_t rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP], pyw[CBN_MAX_FRAMES];
	struct fastwalk_cursor stop;
	int n, nf, fast;

	/* What the walks below will mostly read again: asked for at once, so
	 * that the cache misses overlap instead of following each other. */
	if (!agent.no_prefetch) {
		python_prefetch();
		fastwalk_prefetch(rip);
	}
	*npy = sample_python(pyw, cap, (uintptr_t)uc->uc_mcontext.gregs[REG_RSP]);
	/* the agent's own walk, else libunwind's (fastwalk.h) */
	nf = fastwalk_stack(uc, r->pc, cap - *npy, flags, &stop);
	fast = nf > 0;
	if (!fast) {
		n = unwind_backtrace((void **)r->pc, cap - *npy + 8);
		nf = sample_frames(r->pc, n > 0 ? n : 0, rip, cap - *npy, flags);
	}
	if (*flags & CBN_SAMPLE_PC_ONLY) {
		*npy = 0;
	} else {
		/* past code without CFI: from where the agent's walk stopped,
		 * or where libunwind's trace did.  A walk of ours that neither
		 * stopped nor was cut reached the stack's end by its CFI (a
		 * return address undefined or zero), where libunwind's cursor
		 * stops too: nothing to recover (the self-check compares). */
		if (!(*flags & CBN_SAMPLE_TRUNCATED)) {
			if (fast && stop.exact >= 0)
				nf = unwind_recover_walk(uc, r->pc, nf, cap - *npy, &stop);
			else if (!fast)
				nf = unwind_recover(uc, r->pc, nf, cap - *npy);
		}
		if (unwind_check_on())
			unwind_check_sample(uc, r->pc, nf,
					    (*flags & CBN_SAMPLE_TRUNCATED) || nf >= cap - *npy, fast);
	}
	memcpy(r->pc + nf, pyw, (size_t)*npy * sizeof(uint64_t));
	return nf;
}

/*
 * SIGNAL-SAFE.  The kernel stacks sampled since the thread's last sample,
 * after r's nframes pcs (kernel.c), placed on the user stack when the sample
 * is a full one (placed: still unwinding, unwind_begin).  Adds their bytes to
 * *size and CBN_SAMPLE_KSTACKS to *flags; returns the sample's kernel
 * periods, from the kernel event when it counted them, else kernel.
 */
static uint32_t sample_kstacks(struct agent_thread *t, ucontext_t *uc, struct cbn_rec_sample *r,
			       int nf, int nframes, int placed, uint32_t weight, uint32_t kernel,
			       int *flags, uint32_t *size)
{
	uint32_t ks;
	size_t kb;
	struct unwind_place_ctx pc; /* its arrays filled as needed */
	struct kstacks_placer pl = {unwind_place, &pc, 0, 0};

	pc.uc = uc;
	pc.pcs = r->pc;
	pc.npcs = nf;
	pc.ncur = -1;
	pc.slow = 0;

	/*
	 * Where the kernel stacks' system calls came from: only for a full
	 * stack, and only when there are kernel samples (the cursor unwind
	 * costs more than the cached backtrace).
	 */
	kb = kernel_thread_sample(t, placed && kstacks_pending(&t->kring) ? &pl : NULL,
				  (struct cbn_kstacks *)(r->pc + nframes), KSTACKS_MAX_BYTES, weight,
				  &ks);

	if (kb) {
		*flags |= CBN_SAMPLE_KSTACKS;
		*size += (uint32_t)kb;
	}
	/*
	 * The kernel event samples kernel mode on hrtimers (at 1.618 periods,
	 * kernel.c): its count splits this sample's CPU between user and
	 * kernel more finely than rusage, whose system time is sampled at the
	 * tick (and then the stacks and the split agree).
	 */
	if (ks != UINT32_MAX)
		return ks < weight ? ks : weight;
	return kernel;
}

/*
 * SIGNAL-SAFE.  Record r (nframes words, nf of them native, kb bytes of
 * kernel stacks after them) written shared with the thread's base when that
 * pays (cbn_share.h): its own words kept, struct cbn_sample_share after them,
 * the kernel stacks moved down.  A 100-frame Python sample takes about a
 * kilobyte whole, and each new page of the session file costs the program
 * a page fault or two; shared, a steady loop's sample is a few words.
 * Returns the words left, or -1 when r stays whole; *size is its new size.
 */
static int sample_share(struct agent_thread *t, struct cbn_rec_sample *r, int nframes, int nf,
			uint32_t kb, uint32_t *size)
{
	const struct cbn_rec_sample *b = t->share_base;
	struct cbn_sample_share *sh;
	int kn, kp, own;

	if (!b || agent.no_share || !t->chunk || t->chunk->seq != t->share_seq ||
	    (const char *)b <= (const char *)t->chunk || (const char *)b >= (const char *)r ||
	    !cbn_share_plan(b->pc, t->share_n, t->share_nn, r->pc, nframes, nf, &kn, &kp))
		return -1;
	own = cbn_share_pack(r->pc, nframes, nf, kn, kp);
	sh = (struct cbn_sample_share *)(r->pc + own);
	if (kb)
		memmove(sh + 1, r->pc + nframes, kb);
	sh->base = (uint32_t)((const char *)b - (const char *)(t->chunk + 1));
	sh->native = (uint16_t)kn;
	sh->python = (uint16_t)kp;
	*size = (uint32_t)(sizeof(*r) + (size_t)own * sizeof(uint64_t) + sizeof(*sh)) + kb;
	return own;
}

/*
 * SIGNAL-SAFE.  The whole stack of s, a committed sample of t's chunk, into
 * out (room for CBN_MAX_FRAMES words); its words.
 */
static int sample_words(const struct agent_thread *t, const struct cbn_rec_sample *s,
			uint64_t *out)
{
	const struct cbn_sample_share *sh = (const void *)(s->pc + s->nframes);
	const struct cbn_rec_sample *b = t->share_base;

	if (!(s->h.flags & CBN_SAMPLE_SHARED)) {
		memmove(out, s->pc, (size_t)s->nframes * sizeof(uint64_t));
		return s->nframes;
	}
	/* its base is the thread's: the base changes only at a full sample */
	if (!b || sh->native > t->share_nn || sh->python > t->share_n - t->share_nn ||
	    s->nframes + sh->native + sh->python > CBN_MAX_FRAMES)
		return 0;
	return cbn_share_expand(s->pc, s->nframes, b->pc, t->share_n, t->share_nn, sh->native,
				sh->python, out);
}

/*
 * SIGNAL-SAFE.  A committed sample of t's chunk written whole, with a stack
 * (not PC_ONLY): the base of those that follow (the reader takes the same).
 */
static void sample_base(struct agent_thread *t, struct cbn_rec_sample *r, int nframes, int nf)
{
	if (r->h.flags & (CBN_SAMPLE_SHARED | CBN_SAMPLE_PC_ONLY))
		return;
	t->share_base = r;
	t->share_seq = t->chunk->seq;
	t->share_n = (uint16_t)nframes;
	t->share_nn = (uint16_t)nf;
}

/*
 * SIGNAL-SAFE.  Stamp and commit r (size bytes, nframes frames) and count it,
 * unless a window closed while the sample was taken (the thread may have
 * been preempted in the unwind): dropped.  The clock is read before the
 * load of capture_on and capture.c stamps the CLOSE record after its store,
 * so a sample kept here lies before the close.
 */
static void sample_commit(struct agent_thread *t, struct cbn_rec_sample *r, int flags,
			  uint32_t size, int nframes, int nf, uint32_t weight, uint32_t kernel,
			  int why)
{
	struct cbn_file_header *h = agent.w.hdr;

	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = (uint16_t)flags;
	r->h.size = size;
	r->ts = sample_now();
	if (!capture_is_on())
		return;
	atomic_store_explicit(&h->end_mono_ns, r->ts, memory_order_relaxed);
	r->weight = weight;
	r->nframes = (uint16_t)nframes;
	r->kweight = (uint16_t)(kernel < 0xffff ? kernel : 0xffff);
	writer_commit(t->chunk, size);
	t->last_sample = r;
	sample_base(t, r, nframes, nf);
	atomic_fetch_add_explicit(&h->samples, 1, memory_order_relaxed);
	if (flags & CBN_SAMPLE_TRUNCATED)
		atomic_fetch_add_explicit(&h->truncated, 1, memory_order_relaxed);
	if (flags & CBN_SAMPLE_PC_ONLY) {
		atomic_fetch_add_explicit(&h->pc_only, 1, memory_order_relaxed);
		if (why >= 0)
			atomic_fetch_add_explicit(&h->pc_only_why[why], 1, memory_order_relaxed);
	}
}

static void sample_take(struct agent_thread *t, ucontext_t *uc)
{
	struct cbn_rec_sample *r;
	uint32_t size, max_size, weight, kernel;
	int nf, flags = 0, why, kroom, unwinding = 0, npy = 0, own;
	int cap = python_depth(agent.depth); /* more frames when Python frames are read */
	char here;

	if (!agent.w.hdr || !sample_admit(t))
		return;
	t->in_handler = 1;
	sample_sampler(t, uc);
	timer_weigh(t, &weight, &kernel);
	/* +8 frames: the handler's own and the truncation probe. */
	max_size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)(cap + 8) * sizeof(uint64_t));
	/* and the kernel stacks sampled since the last sample (kernel.c) */
	kroom = t->backend == AGENT_BACKEND_PERF && (t->kring.base || !t->ktried);
	if (kroom)
		max_size += KSTACKS_MAX_BYTES;
	r = sample_reserve(t, max_size);
	if (!r) {
		writer_lost(&agent.w, CBN_LOST_BUFFER_FULL);
		goto out;
	}
	why = sample_why(t, uc, (uintptr_t)&here);
	if (why >= 0) {
		r->pc[0] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
		nf = 1;
		flags |= CBN_SAMPLE_PC_ONLY;
	} else {
		unwinding = 1;
		nf = sample_unwind(r, uc, cap, &flags, &npy);
		if (flags & CBN_SAMPLE_PC_ONLY)
			why = CBN_PCONLY_NO_TRACE;
		/* still unwinding (unwind_begin): the kernel stacks' placement */
	}
	size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)(nf + npy) * sizeof(uint64_t));
	if (kroom)
		kernel = sample_kstacks(t, uc, r, nf, nf + npy, why < 0, weight, kernel, &flags,
					&size);
	else if (t->kparked && kernel)
		/* parked, and the system time grew: kernel stacks from the
		 * next sample on (this one's split is the rusage one) */
		kernel_thread_unpark(t);
	if (unwinding)
		unwind_end();
	own = why < 0 && !(flags & CBN_SAMPLE_PC_ONLY)
		      ? sample_share(t, r, nf + npy, nf,
				     size - (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)(nf + npy) * 8),
				     &size)
		      : -1;
	if (own >= 0) {
		flags |= CBN_SAMPLE_SHARED;
		sample_commit(t, r, flags, size, own, 0, weight, kernel, why);
	} else {
		sample_commit(t, r, flags, size, nf + npy, nf, weight, kernel, why);
	}
out:
	t->in_handler = 0;
}

/*
 * Capture windows (capture.c).  Outside them a thread's next sample parks its
 * sampler: moved to the park period (AGENT_PARK_NS of its CPU), so a parked
 * thread takes a signal every 10 ms of CPU at most and none while it waits.
 * Its first park-period sample inside a window (one the program or the
 * launcher opened meanwhile) moves it back.  Nothing wakes a parked thread
 * from outside: a signal could interrupt a system call it waits in (a perf
 * event's never does: it fires only in user mode).
 */

/* SIGNAL-SAFE.  A sample outside a window: not recorded, its CPU consumed,
 * and the sampler moved to the park period unless it is there already. */
static void sampler_park(struct agent_thread *t)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint32_t w, k;

	timer_weigh(t, &w, &k);
	if (h)
		atomic_fetch_add_explicit(&h->capture.parks, 1, memory_order_relaxed);
	if (t->parked || t->backend == AGENT_BACKEND_NONE)
		return;
	if (timer_slow(t, 1) == 0)
		t->parked = 1;
}

/* SIGNAL-SAFE.  A parked sampler's signal inside a window: back to the
 * sampling period, with fresh clocks (the next sample weighs only what came
 * after).  This signal is not a sample of the window. */
static void sampler_unpark(struct agent_thread *t)
{
	if (!t->parked || t->ended || !t->tid || t->pid != agent.pid ||
	    !atomic_load_explicit(&agent.active, memory_order_relaxed))
		return;
	if (timer_slow(t, 0) == 0)
		t->parked = 0;
}

/*
 * A perf event queues a signal at every overflow, and the CPU clock runs in
 * the handler too: if handlers ever took longer than a period (a burst of
 * unwinds after a dlclose emptied the caches, at 10 kHz), signals would pile
 * up faster than they are taken, the program would make no progress, and once
 * the user's RLIMIT_SIGPENDING is full the kernel would fall back to SIGIO.
 * So before returning, take whatever else of ours is queued: its CPU is in
 * the next sample's weight already.  Bounded; what is not ours goes on to the
 * program.
 */
static void sampler_drain(int sig, void *uc)
{
	struct timespec zero = {0, 0};
	siginfo_t si;
	sigset_t set;
	int i;

	sigemptyset(&set);
	sigaddset(&set, sig);
	for (i = 0; i < 64; i++) {
		if (agent_syscall(SYS_rt_sigtimedwait, &set, &si, &zero, _NSIG / 8) != sig)
			break;
		if (!timer_is_ours(&si))
			sigwrap_chain(sig, &si, uc);
	}
}

/*
 * A handler longer than this was probably preempted: its CPU time is read.
 * A preempted thread waits a scheduler slice, a millisecond or more; a deep
 * stack's sample runs 20-40 us unpreempted (a PyTorch loop here), and at
 * 10 us nearly every such sample paid for the read, a system call (~1.2 us
 * in a VM, 8 % of the handler's time under perf).
 */
#define SAMPLER_SLOW_NS 200000u

/*
 * SIGNAL-SAFE.  Whether more of the sampler's signals may be queued behind
 * this one (then sampler_drain takes them; its rt_sigtimedwait is a system
 * call that almost always finds nothing): this handler ran longer than a
 * quarter of a period (the clock kept running), or this signal came less
 * than half a period of CPU after the last (it had waited in the queue
 * while the signal was blocked), and at every 64th sample in any case.
 */
static int sampler_backlog(struct agent_thread *t, uint64_t took)
{
	return took > agent.period_ns / 4 || t->gap < agent.period_ns / 2 ||
	       (t->nweigh & 63) == 0;
}

/* Handlers running now, any thread (sampler_quiesce). */
static _Atomic int handlers_running;

/*
 * Normal context: every thread is about to come under a seccomp filter
 * (TSYNC; sandbox.c has just marked them all): wait until no handler that
 * started before the mark is still running (one past its check would make
 * its system calls under the filter), 100 ms at most.
 */
void sampler_quiesce(void)
{
	struct timespec ts = {0, 50000};
	int i;

	for (i = 0; i < 2000 && atomic_load(&handlers_running) > 0; i++)
		nanosleep(&ts, NULL);
}

void sampler_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	/* Saved, not cleared: the handler can nest inside the program's handler
	 * that sigwrap_chain runs (a signal we moved away from). */
	sig_atomic_t in_sigpath = agent_tls.in_sigpath;

	atomic_fetch_add_explicit(&handlers_running, 1, memory_order_acq_rel);
	agent_tls.in_sigpath = 1;
	if (sig == SIGIO) {
		/* The program's, unless it stands for our perf event's signal
		 * that the kernel could not queue (never a sample: our events
		 * signal with the sampling signal; a program's F_SETSIG SIGIO
		 * may carry the number our event had as its si_fd). */
		if (!timer_sigqueue_full(&agent_tls, si))
			sigwrap_chain(sig, si, uc);
	} else if (timer_is_probe(si)) {
		/* its probe, which could be queued after all */
	} else if (!timer_is_ours(si)) {
		sigwrap_chain(sig, si, uc);
	} else if (agent_sandboxed()) {
		/* Under a seccomp mode or filter of the program's: no system
		 * call of ours (sandbox.c); the sample is counted, not taken. */
		writer_lost(&agent.w, CBN_LOST_SANDBOXED);
	} else if (!capture_is_on()) {
		sampler_park(&agent_tls); /* outside a window: not recorded */
	} else if (agent_tls.parked) {
		/* A parked sampler's signal inside a window: back to sampling. */
		sampler_unpark(&agent_tls);
	} else {
		/* The handler's own time is the profiler's cost (the report's
		 * overhead line): its wall time, two vDSO reads.  A handler
		 * that took longer than SAMPLER_SLOW_NS was most likely
		 * preempted on a loaded machine: then its CPU time, from the
		 * thread CPU clock the sample's weight read at its start
		 * (timer_weigh) to one more read here, so that it is not
		 * charged the time it waited. */
		uint64_t t0 = cbn_clock_ns(CLOCK_MONOTONIC), c0 = agent_tls.cpu_last, d;
		struct cbn_file_header *h = agent.w.hdr;

		sample_take(&agent_tls, uc);
		if (agent_tls.backend == AGENT_BACKEND_PERF && !agent_sandboxed() &&
		    sampler_backlog(&agent_tls, cbn_clock_ns(CLOCK_MONOTONIC) - t0))
			sampler_drain(sig, uc);
		d = cbn_clock_ns(CLOCK_MONOTONIC) - t0;
		if (h && d > SAMPLER_SLOW_NS && agent_tls.cpu_last != c0) {
			uint64_t c1 = agent_thread_cpu();

			if (c1 >= agent_tls.cpu_last && c1 - agent_tls.cpu_last < d)
				d = c1 - agent_tls.cpu_last;
		}
		if (h) {
			atomic_fetch_add_explicit(&h->overhead.site_ns[CBN_OVH_HANDLER], d,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&h->overhead.site_calls[CBN_OVH_HANDLER], 1,
						  memory_order_relaxed);
		}
	}
	agent_tls.in_sigpath = in_sigpath;
	atomic_fetch_sub_explicit(&handlers_running, 1, memory_order_acq_rel);
	errno = saved_errno;
}

static void sampler_thread_event(uint16_t type, struct agent_thread *t, uint64_t cpu_ns)
{
	struct cbn_rec_thread r;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
	r.h.size = sizeof(r);
	r.ts = agent_now();
	r.tid = t->tid;
	r.cpu_ns = cpu_ns;
	memcpy(r.name, t->name, CBN_NAME_MAX);
	r.name[CBN_NAME_MAX - 1] = 0;
	agent_event(&r, sizeof(r));
}

/*
 * Called on the new thread before any user code (fresh: the thread was just
 * created, with the creator's name), for the main thread from the
 * constructor, and for the survivor of a fork: record the thread, give it
 * its handler stack, open our signal in it, then arm its sampler.  A new
 * thread costs a handful of system calls here and at its end.
 */
int sampler_thread_begin(int fresh, const char *name)
{
	struct agent_thread *t = &agent_tls;
	int ret, signo = atomic_load(&agent.signo);
	sigset_t old;

	if (!atomic_load(&agent.active))
		return -1;
	t->tid = agent_gettid();
	t->pid = agent.pid;
	t->chunk = NULL;
	t->names_chunk = NULL;
	t->ended = 0;
	t->sampled = 0;
	t->parked = 0;
	t->slow = 0;
	t->fresh = fresh;
	t->last_sample = NULL;
	t->backend = AGENT_BACKEND_NONE;
	if (name)
		memcpy(t->name, name, CBN_NAME_MAX);
	else
		agent_syscall(SYS_prctl, PR_GET_NAME, t->name); /* not our prctl() */
	t->name[CBN_NAME_MAX - 1] = 0;
	/*
	 * The main thread's CPU clock holds what the process spent before the
	 * agent could sample it: the dynamic loader's work (most of a short
	 * C++ program's: cmake -E, 15-25 ms of relocation) and, after an exec,
	 * the earlier images'.  THREAD_END reports what came after, as the
	 * samples do; the header keeps the rest (start_thread_cpu_ns).  New
	 * threads and fork children start at zero.
	 */
	t->cpu0 = 0;
	if (t->tid == agent.pid)
		t->cpu0 = agent_thread_cpu();
	/* the main thread's start routine, for an end sample with no earlier
	 * one to take the stack of: the program's entry (_start) */
	if (t->tid == agent.pid && !t->start_fn)
		t->start_fn = getauxval(AT_ENTRY);
	threads_register(pthread_self(), t->tid, t->cpu0, t);
	kernel_thread_begin(t);
	sampler_thread_event(CBN_REC_THREAD_START, t, 0);
	if (stacks_thread_begin(fresh) != 0)
		return -ENOMEM;
	sigwrap_unblock(signo);
	/* Outside a capture window the thread starts parked: its sampler at
	 * the park period. */
	sampler_block(&old);
	t->slow = t->parked = !capture_is_on();
	ret = timer_arm(t, signo, !fresh);
	sampler_unblock(&old);
	if (ret && agent.w.hdr)
		atomic_fetch_add(&agent.w.hdr->unsampled_why[CBN_UNSAMPLED_NO_TIMER], 1);
	return ret;
}

/*
 * On the thread itself at its end, every signal blocked: the CPU it used
 * since its last sample (timer_remainder), as a sample flagged
 * CBN_SAMPLE_AT_END with the stack of its last sample when that is still in
 * its current chunk (a ring may have reused an older one), else its start
 * routine alone.
 */
static void sampler_end_sample(struct agent_thread *t)
{
	struct writer *w = &agent.w;
	struct cbn_file_header *h = w->hdr;
	struct cbn_rec_sample *r, *last = t->last_sample;
	uint32_t weight, kernel, size;
	int nf = 0;

	if (!h || t->backend == AGENT_BACKEND_NONE || t->parked || t->pid != agent.pid ||
	    !atomic_load(&agent.active) || !capture_is_on())
		return;
	weight = timer_remainder(t, &kernel);
	if (!weight)
		return;
	size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)agent.depth * sizeof(uint64_t));
	if (last && (!t->chunk || (char *)last < (char *)t->chunk ||
		     (char *)last >= (char *)t->chunk + CBN_CHUNK_SIZE))
		last = NULL;
	r = sample_reserve(t, size);
	if (!r) {
		writer_lost(w, CBN_LOST_BUFFER_FULL);
		return;
	}
	if (last && last != r) {
		uint64_t pcs[CBN_MAX_FRAMES];

		/* the previous sample's whole stack: it may be shared */
		nf = sample_words(t, last, pcs);
		nf = nf < agent.depth ? nf : agent.depth;
		memcpy(r->pc, pcs, (size_t)nf * sizeof(uint64_t));
	} else if (t->start_fn) {
		r->pc[nf++] = t->start_fn;
	}
	if (!nf)
		return;
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = CBN_SAMPLE_AT_END | (last && last != r ? 0 : CBN_SAMPLE_UNSEEN);
	r->h.size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)nf * sizeof(uint64_t));
	r->ts = sample_now();
	r->weight = weight;
	r->nframes = (uint16_t)nf;
	r->kweight = (uint16_t)(kernel < 0xffff ? kernel : 0xffff);
	writer_commit(t->chunk, r->h.size);
	sample_base(t, r, nf, cbn_share_native(r->pc, nf));
	atomic_fetch_add_explicit(&h->samples, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->guard.end_samples, 1, memory_order_relaxed);
}

/*
 * At the process's exit, on the exiting thread (every other one just stops):
 * its CPU since its last sample, drawn as at a thread's end.  Without it a
 * short process lost that much: one that ran 10 ms, mostly in system calls
 * (where the perf event, exclude_kernel, raises nothing), showed 4.6 ms of
 * CPU on average, and one of 1.7 ms none at all.
 */
void sampler_exit_sample(void)
{
	struct agent_thread *t = &agent_tls;
	sigset_t old;

	if (!t->tid || t->ended || t->in_handler || agent_sandboxed())
		return;
	sampler_block(&old);
	sampler_end_sample(t);
	sampler_unblock(&old);
}

/*
 * On the thread itself, at its end (pthread cleanup, raw exit).  Returns 1
 * when the thread's sampling ended here: its caller then frees what the
 * layers above keep for the thread (ranges, NVTX); 0 when there was nothing
 * to end, or under a seccomp filter (no system call, nothing freed).
 */
int sampler_thread_end(void)
{
	struct agent_thread *t = &agent_tls;
	sigset_t old;
	uint64_t cpu;

	if (!t->tid || t->ended)
		return 0;
	if (agent_sandboxed()) {
		/* Under a seccomp filter: no system call (sandbox.c); its
		 * sampler stays as it was, its stack mapped.  It leaves the
		 * table (a lock the program's threads never wait on long). */
		t->ended = 1;
		if (t->pid == agent.pid)
			threads_unregister(pthread_self());
		return 0;
	}
	sampler_block(&old);
	sampler_end_sample(t);
	/* Its chunks are done: in ring mode they are the thread's last stretch. */
	writer_chunk_final(&agent.w, t->chunk);
	t->chunk = NULL;
	writer_chunk_final(&agent.w, t->mem_chunk);
	t->mem_chunk = NULL;
	writer_chunk_final(&agent.w, t->own_chunk);
	t->own_chunk = NULL;
	writer_chunk_final(&agent.w, t->names_chunk);
	t->names_chunk = NULL;
	timer_disarm(t);
	kernel_thread_end(t);
	sampler_unblock(&old);
	t->ended = 1;
	/*
	 * The sampler's last signal can still arrive (timer_disarm): while the
	 * thread's trace cache and stack go away it counts as REENTRANT, and
	 * after, with no agent stack left, it keeps only the pc.
	 */
	t->in_agent++;
	unwind_thread_end();
	stacks_thread_end();
	t->in_agent--;
	if (t->pid != agent.pid || !agent.w.hdr)
		return 1;
	cpu = agent_thread_cpu();
	cpu = cpu > t->cpu0 ? cpu - t->cpu0 : 0;
	threads_unregister(pthread_self());
	sampler_thread_event(CBN_REC_THREAD_END, t, cpu);
	return 1;
}

/*
 * Stop this thread's sampler (before exec); resume re-arms it if paused.
 * With every signal blocked: a sample arriving inside timer_disarm would find
 * the thread half disarmed (a first sample would even upgrade it to a perf
 * event that nothing stops).  One already queued is taken when the mask is
 * restored, before the exec.
 */
void sampler_pause(void)
{
	struct agent_thread *t = &agent_tls;
	sigset_t old;

	sampler_block(&old);
	if (t->backend != AGENT_BACKEND_NONE) {
		timer_disarm(t);
		kernel_thread_end(t);
		t->paused = 1;
	}
	sampler_unblock(&old);
}

void sampler_resume(void)
{
	struct agent_thread *t = &agent_tls;
	sigset_t old;

	sampler_block(&old);
	if (t->paused && !t->ended && atomic_load(&agent.active)) {
		uint64_t cpu = t->cpu_last, carry = t->carry;

		t->paused = 0;
		t->fresh = 0;
		kernel_thread_begin(t);
		timer_arm(t, atomic_load(&agent.signo), 1);
				/* The CPU of the failed exec belongs to the next sample. */
		t->cpu_last = cpu;
		t->carry = carry;
	}
	sampler_unblock(&old);
}
