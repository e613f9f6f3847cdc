/*
 * attach_perf.c — one thread's CPU-clock perf event with the user registers
 * and a copy of the top of the user stack at each sample
 * (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER), as `perf record
 * --call-graph dwarf -p PID` opens them, and the reading of its ring.  The
 * event counts the thread's CPU time only, so a thread that sleeps takes no
 * sample.  Where kernel samples are allowed, a sample taken in the kernel
 * carries the kernel's call chain too (PERF_SAMPLE_CALLCHAIN, the user part
 * left out), as the launched run's kernel stacks.  No signal is asked for:
 * the thread never knows.  x86-64 only (the register numbers are the
 * kernel's PERF_REG_X86_*).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"

#define EV_REG_BP 6                       /* PERF_REG_X86_BP */
#define EV_REG_SP 7                       /* PERF_REG_X86_SP */
#define EV_REG_IP 8                       /* PERF_REG_X86_IP */
#define EV_REGS ((1ull << EV_REG_BP) | (1ull << EV_REG_SP) | (1ull << EV_REG_IP))

static int ev_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = 2;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

static void ev_refusal(pid_t tid, int err, char *why, size_t len)
{
	int paranoid = ev_paranoid();

	if (err == EACCES || err == EPERM) {
		if (paranoid > 2)
			snprintf(why, len,
				 "perf_event_paranoid is %d, so perf events are root's only: run as "
				 "root, or set kernel.perf_event_paranoid=2 (sysctl)",
				 paranoid);
		else
			snprintf(why, len,
				 "perf events on thread %d refused (%s; perf_event_paranoid %d): "
				 "run as the process's user or root, and check kernel.yama.ptrace_scope",
				 (int)tid, strerror(err), paranoid);
	} else if (err == ESRCH) {
		snprintf(why, len, "thread %d ended", (int)tid);
	} else {
		snprintf(why, len, "perf_event_open on thread %d: %s", (int)tid, strerror(err));
	}
}

