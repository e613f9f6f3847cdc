/*
 * mon_int.h — the monitor's internals, shared by its files (monitor.h).
 */
#ifndef CBN_MON_INT_H
#define CBN_MON_INT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "cbn_format.h"
#include "monitor.h"
#include "writer.h"

#define MON_WATCHES 64                   /* the session directory and its rank directories */

/* One process image of the run (PID.SEQ.cbp). */
struct mon_image {
	uint32_t pid, seq;
	char path[PATH_MAX];             /* its session file */
	struct cbn_file_header *hdr;     /* mapped read-write (shared): NULL until valid */
	int ended;                       /* exited, or replaced by an exec */
	struct writer side;              /* PID.SEQ.cbs, hdr NULL until opened */
	int side_failed;
	/* mon_mem.c */
	int statm;                       /* /proc/PID/statm, kept open; -1 */
	uint64_t next_mem;
	/* mon_capture.c */
	int time_state;                  /* 0 before --delay, 1 open, 2 over (--duration) */
	uint32_t toggles_seen;
	/* mon_offcpu.c, mon_python.c: their state for this image, or NULL */
	void *off;
	void *py;
};

/* A control socket (mon_ctl.c): DIR/ctl/PID.sock for one process. */
struct mon_sock {
	uint32_t pid, seq;               /* seq: of the image it was made for */
	int fd;
	char dir[PATH_MAX];
	char path[PATH_MAX + 32];
};

struct mon {
	struct mon_opts o;
	int verbose;
	int ctl;                         /* control sockets are served */
	struct mon_sock *sock;
	size_t nsock, capsock;
	int inotify;
	int wd[MON_WATCHES];
	char wdir[MON_WATCHES][PATH_MAX];
	int nwd;
	struct mon_image *img;
	size_t nimg, capimg;
	uint64_t off_next, off_rnd;      /* mon_offcpu.c: the next tick, its randomness */
};

/* mon.c: the image's side file, opened on first use (NULL when it cannot
 * be): what the monitor records goes there, through writer_append_event. */
struct writer *mon_side(struct mon_image *im);

/* mon_mem.c: one turn of the counters for every live image; returns the
 * next deadline it needs (0: none). */
uint64_t mon_mem_turn(struct mon *m, uint64_t now);
void mon_mem_end(struct mon_image *im);

/* mon_capture.c: one turn of the time gate and the toggle signal for every
 * live image (next deadline, 0: none); a gate opened (1) or closed in one
 * image, recorded (returns whether it records now); the gate ctl and the
 * toggle signal turn; a CAPTURE record into the side file. */
uint64_t mon_capture_turn(struct mon *m, uint64_t now);
int mon_capture_gate(struct mon_image *im, uint32_t gate, int open, int cause);
uint32_t mon_capture_manual(const struct mon *m);
void mon_capture_record(struct mon_image *im, uint64_t ts, int event, int cause, const char *name);

/* mon_offcpu.c: one turn of the off-CPU sampler (its next deadline, 0:
 * off); an image's state freed. */
uint64_t mon_offcpu_turn(struct mon *m, uint64_t now);
void mon_offcpu_end(struct mon_image *im);

/* mon_python.c: thread tid's Python frames as CBN_PYW words (at most max),
 * their code objects' names into the side file; the image's state freed. */
int mon_py_frames(struct mon_image *im, uint32_t tid, uint64_t *out, int max);
void mon_py_free(struct mon_image *im);

/* mon_ctl.c: a control socket for im's process (once per pid), sockets of
 * processes gone closed, the descriptors to poll, the clients served, all
 * closed at the end. */
void mon_ctl_image(struct mon *m, struct mon_image *im);
void mon_ctl_reap(struct mon *m);
int mon_ctl_fds(struct mon *m, struct pollfd *p, int max);
void mon_ctl_serve(struct mon *m, const struct pollfd *p, int n);
void mon_ctl_end(struct mon *m);

#endif
