/*
 * attach_dump.c — `cbottleneck dump PID`: every thread's stack once, as
 * `py-spy dump` prints it, without stopping the process.  A thread blocked
 * in the kernel is read from /proc/PID/task/TID/syscall (its sp and pc) and
 * a copy of its stack, confirmed by reading the syscall file again (a thread
 * that moved meanwhile is read again, three times at most); a running
 * thread cannot be read that way, so a CPU-clock perf event with the user
 * registers and stack is opened on it and its first sample taken (within
 * DUMP_WAIT_MS).  A thread that could be read neither way is listed with the
 * reason.  In a CPython 3.11-3.13 process, each thread's Python frames are
 * read too (attach_python.c) and stand in place of the interpreter's
 * evaluation-loop frames, as in a report.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attach.h"
#include "monitor.h"
#include "sym.h"

#define DUMP_WAIT_MS 500                  /* for a running thread's first sample */
#define DUMP_PERIOD_NS 1000000ull         /* a sample per ms of the thread's CPU */
#define DUMP_RING_PAGES 16                /* 64 KiB: room for one sample and its stack */
#define DUMP_TRIES 3                      /* reads of a blocked thread that keeps moving */

enum { DUMP_UNREAD, DUMP_BLOCKED, DUMP_RUNNING };

struct dump_thread {
	pid_t tid;
	char name[32];
	int state;
	int64_t nr;                       /* DUMP_BLOCKED: its system call */
	char why[160];                    /* DUMP_UNREAD: why */
	uint64_t pcs[ATTACH_MAX_FRAMES];
	int npcs;
	struct cbn_py_frame py[ATTACH_MAX_FRAMES];
	int npy;
	struct attach_ev ev;
};

/* What the whole dump shares. */
struct dump {
	pid_t pid;
	struct mon_unwind *u;
	struct attach_maps maps;          /* for the stacks' ends */
	struct attach_py py;
	int py_state;                     /* attach_py_find's answer */
	char py_why[160];
};

static unsigned char dump_stack[ATTACH_STACK_COPY];
static unsigned char dump_sample[ATTACH_STACK_COPY + 4096];

/* A blocked thread's stack: 1 when read, 0 when it runs (or moved on). */
static int dump_blocked(struct dump *d, struct dump_thread *t)
{
	pid_t pid = d->pid;
	struct attach_where w, again;
	size_t n;
	int i;

	for (i = 0; i < DUMP_TRIES; i++) {
		if (!attach_proc_where(pid, t->tid, &w))
			return 0;
		n = attach_proc_stack(&d->maps, w.sp, dump_stack, sizeof(dump_stack));
		t->npcs = n >= 8 ? mon_unwind_stack(d->u, t->tid, w.pc, w.sp, 0, dump_stack, n,
						    t->pcs, ATTACH_MAX_FRAMES)
				 : 0;
		t->npy = attach_py_frames(&d->py, t->tid, t->py, ATTACH_MAX_FRAMES);
		if (attach_proc_where(pid, t->tid, &again) && again.sp == w.sp &&
		    again.pc == w.pc && again.nr == w.nr) {
			t->state = DUMP_BLOCKED;
			t->nr = w.nr;
			if (!t->npcs)
				snprintf(t->why, sizeof(t->why), "its stack could not be unwound");
			return 1;
		}
	}
	t->state = DUMP_UNREAD;
	snprintf(t->why, sizeof(t->why), "it kept moving while its stack was read");
	return 1;
}

static uint64_t dump_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The running threads (state DUMP_UNREAD, empty why): one sample each. */
static void dump_running(struct dump *d, struct dump_thread *t, int n)
{
	struct pollfd *p = calloc((size_t)n + 1, sizeof(*p));
	struct attach_sample s;
	uint64_t end = dump_now_ms() + DUMP_WAIT_MS, now;
	int i, k, left = 0;

	for (i = 0; p && i < n; i++) {
		if (t[i].state != DUMP_UNREAD || t[i].why[0])
			continue;
		if (attach_ev_open(&t[i].ev, t[i].tid, DUMP_PERIOD_NS, ATTACH_STACK_COPY,
				   DUMP_RING_PAGES, 0, t[i].why, sizeof(t[i].why)) == 0)
			left++;
	}
	while (left > 0 && (now = dump_now_ms()) < end) {
		for (i = 0, k = 0; i < n; i++)
			if (t[i].ev.map && t[i].state == DUMP_UNREAD)
				p[k++] = (struct pollfd){.fd = t[i].ev.fd, .events = POLLIN};
		if (poll(p, (nfds_t)k, (int)(end - now)) <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (!t[i].ev.map || t[i].state != DUMP_UNREAD ||
			    !attach_ev_next(&t[i].ev, &s, dump_sample, sizeof(dump_sample)))
				continue;
			t[i].npcs = mon_unwind_stack(d->u, t[i].tid, s.pc, s.sp, s.bp, s.stack,
						     s.stack_len, t[i].pcs, ATTACH_MAX_FRAMES);
			t[i].npy = attach_py_frames(&d->py, t[i].tid, t[i].py, ATTACH_MAX_FRAMES);
			t[i].state = DUMP_RUNNING;
			left--;
		}
	}
	for (i = 0; i < n; i++) {
		attach_ev_close(&t[i].ev);
		/* No sample: perhaps it blocked meanwhile. */
		if (t[i].state == DUMP_UNREAD && !t[i].why[0] && !dump_blocked(d, &t[i]))
			snprintf(t[i].why, sizeof(t[i].why),
				 "runnable but given no CPU within %d ms (a loaded machine)",
				 DUMP_WAIT_MS);
	}
	free(p);
}

