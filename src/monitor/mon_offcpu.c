/*
 * mon_offcpu.c — the off-CPU sampler (--off-cpu, docs/waiting.md §1), from
 * outside: rate_hz times a second (at random intervals, mean the period) the
 * launcher looks at every thread of every process of the run without
 * interrupting it, and records where the blocked ones wait, into each
 * image's side file.
 *
 * A look at thread TID of process PID:
 *   1. /proc/PID/task/TID/schedstat: its CPU time and run delay; a thread on
 *      the CPU for nearly all of the last interval is running;
 *   2. otherwise /proc/PID/task/TID/syscall: "running", or the system call it
 *      is blocked in with its arguments, stack pointer and pc ("-1 sp pc"
 *      when blocked outside one, in a page fault);
 *   3. for a new place: a copy of its stack from sp (process_vm_readv, which
 *      fails on an unmapped page instead of faulting), unwound from (pc, sp)
 *      with the CFI of its modules (mon_unwind.c), its Python frames
 *      (mon_python.c), then the syscall file read again: the same sp and pc
 *      confirm that the thread did not move while its stack was read;
 *   4. a futex wait also reads the 32-bit word 8 bytes past the futex (a
 *      glibc mutex's owner tid: who holds the lock).
 * No signal is sent and nothing runs in the program: its timing changes only
 * by the launcher's CPU on the machine (bench/offcpu.sh).
 *
 * Each look that finds a thread blocked stands for the wall time since the
 * previous look (unbiased: the chance to be seen blocked is the share of time
 * blocked).  Consecutive looks at the same place are one OFFCPU record,
 * updated in place in the side file, so a process killed mid-wait keeps what
 * was seen; a stretch is cut every second.  Runnable-but-not-running time
 * comes from schedstat's run delay, every 200 ms per thread, as RUNQ records
 * without a stack.  Looks happen only while the image's capture window is
 * open.  The counters are the image's header.offcpu, as before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cbn_gates.h"
#include "mon_int.h"
#include "util.h"
#include "../format/cbn_time.h"

#define OFF_STACK_COPY (32 * 1024)       /* bytes of stack copied from sp */
#define OFF_CUT_NS 1000000000ull         /* a stretch is cut every second */
#define OFF_SCHED_NS 200000000ull        /* run delay read per thread every 200 ms */
#define OFF_MAX_DT_NS 1000000000ull      /* a look stands for at most this */
#define OFF_RUNNING 0.9                  /* on the CPU this share of the interval: running */

struct off_rec {
	struct cbn_rec_offcpu r;
	uint64_t pc[CBN_MAX_FRAMES];
};

/* One followed thread of an image. */
struct off_slot {
	uint32_t tid;
	int seen;                        /* in this tick's thread list */
	uint64_t last_look, last_cpu;
	/* the stretch being extended (rec != NULL) */
	struct cbn_rec_offcpu *rec;      /* in the side file */
	int64_t nr;
	uint64_t sp, pc, addr, rec_start;
	int npcs;
	uint16_t flags;
	uint32_t owner;
	uint64_t pcs[CBN_MAX_FRAMES];
	uint64_t next_sched, run_delay;
	int have_delay;
};

struct mon_off {
	struct off_slot *slot;
	size_t nslot, capslot;
	struct mon_unwind *unw;
	int refused;
};

static unsigned char off_stack[OFF_STACK_COPY];
static struct off_rec off_buf;

/* What a blocked thread waits in, from the system call's number. */
static uint16_t off_kind(int64_t nr)
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

/* A small /proc file of thread tid of pid into buf (NUL-terminated); its
 * length or -errno. */
static int off_read(uint32_t pid, uint32_t tid, const char *what, char *buf, size_t len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%u/task/%u/%s", pid, tid, what);
	return util_read_small(path, buf, len);
}

struct off_where {
	int64_t nr;                      /* -1 outside a system call */
	uint64_t a0, sp, pc;
};

