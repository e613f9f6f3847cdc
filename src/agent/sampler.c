/*
 * sampler.c — CPU sampling: one CLOCK_THREAD_CPUTIME_ID timer per thread, the
 * signal handler that unwinds and appends a sample to the thread's chunk, and
 * the thread begin/end bookkeeping around it.
 *
 * SIGNAL CONTEXT: sampler_handler and everything it calls (sample_take,
 * writer_chunk_new/reserve/commit/lost, unw_backtrace's warm fast path).  No
 * malloc, no locks, no stdio, no dlsym there; errno is saved and restored.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent.h"

__thread struct agent_thread agent_tls AGENT_TLS;

/* sigev_value of our timers: tells our expirations from anyone else's signal. */
static char sampler_cookie;

/* Text ranges where the handler must not unwind (ld.so: dl_iterate_phdr from
 * libunwind could deadlock against the loader lock, gperftools #775/#1294) and
 * our own text (to find the signal frame when the interrupted pc is missing). */
static uint64_t ldso_lo, ldso_hi, self_lo, self_hi;

void sampler_set_ldso(uint64_t lo, uint64_t hi)
{
	ldso_lo = lo;
	ldso_hi = hi;
}

void sampler_set_self(uint64_t lo, uint64_t hi)
{
	self_lo = lo;
	self_hi = hi;
}

int sampler_is_ours(const siginfo_t *si)
{
	return si->si_code == SI_TIMER && si->si_value.sival_ptr == &sampler_cookie;
}

static uint64_t sample_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO; async-signal-safe */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Turn libunwind's trace (which starts in this handler, then the signal
 * trampoline) into the interrupted thread's stack, in place: pc[0] = the
 * interrupted pc, then return addresses, at most max.  Returns the count.
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
		/* The trace lost the signal frame's pc (e.g. rip in code without
		 * CFI).  Skip our own frames and the trampoline, prepend rip. */
		int last_self = -1;

		for (i = 0; i < n; i++)
			if (pc[i] >= self_lo && pc[i] < self_hi)
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

/*
 * One sample.  The record is reserved at its largest first and libunwind
 * writes straight into it: the handler keeps its own stack use small, since
 * it may run on a small sigaltstack (SA_ONSTACK).
 */
static void sample_take(struct agent_thread *t, ucontext_t *uc, uint32_t weight)
{
	struct writer *w = &agent.w;
	struct cbn_file_header *h = w->hdr;
	struct cbn_rec_sample *r;
	uint64_t rip;
	uint32_t size, max_size;
	int n, nf, flags = 0;

	if (!h)
		return;
	if (!atomic_load_explicit(&agent.active, memory_order_relaxed)) {
		writer_lost(w, CBN_LOST_DISABLED);
		return;
	}
	if (!t->tid) {
		writer_lost(w, CBN_LOST_NO_THREAD);
		return;
	}
	if (t->pid != agent.pid) {
		writer_lost(w, CBN_LOST_FOREIGN_PID);
		return;
	}
	if (t->in_handler || t->in_agent) {
		writer_lost(w, CBN_LOST_REENTRANT);
		return;
	}
	t->in_handler = 1;
	/* +8 frames: the handler's own and the truncation probe. */
	max_size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)(agent.depth + 8) * sizeof(uint64_t));
	r = t->chunk ? writer_reserve(t->chunk, max_size) : NULL;
	if (!r) {
		t->chunk = writer_chunk_new(w, CBN_CHUNK_SAMPLES, t->tid);
		if (!t->chunk) {
			/* Out of allocated space: grow here (raw syscalls, try-lock);
			 * the background thread may not exist or may be late. */
			uint64_t used = atomic_load_explicit(&h->next_chunk, memory_order_relaxed);

			writer_grow_signal(w, used / 4 > (1u << 20) ? used / 4 : (1u << 20));
			t->chunk = writer_chunk_new(w, CBN_CHUNK_SAMPLES, t->tid);
		}
		r = t->chunk ? writer_reserve(t->chunk, max_size) : NULL;
	}
	if (!r) {
		writer_lost(w, CBN_LOST_BUFFER_FULL);
		goto out;
	}
	rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	if (!t->ready || t->no_unwind || (rip >= ldso_lo && rip < ldso_hi) || !agent_loader_ok() ||
	    !unwind_begin()) {
		r->pc[0] = rip;
		nf = 1;
		flags |= CBN_SAMPLE_PC_ONLY;
	} else {
		n = unwind_backtrace((void **)r->pc, agent.depth + 8);
		unwind_end();
		nf = sample_frames(r->pc, n > 0 ? n : 0, rip, agent.depth, &flags);
	}

	size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + (size_t)nf * sizeof(uint64_t));
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = (uint16_t)flags;
	r->h.size = size;
	r->ts = sample_now();
	atomic_store_explicit(&h->end_mono_ns, r->ts, memory_order_relaxed);
	r->weight = weight;
	r->nframes = (uint16_t)nf;
	r->reserved = 0;
	writer_commit(t->chunk, size);
	atomic_fetch_add_explicit(&h->samples, 1, memory_order_relaxed);
	if (flags & CBN_SAMPLE_TRUNCATED)
		atomic_fetch_add_explicit(&h->truncated, 1, memory_order_relaxed);
	if (flags & CBN_SAMPLE_PC_ONLY)
		atomic_fetch_add_explicit(&h->pc_only, 1, memory_order_relaxed);
