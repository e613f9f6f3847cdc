/*
 * offcpu.c — the off-CPU sampler (--off-cpu, docs/waiting.md §1): one thread
 * of the agent that, rate_hz times a second, looks at every thread of the
 * process without interrupting it, and records where the blocked ones wait.
 *
 * A look at thread TID, from this thread (never a signal handler):
 *   1. its CPU clock (clock_gettime on the thread's CPU clock id): a thread
 *      that was on the CPU for nearly all of the last interval is running;
 *   2. otherwise /proc/self/task/TID/syscall: "running", or the system call
 *      it is blocked in with its arguments, stack pointer and pc ("-1 sp pc"
 *      when blocked outside one, in a page fault);
 *   3. for a new place: a copy of its stack from sp (process_vm_readv, which
 *      fails on an unmapped page instead of faulting), unwound by the agent's
 *      libunwind from (pc, sp) (unwind_blocked), then the syscall file read
 *      again: the same sp and pc confirm that the thread did not move while
 *      its stack was read;
 *   4. a futex wait also reads the 32-bit word 8 bytes past the futex (a
 *      glibc mutex's owner tid: who holds the lock).
 * No signal is sent, so no system call of the program sees EINTR, and the
 * program's timing changes only by this thread's CPU (bench/offcpu.sh).
 *
 * Each look that finds a thread blocked stands for the wall time since the
 * previous look (unbiased: the chance to be seen blocked is the share of time
 * blocked).  Consecutive looks at the same place are one OFFCPU record,
 * updated in place in the session file (writer_append_event_at), so a process
 * killed mid-wait keeps what was seen; a stretch is cut every second.
 * Runnable-but-not-running time comes from schedstat's run delay, read every
 * 200 ms per thread, as RUNQ records without a stack.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "python.h"
#include "../format/cbn_time.h"

#define OFFCPU_SLOTS 1024                /* threads followed at once */
#define OFFCPU_HASH 2048                 /* power of two, > 1.5 x OFFCPU_SLOTS */
#define OFFCPU_STACK_COPY (32 * 1024)    /* bytes of stack copied from sp */
#define OFFCPU_CUT_NS 1000000000ull      /* a stretch is cut every second */
#define OFFCPU_SCHED_NS 200000000ull     /* schedstat read per thread every 200 ms */
#define OFFCPU_MAX_DT_NS 1000000000ull /* a look stands for at most this */
#define OFFCPU_RUNNING 0.9               /* on the CPU this share of the interval: running */

struct offcpu_rec {
	struct cbn_rec_offcpu r;
	uint64_t pc[CBN_MAX_FRAMES];
};

/* One followed thread.  Only the sampler thread touches these. */
struct offcpu_slot {
	uint32_t tid;                    /* 0: free */
	int seen;                        /* in this tick's thread list */
	uint64_t last_look;              /* ns of the previous look (0: none yet) */
	uint64_t last_cpu;               /* its CPU clock then */
	/* the stretch being extended (rec != NULL) */
	struct cbn_rec_offcpu *rec;      /* in the session file */
	int64_t nr;
	uint64_t sp, pc, addr;
	uint64_t rec_start;
	/* the last stack read, reused when a cut stretch goes on */
	int npcs;
	uint16_t flags;
	uint32_t owner;
	uint64_t pcs[CBN_MAX_FRAMES];
	/* schedstat */
	uint64_t next_sched;
	uint64_t run_delay;              /* last value read; 0 with have_delay 0 */
	int have_delay;
};

struct offcpu_state {
	struct offcpu_slot slot[OFFCPU_SLOTS];
	int16_t hash[OFFCPU_HASH];       /* slot index + 1, 0: empty */
	uint32_t tids[OFFCPU_SLOTS];     /* this tick's thread list */
	int ntids;
	unsigned char stack[OFFCPU_STACK_COPY];
	struct offcpu_rec rec;
};

