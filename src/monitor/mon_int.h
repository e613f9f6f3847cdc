/*
 * mon_int.h — the monitor's internals, shared by its files (monitor.h).
 */
#ifndef CBN_MON_INT_H
#define CBN_MON_INT_H

#include <limits.h>
#include <stdint.h>

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
};

struct mon {
	struct mon_opts o;
	int verbose;
	int inotify;
	int wd[MON_WATCHES];
	char wdir[MON_WATCHES][PATH_MAX];
	int nwd;
	struct mon_image *img;
	size_t nimg, capimg;
};

/* mon.c: the image's side file, opened on first use (NULL when it cannot
 * be): what the monitor records goes there, through writer_append_event. */
struct writer *mon_side(struct mon_image *im);

/* mon_mem.c: one turn of the counters for every live image; returns the
 * next deadline it needs (0: none). */
uint64_t mon_mem_turn(struct mon *m, uint64_t now);
void mon_mem_end(struct mon_image *im);

#endif
