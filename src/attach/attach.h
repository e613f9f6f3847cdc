/*
 * attach.h — a running process seen from outside, without stopping it or
 * putting anything of ours into it (docs/attach.md): its threads and their
 * stacks from /proc (attach_proc.c) and from per-thread perf events that copy
 * the user registers and the top of the user stack (attach_perf.c), unwound
 * with the monitor's libdwfl unwinder (src/monitor/mon_unwind.c);
 * `cbottleneck dump PID` (attach_dump.c).
 * Launcher side only.  Functions return 0 or a negative errno and, on
 * failure, say why in one line into why[len]: -ESRCH the process is not
 * there (never was, or ended meanwhile), -EPERM / -EACCES it is not ours to
 * read (the line names the setting to change), others a failure.
 */
#ifndef CBN_ATTACH_H
#define CBN_ATTACH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cbn_pyread.h"

#define ATTACH_STACK_COPY (32 * 1024)  /* bytes of user stack copied at a look or sample */
#define ATTACH_MAX_FRAMES 256

/* attach_proc.c */
/* The parent of pid (0 unknown); 1 when pid runs (not gone, not a zombie). */
pid_t attach_proc_ppid(pid_t pid);
int attach_proc_alive(pid_t pid);
/* pid is there, alive (not a zombie) and readable: 0, or -errno with why. */
int attach_proc_check(pid_t pid, char *why, size_t len);
/* Why pid's threads or modules could not be read: it is gone or exiting
 * (-ESRCH), not ours to read (as attach_proc_check), or -EIO. */
int attach_proc_unreadable(pid_t pid, char *why, size_t len);
/* After a failed read of pid's modules: 1 when it is worth another try
 * (pid alive, *tries under the limit; waits a little first), else 0. */
int attach_proc_again(pid_t pid, int *tries);
/* The thread ids of pid (malloc'd into *tids, sorted); how many, or -errno. */
int attach_proc_threads(pid_t pid, pid_t **tids);
/* A thread's name (/proc/PID/task/TID/comm), "" when gone. */
void attach_proc_name(pid_t pid, pid_t tid, char *name, size_t len);
/* The process's command line, arguments separated by spaces. */
void attach_proc_cmdline(pid_t pid, char *out, size_t len);

/* Where a thread is, from /proc/PID/task/TID/syscall. */
struct attach_where {
	int state;                       /* 0 running (or gone), 1 blocked */
	int64_t nr;                      /* the system call, -1 outside one (a fault) */
	uint64_t sp, pc;
};
int attach_proc_where(pid_t pid, pid_t tid, struct attach_where *w);
/* The name of system call nr ("futex"), or NULL when not one we name. */
const char *attach_proc_syscall_name(int64_t nr);
/* The mappings of process pid (start and end of each, from /proc/PID/maps),
 * read at the first look and again when an address falls in none of them:
 * once per dump, not once per thread. */
struct attach_maps {
	pid_t pid;
	uint64_t *range;                 /* start, end of mapping i at [2i], [2i + 1] */
	size_t n, cap;                   /* mappings; room for cap values */
	int read;
};
/* Up to len bytes of m->pid's memory from sp, cut at the end of the mapping
 * holding sp; the bytes copied (0: none). */
size_t attach_proc_stack(struct attach_maps *m, uint64_t sp, void *dst, size_t len);
void attach_maps_free(struct attach_maps *m);
/* Why a read of pid's threads failed with err (-EPERM, -EACCES): the owner,
 * Yama's ptrace_scope or the process's dumpable flag, in one line. */
void attach_proc_refusal(pid_t pid, int err, char *why, size_t len);

/* attach_perf.c: one thread's perf event (CPU clock, user registers and
 * stack at each sample) and its ring. */
struct attach_ev {
	pid_t tid;
	int fd;
	unsigned char *map;              /* the header page, then the data pages */
	size_t data_len;
	uint64_t lost;                   /* samples the kernel dropped (ring full) */
	uint64_t count;                  /* the thread's CPU ns it counted, read when closed */
	int kernel;                      /* samples taken in the kernel too */
	int chain;                       /* with the kernel's call chain */
};
/* One sample, pointing into the caller's buffer. */
struct attach_sample {
	pid_t tid;
	uint64_t time;                   /* CLOCK_MONOTONIC ns */
	uint64_t count;                  /* the thread's CPU ns counted since the event opened */
	int kernel;                      /* taken in the kernel (in a system call from pc) */
	uint64_t pc, sp, bp;
	const unsigned char *stack;      /* the copy of the stack from sp */
	size_t stack_len;
	/* taken in the kernel: the kernel's call chain, leaf first (the pcs
	 * after it are return addresses); kcut: it was longer than kept */
	uint64_t kpc[CBN_KSTACK_MAX_FRAMES];
	uint32_t nk, kcut;
};
/* Open thread tid's event: a sample every period_ns of its CPU time, with
 * stack_bytes of its stack and a ring of data_pages pages (a power of 2),
 * readable (poll) once wake_bytes are in it (0: at each sample).  Nothing is
 * sent to the thread.  0, or -errno with why (perf_event_paranoid, locked
 * memory). */
