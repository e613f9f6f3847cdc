/*
 * attach_int.h — what the recorder's files share (attach.h): the session
 * file being written (attach_file.c) and the threads followed
 * (attach_record.c).
 */
#ifndef CBN_ATTACH_INT_H
#define CBN_ATTACH_INT_H

#include "attach.h"
#include "cbn_format.h"
#include "util.h"
#include "writer.h"

struct attach_file {
	struct writer w;
	uint32_t mod_seq;
	uint64_t *mods;                  /* (path, bias) of each module recorded */
	size_t nmods, capmods;
};

struct attach_thread {
	pid_t tid;
	int seen;                        /* in the last /proc/PID/task scan */
	struct attach_ev ev;             /* fd -1: none (refused, or closed) */
	struct cbn_chunk_header *chunk;  /* its SAMPLES chunk, NULL before the first */
	char name[CBN_NAME_MAX];
	uint64_t cpu0, cpu_ns;           /* CPU time from schedstat: when first seen, last read */
	uint64_t weighed;                /* of its event's count, what its samples' weights hold */
};

/* attach_pyrec.c: the samples' Python frames. */
struct attach_pyrec {
	struct attach_py py;
	int on;                          /* the interpreter is read */
	int replaced;                    /* the image it was read from exec'd another */
	char exe[4096];                  /* the process's executable when last looked at */
	struct util_map map;             /* code fingerprint -> id */
	uint64_t *keys;                  /* keys[id - 1] */
	size_t nkeys, capkeys;
	struct cbn_py_frame fr[CBN_MAX_FRAMES];
};
/* Find pid's interpreter and say so in f's header (on, refused and why). */
void attach_pyrec_open(struct attach_pyrec *p, struct attach_file *f, pid_t pid);
/* 1 when pid's executable changed since the last look (an exec). */
int attach_pyrec_exec(struct attach_pyrec *p, pid_t pid);
/* After an exec: the new image's interpreter found, when none was read
 * before (one per session file: the header holds one); one read before is
 * read no more (its addresses were the old image's). */
void attach_pyrec_again(struct attach_pyrec *p, struct attach_file *f, pid_t pid);
/* Thread tid's Python frames as CBN_PYW words into pcs[n..max): the new n. */
int attach_pyrec_frames(struct attach_pyrec *p, struct attach_file *f, pid_t tid, uint64_t *pcs,
			int n, int max);
void attach_pyrec_close(struct attach_pyrec *p);

uint64_t attach_now(void);
int attach_file_open(struct attach_file *f, const char *session, pid_t pid,
		     const struct attach_opts *o, char *why, size_t len);
/* The modules pid maps now, those not recorded yet: 0, or -1 (gone). */
int attach_file_modules(struct attach_file *f, pid_t pid);
void attach_file_thread(struct attach_file *f, uint16_t type, pid_t tid, const char *name,
			uint64_t ts, uint64_t cpu_ns);
/* Sample as of thread t, of weight periods, with its unwound pcs[n] (and its
 * kernel stack when it was taken in the kernel with one). */
void attach_file_sample(struct attach_file *f, struct attach_thread *t, uint32_t weight,
			const struct attach_sample *as, const uint64_t *pcs, int n, int truncated);
/* A thread's event opened with kernel samples and their call chains: the
 * header says kernel stacks were taken.  (Without them, the kernel's time
 * is in the user samples' weights and no header field says so: the report
 * shows no kernel time, docs/attach.md.) */
void attach_file_kernel(struct attach_file *f);
void attach_file_close(struct attach_file *f);

#endif