out:
	t->in_handler = 0;
}

void sampler_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	if (!sampler_is_ours(si)) {
		sigwrap_chain(sig, si, uc);
	} else {
		/* si_overrun: expirations the tick-driven CPU timer merged into
		 * this signal (cpu-sampling.md §2.1). */
		int over = si->si_overrun > 0 ? si->si_overrun : 0;

		sample_take(&agent_tls, uc, 1u + (uint32_t)over);
	}
	errno = saved_errno;
}

static int sampler_arm(struct agent_thread *t)
{
	struct sigevent sev;
	struct itimerspec its;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = agent.signo;
	sev.sigev_value.sival_ptr = &sampler_cookie;
	sev._sigev_un._tid = (pid_t)t->tid;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t->timer) < 0)
		return -errno;
	its.it_interval.tv_sec = (time_t)(agent.period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(agent.period_ns % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(t->timer, 0, &its, NULL) < 0) {
		int ret = -errno;

		timer_delete(t->timer);
		return ret;
	}
	t->armed = 1;
	return 0;
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
	prctl(PR_GET_NAME, r.name, 0, 0, 0);
	r.name[CBN_NAME_MAX - 1] = 0;
	agent_event(&r, sizeof(r));
}

/*
 * Called on the new thread before any user code (and for the main thread from
 * the constructor, and for the survivor of a fork): record the thread, unblock
 * our signal, warm libunwind up, then arm the timer.  Order matters: the first
 * signal must find a warm unwinder.
 */
int sampler_thread_begin(void)
{
	struct agent_thread *t = &agent_tls;
	struct timespec ts0;
	int ret;

	if (!atomic_load(&agent.active))
		return -1;
	t->tid = agent_gettid();
	t->pid = (uint32_t)syscall(SYS_getpid);
	t->chunk = NULL;
	t->ended = 0;
	t->armed = 0;
	if (t->pid != agent.pid)
		return -1; /* a raw-forked child: its pid has no file */
	/*
	 * A thread's CPU clock survives exec: the main thread of an exec'd image
	 * has already spent the previous images' CPU.  THREAD_END reports this
	 * image's share only.  (New threads and fork children start at zero.)
	 */
	t->cpu0 = 0;
	if (agent.exec_seq > 0 && t->tid == agent.pid && clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts0) == 0)
		t->cpu0 = (uint64_t)ts0.tv_sec * 1000000000u + (uint64_t)ts0.tv_nsec;
	sigwrap_unblock();
	/* Room for this thread's first chunk before its first sample; the
	 * background thread keeps growing the file later. */
	writer_grow(&agent.w, 4 * CBN_CHUNK_SIZE);
	if (!t->ready) /* a fork child's thread is warm already */
		unwind_warm();
	t->ready = 1;
	threads_register(pthread_self(), t->tid, t->cpu0);
	sampler_thread_event(CBN_REC_THREAD_START, t, 0);
	ret = sampler_arm(t);
	return ret;
}

/* On the thread itself, at its end (pthread key destructor or exit). */
void sampler_thread_end(void)
{
	struct agent_thread *t = &agent_tls;
	struct timespec ts;
	uint64_t cpu = 0;

	if (!t->tid || t->ended)
		return;
	if (t->armed) {
		timer_delete(t->timer);
		t->armed = 0;
	}
	t->ended = 1;
	ranges_thread_end();
	nvtx_thread_end();
	if (t->pid != agent.pid || !agent.w.hdr)
		return;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	cpu = cpu > t->cpu0 ? cpu - t->cpu0 : 0;
	threads_unregister(pthread_self());
	sampler_thread_event(CBN_REC_THREAD_END, t, cpu);
}

/* Stop this thread's timer (before exec); resume re-arms it if paused. */
void sampler_pause(void)
{
	struct agent_thread *t = &agent_tls;

	if (t->armed) {
		timer_delete(t->timer);
		t->armed = 0;
		t->paused = 1;
	}
}

void sampler_resume(void)
{
	struct agent_thread *t = &agent_tls;

	if (t->paused && !t->ended && atomic_load(&agent.active)) {
		t->paused = 0;
		sampler_arm(t);
	}
}