/* Thread t's Python frames from *k to the end of their activation of the
 * evaluation loop (the next ENTRY frame). */
static void dump_py_activation(FILE *out, struct dump *d, const struct dump_thread *t, int *k)
{
	const char *qual, *file;
	int line;

	while (*k < t->npy) {
		const struct cbn_py_frame *f = &t->py[(*k)++];

		if (attach_py_where(&d->py, f, &qual, &file, &line) == 0)
			fprintf(out, "    %s (%s:%d)\n", qual, file, line);
		else
			fprintf(out, "    [a Python function whose code object is gone]\n");
		if (f->flags & CBN_PYW_ENTRY)
			break;
	}
}

/* The native frames, innermost first, each evaluation-loop frame of the
 * interpreter replaced by the Python frames it ran (paired from the leaf;
 * those left over, when the native stack was cut, at the end). */
static void dump_frames(FILE *out, struct sym_ctx *sc, struct dump *d, const struct dump_thread *t)
{
	const struct sym_frame *fr;
	const unsigned char *id;
	const char *path;
	uint64_t bias, pc;
	int i, j, nf, idn, k = 0;

	for (i = 0; i < t->npcs; i++) {
		/* pcs[0] is where the thread is (or returns to from its system
		 * call); the others are return addresses, looked up at pc - 1. */
		pc = i ? t->pcs[i] - 1 : t->pcs[0];
		if (mon_unwind_module(d->u, pc, &path, &bias, &id, &idn) < 0) {
			fprintf(out, "    0x%llx (no module)\n", (unsigned long long)t->pcs[i]);
			continue;
		}
		nf = sym_resolve(sc, sym_module_get(sc, path, id, (size_t)idn), pc - bias, &fr);
		for (j = 0; j < nf; j++) {
			if (k < t->npy && strcmp(fr[j].func, "_PyEval_EvalFrameDefault") == 0) {
				dump_py_activation(out, d, t, &k);
				continue;
			}
			fprintf(out, "    %s", fr[j].func);
			if (fr[j].line)
				fprintf(out, " (%s:%u)", fr[j].file, fr[j].line);
			else if (!fr[j].nosym)
				fprintf(out, " (%s)", path);
			fprintf(out, "%s\n", fr[j].inlined ? " [inlined]" : "");
		}
	}
	while (k < t->npy)
		dump_py_activation(out, d, t, &k);
}

static void dump_state(FILE *out, const struct dump_thread *t)
{
	const char *sys;

	if (t->state == DUMP_RUNNING)
		fprintf(out, "running\n");
	else if (t->state == DUMP_BLOCKED && t->nr < 0)
		fprintf(out, "waiting in a page fault\n");
	else if (t->state == DUMP_BLOCKED && (sys = attach_proc_syscall_name(t->nr)))
		fprintf(out, "waiting in %s\n", sys);
	else if (t->state == DUMP_BLOCKED)
		fprintf(out, "waiting in system call %lld\n", (long long)t->nr);
	else
		fprintf(out, "not read: %s\n", t->why);
	if (t->state != DUMP_UNREAD && t->npcs == 0)
		fprintf(out, "    (no stack: %s)\n",
			t->why[0] ? t->why : "its stack could not be unwound");
}

static void dump_print(FILE *out, struct dump *d, struct dump_thread *t, int n)
{
	struct sym_ctx *sc = sym_new();
	uint32_t v = d->py.version;
	char cmd[512];
	int i;

	attach_proc_cmdline(d->pid, cmd, sizeof(cmd));
	fprintf(out, "Process %d: %s\n", (int)d->pid, cmd);
	if (d->py_state > 0)
		fprintf(out, "Python %u.%u.%u\n", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
	else if (d->py_state < 0)
		fprintf(out, "Python frames not read: %s\n", d->py_why);
	for (i = 0; i < n; i++) {
		fprintf(out, "\nThread %d (%s): ", (int)t[i].tid, t[i].name);
		dump_state(out, &t[i]);
		if (sc)
			dump_frames(out, sc, d, &t[i]);
	}
	if (sc)
		sym_free(sc);
}

int attach_dump(pid_t pid, FILE *out, char *why, size_t len)
{
	struct dump_thread *t = NULL;
	struct dump d = {.pid = pid, .maps = {.pid = pid}};
	pid_t *tids = NULL;
	int n, i, ret, tries;

	ret = attach_proc_check(pid, why, len);
	if (ret < 0)
		return ret;
	n = attach_proc_threads(pid, &tids);
	d.u = n > 0 ? mon_unwind_open(pid) : NULL;
	for (tries = 0; n > 0 && !d.u && attach_proc_again(pid, &tries);)
		d.u = mon_unwind_open(pid);
	if (n <= 0 || !d.u) {
		ret = attach_proc_unreadable(pid, why, len);
		if (ret == -EIO && n == -ENOMEM) {
			snprintf(why, len, "out of memory");
			ret = -ENOMEM;
		}
		goto out;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		snprintf(why, len, "out of memory");
		goto out;
	}
	d.py_state = attach_py_find(pid, &d.py, d.py_why, sizeof(d.py_why));
	for (i = 0; i < n; i++) {
		t[i].tid = tids[i];
		t[i].ev.fd = -1;
		attach_proc_name(pid, tids[i], t[i].name, sizeof(t[i].name));
		dump_blocked(&d, &t[i]);
	}
	dump_running(&d, t, n);
	dump_print(out, &d, t, n);
	ret = 0;
out:
	attach_py_free(&d.py);
	attach_maps_free(&d.maps);
	mon_unwind_close(d.u);
	free(t);
	free(tids);
	return ret;
}
