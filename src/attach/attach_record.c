/*
 * attach_record.c — `cbottleneck --pid PID`: a CPU profile of a running
 * process from outside.  Each thread gets a CPU-clock perf event with its
 * user registers and the top ATTACH_REC_STACK bytes of its user stack at
 * each sample (attach_perf.c); threads started meanwhile are found by
 * reading /proc/PID/task every ATTACH_SCAN_MS (a per-thread event's inherit
 * follows the threads the thread creates only after the event was opened,
 * and perf events on a whole process need one per CPU and root's view of
 * every CPU: a scan at 10 Hz is simpler, and a thread that lives less than
 * a scan is missed).  Samples are unwound as they are read, while the
 * process still maps the modules and holds the memory a read beyond the
 * copy asks for, and written as the agent writes them (attach_file.c).
 * Nothing is sent to the process: its threads never know.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_int.h"
#include "monitor.h"
#include "util.h"

#define ATTACH_REC_STACK (16 * 1024)     /* bytes of stack per sample (perf's default: 8 KiB) */
#define ATTACH_REC_PAGES 32              /* 128 KiB of ring per thread: 7 samples */
#define ATTACH_REC_WAKE (48 * 1024)      /* a ring is drained once it holds 3 samples */
#define ATTACH_REC_POLL_MS 10            /* and every ring at least this often */
#define ATTACH_MODS_MS 1000              /* modules looked for again this often */

struct rec {
	pid_t pid;
	const struct attach_opts *o;
	struct attach_file f;
	struct mon_unwind *u;
	struct attach_pyrec py;
	struct attach_thread *t;
	size_t nt, capt;
	struct pollfd *p;                /* one per thread */
	size_t capp;
	struct attach_result *res;
	char refused[160];               /* the first refusal of a thread's event */
};

static unsigned char rec_buf[ATTACH_REC_STACK + 4096];

/* The thread's CPU time so far (schedstat) into t: kept when it is gone. */
static void rec_cpu(pid_t pid, struct attach_thread *t)
{
	char path[96], buf[128];
	unsigned long long cpu;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, (int)t->tid);
	if (util_read_small(path, buf, sizeof(buf)) <= 0 || sscanf(buf, "%llu", &cpu) != 1)
		return;
	t->cpu_ns = cpu;
	if (!t->cpu0)
		t->cpu0 = cpu;
}

/* The periods of CPU a sample stands for: the thread's count since the CPU
 * its samples so far stand for, to the nearest period, at least one. */
static uint32_t rec_weight(struct attach_thread *t, uint64_t count, uint64_t period)
{
	uint64_t w = count > t->weighed ? (count - t->weighed + period / 2) / period : 0;

	if (w < 1)
		w = 1;
	if (w > UINT16_MAX)
		w = UINT16_MAX;
	t->weighed += w * period;
	return (uint32_t)w;
}

/* Every sample waiting in t's ring: unwound and written. */
static void rec_drain(struct rec *r, struct attach_thread *t)
{
	struct attach_sample s;
	uint64_t pcs[CBN_MAX_FRAMES];
	uint64_t lost = t->ev.lost;
	int n, truncated;

	while (t->ev.map && attach_ev_next(&t->ev, &s, rec_buf, sizeof(rec_buf))) {
		n = mon_unwind_stack(r->u, t->tid, s.pc, s.sp, s.bp, s.stack, s.stack_len, pcs,
				     r->o->depth);
		if (n <= 0) {
			pcs[0] = s.pc;
			n = 1;
		}
		/* deeper than the copied part: cut there, marked and counted */
		truncated = n >= r->o->depth || mon_unwind_cut(r->u);
		n = attach_pyrec_frames(&r->py, &r->f, t->tid, pcs, n, CBN_MAX_FRAMES);
		attach_file_sample(&r->f, t, rec_weight(t, s.count, r->o->period_ns), &s, pcs, n,
				   truncated);
		r->res->samples++;
	}
	if (t->ev.lost > lost) {
		atomic_fetch_add_explicit(&r->f.w.hdr->lost[CBN_LOST_BUFFER_FULL], t->ev.lost - lost,
					  memory_order_relaxed);
		r->res->lost += t->ev.lost - lost;
	}
}

static struct attach_thread *rec_thread(struct rec *r, pid_t tid)
{
	struct attach_thread *t;
	char why[160];
	size_t i;