/* /proc/PID/task/TID/syscall.  1: blocked (*w filled), 0: running or gone. */
static int off_where(uint32_t pid, uint32_t tid, struct off_where *w)
{
	char buf[256], *p, *end;
	uint64_t v[9];
	int n = 0;

	if (off_read(pid, tid, "syscall", buf, sizeof(buf)) <= 0 || buf[0] == 'r')
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

/* Up to len bytes of pid's memory at addr, page by page: stops at the first
 * unmapped page.  Returns the bytes copied. */
static size_t off_copy(uint32_t pid, void *dst, uint64_t addr, size_t len)
{
	struct iovec local, remote[OFF_STACK_COPY / 4096 + 1];
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
	n = process_vm_readv((pid_t)pid, &local, 1, remote, (unsigned long)i, 0);
	return n > 0 ? (size_t)n : 0;
}

/* The stack at w of thread s, its native frames then its Python frames;
 * none when it moved meanwhile (counted). */
static void off_stack_of(struct mon_image *im, struct mon_off *o, struct off_slot *s,
			 const struct off_where *w)
{
	struct cbn_file_header *h = im->hdr;
	int depth = h->max_depth ? (int)h->max_depth : CBN_MAX_FRAMES, native = 0;
	struct off_where again;
	size_t copied;

	if (depth > CBN_MAX_FRAMES)
		depth = CBN_MAX_FRAMES;
	s->npcs = 0;
	s->flags = 0;
	if (!o->unw)
		o->unw = mon_unwind_open((pid_t)im->pid);
	copied = off_copy(im->pid, off_stack, w->sp, sizeof(off_stack));
	if (copied >= 8 && o->unw)
		native = s->npcs = mon_unwind_stack(o->unw, (pid_t)s->tid, w->pc, w->sp, 0, off_stack,
						    copied, s->pcs, depth);
	if (s->npcs)
		s->npcs += mon_py_frames(im, s->tid, s->pcs + s->npcs, CBN_MAX_FRAMES - s->npcs);
	/* Did it move while we read?  Then the stack may mix two places. */
	if (!off_where(im->pid, s->tid, &again) || again.nr != w->nr || again.sp != w->sp ||
	    again.pc != w->pc) {
		if (s->npcs)
			atomic_fetch_add_explicit(&h->offcpu.unconfirmed, 1, memory_order_relaxed);
		s->npcs = 0;
	}
	if (!s->npcs) {
		s->flags |= CBN_OFFCPU_NO_STACK;
		atomic_fetch_add_explicit(&h->offcpu.no_stack, 1, memory_order_relaxed);
	} else if (native >= depth) {
		s->flags |= CBN_OFFCPU_TRUNCATED;
	}
}

/* Start a stretch for s at place w, now, standing for dt ns. */
static void off_open(struct mon_image *im, struct mon_off *o, struct off_slot *s,
		     const struct off_where *w, uint64_t now, uint64_t dt, int same_place)
{
	struct cbn_file_header *h = im->hdr;
	struct off_rec *r = &off_buf;
	struct writer *wr = mon_side(im);
	uint16_t kind = off_kind(w->nr);
	void *where = NULL;

	if (!same_place)
		off_stack_of(im, o, s, w);
	memset(&r->r, 0, sizeof(r->r));
	r->r.h.type = CBN_REC_OFFCPU;
	r->r.h.flags = s->flags;
	r->r.h.size = (uint32_t)(sizeof(r->r) + (size_t)s->npcs * 8);
	r->r.start = now;
	r->r.end = now + dt;
	r->r.weight_ns = dt;
	r->r.addr = kind == CBN_OFF_FUTEX || kind == CBN_OFF_IO || kind == CBN_OFF_POLL ? w->a0 : 0;
	r->r.tid = s->tid;
	r->r.syscall = (int32_t)(w->nr < 0 ? -1 : w->nr);
	r->r.owner = s->owner;
	r->r.kind = kind;
	r->r.nframes = (uint16_t)s->npcs;
	memcpy(r->pc, s->pcs, (size_t)s->npcs * 8);
	if (!wr || writer_append_event_at(wr, r, r->r.h.size, &where) < 0 || !where) {
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
static void off_sched(struct mon_image *im, struct off_slot *s, uint64_t now, uint64_t delay)
{
	struct cbn_rec_offcpu r;
	struct writer *w;

	if (now < s->next_sched)
		return;
	s->next_sched = now + OFF_SCHED_NS;
	if (s->have_delay && delay > s->run_delay && (w = mon_side(im)) != NULL) {
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
		if (writer_append_event(w, &r, sizeof(r)) == 0)
			atomic_fetch_add_explicit(&im->hdr->offcpu.records, 1, memory_order_relaxed);
	}
	s->run_delay = delay;
	s->have_delay = 1;
}

/* One look at one thread. */
static void off_look(struct mon_image *im, struct mon_off *o, struct off_slot *s, uint64_t now,
		     uint64_t period)
{
	struct cbn_file_header *h = im->hdr;
	unsigned long long cpu, delay;
	struct off_where w;
	uint64_t dt;
	uint32_t owner;
	char buf[128];
	int same;

	if (off_read(im->pid, s->tid, "schedstat", buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "%llu %llu", &cpu, &delay) != 2) {
		s->rec = NULL; /* gone: the slot goes when it leaves the list */
		return;
	}
	dt = s->last_look ? now - s->last_look : period;
	/* A look stands for the whole interval since the last one, also when
	 * the launcher was late (a loaded machine); only a gap over a second
	 * (the process stopped, or suspended) is capped. */
	if (dt > OFF_MAX_DT_NS && dt > period)
		dt = period > OFF_MAX_DT_NS ? period : OFF_MAX_DT_NS;
	atomic_fetch_add_explicit(&h->offcpu.looks, 1, memory_order_relaxed);
	if (s->last_look && cpu - s->last_cpu >= (uint64_t)(OFF_RUNNING * (double)(now - s->last_look))) {
		s->rec = NULL;
		goto done;
	}
	if (!off_where(im->pid, s->tid, &w)) {
		s->rec = NULL;
		goto done;
	}
	/* A futex wait: the word 8 bytes past the futex, a glibc mutex's owner,
	 * read at every look so that a change of holder starts a new stretch. */
	owner = 0;
	if (w.nr == SYS_futex && w.a0 &&
	    off_copy(im->pid, &owner, w.a0 + 8, sizeof(owner)) != sizeof(owner))
		owner = 0;
	if (s->rec && w.nr == s->nr && w.sp == s->sp && w.pc == s->pc && w.a0 == s->addr &&
	    (owner == s->owner || !owner) && now - s->rec_start < OFF_CUT_NS) {
		/* Still there: extend in place (readers see old or new values). */
		__atomic_store_n(&s->rec->end, now + dt, __ATOMIC_RELAXED);
		__atomic_store_n(&s->rec->weight_ns, s->rec->weight_ns + dt, __ATOMIC_RELAXED);
		goto done;
	}
	same = s->rec && w.nr == s->nr && w.sp == s->sp && w.pc == s->pc && w.a0 == s->addr;
	s->rec = NULL;
	s->owner = owner;
	off_open(im, o, s, &w, now, dt, same);
done:
	s->last_look = now;
	s->last_cpu = cpu;
	off_sched(im, s, now, delay);
}

static struct off_slot *off_slot_of(struct mon_off *o, uint32_t tid)
{
	size_t i;

	for (i = 0; i < o->nslot; i++)
		if (o->slot[i].tid == tid)
			return &o->slot[i];
	if (o->nslot == o->capslot) {
		size_t cap = o->capslot ? o->capslot * 2 : 16;
		struct off_slot *n = realloc(o->slot, cap * sizeof(*n));

		if (!n)
			return NULL;
		o->slot = n;
		o->capslot = cap;
	}
	memset(&o->slot[o->nslot], 0, sizeof(o->slot[0]));
	o->slot[o->nslot].tid = tid;
	return &o->slot[o->nslot++];
}

/* The image takes off-CPU looks: header.offcpu says so, or why not. */
static struct mon_off *off_start(struct mon *m, struct mon_image *im)
{
	struct cbn_file_header *h = im->hdr;
	struct mon_off *o;
	char buf[256];
	int ret;

	if (im->off)
		return ((struct mon_off *)im->off)->refused ? NULL : im->off;
	o = im->off = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	h->offcpu.rate_hz = (uint32_t)m->o.offcpu_hz;
	ret = off_read(im->pid, im->pid, "syscall", buf, sizeof(buf));
	if (ret <= 0) {
		snprintf(h->offcpu.reason, sizeof(h->offcpu.reason),
			 "the launcher cannot read /proc/%u/task/TID/syscall: %s", im->pid,
			 ret < 0 ? strerror(-ret) : "empty");
		h->offcpu.reason_len = (uint32_t)strlen(h->offcpu.reason);
		atomic_store(&h->offcpu.state, CBN_OFFCPU_REFUSED);
		o->refused = 1;
		return NULL;
	}
	atomic_store(&h->offcpu.state, CBN_OFFCPU_ON);
	return o;
}

/* One tick for one image: every thread of its process. */
static void off_tick(struct mon *m, struct mon_image *im, uint64_t now, uint64_t period)
{
	struct mon_off *o = off_start(m, im);
	char path[64];
	struct dirent *e;
	size_t i, k;
	DIR *d;

	if (!o)
		return;
	if (!cbn_gates_open(im->hdr)) {
		/* Outside capture windows: nothing recorded, and the next
		 * window starts with fresh stretches. */
		for (i = 0; i < o->nslot; i++) {
			o->slot[i].rec = NULL;
			o->slot[i].last_look = 0;
			o->slot[i].have_delay = 0;
		}
		return;
	}
	atomic_fetch_add_explicit(&im->hdr->offcpu.ticks, 1, memory_order_relaxed);
	for (i = 0; i < o->nslot; i++)
		o->slot[i].seen = 0;
	snprintf(path, sizeof(path), "/proc/%u/task", im->pid);
	d = opendir(path);
	while (d && (e = readdir(d)) != NULL) {
		uint32_t tid = (uint32_t)strtoul(e->d_name, NULL, 10);
		struct off_slot *s;

		if (!tid || !(s = off_slot_of(o, tid)))
			continue;
		s->seen = 1;
		off_look(im, o, s, now, period);
	}
	if (d)
		closedir(d);
	/* threads that ended: their last stretch stays as written */
	for (i = 0, k = 0; i < o->nslot; i++)
		if (o->slot[i].seen)
			o->slot[k++] = o->slot[i];
	o->nslot = k;
}

uint64_t mon_offcpu_turn(struct mon *m, uint64_t now)
{
	uint64_t period;
	size_t i;

	if (m->o.offcpu_hz <= 0)
		return 0;
	period = 1000000000ull / (uint64_t)m->o.offcpu_hz;
	if (!m->off_next)
		m->off_next = now + period;
	if (now < m->off_next)
		return m->off_next;
	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (im->ended || !im->hdr)
			continue;
		if (now > m->off_next)
			atomic_fetch_add_explicit(&im->hdr->offcpu.late_ns, now - m->off_next,
						  memory_order_relaxed);
		off_tick(m, im, now, period);
	}
	/*
	 * Ticks come at random intervals, uniform in [period/2, 3 period/2)
	 * (mean: the period): a fixed interval locks in phase with a program's
	 * loop of the same period and sees one part of it only (examples/
	 * wait_lock, 10 ms per period at 100 Hz: in 5 runs of 12 every look fell
	 * in the holder's sleep).  Each look stands for the time since the last.
	 */
	m->off_rnd ^= m->off_rnd << 13;
	m->off_rnd ^= m->off_rnd >> 7;
	m->off_rnd ^= m->off_rnd << 17;
	m->off_next += period / 2 + m->off_rnd % period;
	if (m->off_next <= now)
		m->off_next = now + period; /* missed ticks are not made up */
	return m->off_next;
}

void mon_offcpu_end(struct mon_image *im)
{
	struct mon_off *o = im->off;

	if (!o)
		return;
	mon_unwind_close(o->unw);
	free(o->slot);
	free(o);
	im->off = NULL;
}
