/*
 * timer.c — the per-thread sampler: a perf_event_open CPU-clock event (runs on
 * hrtimers, so the rate is the one asked for, not the tick's), else a POSIX
 * CLOCK_THREAD_CPUTIME_ID timer.  Both raise the sampling signal on the thread
 * itself; the handler weighs each sample by the thread's CPU time since the
 * last one, so a sample stands for exactly the CPU it represents.
 *
 * The perf event keeps no descriptor: the pages it is mapped with hold the
 * event, the fd is closed at once, and its number stays only as the si_fd the
 * kernel puts in every signal (sampler-safety.md §4).  exclude_kernel=1: the
 * event never fires inside a system call, so sleeps are never interrupted.
 *
 * Each overflow also writes a record with the event's count (its CPU clock,
 * kernel time included) to the mapping's one data page, overwritten in a
 * ring: the handler reads the thread's CPU time there, where a clock_gettime
 * of a thread CPU clock is a system call (~1 us in a VM, a third of a cached
 * sample's cost; timer_cpu).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "aside.h"
#include "floor.h"
#include "sigwrap_watch.h"
#include "timer.h"
#include "../format/cbn_time.h"

/* sigev_value of our POSIX timers: tells our expirations from anyone else's. */
static char timer_cookie;

/* timer_perf_open's errno when the kernel refuses the event's mapping for
 * the locked memory it would take. */
#define TIMER_ENOLOCK ENOBUFS

/* A perf event's mapping: its control page and one page of records, or the
 * control page alone (timer_perf_open). */
#define TIMER_PERF_PAGE 4096u
#define TIMER_PERF_MAP (2 * TIMER_PERF_PAGE)

/*
 * Whether a perf event gets its page of records.  The kernel charges a
 * perf mapping's pages to the user's perf_event_mlock_kb (516 KiB a CPU,
 * shared by all their processes), then to RLIMIT_MEMLOCK, unless the
 * process has CAP_IPC_LOCK; past both the mapping fails and the process's
 * later threads fall back to POSIX timers.  A page of records halves the
 * threads that fit (an unprivileged run of 300 threads on 2 CPUs with
 * ulimit -l 0: 129 on perf events instead of 242), so it is taken only
 * where nothing limits it: CAP_IPC_LOCK (root) or no memlock limit.
 */
static int timer_ring;

void timer_config(void)
{
	struct {
		uint32_t version;
		int pid;
	} hdr = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
	struct {
		uint32_t effective, permitted, inheritable;
	} caps[2] = {{0, 0, 0}, {0, 0, 0}};
	struct rlimit rl;

	timer_ring = (agent_syscall(SYS_capget, &hdr, caps) == 0 &&
		      (caps[0].effective & (1u << 14 /* CAP_IPC_LOCK */))) ||
		     (agent_syscall(SYS_getrlimit, RLIMIT_MEMLOCK, &rl) == 0 &&
		      rl.rlim_cur == RLIM_INFINITY);
}

/* SIGNAL-SAFE.  The length of a perf event's mapping: the kernel tells the
 * size of its records' part in the control page. */
static size_t timer_perf_size(const void *page)
{
	const struct perf_event_mmap_page *m = page;

	return m->data_size ? TIMER_PERF_MAP : TIMER_PERF_PAGE;
}