static long offcpu_hz;                   /* CBN_OFFCPU, 0: off */
static struct offcpu_state *st;          /* mmap'd at start: 2.4 MiB, touched as used */
static _Atomic int offcpu_running;       /* the thread exists */
static _Atomic int offcpu_stop;          /* exit: write nothing more */
static uint32_t offcpu_self;             /* the sampler thread's tid */

/* What a blocked thread waits in, from the system call's number (x86-64 and
 * every architecture that has these calls). */
static uint16_t offcpu_kind(int64_t nr)
{
	if (nr < 0)
		return CBN_OFF_FAULT;
	switch (nr) {
	case SYS_futex:
#ifdef SYS_futex_waitv
	case SYS_futex_waitv:
#endif
		return CBN_OFF_FUTEX;
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_preadv: case SYS_pwritev:
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_recvmmsg: case SYS_sendmmsg: case SYS_accept: case SYS_accept4:
	case SYS_connect: case SYS_fsync: case SYS_fdatasync: case SYS_openat:
	case SYS_flock: case SYS_fcntl: case SYS_io_getevents: case SYS_sendfile:
	case SYS_splice: case SYS_msync: case SYS_sync_file_range:
#ifdef SYS_open
	case SYS_open:
#endif
#ifdef SYS_io_uring_enter
	case SYS_io_uring_enter:
#endif
		return CBN_OFF_IO;
	case SYS_ppoll: case SYS_pselect6: case SYS_epoll_pwait:
#ifdef SYS_poll
	case SYS_poll:
#endif
#ifdef SYS_select
	case SYS_select:
#endif
#ifdef SYS_epoll_wait
	case SYS_epoll_wait:
#endif
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return CBN_OFF_POLL;
	case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_rt_sigsuspend:
	case SYS_rt_sigtimedwait:
#ifdef SYS_pause
	case SYS_pause:
#endif
		return CBN_OFF_SLEEP;
	case SYS_wait4: case SYS_waitid:
		return CBN_OFF_CHILD;
	default:
		return CBN_OFF_OTHER;
	}
}

/* Read a small /proc file of thread tid into buf (NUL-terminated).  Returns
 * the bytes read, or -errno. */
static int offcpu_read(uint32_t tid, const char *what, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "/proc/self/task/%u/%s", tid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	return (int)n;
}

struct offcpu_where {
	int64_t nr;                      /* -1 outside a system call */
	uint64_t a0, sp, pc;
};

/* /proc/self/task/TID/syscall.  1: blocked (*w filled), 0: running or gone. */
static int offcpu_where(uint32_t tid, struct offcpu_where *w)
{
	char buf[256], *p, *end;
	uint64_t v[9];
	int n = 0;

	if (offcpu_read(tid, "syscall", buf, sizeof(buf)) <= 0 || buf[0] == 'r')
		return 0;
	w->nr = strtoll(buf, &p, 10);
	while (n < 9) {
		v[n] = strtoull(p, &end, 16);
		if (end == p)
			break;
		n++;
		p = end;
	}
	if (w->nr < 0 && n >= 2) {
		w->a0 = 0;
		w->sp = v[0];
		w->pc = v[1];
		return 1;
	}
	if (n == 8) {
		w->a0 = v[0];
		w->sp = v[6];
		w->pc = v[7];
		return 1;
	}
	return 0;
}

/* Copy up to len bytes of this process's memory at addr, page by page: stops
 * at the first unmapped page.  Returns the bytes copied. */
static size_t offcpu_copy(void *dst, uint64_t addr, size_t len)
{
	struct iovec local, remote[OFFCPU_STACK_COPY / 4096 + 1];
	uint64_t a = addr;
	size_t done = 0;
	ssize_t n;
	int i = 0;

	while (done < len && i < (int)(sizeof(remote) / sizeof(remote[0]))) {
		size_t in_page = 4096 - (a & 4095);

		if (in_page > len - done)
			in_page = len - done;
		remote[i].iov_base = (void *)(uintptr_t)a;
		remote[i].iov_len = in_page;
		a += in_page;
		done += in_page;
		i++;
	}
	local.iov_base = dst;
	local.iov_len = done;
	n = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1UL, remote, (unsigned long)i, 0UL);
	return n > 0 ? (size_t)n : 0;
}

