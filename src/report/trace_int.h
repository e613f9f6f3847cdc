/*
 * trace_int.h — what the files of the --trace writer (trace*.c) share: the
 * events before they are written, the lanes, the writer's context, and the
 * functions one file gives the others.  Launcher side only.
 */
#ifndef CBN_TRACE_INT_H
#define CBN_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_lanes.h"
#include "export.h"
#include "gz.h"
#include "profile.h"

struct mem_analysis;
struct mem_space;
struct op_analysis;
struct step_analysis;

#define TRACE_DEFAULT_CAP (256ull << 20)
#define TRACE_MAX_SLOTS 16  /* one lane plus 15 overflow lanes */
#define TRACE_SLOT_SHIFT 23 /* tids and pids stay below 2^22 (pid_max limit) */
#define TRACE_GPU_PID_BASE (1u << 24)
/* tid of the memory counter events: past every lane's (counters belong to
 * their process in viewers; the tid only keeps them off the thread lanes) */
#define TRACE_COUNTER_TID (48u << TRACE_SLOT_SHIFT)

/* flows last: trace_cmp_emit() tells them by type >= TEV_FLOW_S */
enum tev_type {
	TEV_SAMPLE, TEV_API, TEV_RANGE, TEV_MARK, TEV_GPU, TEV_STEP, TEV_CAPTURE, TEV_OFFCPU,
	TEV_MPI,
	TEV_FLOW_S, TEV_FLOW_F, TEV_LOCK_S, TEV_LOCK_F
};
enum tev_lane { LANE_CPU, LANE_API, LANE_RANGE, LANE_GPU, LANE_STEP, LANE_CAPTURE };

/* One event before it is written; times are ns relative to the profile start,
 * already clipped to the window. */
struct tev {
	int64_t ts, dur;
	uint32_t pid, tid; /* JSON pid and the lane's base tid */
	uint32_t ref;      /* func, api, range or gpu op index */
	uint32_t thr;      /* thread index for lane names, PROF_NONE */
	uint64_t flow;     /* flow id (flows only) */
	uint16_t depth;    /* stack depth of a sample slice, root 0 */
	uint8_t type, kind, slot;
	uint8_t inlined;   /* a sample slice of an inlined frame */
};

struct tvec {
	struct tev *v;
	size_t n, cap;
};

/* A growable string: one event is formatted here before it is written, so the
 * size cap can be checked against its real length. */
struct sbuf {
	char *p;
	size_t n, cap;
	int oom;
};

struct lane {
	uint32_t pid, tid, thr;
	uint8_t kind, slot;
};

struct tctx {
	const struct profile *p;
	const struct mem_analysis *mem; /* NULL: no memory data */
	const struct step_analysis *steps; /* NULL: no steps */
	const struct op_analysis *ops;     /* NULL: no operators */
	const struct wait_analysis *wait;  /* its stretches: the off-CPU slices; NULL: none */
	int64_t ws, we;         /* window, relative ns */
	uint32_t *gpu_pid_proc; /* synthetic GPU pid k -> process index */
	uint32_t *gpu_pid_dev;  /* ... and device */
	size_t ngpu_pids;
	size_t cpu_limit; /* most CPU slices worth building */
	int cpu_limited;  /* hit the limit: cannot happen after trace_plan_cpu() */
	int64_t cpu_cut;  /* CPU slices starting at or after this are not built */
	size_t cpu_total; /* all CPU slices, from the counting pass (0 if none) */
	uint64_t *hist;   /* counting pass: slice starts per time bucket */
	int64_t hist_lo, hist_width;
	struct lane *lanes; /* every (lane, slot) that has events */
	size_t nlanes, cap_lanes;
	int has_ranks;      /* a process is a rank: groups named and sorted by rank */
	uint32_t *pid_of;   /* trace pid per process (trace_pids), NULL: their own */
};

/* trace_buf.c */
int tvec_push(struct tvec *t, const struct tev *e);
void sb_puts(struct sbuf *b, const char *s);
__attribute__((format(printf, 2, 3))) void sb_printf(struct sbuf *b, const char *fmt, ...);
/* The one JSON string writer: quotes, backslashes and control characters are
 * escaped, valid UTF-8 passes through, invalid bytes become U+FFFD, so any
 * name (kineto #888: a ']' broke their splicing) gives valid JSON. */
void sb_json_str(struct sbuf *b, const char *s);
/* Decimal digits of v (no printf: millions of events go through here). */
void sb_u64(struct sbuf *b, uint64_t v);
/* ns -> µs with ns precision, exact (no floating point on the way). */
void sb_us(struct sbuf *b, int64_t ns);
/* trace_ids.c */
/* ts of process proc (PROF_NONE: none known) relative to the run's start;
 * the ranks of a distributed run through their clock alignment, so every
 * rank is on one timeline (docs/distributed.md). */