/* SIGNAL-SAFE (clock_gettime of a CPU clock is a plain system call). */
uint64_t agent_thread_cpu(void)
{
	struct timespec ts;

	if (agent_syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return cbn_ts_ns(&ts);
}

/* SIGNAL-SAFE.  System time of the calling thread, ns. */
static uint64_t timer_thread_sys(void)
{
	struct rusage ru;

	if (agent_syscall(SYS_getrusage, RUSAGE_THREAD, &ru) != 0)
		return 0;
	return cbn_tv_ns(&ru.ru_stime);
}

/* The thread's sampling period: the agent's, or the park period while its
 * sampler waits outside a capture window (sampler.c). */
static uint64_t timer_period(const struct agent_thread *t)
{
	return t->slow ? AGENT_PARK_NS : agent.period_ns;
}

static int timer_posix(struct agent_thread *t, int signo)
{
	struct sigevent sev;
	struct itimerspec its;
	long id = 0;
	uint64_t period = timer_period(t);

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = signo;
	sev.sigev_value.sival_ptr = &timer_cookie;
	sev._sigev_un._tid = (pid_t)t->tid;
	/* The raw call: also used from the handler when the signal moves. */
	if (agent_syscall(SYS_timer_create, CLOCK_THREAD_CPUTIME_ID, &sev, &id) != 0)
		return -errno;
	its.it_interval.tv_sec = (time_t)(period / 1000000000u);
	its.it_interval.tv_nsec = (long)(period % 1000000000u);
	its.it_value = its.it_interval;
	if (agent_syscall(SYS_timer_settime, id, 0, &its, NULL) != 0) {
		int ret = -errno;

		agent_syscall(SYS_timer_delete, id);
		return ret;
	}
	t->timer = (timer_t)id;
	t->backend = AGENT_BACKEND_TIMER;
	return 0;
}

/* What the event is opened for, and what comes back (timer_perf_open may
 * run in a transient thread of aside.c: everything through this struct). */
struct timer_perf_req {
	uint32_t tid;
	int signo;
	uint64_t period;
	int fd;                          /* the number it had (si_fd), closed */
	void *page;
};

/* SIGNAL-SAFE.  Opened for thread tid from any thread of the process (the
 * kernel allows it within a thread group), set up to signal tid, mapped (the
 * mapping keeps the event; perf_mmap marks it VM_DONTCOPY, so a fork child
 * does not inherit it), closed.  0 or -errno. */
static int timer_perf_open(void *p)
{
	struct timer_perf_req *q = p;
	struct perf_event_attr a;
	struct f_owner_ex own = {F_OWNER_TID, (pid_t)q->tid};
	void *page;
	int fd, fl;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = q->period;
	a.sample_type = PERF_SAMPLE_READ; /* the count at each overflow (timer_cpu) */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.remove_on_exec = 1;
	fd = (int)agent_syscall(SYS_perf_event_open, &a, (pid_t)q->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EINVAL || errno == E2BIG)) {
		a.remove_on_exec = 0; /* before Linux 5.13 */
		fd = (int)agent_syscall(SYS_perf_event_open, &a, (pid_t)q->tid, -1, -1,
				  PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* Counting from the open: an overflow before F_SETFL finds no owner
	 * and raises nothing. */
	/* Raw: the program's fcntl is interposed (sigwrap.c) to see its own
	 * O_ASYNC descriptors, and these are not the program's. */
	if (agent_syscall(SYS_fcntl, fd, F_SETOWN_EX, &own) != 0 ||
	    agent_syscall(SYS_fcntl, fd, F_SETSIG, q->signo) != 0 ||
	    agent_syscall(SYS_fcntl, fd, F_SETFL, O_RDWR | O_ASYNC) != 0)
		goto fail;
	/* Read-only: the kernel overwrites the ring's oldest records, and never
	 * waits for a reader or writes a record of what it lost.  Without
	 * the page of records (timer_ring, or a mapping refused), the control
	 * page alone: the clock is then read instead (timer_cpu). */
	page = timer_ring ? (void *)agent_syscall(SYS_mmap, NULL, TIMER_PERF_MAP, PROT_READ,
						  MAP_SHARED, fd, 0)
			  : (void *)-EPERM;
	if ((long)page < 0 && (long)page > -4096)
		page = (void *)agent_syscall(SYS_mmap, NULL, TIMER_PERF_PAGE, PROT_READ, MAP_SHARED,
					     fd, 0);
	if ((long)page < 0 && (long)page > -4096) {
		/* EPERM here is the memlock spent (timer_ring), not a refusal
		 * of perf events: told apart, and not final (it frees as
		 * threads end). */
		errno = (long)page == -EPERM ? TIMER_ENOLOCK : -(int)(long)page;
		goto fail;
	}
	q->fd = fd;
	q->page = page;
	agent_syscall(SYS_close, fd);
	return 0;
fail:
	fl = -errno;
	agent_syscall(SYS_close, fd);
	return fl ? fl : -EIO;
}

/*
 * A CPU-clock event for this thread, signalling it, opened aside (aside.c):
 * its descriptor never exists in the program's table while another thread
 * of the program could open a file.
 */
static int timer_perf(struct agent_thread *t, int signo)
{
	struct timer_perf_req q = {t->tid, signo, timer_period(t), -1, NULL};
	int ret = aside_run(timer_perf_open, &q);

	if (ret)
		return ret;
	t->perf_fd = q.fd;
	t->perf_page = q.page;
	/* The count started at the open, a few microseconds of the thread's
	 * CPU ago: the thread's CPU time is count + base from now on. */
	t->perf_base = agent_thread_cpu();
	t->backend = AGENT_BACKEND_PERF;
	return 0;
}

static const char *timer_perf_why(int err)
{
	switch (err) {
	case -EACCES:
		return "perf events refused (perf_event_paranoid)";
	case -EPERM:
		return "perf events refused (seccomp or missing CAP_PERFMON)";
	case -ENOSYS:
	case -ENOENT:
	case -EOPNOTSUPP:
		return "perf events unavailable in this kernel";
	case -EMFILE:
	case -ENFILE:
		return "no descriptor free for a perf event";
	case -TIMER_ENOLOCK:
		return "no locked memory left for a perf event (perf_event_mlock_kb, ulimit -l)";
	default:
		return "perf event setup failed";
	}
}

/* Refusals that will not change for another thread of this process. */
static int timer_refusal_final(int err)
{
	return err == -EACCES || err == -EPERM || err == -ENOSYS || err == -ENOENT ||
	       err == -EOPNOTSUPP;
}

/* The header's timer_reason is claimed by the first thread to fail: handlers
 * on several threads can fail at once (timer_upgrade).  Reset in a fork child
 * with the new file (timer_after_fork_child). */
static _Atomic int timer_reason_taken;

/* SIGNAL-SAFE.  Remember why perf events are not used (first reason wins). */
static void timer_perf_failed(int ret)
{
	struct cbn_file_header *h = agent.w.hdr;
	const char *why = !agent.want_perf ? "CBN_PERF_EVENTS=0" : timer_perf_why(ret);
	size_t i;

	if (timer_refusal_final(ret))
		atomic_store_explicit(&agent.perf_refused, -ret, memory_order_relaxed);
	if (!h || h->timer_reason_len || atomic_exchange(&timer_reason_taken, 1))
		return;
	h->perf_errno = agent.want_perf ? -ret : 0;
	for (i = 0; why[i] && i < sizeof(h->timer_reason) - 1; i++)
		h->timer_reason[i] = why[i];
	h->timer_reason_len = (uint32_t)i;
}

/* A fork child starts a new file, whose header has no reason yet. */
void timer_after_fork_child(void)
{
	atomic_store(&timer_reason_taken, 0);
}

/*
 * Start sampling the calling thread on signo (normal context: thread begin,
 * exec failure, a fork child).  perf_now: open the perf event at once (the
 * main thread); otherwise start on a POSIX timer, which costs a third as much
 * to create and delete, and let the first sample move the thread to perf
 * (timer_upgrade): a thread that never runs a full period never pays for it.
 * Returns 0 or -errno.
 */
int timer_arm(struct agent_thread *t, int signo, int perf_now)
{
	int ret;

	t->backend = AGENT_BACKEND_NONE;
	t->signo = signo;
	t->perf_fd = -1;
	if (t->fresh)
		t->perf_fd_prev = -1;
	if (t->fresh) {
		t->cpu_last = t->sys_last = 0;
	} else {
		t->cpu_last = agent_thread_cpu();
		t->sys_last = timer_thread_sys();
	}
	t->carry = 0;
	t->sys_carry = 0;
	if (perf_now && agent.want_perf &&
	    !atomic_load_explicit(&agent.perf_refused, memory_order_relaxed)) {
		ret = timer_perf(t, signo);
		if (ret == 0)
			return 0;
		timer_perf_failed(ret);
	} else if (!agent.want_perf) {
		timer_perf_failed(-EOPNOTSUPP);
	}
	return timer_posix(t, signo);
}

/*
 * SIGNAL-SAFE.  Move the thread's sampler to the park period (slow 1: its
 * capture window closed) or back to the sampling period (slow 0), on the
 * same kind of sampler: a POSIX timer is re-set, a perf event replaced by a
 * new one (its period cannot change without its descriptor, which is
 * closed; opened aside like the first).  The clocks restart: the next sample
 * does not carry the time spent parked.  Returns 0, or -errno with the
 * sampler left as it was.
 */
int timer_slow(struct agent_thread *t, int slow)
{
	struct agent_thread n;
	struct itimerspec its;
	uint64_t period;
	int ret = 0;

	if (t->backend == AGENT_BACKEND_NONE)
		return -EINVAL;
	n = *t;
	n.slow = slow;
	period = timer_period(&n);
	if (t->backend == AGENT_BACKEND_TIMER) {
		its.it_interval.tv_sec = (time_t)(period / 1000000000u);
		its.it_interval.tv_nsec = (long)(period % 1000000000u);
		its.it_value = its.it_interval;
		if (agent_syscall(SYS_timer_settime, (long)t->timer, 0, &its, NULL) != 0)
			return -errno;
	} else {
		ret = timer_perf(&n, t->signo);
		if (ret)
			return ret;
		timer_disarm(t); /* its last signals stay recognisable (perf_fd_prev) */
		t->backend = AGENT_BACKEND_PERF;
		t->perf_fd = n.perf_fd;
		t->perf_page = n.perf_page;
		t->perf_base = n.perf_base;
	}
	t->slow = slow;
	t->cpu_last = agent_thread_cpu();
	t->sys_last = timer_thread_sys();
	t->carry = 0;
	t->sys_carry = 0;
	return 0;
}

/* SIGNAL-SAFE.  From the thread's POSIX timer to a perf event. */
void timer_upgrade(struct agent_thread *t)
{
	struct agent_thread n;
	int ret;

	if (t->backend != AGENT_BACKEND_TIMER || !agent.want_perf ||
	    atomic_load_explicit(&agent.perf_refused, memory_order_relaxed))
		return;
	n = *t;
	ret = timer_perf(&n, t->signo);
	if (ret) {
		timer_perf_failed(ret);
		return;
	}
	agent_syscall(SYS_timer_delete, (long)t->timer);
	t->backend = AGENT_BACKEND_PERF;
	t->perf_fd = n.perf_fd;
	t->perf_page = n.perf_page;
	t->perf_base = n.perf_base;
}

/* Stop the thread's sampler.  A signal already raised is delivered (to the
 * handler) as the system call that stops it returns. */
void timer_disarm(struct agent_thread *t)
{
	if (t->backend == AGENT_BACKEND_TIMER)
		agent_syscall(SYS_timer_delete, (long)t->timer);
	else if (t->backend == AGENT_BACKEND_PERF && t->perf_page)
		agent_syscall(SYS_munmap, t->perf_page, timer_perf_size(t->perf_page));
	t->perf_page = NULL;
	/* Its last signal may still come (irq_work runs it after the overflow):
	 * it stays recognisable as ours. */
	if (t->backend == AGENT_BACKEND_PERF)
		t->perf_fd_prev = t->perf_fd;
	t->perf_fd = -1;
	t->backend = AGENT_BACKEND_NONE;
}

/*
 * SIGNAL-SAFE.  A SIGIO from the kernel (SI_KERNEL) on a thread sampled by a
 * perf event: the event's real-time signal could not be queued (the user's
 * RLIMIT_SIGPENDING is used up, or set to 0) and the kernel sent plain SIGIO
 * instead (fs/fcntl.c, send_sigio_to_task), which would kill the program.
 * The agent owns SIGIO while the program leaves it at its default
 * (sigwrap.c) and takes it here: the thread moves to a POSIX CPU timer,
 * whose one signal is preallocated when it is made (it never needs a queue
 * slot later; timer_create fails instead when none is free, and the thread
 * is then left unsampled, counted), and no thread of the process opens a
 * perf event any more.  Returns 1 when the signal was this.
 */
static char timer_probe_cookie;

/* SIGNAL-SAFE.  One of our queue probes (below), arriving: nothing to do. */
int timer_is_probe(const siginfo_t *si)
{
	return si->si_code == SI_QUEUE && si->si_value.sival_ptr == &timer_probe_cookie &&
	       (uint32_t)si->si_pid == agent.pid;
}

/* SIGNAL-SAFE.  1 when a real-time signal to this thread cannot be queued
 * now (EAGAIN): the probe, when it can, arrives later and is ignored. */
static int timer_queue_full(struct agent_thread *t)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = t->signo;
	si.si_code = SI_QUEUE;
	si.si_pid = (pid_t)agent.pid;
	si.si_uid = getuid();
	si.si_value.sival_ptr = &timer_probe_cookie;
	return agent_syscall(SYS_rt_tgsigqueueinfo, (pid_t)agent.pid, (pid_t)t->tid, t->signo, &si) != 0 &&
	       errno == EAGAIN;
}

int timer_sigqueue_full(struct agent_thread *t, const siginfo_t *si)
{
	struct cbn_file_header *h = agent.w.hdr;
	const char *why = "perf event signals could not be queued (RLIMIT_SIGPENDING): POSIX timers";
	size_t i;

	if (si->si_code != SI_KERNEL || (t->backend != AGENT_BACKEND_PERF && t->perf_fd_prev < 0) ||
	    t->signo < SIGRTMIN)
		return 0;
	/*
	 * The program's own O_ASYNC descriptor without F_SETSIG sends the same
	 * SIGIO.  A program that never asked for one (its fcntl and ioctl are
	 * interposed: sigwrap_app_async) gets none: ours.  Otherwise ours only
	 * if a real-time signal cannot be queued now (the user's queue is
	 * shared by all their processes and may have a free slot again by the
	 * time this runs: such a program may then die of a SIGIO of ours).
	 */
	if (sigwrap_app_async() && !timer_queue_full(t))
		return 0;
	atomic_store_explicit(&agent.perf_refused, EAGAIN, memory_order_relaxed);
	writer_lost(&agent.w, CBN_LOST_SIGQUEUE);
	if (t->backend != AGENT_BACKEND_PERF)
		return 1; /* a late one: the thread has moved already */
	timer_disarm(t);
	t->perf_fd_prev = -1;
	if (h) {
		atomic_fetch_add_explicit(&h->guard.sigqueue_full, 1, memory_order_relaxed);
		/* This reason outranks any other: written over it (the same
		 * bytes if two threads write at once). */
		atomic_store(&timer_reason_taken, 1);
		h->perf_errno = EAGAIN;
		for (i = 0; why[i] && i < sizeof(h->timer_reason) - 1; i++)
			h->timer_reason[i] = why[i];
		h->timer_reason[i] = 0;
		h->timer_reason_len = (uint32_t)i;
	}
	if (timer_posix(t, t->signo) != 0 && h)
		atomic_fetch_add(&h->unsampled_why[CBN_UNSAMPLED_NO_TIMER], 1);
	return 1;
}

/* SIGNAL-SAFE. */
int timer_is_ours(const siginfo_t *si)
{
	const struct agent_thread *t = &agent_tls;

	if (si->si_code == SI_TIMER)
		return si->si_value.sival_ptr == &timer_cookie;
	return si->si_code > 0 && si->si_code <= POLL_HUP && si->si_fd >= 0 &&
	       (si->si_fd == t->perf_fd || si->si_fd == t->perf_fd_prev);
}

/*
 * SIGNAL-SAFE.  The thread's CPU time, ns.  On a perf event, read from the
 * record of its latest overflow when that overflow came after the last
 * sample (the signal this handler runs for: the event raises it in user mode
 * only, right after writing the record), else from the clock.  Only this
 * thread's overflows write the ring, and they interrupt this thread: a record
 * read here is whole, and the next one lands after it.
 */
static uint64_t timer_cpu(const struct agent_thread *t)
{
	const struct perf_event_mmap_page *m = t->perf_page;
	struct {
		struct perf_event_header h;
		uint64_t count;
	} r;
	uint64_t head, off;

	if (t->backend != AGENT_BACKEND_PERF || !m || !m->data_size)
		return agent_thread_cpu();
	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	off = (head - sizeof(r)) % TIMER_PERF_PAGE;
	if (head < sizeof(r) || off > TIMER_PERF_PAGE - sizeof(r))
		return agent_thread_cpu();
	memcpy(&r, (const char *)m + TIMER_PERF_PAGE + off, sizeof(r));
	if (r.h.type != PERF_RECORD_SAMPLE || r.h.size != sizeof(r) ||
	    r.count + t->perf_base <= t->cpu_last)
		return agent_thread_cpu();
	return r.count + t->perf_base;
}

/* sys_last when the last system time read is too old to subtract from: the
 * next read only starts the count again. */
#define SYS_STALE UINT64_MAX

/*
 * SIGNAL-SAFE.  The thread's CPU time since the last sample, in periods
 * (the remainder carried to the next), and the part of it the kernel's
 * accounting gives to system time.
 *
 * The system time costs a getrusage (~1 us in a VM, as much as the rest of
 * a cached sample), so it is read only when something uses it:
 *  - never while the thread's kernel event is open: the event's own count
 *    splits the sample (kernel.c), and the read after it starts afresh;
 *  - otherwise at a sample that stands for more than one period (the thread
 *    was in the kernel, where the sampler does not fire, or blocked), and at
 *    every fourth: system time is accounted at the scheduler's tick (4 ms at
 *    250 Hz), so a finer read would split no better.  What a read finds
 *    goes to that sample, as whole periods up to its weight; the rest waits
 *    for the next ones (at most four periods of it), so the total is kept.
 */
void timer_weigh(struct agent_thread *t, uint32_t *weight, uint32_t *kernel)
{
	uint64_t cpu = timer_cpu(t), sys, d, ds = 0, w, k, p = agent.period_ns;

	d = cpu > t->cpu_last ? cpu - t->cpu_last : 0;
	t->cpu_last = cpu;
	t->gap = d;
	d += t->carry;
	w = d / p;
	if (w == 0)
		w = 1; /* a signal is at least one period of CPU: the clock just lags */
	t->carry = d > w * p ? d - w * p : 0;
	if (w > UINT32_MAX)
		w = UINT32_MAX;
	*weight = (uint32_t)w;
	t->nweigh++;
	if (t->kring.base) {
		t->sys_last = SYS_STALE;
		t->sys_carry = 0;
		*kernel = 0;
		return;
	}
	if (w > 1 || (t->nweigh & 3) == 0 || t->sys_last == SYS_STALE) {
		sys = timer_thread_sys();
		if (t->sys_last != SYS_STALE && sys > t->sys_last)
			ds = sys - t->sys_last;
		t->sys_last = sys;
	}
	ds += t->sys_carry;
	k = ds / p;
	if (k > w)
		k = w;
	ds -= k * p;
	t->sys_carry = ds < 4 * p ? ds : 4 * p;
	*kernel = (uint32_t)k;
}

/*
 * Normal context, every signal blocked: the CPU the thread used since its
 * last sample, at its end, as whole periods with the remainder drawn: one
 * more period with probability remainder/period.  A thread shorter than a
 * period, which its sampler never reached (or a POSIX timer the tick never
 * checked), is so counted in proportion to its CPU on average.
 */
uint32_t timer_remainder(struct agent_thread *t, uint32_t *kernel)
{
	uint64_t cpu = agent_thread_cpu(), sys = timer_thread_sys(), d, ds, w, x;

	d = (cpu > t->cpu_last ? cpu - t->cpu_last : 0) + t->carry;
	ds = t->sys_last != SYS_STALE && sys > t->sys_last ? sys - t->sys_last : 0;
	ds += t->sys_carry;
	t->sys_carry = 0;
	t->cpu_last = cpu;
	t->sys_last = sys;
	t->carry = 0;
	w = d / agent.period_ns;
	/* splitmix64 of the clock and the thread: a draw per thread end */
	x = cpu ^ ((uint64_t)t->tid << 32) ^ agent_now();
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	if (x % agent.period_ns < d % agent.period_ns)
		w++;
	if (w > UINT32_MAX)
		w = UINT32_MAX;
	*kernel = d ? (uint32_t)(w * (ds < d ? ds : d) / d) : 0;
	return (uint32_t)w;
}

/*
 * SIGNAL-SAFE.  The sampling signal moved (the program took the old one):
 * re-arm this thread on the new one, unless the thread blocks it (then it
 * stays on the old one, which the agent keeps forwarding).  uc: the
 * interrupted context (its mask), NULL from normal context.
 */
void timer_rearm_signal(struct agent_thread *t, const ucontext_t *uc)
{
	struct agent_thread n;
	int signo = atomic_load(&agent.signo);

	if (signo == t->signo || t->backend == AGENT_BACKEND_NONE ||
	    (uc && sigismember(&uc->uc_sigmask, signo) == 1))
		return;
	n = *t;
	if (t->backend == AGENT_BACKEND_PERF) {
		if (timer_perf(&n, signo) != 0)
			return;
	} else if (timer_posix(&n, signo) != 0) {
		return;
	}
	timer_disarm(t);
	t->perf_fd_prev = t->perf_fd; /* its last signals may still be queued */
	t->backend = n.backend;
	t->timer = n.timer;
	t->perf_fd = n.perf_fd;
	t->perf_page = n.perf_page;
	t->perf_base = n.perf_base;
	t->signo = signo;
}

/* Normal context: the calling thread moves to the new sampling signal now
 * (the thread whose sigaction made it move). */
void timer_move_self(void)
{
	sigset_t all, old;

	sigfillset(&all);
	agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	timer_rearm_signal(&agent_tls, NULL);
	agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}