int attach_ev_open(struct attach_ev *e, pid_t tid, uint64_t period_ns, uint32_t stack_bytes,
		   size_t data_pages, uint32_t wake_bytes, char *why, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	struct perf_event_attr a;
	void *m;
	int err;

	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->tid = tid;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	/* READ: the count at each sample, so that a sample weighs the CPU time
	 * since the one before (the timer's period restarts at each switch to
	 * the thread, and a lost sample's time goes to the next one) */
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_READ |
			PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.read_format = 0;
	a.sample_regs_user = EV_REGS;
	a.sample_stack_user = stack_bytes & ~7u;
	/* The kernel's part of the thread's time is sampled too where this user
	 * may (perf_event_paranoid 1 or less, or root): a sample taken in the
	 * kernel still has the user registers and stack of the system call
	 * that entered it, so its time goes to that user stack, under the
	 * kernel's own call chain, as in a launched run.  Elsewhere the
	 * kernel's time goes into the weight of the next user sample
	 * (PERF_SAMPLE_READ). */
	a.exclude_kernel = 0;
	a.sample_type |= PERF_SAMPLE_CALLCHAIN;
	a.exclude_callchain_user = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	if (wake_bytes) {
		a.watermark = 1;
		a.wakeup_watermark = wake_bytes;
	} else {
		a.wakeup_events = 1;
	}
	a.disabled = 0;
	e->fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0 && errno == EINVAL) {
		/* a kernel that refuses the call chain's options: kernel time
		 * without its call chain (a plain [kernel] frame) */
		a.sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_user = 0;
		e->fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (e->fd < 0 && (errno == EACCES || errno == EPERM)) {
		a.exclude_kernel = 1;
		a.sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
		a.exclude_callchain_user = 0;
		e->fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	e->kernel = !a.exclude_kernel;
	e->chain = (a.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
	if (e->fd < 0) {
		ev_refusal(tid, errno, why, len);
		return -errno;
	}
	e->data_len = data_pages * (size_t)page;
	m = mmap(NULL, e->data_len + (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
	if (m == MAP_FAILED) {
		err = errno;
		snprintf(why, len,
			 "cannot map the perf ring of thread %d (%s): locked memory is short; "
			 "raise kernel.perf_event_mlock_kb or ulimit -l, or run as root",
			 (int)tid, strerror(err));
		close(e->fd);
		e->fd = -1;
		return -err;
	}
	e->map = m;
	return 0;
}

/* n bytes of the ring from offset off (wrapping) into dst. */
static void ev_copy(const struct attach_ev *e, uint64_t off, void *dst, size_t n)
{
	const unsigned char *data = e->map + sysconf(_SC_PAGESIZE);
	size_t at = (size_t)(off % e->data_len), first = e->data_len - at;

	if (first >= n) {
		memcpy(dst, data + at, n);
	} else {
		memcpy(dst, data + at, first);
		memcpy((unsigned char *)dst + first, data, n - first);
	}
}

/* The kernel's part of a call chain at buf[n] (nr, then nr entries) into
 * s->kpc; the context markers (PERF_CONTEXT_*) left out.  The bytes it
 * took, 0 when it does not fit. */
static size_t ev_chain(const unsigned char *buf, size_t n, struct attach_sample *s)
{
	uint64_t nr, ip, i;

	if (n < 8)
		return 0;
	memcpy(&nr, buf, 8);
	if (nr > (n - 8) / 8)
		return 0;
	for (i = 0; i < nr; i++) {
		memcpy(&ip, buf + 8 + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		if (s->nk < CBN_KSTACK_MAX_FRAMES)
			s->kpc[s->nk++] = ip;
		else
			s->kcut = 1;
	}
	return 8 + 8 * (size_t)nr;
}

/* A sample record's body (after its header) in buf[n] into *s; chain: it
 * has a call chain (PERF_SAMPLE_CALLCHAIN). */
static int ev_parse(const unsigned char *buf, size_t n, uint16_t misc, int chain,
		    struct attach_sample *s)
{
	uint64_t abi, size;
	size_t at = 0, took;
	uint32_t pidtid[2];
	uint64_t regs[3];

	if (n < 8 + 8 + 8 + 8)
		return 0;
	memcpy(pidtid, buf, 8);
	memcpy(&s->time, buf + 8, 8);
	memcpy(&s->count, buf + 16, 8); /* PERF_SAMPLE_READ, read_format 0 */
	at = 24;
	s->nk = s->kcut = 0;
	if (chain) {
		if (!(took = ev_chain(buf + at, n - at, s)))
			return 0;
		at += took;
	}
	s->tid = (pid_t)pidtid[1];
	s->kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	if (!s->kernel)
		s->nk = s->kcut = 0;
	if (at + 8 > n)
		return 0;
	memcpy(&abi, buf + at, 8);
	at += 8;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0; /* no user context: a kernel thread, or an exiting one */
	if (at + sizeof(regs) + 8 > n)
		return 0;
	memcpy(regs, buf + at, sizeof(regs)); /* in the mask's bit order: bp, sp, ip */
	at += sizeof(regs);
	s->bp = regs[0];
	s->sp = regs[1];
	s->pc = regs[2];
	memcpy(&size, buf + at, 8);
	at += 8;
	s->stack = buf + at;
	s->stack_len = 0;
	if (size && at + size + 8 <= n) {
		uint64_t dyn;

		memcpy(&dyn, buf + at + size, 8);
		s->stack_len = (size_t)(dyn < size ? dyn : size);
	}
	return 1;
}

int attach_ev_next(struct attach_ev *e, struct attach_sample *s, unsigned char *buf, size_t len)
{
	struct perf_event_mmap_page *h = (void *)e->map;
	struct perf_event_header rh;
	uint64_t head, tail;
	int got = 0;

	if (!e->map)
		return 0;
	head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
	tail = h->data_tail;
	while (!got && tail + sizeof(rh) <= head) {
		ev_copy(e, tail, &rh, sizeof(rh));
		if (rh.size < sizeof(rh) || tail + rh.size > head)
			break;
		if (rh.type == PERF_RECORD_SAMPLE && rh.size - sizeof(rh) <= len) {
			ev_copy(e, tail + sizeof(rh), buf, rh.size - sizeof(rh));
			got = ev_parse(buf, rh.size - sizeof(rh), rh.misc, e->chain, s);
		} else if (rh.type == PERF_RECORD_LOST && rh.size >= sizeof(rh) + 16) {
			uint64_t lost[2];

			ev_copy(e, tail + sizeof(rh), lost, sizeof(lost));
			e->lost += lost[1];
		}
		tail += rh.size;
	}
	__atomic_store_n(&h->data_tail, tail, __ATOMIC_RELEASE);
	return got;
}

void attach_ev_close(struct attach_ev *e)
{
	uint64_t v;

	if (e->map)
		munmap(e->map, e->data_len + (size_t)sysconf(_SC_PAGESIZE));
	if (e->fd >= 0) {
		/* an ended thread's event still reads its final count */
		if (read(e->fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			e->count = v;
		close(e->fd);
	}
	e->map = NULL;
	e->fd = -1;
}