int64_t trace_rel(const struct tctx *c, uint32_t proc, uint64_t ts);
/* Clip [*s, *e] to the window.  0 when nothing of it is left; instants
 * (s == e) are kept when they lie inside. */
int trace_clip(const struct tctx *c, int64_t *s, int64_t *e);
/*
 * The trace pid of each process: its own pid, except in a run over several
 * hosts, where processes of two hosts may share one (a rank each, in one
 * group, was what came of it): there each (host, pid) is numbered from 1,
 * and the group's name still says the real pid.  Exec images of one process
 * keep one pid, as on one host.
 */
int trace_pids(struct tctx *c);
uint32_t trace_pid(const struct tctx *c, uint32_t proc);
/* Lane identity of a thread index (pid, tid); unknown threads of process
 * proc get tid 0, named "unknown thread". */
void trace_thread_id(const struct tctx *c, uint32_t thr, uint32_t proc, uint32_t *pid,
                     uint32_t *tid);
/* JSON tid of a lane: the base tid plus the lane kind and overflow slot in the
 * high bits, so a thread's CPU, CUDA API and annotation lanes are separate
 * tracks that never collide with a real tid.  GPU pids are synthetic, so their
 * stream lanes keep the stream id as tid.  The Steps and Capture lanes of a
 * process sit past the memory counters' index (TRACE_COUNTER_TID). */
uint32_t trace_lane_index(uint8_t kind, uint8_t slot);
uint32_t trace_lane_tid(const struct tev *e);
/* trace_collect.c */
int trace_gpu_pids(struct tctx *c);
/* CUDA API calls, annotation ranges and GPU operations. */
int trace_collect_cuda(struct tctx *c, struct tvec *out);
int trace_collect_steps(struct tctx *c, struct tvec *out);
/* Off-CPU stretches (--off-cpu: the wait analysis' stretches, a tev's ref
 * indexes them) as slices on their thread's CPU lane, where
 * the samples leave a gap: the slot assignment moves one that overlaps a
 * sample slice to an overflow lane. */
int trace_collect_offcpu(struct tctx *c, struct tvec *out);
/* MPI calls (libcbottleneck_mpi.so) as slices on their thread's API lane,
 * cat "mpi", so a rank's waits in collectives line up across the ranks. */
int trace_collect_mpi(struct tctx *c, struct tvec *out);
/* Lock waits (a stretch with a holder) as flows from the waiter's off-CPU
 * slice to the holder's CPU
 * lane at the wait's end ("f" binds to the holder's enclosing slice there,
 * "bp":"e"); ids 2^51 + the stretch's index, apart from the CUDA flows' (exact
 * in a double, as JSON readers hold them). */
int trace_add_lock_flows(struct tctx *c, struct tvec *t);
/* trace_cpu.c */
/* The CPU slices (cpu_lanes.h's walk) inside the window and before the cut,
 * at most cpu_limit of them; with c->hist set, only counted into it. */
int trace_collect_cpu(struct tctx *c, struct tvec *out);
/*
 * When there are more slices than the size cap can hold, find the time
 * before which they fit (a counting pass over them, into a histogram of
 * slice starts), so that every thread is cut at the same time rather than
 * the last threads losing everything.
 */
int trace_plan_cpu(struct tctx *c);
/* trace_lanes.c */
int trace_cmp_lane(const void *a, const void *b);
int trace_assign_slots(struct tctx *c, struct tvec *t);
/* Emission order: by time; at equal times slices before the flows bound to
 * them, longer (outer) slices first, then shallower frames. */
int trace_cmp_emit(const void *a, const void *b);
/* Flow arrows launch -> GPU op, kineto's "ac2g" convention: "s" at the start
 * of the API slice (binds to the enclosing slice, i.e. the call), "f" with
 * "bp":"e" at the start of the GPU op (binds to the op itself).  Both ends
 * must be in the trace.  Ids: correlation ids are per process, so the process
 * index goes in the high 32 bits (process 0 keeps the plain correlation id);
 * a flow id pairs one s with one f, so when one call launched several ops (a
 * CUDA graph) the arrows after the first get ids 2^52 + op index. */
int trace_add_flows(struct tctx *c, struct tvec *t);
/* trace_emit.c */
void trace_format(const struct tctx *c, struct sbuf *b, const struct tev *e);
/* process_name / thread_name / sort indexes for every lane that has events. */
int trace_write_meta(const struct tctx *c, struct gz_file *f, struct sbuf *b);
/* Counter tracks, as Kineto's memory view draws them: "Host memory" (live,
 * rss) in each process, "GPU N memory" (allocated, reserved) per device.
 * Only points inside the window; the value at the window's start is
 * repeated there so the curve does not start empty. */
int trace_write_counters(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                         int *first);

#endif