static void offcpu_close(struct offcpu_slot *s)
{
	s->rec = NULL;
}

/* Start a stretch for s at place w, now, standing for dt ns. */
static void offcpu_open(struct offcpu_slot *s, const struct offcpu_where *w, uint64_t now,
			uint64_t dt, int same_place)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct offcpu_rec *r = &st->rec;
	struct offcpu_where again;
	void *where;
	size_t copied;
	int n, native = 0;

	if (!same_place) {
		s->npcs = 0;
		s->flags = 0;
		copied = offcpu_copy(st->stack, w->sp, sizeof(st->stack));
		if (copied >= 8)
			native = s->npcs = unwind_blocked(w->pc, w->sp, st->stack, copied, s->pcs,
							  agent.depth);
		/* its Python frames after them (python_walk.c), confirmed below */
		if (s->npcs)
			s->npcs += python_stack_of(s->tid, s->pcs + s->npcs, CBN_MAX_FRAMES - s->npcs);
		/* Did it move while we read?  Then the stack may mix two places. */
		if (!offcpu_where(s->tid, &again) || again.nr != w->nr || again.sp != w->sp ||
		    again.pc != w->pc) {
			if (s->npcs)
				atomic_fetch_add_explicit(&h->offcpu.unconfirmed, 1, memory_order_relaxed);
			s->npcs = 0;
		}
		if (!s->npcs) {
			s->flags |= CBN_OFFCPU_NO_STACK;
			atomic_fetch_add_explicit(&h->offcpu.no_stack, 1, memory_order_relaxed);
		} else if (native >= agent.depth) {
			s->flags |= CBN_OFFCPU_TRUNCATED;
		}
	}
	n = s->npcs;
	memset(&r->r, 0, sizeof(r->r));
	r->r.h.type = CBN_REC_OFFCPU;
	r->r.h.flags = s->flags;
	r->r.h.size = (uint32_t)(sizeof(r->r) + (size_t)n * 8);
	r->r.start = now;
	r->r.end = now + dt;
	r->r.weight_ns = dt;
	r->r.addr = offcpu_kind(w->nr) == CBN_OFF_FUTEX || offcpu_kind(w->nr) == CBN_OFF_IO ||
				    offcpu_kind(w->nr) == CBN_OFF_POLL
			    ? w->a0
			    : 0;
	r->r.tid = s->tid;
	r->r.syscall = (int32_t)(w->nr < 0 ? -1 : w->nr);
	r->r.owner = s->owner;
	r->r.kind = offcpu_kind(w->nr);
	r->r.nframes = (uint16_t)n;
	memcpy(r->pc, s->pcs, (size_t)n * 8);
	if (writer_append_event_at(&agent.w, r, r->r.h.size, &where) < 0 || !where) {
		atomic_fetch_add_explicit(&h->offcpu.lost, 1, memory_order_relaxed);
		s->rec = NULL;
		return;
	}
	atomic_fetch_add_explicit(&h->offcpu.records, 1, memory_order_relaxed);
	s->rec = where;
	s->nr = w->nr;
	s->sp = w->sp;
	s->pc = w->pc;
	s->addr = w->a0;
	s->rec_start = now;
}

/* schedstat's run delay: time runnable, waiting for a CPU.  The increase
 * since the last read becomes a RUNQ record. */
