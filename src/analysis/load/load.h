/*
 * load.h — read a session directory (every <pid>.<seq>.cbp plus session.json),
 * symbolize, and build a struct profile.  Launcher side only.
 */
#ifndef CBN_LOAD_H
#define CBN_LOAD_H

#include "profile.h"

/* Exit statuses of `cbottleneck report` on bad sessions, see docs/cli.md. */
#define PROF_LOAD_OK 0
#define PROF_LOAD_PARTIAL 1   /* some files damaged: profile holds what was intact */
#define PROF_LOAD_EMPTY -1    /* no readable data at all (message in err) */
#define PROF_LOAD_NOMEM -2    /* memory ran short while building the profile (message in err) */

/* How inlined code is shown (--inline). */
enum prof_inline {
	PROF_INLINE_EXPAND = 0,  /* inlined functions are frames of their own (marked) */
	PROF_INLINE_FOLD = 1,    /* their time stays with the function they were inlined into */
};

/* How stacks with Python frames are shown (--python). */
enum prof_python {
	PROF_PYTHON_ON = 0,      /* Python frames where their evaluation loop ran; the
				  * interpreter's own frames folded into them */
	PROF_PYTHON_NATIVE = 1,  /* the same, with the interpreter's own frames kept */
	PROF_PYTHON_OFF = 2,     /* native frames only (the Python words left out) */
};

struct prof_load_opts {
	enum prof_inline inline_view;
	/* --rank/--ranks ("0-3,7", NULL all): load only the files whose header
	 * names one of these ranks (processes that are no rank are left out) */
	const char *ranks;
	enum prof_python python_view;
};

/* Returns PROF_LOAD_OK, PROF_LOAD_PARTIAL (and *out set), or a negative value
 * with a one-line message in err (and *out NULL).  prof_load: default options. */
int prof_load(const char *session_dir, struct profile **out, char *err, size_t errlen);
int prof_load_with(const char *session_dir, const struct prof_load_opts *o, struct profile **out,
		   char *err, size_t errlen);
void prof_free(struct profile *p);

/* --ranks LIST ("0-3,7"): 1 when rank is in list, 0 when not, -1 with a
 * one-line message in err when list is not such a list (load_mpi.c). */
int prof_ranks_match(const char *list, int32_t rank, char *err, size_t errlen);

/* The machine and tools of the run, as the launcher saw them at its start
 * (torch.utils.bottleneck's environment summary).  "" / 0 when unknown. */
struct session_env {
	char kernel[256];         /* "Linux 6.18.44 x86_64" (uname) */
	char cpu_model[128];      /* /proc/cpuinfo "model name" */
	int cpus;                 /* online CPUs */
	char governor[32];        /* cpu0's cpufreq scaling governor */
	double load[3];           /* /proc/loadavg at start */
	char libc[32];            /* gnu_get_libc_version() */
	char libunwind[32];       /* the agent's libunwind */
	char elfutils[32];        /* the symbolizer's libdw */
};

/* The launcher's own record of the run, kept in <session>/session.json. */
struct session_meta {
	char **argv;              /* NULL-terminated */
	int exit_status;          /* exit code, or -1 when killed by a signal */
	int exit_signal;
	uint64_t start_mono_ns, end_mono_ns;
	double frequency_hz;
	uint64_t user_ns, sys_ns;  /* CPU the kernel counted for the whole tree, 0 unknown */
	uint64_t launcher_ns;      /* the launcher's own CPU during the run (its monitor:
	                            * off-CPU sampling, memory timeline, controls) */
	struct session_env env;    /* found: env.kernel[0] != 0 */
	/* processes of the run still running when the program ended (left
	 * running, not waited for: their profiles end there) */
	const uint32_t *running;
	size_t nrunning;
	/* `cbottleneck --pid`: the process attached to (0: a launched run); its
	 * start-up was not seen and its exit status is not known */
	uint32_t attached_pid;
};
int session_meta_write(const char *session_dir, const struct session_meta *m);

/* load_python.c: the line of code unit u (0-based) in a CPython 3.11+
 * location table (PEP 626/657), -1 when the table gives none or is
 * malformed (also for `cbottleneck dump`'s Python frames). */
int load_python_line(const unsigned char *lt, size_t len, int firstlineno, uint32_t u);

#endif