int attach_ev_open(struct attach_ev *e, pid_t tid, uint64_t period_ns, uint32_t stack_bytes,
		   size_t data_pages, uint32_t wake_bytes, char *why, size_t len);
/* The next sample in e's ring into *s (its stack copied into buf[len]): 1,
 * 0 when none is waiting. */
int attach_ev_next(struct attach_ev *e, struct attach_sample *s, unsigned char *buf, size_t len);
void attach_ev_close(struct attach_ev *e);

/* attach_python.c: the process's CPython interpreter (3.11 to 3.13). */
struct attach_py {
	pid_t pid;
	uint32_t version;                /* PY_VERSION_HEX */
	uint64_t module_base;            /* load bias of the module holding _PyRuntime */
	struct cbn_py_target t;
	struct cbn_rec_py_code *rec;     /* CBN_PY_REC_MAX bytes; NULL: no interpreter read */
	/* The interpreter's thread states as last read (cbn_py_threads): a
	 * thread's frames are read from its state at once, without walking the
	 * list (a walk per thread made a dump of n threads n^2 reads). */
	uint32_t *ts_tid;
	uintptr_t *ts_addr;
	int nts;
	uint64_t ts_ns;                  /* when it was read (CLOCK_MONOTONIC), 0 never */
	struct attach_py_names *names;   /* attach_py_where's code objects, read once each */
};
/* 1 found and readable, 0 not a Python process, -1 one that cannot be read
 * (why says why: a version not understood). */
int attach_py_find(pid_t pid, struct attach_py *py, char *why, size_t len);
/* Thread tid's Python frames, leaf first (as cbn_py_frames_of); 0: none.
 * The list of thread states is read again when tid's has moved, or when tid
 * is not in it and it is older than ATTACH_PY_REREAD_MS. */
#define ATTACH_PY_REREAD_MS 10
int attach_py_frames(struct attach_py *py, pid_t tid, struct cbn_py_frame *out, int max);
/* The PY_CODE record of frame f's code as id into py->rec: its size. */
size_t attach_py_code(struct attach_py *py, uint32_t id, const struct cbn_py_frame *f, int *gone);
/* Frame f's qualified name, file and executing line (pointers valid until
 * the next call at least: each code object is read once, by its fingerprint,
 * and kept): 0, or -1 when its code is gone. */
int attach_py_where(struct attach_py *py, const struct cbn_py_frame *f, const char **qual,
		    const char **file, int *line);
void attach_py_free(struct attach_py *py);

/* attach_dump.c: every thread's stack once, printed to out as `py-spy dump`
 * prints it.  0, or -errno with why (nothing printed). */
int attach_dump(pid_t pid, FILE *out, char *why, size_t len);

/* attach_record.c: `cbottleneck --pid PID`.  Sample every thread of pid
 * (and each thread it starts meanwhile, found by reading /proc/PID/task
 * ATTACH_SCAN_MS apart) until *stop is set, the process exits or the
 * duration is over; unwind each sample as it comes and write the session
 * file SESSION/PID.0.cbp in the agent's format. */
#define ATTACH_SCAN_MS 100
struct attach_opts {
	uint64_t period_ns;              /* CPU time per sample, per thread */
	uint64_t duration_ns;            /* 0: until stopped */
	int depth;                       /* frames per stack at most */
	uint64_t file_bytes;             /* the session file's size at most */
	volatile int *stop;              /* set by a signal handler: detach */
};
struct attach_result {
	uint64_t start_ns, end_ns;       /* CLOCK_MONOTONIC, attached and detached */
	int exited;                      /* the process ended while attached */
	uint64_t samples, lost;          /* written; dropped (a full perf ring or file) */
	uint32_t threads, unread;        /* threads followed; threads whose event was refused */
};
int attach_record(pid_t pid, const char *session, const struct attach_opts *o,
		  struct attach_result *res, char *why, size_t len);

#endif
