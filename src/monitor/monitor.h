/*
 * monitor.h — the launcher's work beside the running program: what a thread
 * of the agent's inside the program would otherwise do, done from outside,
 * so that the program has no thread of ours (docs/agent.md section 12).
 * The monitor follows every process image of the run through its session
 * file (mapped here: the header's counters and control words are shared),
 * and records what it sees into the image's side file PID.SEQ.cbs
 * (cbn_format.h, CBN_SIDE_EXT):
 *
 *   mon.c         the images: found as their files appear (inotify), mapped,
 *                 given a side file on demand, let go when they end
 *   mon_mem.c     the memory counters' timeline (--memory): RSS from
 *                 /proc/PID/statm and the header's exact counters, every 10 ms
 *   mon_capture.c the capture gates that need a clock or a command: --delay,
 *                 --duration, the toggle signal
 *   mon_ctl.c     the control sockets of `cbottleneck ctl PID ...`
 *   mon_offcpu.c  the off-CPU sampler (--off-cpu): blocked threads' places and
 *                 stacks (mon_unwind.c: libdwfl over a copy of the stack;
 *                 mon_python.c: their Python frames)
 *
 * Launcher side only, one thread (the launcher's wait loop, supervise.c);
 * nothing here signals or stops a process of the program.
 */
#ifndef CBN_MONITOR_H
#define CBN_MONITOR_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mon_opts {
	const char *session;             /* the session directory (absolute) */
	int memory;                      /* --memory with host: the counters' timeline */
	int controlled;                  /* capture controls were asked for */
	uint64_t delay_ns, duration_ns;  /* --delay, --duration, 0: none */
	int toggle;                      /* --toggle-signal */
	int range_api;                   /* --capture-range api: ctl and the toggle
					  * signal turn the range gate */
	int ctl;                         /* serve control sockets (mon_ctl.c) */
	long offcpu_hz;                  /* --off-cpu rate, 0: off (mon_offcpu.c) */
};

struct mon;

/* A monitor for the session (before the program starts: files made from
 * then on are found).  NULL when nothing is asked of it, or on a failure
 * the run goes on without (said on stderr with verbose). */
struct mon *mon_start(const struct mon_opts *o, int verbose);
/* The descriptors to poll, into p[0..max); returns how many. */
int mon_fds(struct mon *m, struct pollfd *p, int max);
/* A turn: after a poll (p[0..n) as mon_fds gave them, with revents) or when
 * the deadline came.  Returns the next deadline (CLOCK_MONOTONIC ns). */
uint64_t mon_turn(struct mon *m, uint64_t now, const struct pollfd *p, int n);
/* The program ended: a last turn, side files closed, everything freed. */
void mon_stop(struct mon *m);

/* mon_unwind.c: another process's thread stacks (libdwfl), for the off-CPU
 * sampler and for attaching to a running process (src/attach/).  NULL when
 * the process's modules cannot be read (gone, or not ours to read). */
struct mon_unwind;
struct mon_unwind *mon_unwind_open(pid_t pid);
int mon_unwind_stack(struct mon_unwind *u, pid_t tid, uint64_t pc, uint64_t sp, uint64_t bp,
		     const void *stack, size_t n, uint64_t *out, int max);
/* copy_only: a walk reads the copy given and nothing else (a running
 * thread's sample: its live stack has moved on); mon_unwind_cut: the last
 * walk stopped at the copy's end. */
void mon_unwind_copy_only(struct mon_unwind *u, int on);
int mon_unwind_cut(const struct mon_unwind *u);
/* The module holding pc as the process mapped it: its path (owned by u),
 * load bias (pc - bias is the address in the file) and build-id (owned by
 * u, *id_len 0 when none).  0, or -1 when pc is in no module. */
int mon_unwind_module(struct mon_unwind *u, uint64_t pc, const char **path, uint64_t *bias,
		      const unsigned char **id, int *id_len);
void mon_unwind_close(struct mon_unwind *u);

#endif