static void offcpu_sched(struct offcpu_slot *s, uint64_t now)
{
	struct cbn_rec_offcpu r;
	unsigned long long cpu, delay;
	char buf[128];

	if (now < s->next_sched)
		return;
	s->next_sched = now + OFFCPU_SCHED_NS;
	if (offcpu_read(s->tid, "schedstat", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%llu %llu", &cpu, &delay) != 2)
		return;
	if (s->have_delay && delay > s->run_delay) {
		memset(&r, 0, sizeof(r));
		r.h.type = CBN_REC_OFFCPU;
		r.h.flags = CBN_OFFCPU_NO_STACK;
		r.h.size = sizeof(r);
		r.start = now - (delay - s->run_delay < now ? delay - s->run_delay : 0);
		r.end = now;
		r.weight_ns = delay - s->run_delay;
		r.tid = s->tid;
		r.syscall = -2;
		r.kind = CBN_OFF_RUNQ;
		if (agent_event(&r, sizeof(r)) == 0)
			atomic_fetch_add_explicit(&agent.w.hdr->offcpu.records, 1,
						  memory_order_relaxed);
	}
	s->run_delay = delay;
	s->have_delay = 1;
}

/* One look at one thread. */
static void offcpu_look(struct offcpu_slot *s, uint64_t now, uint64_t period)
{
	struct cbn_file_header *h = agent.w.hdr;
	clockid_t cid = (clockid_t)((~(unsigned)s->tid << 3) | 6); /* thread CPU clock, by tid */
	struct offcpu_where w;
	struct timespec ts;
	uint64_t cpu, dt;
	uint32_t owner;
	int same;

	if (clock_gettime(cid, &ts) < 0) {
		offcpu_close(s);            /* gone: the slot is freed when it leaves the list */
		return;
	}
	cpu = cbn_ts_ns(&ts);
	dt = s->last_look ? now - s->last_look : period;
	/* A look stands for the whole interval since the last one, also when
	 * this thread was late (a loaded machine): capping it at a few periods
	 * made a 300 ms poll read 76 ms.  Only a gap over a second (the process
	 * stopped, or suspended) is capped. */
	if (dt > OFFCPU_MAX_DT_NS && dt > period)
		dt = period > OFFCPU_MAX_DT_NS ? period : OFFCPU_MAX_DT_NS;
	atomic_fetch_add_explicit(&h->offcpu.looks, 1, memory_order_relaxed);
	if (s->last_look && cpu - s->last_cpu >= (uint64_t)(OFFCPU_RUNNING * (double)(now - s->last_look))) {
		offcpu_close(s);
		goto done;
	}
	if (!offcpu_where(s->tid, &w)) {
		offcpu_close(s);
		goto done;
	}
	/* A futex wait: the word 8 bytes past the futex, a glibc mutex's owner,
	 * read at every look so that a change of holder starts a new stretch. */
	owner = 0;
	if (w.nr == SYS_futex && w.a0 &&
	    offcpu_copy(&owner, w.a0 + 8, sizeof(owner)) != sizeof(owner))
		owner = 0;
	if (s->rec && w.nr == s->nr && w.sp == s->sp && w.pc == s->pc && w.a0 == s->addr &&
	    (owner == s->owner || !owner) && now - s->rec_start < OFFCPU_CUT_NS) {
		/* Still there: extend in place (readers see old or new values). */
		__atomic_store_n(&s->rec->end, now + dt, __ATOMIC_RELAXED);
		__atomic_store_n(&s->rec->weight_ns, s->rec->weight_ns + dt, __ATOMIC_RELAXED);
		goto done;
	}
	same = s->rec && w.nr == s->nr && w.sp == s->sp && w.pc == s->pc && w.a0 == s->addr;
	offcpu_close(s);
	s->owner = owner;
	offcpu_open(s, &w, now, dt, same);
done:
	s->last_look = now;
	s->last_cpu = cpu;
	offcpu_sched(s, now);
}

static void offcpu_collect(struct agent_thread *t, uint32_t tid, void *arg)
{
	(void)t;
	(void)arg;
	if (tid && tid != offcpu_self && st->ntids < OFFCPU_SLOTS)
		st->tids[st->ntids++] = tid;
}

static int offcpu_hash_find(uint32_t tid)
{
	unsigned h = (tid * 2654435761u) & (OFFCPU_HASH - 1);

	while (st->hash[h]) {
		if (st->slot[st->hash[h] - 1].tid == tid)
			return st->hash[h] - 1;
		h = (h + 1) & (OFFCPU_HASH - 1);
	}
	return -1;
}

static void offcpu_hash_add(uint32_t tid, int i)
{
	unsigned h = (tid * 2654435761u) & (OFFCPU_HASH - 1);

	while (st->hash[h])
		h = (h + 1) & (OFFCPU_HASH - 1);
	st->hash[h] = (int16_t)(i + 1);
}

static void offcpu_tick(uint64_t now, uint64_t period)
{
	int i, j, free_slot = 0;

	st->ntids = 0;
	threads_each(offcpu_collect, NULL);
	memset(st->hash, 0, sizeof(st->hash));
	for (i = 0; i < OFFCPU_SLOTS; i++) {
		st->slot[i].seen = 0;
		if (st->slot[i].tid)
			offcpu_hash_add(st->slot[i].tid, i);
	}
	for (j = 0; j < st->ntids; j++) {
		i = offcpu_hash_find(st->tids[j]);
		if (i < 0) {
			while (free_slot < OFFCPU_SLOTS && st->slot[free_slot].tid)
				free_slot++;
			if (free_slot == OFFCPU_SLOTS)
				continue;
			i = free_slot;
			memset(&st->slot[i], 0, offsetof(struct offcpu_slot, pcs));
			st->slot[i].tid = st->tids[j];
			st->slot[i].have_delay = 0;
			st->slot[i].next_sched = 0;
			offcpu_hash_add(st->tids[j], i);
		}
		st->slot[i].seen = 1;
		if (atomic_load_explicit(&offcpu_stop, memory_order_acquire))
			return;
		offcpu_look(&st->slot[i], now, period);
	}
	for (i = 0; i < OFFCPU_SLOTS; i++)
		if (st->slot[i].tid && !st->slot[i].seen)
			st->slot[i].tid = 0; /* ended: its last stretch stays as written */
}

static void offcpu_refuse(const char *why);

static void *offcpu_main(void *arg)
{
	struct cbn_file_header *h = agent.w.hdr;
	uint64_t period = 1000000000ull / (uint64_t)offcpu_hz, next, now;
	uint64_t rnd;
	struct timespec ts;
	int was_on = 1, i;

	(void)arg;
	syscall(SYS_prctl, PR_SET_NAME, "cbn-offcpu", 0, 0, 0);
	offcpu_self = agent_gettid();
	/*
	 * The /proc files this thread opens at every look must not take
	 * numbers from the program's table (its next open would get another
	 * number, or EMFILE under a tight RLIMIT_NOFILE): helpers have a table
	 * of their own (helpers.c), unless the kernel refused it.
	 */
	if (!helpers_private()) {
		offcpu_refuse("cannot give the off-CPU sampler a descriptor table of its own");
		atomic_store(&offcpu_running, 0);
		return NULL;
	}
	next = agent_now() + period;
	rnd = next ^ ((uint64_t)offcpu_self << 32) ^ 0x9e3779b97f4a7c15ull;
	for (;;) {
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (atomic_load_explicit(&offcpu_stop, memory_order_acquire) || !agent.w.hdr ||
		    !atomic_load(&agent.active) || threads_helpers_held())
			break;
		helpers_tick(); /* ends the process once only we are left */
		now = agent_now();
		if (now > next)
			atomic_fetch_add_explicit(&h->offcpu.late_ns, now - next, memory_order_relaxed);
		/*
		 * Ticks come at random intervals, uniform in [period/2, 3 period/2)
		 * (mean: the period): a fixed interval locks in phase with a
		 * program's loop of the same period and sees one part of it only
		 * (examples/wait_lock, 10 ms per period at 100 Hz: in 5 runs of 12
		 * every look fell in the holder's sleep, and the waiters' lock waits
		 * were never seen).  Each look stands for the time since the last.
		 */
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		next += period / 2 + rnd % period;
		if (next <= now)
			next = now + period; /* missed ticks are not made up */
		if (!capture_is_on()) {
			/* Outside capture windows: nothing recorded, and the next
			 * window starts with fresh stretches. */
			if (was_on)
				for (i = 0; i < OFFCPU_SLOTS; i++) {
					offcpu_close(&st->slot[i]);
					st->slot[i].last_look = 0;
					st->slot[i].have_delay = 0;
				}
			was_on = 0;
			continue;
		}
		was_on = 1;
		atomic_fetch_add_explicit(&h->offcpu.ticks, 1, memory_order_relaxed);
		offcpu_tick(now, period);
	}
	atomic_store(&offcpu_running, 0);
	return NULL;
}

static void offcpu_refuse(const char *why)
{
	struct cbn_file_header *h = agent.w.hdr;

	snprintf(h->offcpu.reason, sizeof(h->offcpu.reason), "%s", why);
	h->offcpu.reason_len = (uint32_t)strlen(h->offcpu.reason);
	atomic_store(&h->offcpu.state, CBN_OFFCPU_REFUSED);
}

/* Constructor (after the main thread is armed) and fork child: start the
 * sampler thread when CBN_OFFCPU asks for it. */
void offcpu_start(void)
{
	struct cbn_file_header *h = agent.w.hdr;
	const char *q = getenv(CBN_ENV_OFFCPU);
	char buf[256], why[92];
	pthread_t th;
	void *m;
	int ret;

	if (!h || !atomic_load(&agent.active))
		return;
	if (!offcpu_hz) {
		offcpu_hz = q && *q ? strtol(q, NULL, 10) : 0;
		if (offcpu_hz > 1000)
			offcpu_hz = 1000;
	}
	if (offcpu_hz <= 0)
		return;
	h->offcpu.rate_hz = (uint32_t)offcpu_hz;
	ret = offcpu_read(agent_gettid(), "syscall", buf, sizeof(buf));
	if (ret <= 0) {
		snprintf(why, sizeof(why), "cannot read /proc/self/task/TID/syscall: %s",
			 ret < 0 ? strerror(-ret) : "empty");
		offcpu_refuse(why);
		return;
	}
	if (!st) {
		m = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			offcpu_refuse("no memory for the off-CPU sampler's tables");
			return;
		}
		st = m;
	}
	atomic_store(&offcpu_stop, 0);
	atomic_store(&offcpu_running, 1);
	atomic_store(&h->offcpu.state, CBN_OFFCPU_ON);
	ret = threads_create_raw(&th, offcpu_main, NULL);
	if (ret < 0) {
		atomic_store(&offcpu_running, 0);
		snprintf(why, sizeof(why), "cannot start the off-CPU sampler thread: %s",
			 strerror(-ret));
		offcpu_refuse(why);
		return;
	}
}

/* A fork child: the sampler thread did not survive, and the stretches it was
 * extending live in the parent's file.  Forget them and start again. */
void offcpu_after_fork_child(void)
{
	atomic_store(&offcpu_running, 0);
	if (st)
		memset(st->slot, 0, sizeof(st->slot));
	offcpu_start();
}

/* After a hold on the helpers: the sampler thread again, where it ran. */
void offcpu_resume(void)
{
	if (offcpu_hz > 0 && !atomic_load(&offcpu_running) &&
	    !atomic_load_explicit(&offcpu_stop, memory_order_acquire))
		offcpu_start();
}

/* exit(): stop extending stretches; the thread ends at its next tick. */
void offcpu_exit(void)
{
	atomic_store_explicit(&offcpu_stop, 1, memory_order_release);
}