	for (i = 0; i < r->nt; i++)
		if (r->t[i].tid == tid)
			return &r->t[i];
	if (util_grow((void **)&r->t, &r->capt, r->nt + 1, sizeof(*r->t)) < 0)
		return NULL;
	t = &r->t[r->nt++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->ev.fd = -1;
	attach_proc_name(r->pid, tid, t->name, sizeof(t->name));
	attach_file_thread(&r->f, CBN_REC_THREAD_START, tid, t->name, attach_now(), 0);
	if (attach_ev_open(&t->ev, tid, r->o->period_ns, ATTACH_REC_STACK, ATTACH_REC_PAGES,
			   ATTACH_REC_WAKE, why, sizeof(why)) < 0) {
		r->res->unread++;
		if (!r->refused[0])
			snprintf(r->refused, sizeof(r->refused), "%s", why);
	} else {
		atomic_fetch_add_explicit(&r->f.w.hdr->threads_perf, 1, memory_order_relaxed);
		if (t->ev.chain)
			attach_file_kernel(&r->f);
	}
	r->res->threads++;
	return t;
}

/* A thread gone, or no longer followed: what its ring holds, then its end
 * with the CPU time it had while followed. */
static void rec_thread_end(struct rec *r, struct attach_thread *t)
{
	uint64_t cpu;

	rec_drain(r, t);
	attach_ev_close(&t->ev);
	/* /proc's figure stops at the last scan before the thread ended; its
	 * event counted to the end (from its opening, just after cpu0) */
	cpu = t->cpu_ns - t->cpu0;
	if (t->ev.count > cpu)
		cpu = t->ev.count;
	attach_file_thread(&r->f, CBN_REC_THREAD_END, t->tid, t->name, attach_now(), cpu);
}

/* /proc/PID/task read again: new threads followed, ended ones closed. */
static void rec_scan(struct rec *r)
{
	pid_t *tids = NULL;
	int n = attach_proc_threads(r->pid, &tids), i;
	size_t k, j;

	for (k = 0; k < r->nt; k++)
		r->t[k].seen = 0;
	for (i = 0; i < n; i++) {
		struct attach_thread *t = rec_thread(r, tids[i]);

		if (t) {
			t->seen = 1;
			rec_cpu(r->pid, t);
		}
		/* Opening hundreds of events takes a while: the rings of the
		 * busy threads already open are drained meanwhile. */
		if (i % 16 == 15)
			for (k = 0; k < r->nt; k++)
				rec_drain(r, &r->t[k]);
	}
	free(tids);
	for (k = 0, j = 0; k < r->nt; k++) {
		if (!r->t[k].seen)
			rec_thread_end(r, &r->t[k]);
		else
			r->t[j++] = r->t[k];
	}
	r->nt = j;
}

/* Wait until a ring fills past its mark (at most ms), then drain them all. */
static void rec_wait(struct rec *r, int ms)
{
	int polled = util_grow((void **)&r->p, &r->capp, r->nt + 1, sizeof(*r->p)) == 0;
	size_t i, k = 0;

	for (i = 0; polled && i < r->nt; i++)
		if (r->t[i].ev.map)
			r->p[k++] = (struct pollfd){.fd = r->t[i].ev.fd, .events = POLLIN};
	(void)poll(polled ? r->p : NULL, (nfds_t)k, ms); /* no room: a sleep */
	for (i = 0, k = 0; i < r->nt; i++) {
		struct attach_thread *t = &r->t[i];
		int hup = polled && t->ev.map && (r->p[k++].revents & (POLLHUP | POLLERR));

		rec_drain(r, t);
		/* An ended thread's event reads as hung up from then on: closed
		 * now, not polled again until the scan writes its end. */
		if (hup)
			attach_ev_close(&t->ev);
	}
}

/* An exec (the executable changed): the new image's modules recorded and
 * its interpreter looked for at once, not at the next look at the modules. */
static void rec_exec(struct rec *r)
{
	if (!attach_pyrec_exec(&r->py, r->pid))
		return;
	attach_file_modules(&r->f, r->pid);
	attach_pyrec_again(&r->py, &r->f, r->pid);
}

static void rec_loop(struct rec *r)
{
	uint64_t now, next_scan = 0, next_mods, end;

	end = r->o->duration_ns ? r->res->start_ns + r->o->duration_ns : UINT64_MAX;
	next_mods = r->res->start_ns + ATTACH_MODS_MS * 1000000ull;
	while (!*r->o->stop) {
		now = attach_now();
		if (now >= end)
			break;
		if (now >= next_scan) {
			if (!attach_proc_alive(r->pid)) {
				r->res->exited = 1;
				break;
			}
			rec_scan(r);
			rec_exec(r);
			next_scan = now + ATTACH_SCAN_MS * 1000000ull;
		}
		if (now >= next_mods) {
			attach_file_modules(&r->f, r->pid);
			next_mods = now + ATTACH_MODS_MS * 1000000ull;
		}
		rec_wait(r, ATTACH_REC_POLL_MS);
	}
}

int attach_record(pid_t pid, const char *session, const struct attach_opts *o,
		  struct attach_result *res, char *why, size_t len)
{
	struct rec r = {.pid = pid, .o = o, .res = res};
	size_t i;
	int ret, tries;

	memset(res, 0, sizeof(*res));
	ret = attach_file_open(&r.f, session, pid, o, why, len);
	if (ret < 0)
		return ret;
	for (tries = 0;;) {
		r.u = mon_unwind_open(pid);
		mon_unwind_copy_only(r.u, 1);
		if (r.u && attach_file_modules(&r.f, pid) == 0)
			break;
		mon_unwind_close(r.u);
		r.u = NULL;
		if (!attach_proc_again(pid, &tries)) {
			ret = attach_proc_unreadable(pid, why, len);
			goto out;
		}
	}
	attach_pyrec_open(&r.py, &r.f, pid);
	res->start_ns = attach_now();
	rec_scan(&r);
	/* No thread's event open: the process ended meanwhile (its threads'
	 * events refused with ESRCH), or they were all refused. */
	if ((!res->threads || res->unread == res->threads) &&
	    attach_proc_unreadable(pid, why, len) == -ESRCH) {
		ret = -ESRCH;
		goto out;
	}
	if (res->threads && res->unread == res->threads) {
		snprintf(why, len, "%s", r.refused);
		ret = -EPERM;
		goto out;
	}
	rec_loop(&r);
	for (i = 0; i < r.nt; i++) {
		rec_cpu(pid, &r.t[i]);
		rec_thread_end(&r, &r.t[i]);
	}
	r.nt = 0;
	attach_file_modules(&r.f, pid);
	ret = 0;
out:
	res->end_ns = attach_now();
	for (i = 0; i < r.nt; i++)
		attach_ev_close(&r.t[i].ev);
	free(r.t);
	free(r.p);
	attach_pyrec_close(&r.py);
	mon_unwind_close(r.u);
	attach_file_close(&r.f);
	return ret;
}
