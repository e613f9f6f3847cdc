/*
 * load_int.h — internals of the session loader (load*.c): the string arena,
 * growable arrays, a hash index, and the per-load and per-file state shared by
 * load.c (files, processes, threads, samples, symbols) and load_cuda.c (CUDA
 * records).  Launcher side only; single-threaded.
 */
#ifndef CBN_LOAD_INT_H
#define CBN_LOAD_INT_H

#include <stddef.h>
#include <stdint.h>

#include "../../format/reader.h"
#include "../../symbols/ksym.h"
#include "../../symbols/perfmap.h"
#include "../../symbols/sym.h"
#include "load.h"
#include "util.h"

/* --- containers: src/util, with the loader's out-of-memory policy ---------
 *
 * The project's one policy (docs/architecture.md, "Out of memory"): an
 * allocation that fails is reported to the caller, never jumped over, and
 * what was built is freed by the ordinary paths.  Most of the loader's
 * helpers return an index, where a failure has no room, so these wrappers
 * also note it in the load (L->nomem), as a stream keeps its error: the
 * helper returns NULL, -1 or PROF_NONE, its callers stop before using it,
 * the record walk stops (rec_cb), and prof_load_with() frees the partial
 * profile and returns PROF_LOAD_NOMEM.  Only the CLI decides to exit. */

struct load;
static inline int load_nomem(struct load *L);

static inline int load_grow(struct load *L, void **arr, size_t *cap, size_t n, size_t esz)
{
	return util_grow(arr, cap, n, esz) < 0 ? load_nomem(L) : 0;
}

/* Append one element to arr (count n, capacity cap) and return its address;
 * NULL (L->nomem set) when arr cannot grow. */
#define LOAD_PUSH(L, arr, n, cap)                                                   \
	(load_grow((L), (void **)&(arr), &(cap), (n), sizeof(*(arr))) < 0 ? NULL : \
									     &(arr)[(n)++])

/* realloc(p, n); NULL (p kept, L->nomem set) when memory is short. */
static inline void *load_realloc(struct load *L, void *p, size_t n)
{
	void *q = util_reallocarray(p, n, 1);

	if (!q)
		load_nomem(L);
	return q;
}

static inline int load_map_put(struct load *L, struct util_map *m, uint64_t h, uint32_t val)
{
	return util_map_put(m, h, val) < 0 ? load_nomem(L) : 0;
}

/* --- loader state --------------------------------------------------------- */

/* One MODULE_LOAD in a process, alive in [load_ts, unload_ts). */
struct load_mod {
	uint64_t base, load_ts, unload_ts;
	uint32_t seq;
	const char *path;
	struct sym_module *sym;
	uint8_t ours;            /* cbottleneck's own (agent, hooks, CUDA layer, unwinder) */
	uint8_t neutral;         /* libc, the loader, CUDA's driver and CUPTI: time there
	                          * belongs to whoever called in (load_stack) */
	uint8_t alias;           /* a second view of a module's code (CODE_FILE) */
};

/* A runtime address range [start, end) of module mod. */
struct load_range {
	uint64_t start, end;
	uint64_t seg_vaddr, seg_off;     /* its segment's p_vaddr and p_offset */
	uint32_t mod;
};

/* A file the program mapped executable itself (CODE_FILE): where it is one
 * of the process's modules, a second view of that module's code. */
struct load_codefile {
	uint64_t ts, start, len, off;
	const char *path;                /* interned */
};

/* A sample as read, before symbolization: pcs point into the file buffer. */
struct load_raw {
	uint64_t ts;
	const uint64_t *pcs;         /* its own words (in the file buffer) */
	uint32_t thread, weight, flags, nframes;
	/* CBN_SAMPLE_SHARED: the base's words put back after its own
	 * (cbn_share_expand), else share NULL */
	const struct cbn_sample_share *share;
	const uint64_t *base_pcs;
	uint16_t base_n, base_nn;
	uint32_t kweight;            /* of weight, periods the kernel spent for the thread */
	const struct cbn_kstacks *kstacks; /* its kernel stacks (in the file buffer), or NULL */
	const struct cbn_kplace *kplace;   /* where each came from (reader_rec.kplace), or NULL */
};

struct load_capev {          /* a CAPTURE record, paired into windows at the file's end */
	uint64_t ts, step;
	uint32_t seq, event, cause;
	const char *name;        /* MARK: interned, else NULL */
};

struct load_cstack {         /* CUDA_STACK, joined to its API call by correlation */
	uint32_t correlation;
	uint32_t nframes;
	const uint64_t *pcs;
	uint64_t key;            /* CBN_CSTACK_KEYED: with frames it defines key, without
	                          * it stands for the stack defined with key; 0 unkeyed */
};

/* JIT code (load_jit.c): a JIT_REGION record, applied in time order once the
 * file has been read; the executable regions outside every module they
 * make, each alive in [ts, gone). */
struct load_jitev {
	uint64_t ts, start, len;
	uint32_t seq, gone;
};

struct load_jit {
	uint64_t start, end;
	uint64_t ts, gone;       /* gone: UINT64_MAX while mapped */
	uint64_t label;          /* the start its name shows ("[jit] 0xLABEL"): what is left
				  * of a region after part of it went keeps the region's */
	uint32_t func;           /* that function, PROF_NONE until a frame needs it */
};

/* What a stack's CBN_UWM marker words said (load_uwm_strip). */
struct load_uwm {
	uint32_t unwind;         /* PROF_UNWIND_* */
	const char *stop_at;     /* where it stopped early (interned), NULL */
};

struct load_ustop {          /* samples that stopped at one place, of the current file */
	const char *place;
	uint32_t cause;
	uint64_t samples, weight;
};

/* State of the file being read (one process image). */
struct load_file {
	uint32_t proc;                   /* index into profile.processes */
	struct load_mod *mods;           size_t nmods, capmods;
	struct load_range *ranges;       size_t nranges, capranges;
	uint64_t maxlen;                 /* longest range, bounds the lookup scan */
	uint64_t *events;                size_t nevents, capevents;  /* module event times */
	struct load_raw *raw;            size_t nraw, capraw;
	struct load_cstack *cstacks;     size_t ncstacks, capcstacks;
	/* host memory (load_mem.c): allocation stacks, correlation = the
	 * allocation's index from malloc_first; this file's first records */
	struct load_cstack *mstacks;     size_t nmstacks, capmstacks;
	size_t malloc_first, mfree_first, mctr_first;
	size_t api_first, gpu_first;     /* this file's first cuda_api / gpu_op */
	struct load_capev *capevs;       size_t ncapevs, capcapevs; /* load_capture.c */
	/* off-CPU (load_offcpu.c): stacks, correlation = the record's index
	 * from offcpu_first; records skipped as damaged, weights cut to the
	 * stretch they stand for */
	struct load_cstack *ostacks;     size_t nostacks, capostacks;
	size_t offcpu_first;
	uint64_t off_bad, off_cut;
	/* MPI (load_mpi.c): call-site stacks, correlation = the call's index
	 * from mpi_first; records skipped as damaged; which CLOCK records came */
	struct load_cstack *pstacks;     size_t npstacks, cappstacks;
	size_t mpi_first;
	uint64_t mpi_bad;
	int clock_init, clock_fin;
	/* Python (load_python.c): PY_CODE records by id, the interpreter
	 * module's load bias (header.python.module_base), py_on: its frames
	 * were read (header.python.state ON) */
	struct load_pycode *pycodes;     size_t npycodes, cappycodes;
	const struct cbn_rec_py_calls **pycalls; size_t npycalls, cappycalls;
	const struct cbn_rec_py_ccalls **pyccalls; size_t npyccalls, cappyccalls;
	uint64_t py_base;
	int py_on;
	/* the evaluation loop's cases that --calls' events put in place of
	 * the plain instructions' (load_python.c, py_instrumented): their
	 * files and lines, looked up at the first sample that needs them */
	int npycases;                    /* 0 not looked up, -1 none found */
	const char *pycase_file[4];
	uint32_t pycase_lo[4], pycase_end[4];  /* lines [lo, end): end is the case's last */
	int exited;                      /* PROCESS_EXIT seen */
	int32_t exit_status;
	uint64_t last_ts;                /* latest timestamp seen */
	uint32_t status_idx;             /* this process's cuda_status entry or PROF_NONE */
	/* JIT code (load_jit.c): the records, the regions (by start once the
	 * file has been read), the process's perf map (the session's
	 * perf-PID.map, read when there are regions) and its entries'
	 * functions (PROF_NONE until used); where samples stopped early */
	struct load_jitev *jitevs;       size_t njitevs, capjitevs;
	struct load_codefile *codefiles; size_t ncodefiles, capcodefiles;
	struct load_jit *jits;           size_t njits, capjits;
	uint64_t jitmaxlen;
	struct perfmap perfmap;
	uint32_t *pmfuncs;
	struct load_ustop *ustops;       size_t nustops, capustops;
	struct util_map ustopmap;
	/* the launcher's side file (PID.SEQ.cbs), open while the image loads */
	struct reader_file side;
	int side_open;
};

struct load_pycode {         /* a PY_CODE record of the current file (in its buffer) */
	const struct cbn_rec_py_code *rec; /* NULL: no record for this id */
	const unsigned char *lt;         /* its line table */
	uint32_t func;                   /* prof_func, PROF_NONE until first used */
	const char *file;                /* interned filename, with func */
	int shim;                        /* an interpreter shim frame, never shown */
};

struct load_frame {          /* a resolved frame, before its runtime address */
	uint32_t func, line, inlined, nosym;
	const char *file;
};

struct load_symkey {         /* (module, vaddr) resolved once */
	struct sym_module *mod;
	uint64_t vaddr;
	uint32_t first, n;       /* into load.rframes */
	uint32_t spin;           /* 0 not looked at, 1 no spin loop, 2 in one (spin_at) */
};

struct load_stackkey {       /* a unique raw stack of one process and module epoch */
	uint32_t proc, epoch, nframes, stack;
	uint64_t hash, hash2;    /* two independent 64-bit hashes of the pcs: the key */
	uint32_t ret_all;        /* 1: every pc is a return address (CUDA stacks) */
	uint32_t spin;           /* its leaf: 0 not looked at, 1 no spin loop, 2 in one */
	uint32_t ours;           /* 1: the profiler's own work (load_stack_ours) */
	struct load_uwm uwm;     /* what its unwinding markers said */
};

struct load_symmod {         /* a module that had samples */
	struct sym_module *sym;
	const char *path;
};

struct load_kfunc {          /* a kernel pc's function */
	uint64_t key;            /* pc << 1 | (pc is a return address) */
	uint32_t func;
};

struct load_kstackkey {      /* a kernel stack on top of a user stack */
	uint64_t hash2;
	uint32_t ustack, stack;
};

struct load {
	struct profile *p;
	struct util_arena arena;
	struct util_strings strings;
	struct sym_ctx *sym;
	struct load_file *f;             /* file being read */

	size_t capfuncs, capframes, capstacks, capsamples, capthreads, capprocs, capwarn, capnd;
	size_t capranges, capapi, capgpu, capsyncs, capover, capdev, capctx, capmem, capstatus;
	size_t capshares;
	size_t capmempool;
	size_t capmodules;
	size_t capmemallocs, capmemfrees, capmemctrs;
	size_t capwindows, capctlmarks;
	size_t capoffcpu;
	size_t capmpi;
	size_t capustops;                /* p->unwind_stops */
	struct sym_module **modsyms;     /* parallel to p->modules, until sym_free */

	struct util_map funcmap;         /* prof_func by content */
	struct util_map threadmap;       /* (process, tid) -> thread */
	struct util_map symmap;          /* (module, vaddr) -> symkeys */
	struct load_symkey *symkeys;     size_t nsymkeys, capsymkeys;
	struct load_frame *rframes;      size_t nrframes, caprframes;
	int fold_inline;                 /* --inline fold: inlined frames are left out */
	int python_native;               /* --python native: the interpreter's frames kept */
	int python_off;                  /* --python off: native frames only */
	uint32_t pyunknown_func;         /* "[unknown Python function]" or PROF_NONE */
	struct util_map stackmap;        /* raw stack -> stackkeys */
	struct util_map symstackmap;     /* symbolized frames -> prof_stack */
	struct load_stackkey *stackkeys; size_t nstackkeys, capstackkeys;
	struct util_map corrmap;         /* correlation -> cuda_api, current file */
	struct util_map symmodmap;       /* sym_module* -> symmods */
	struct load_symmod *symmods;     size_t nsymmods, capsymmods;
	uint32_t unknown_func;           /* "[unknown]" or PROF_NONE */
	uint32_t kernel_func;            /* "[kernel]" or PROF_NONE */
	uint32_t unseen_func;            /* "[too short to sample]" or PROF_NONE */
	uint32_t *kstack;                /* stack -> the same with a [kernel] leaf, +1; 0 none */
	size_t capkstack;
	/* load_kernel.c */
	struct ksym_table ksyms;         /* the session's kernel-symbols file, empty if none */
	struct util_map kfuncmap;        /* (kernel pc, return?) -> kfuncs */
	struct load_kfunc *kfuncs;       size_t nkfuncs, capkfuncs;
	struct util_map kstackmap;       /* (user stack, kernel pcs) -> kstackkeys */
	struct load_kstackkey *kstackkeys; size_t nkstackkeys, capkstackkeys;
	int nomem;                       /* an allocation failed: the load stops */
};

static inline int load_nomem(struct load *L)
{
	L->nomem = 1;
	return -1;
}

/* s in the load's string table (one copy of each); NULL when memory is short. */
static inline const char *load_intern(struct load *L, const char *s)
{
	const char *r = util_intern(&L->arena, &L->strings, s);

	if (!r)
		load_nomem(L);
	return r;
}

/* The first n bytes of s, NUL-terminated, in the load's arena; NULL when
 * memory is short. */
static inline char *load_strndup(struct load *L, const char *s, size_t n)
{
	char *r = util_arena_strndup(&L->arena, s, n);

	if (!r)
		load_nomem(L);
	return r;
}

/* load_util.c: the thread (proc, tid), made at first sight; load_thread_find:
 * the thread if one was seen, else PROF_NONE (none is made). */
uint32_t load_thread(struct load *L, uint32_t proc, uint32_t tid);
uint32_t load_thread_find(struct load *L, uint32_t proc, uint32_t tid);
void load_warn(struct load *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* load_util.c: 34567 -> "34,567" in buf. */
const char *load_thousands(char *buf, size_t len, uint64_t v);

/* load_dir.c: a session file's name (relative to the session directory) and
 * what its header says of it; the list of them, in start order (root
 * first), only the files of ranks when ranks is not NULL; with err set,
 * PROF_LOAD_EMPTY when the directory cannot be read, PROF_LOAD_NOMEM when
 * memory ran short (nothing left to free either way). */
struct cbp_name {
	char *name;
	uint64_t start;
	uint32_t pid, seq;
	int32_t rank;            /* header.rank, -1 not a rank */
};
int load_list_files(const char *dir, const char *ranks, struct cbp_name **out, size_t *n,
		    char *err, size_t errlen);

/* load_modmap.c: one MODULE_LOAD/UNLOAD record of the current file; the
 * file's ranges sorted once it has been read; the module at addr at time ts
 * (NULL outside every one); the module epoch of ts (samples of one epoch
 * see the same modules). */
void load_mod_event(struct load *L, const struct reader_rec *r);
void load_modmap_finish(struct load_file *F);
void load_codefile_rec(struct load *L, const struct reader_rec *r);
void load_codefile_apply(struct load *L);
struct load_mod *load_mod_at(struct load_file *F, uint64_t addr, uint64_t ts);
uint32_t load_epoch_of(const struct load_file *F, uint64_t ts);

struct load_meta;

/* load_finish.c: after every file, warnings for processes that ended
 * abnormally, the modules' checks, the run's totals. */
void load_abnormal_warnings(struct load *L, const struct load_meta *meta);
void load_module_checks(struct load *L);
void load_run_totals(struct load *L, const struct load_meta *meta);

/* load_frame.c: the function (name, file, line, module), made once;
 * load_stack.c: frames [first, nframes) as a stack, an identical existing
 * one reused. */
uint32_t intern_func(struct load *L, const char *name, const char *file, uint32_t line,
		     const char *module);
uint32_t stack_commit(struct load *L, size_t first);
/* stack_commit() of a stack whose unwinding is described by unwind
 * (PROF_UNWIND_*): stacks of the same frames but other unwind stay apart. */
uint32_t stack_commit_unwind(struct load *L, size_t first, uint32_t unwind);
/* load_frame.c: the symbol key (index into L->symkeys) of addr at ts and its module,
 * PROF_NONE outside every module; the frames of a key pushed for pc
 * (PROF_NONE: "[unknown]"). */
uint32_t load_resolve(struct load *L, uint64_t addr, uint64_t ts, struct load_mod **mod);
/* Whose frame the code at addr (module m, symbol key sk) is, for the
 * profiler's own work (load_frame.c): 0 the program's, 1 look further out, 2
 * cbottleneck's; callee: the function it called (NULL at the leaf) and
 * whether that lies in a system library. */
int load_frame_owner(struct load *L, const struct load_mod *m, const struct load_symkey *sk,
		     uint64_t addr, int leaf, const char *callee, int callee_neutral);
void load_push_symkey(struct load *L, uint32_t k, uint64_t pc);
/* load_frame.c: the resolved frames of (mod, vaddr), innermost first,
 * symbolized once; a module that had samples noted (debug-info hint,
 * changed-binary warning); one frame pushed for addr, or "[unknown]"; 2 when
 * the interrupted pc lies in a spin loop, 1 when not. */
const struct load_symkey *load_sym_lookup(struct load *L, struct sym_module *mod,
					 uint64_t vaddr);
void load_note_symmod(struct load *L, struct load_mod *m);
void load_push_frame(struct load *L, const struct load_frame *lf, uint64_t addr);
void load_push_unknown(struct load *L, uint64_t addr);
uint32_t load_spin_at(struct load *L, uint64_t pc, uint64_t ts);
/* load_frame.c: the debug-info state of the modules frames landed in, after
 * every file; load_stack.c: stack st with a [kernel] leaf added (made once
 * per stack). */
void load_modules_finish(struct load *L);
uint32_t load_stack_kernel(struct load *L, uint32_t st);
uint32_t load_stack_unseen(struct load *L, uint32_t st);

/* load_python.c: Python frames (CBN_PYW words, docs/agent.md section 17).
 * header.python into pr->python; one PY_CODE record of the current file;
 * whether raw pcs hold Python words the file can name; their frames pushed
 * where their evaluation loop ran (into p->frames, leaf first, for
 * stack_commit; cbottleneck's own frames left out), returning whose stack it
 * is as load_frame_owner says of its native pcs (2: the profiler's); the
 * file's counts once its stacks are built. */
void load_python_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h);
void load_python_rec(struct load *L, const struct reader_rec *r);
void load_python_calls_rec(struct load *L, const struct reader_rec *r);
void load_python_ccalls_rec(struct load *L, const struct reader_rec *r);
int load_python_has(struct load *L, const uint64_t *pcs, uint32_t n);
int load_python_frames(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all);
/* After the file's records and modules, before its stacks: the builtins
 * its PY_CCALLS records name (PROF_FUNC_BUILTIN). */
void load_python_builtins(struct load *L);
void load_python_finish(struct load *L);

/* load_kernel.c: read the session's kernel-symbols file; free what was built.
 * load_kernel_samples: share the kweight of raw sample w (already in
 * p->samples[si] with its user stack) among its kernel stacks, as samples
 * with "[kernel] name" frames over that stack; left: raw samples still to
 * place (capacity kept for them).  Returns 0 when w has no kernel stack to
 * share over (the caller shows the plain [kernel] leaf). */
void load_kernel_open(struct load *L, const char *session_dir);
void load_kernel_free(struct load *L);
int load_kernel_samples(struct load *L, size_t si, const struct load_raw *w, size_t left);
uint32_t load_stack(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all);
/* load_stack() of a sample's pcs (pcs[0] the interrupted pc), and in *spin
 * whether that pc lies in a spin loop (load_frame.c, load_spin_at). */
uint32_t load_stack_spin(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin);
/* load_stack_spin() that also says in *ours whether the sample is the
 * profiler's own work: the innermost frame that is neither a system library
 * (libc, the loader, CUDA's driver, CUPTI) nor one of our interposers passing
 * a call through is in cbottleneck's own code (allocation hooks' bookkeeping,
 * CUDA callbacks, the unwinder, a helper thread).  Every stack leaves out
 * cbottleneck's frames (the thread-start trampoline, interposers). */
uint32_t load_stack_ours(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin,
			 int *ours, struct load_uwm *uwm);
/* load_jit.c: the frame of a pc in no module (address addr, looked up at
 * ts): JIT code's function (load_jit_func) when a region holds it, else
 * "[unknown]". */
void load_push_nomod(struct load *L, uint64_t pc, uint64_t addr, uint64_t ts);

/* load_jit.c: code without unwind information (docs/symbols.md).  One
 * JIT_REGION record of the current file; its regions once it has been read,
 * and its process's perf map (DIR/perf-PID.map, beside the file: name is the
 * file's name in dir); the function of addr at ts when a JIT region holds
 * it (named from the perf map, else "[jit] 0xSTART"), PROF_NONE when none
 * does.  load_uwm_strip: pcs without the CBN_UWM marker words into out (at
 * most n), what they said in *u (where it stopped looked up at ts; ret_all
 * as load_stack's); the count kept.  load_uwm_count: a sample record of
 * weight whose stack said *u, counted into its process; load_jit_finish:
 * the file's counts into the profile. */
void load_jit_rec(struct load *L, const struct reader_rec *r);
void load_jit_open(struct load *L, const char *dir, const char *name);
uint32_t load_jit_func(struct load *L, uint64_t addr, uint64_t ts);
uint32_t load_uwm_strip(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all,
			uint64_t *out, struct load_uwm *u);
void load_uwm_count(struct load *L, const struct load_uwm *u, uint64_t weight);
void load_jit_finish(struct load *L);
void load_jit_free(struct load_file *F);

/* load_cuda.c: one CUDA or range record of the current file; and the joins
 * (API stacks, GPU op -> API call) once the file has been read. */
void load_cuda_rec(struct load *L, const struct reader_rec *r);
void load_cuda_finish(struct load *L);

/* load_mem.c: host memory.  header.mem into pr->mem; one MEM_* record of the
 * current file; its stacks and (process, ts) order once the file has been read. */
void load_mem_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h);
void load_mem_rec(struct load *L, const struct reader_rec *r);
void load_mem_finish(struct load *L);

/* load_capture.c: capture controls.  header.capture into pr->capture; one
 * CAPTURE record of the current file; its windows and marks once the file has
 * been read and its process's end is known. */
void load_capture_header(struct load *L, struct prof_process *pr,
			 const struct cbn_file_header *h);
void load_capture_rec(struct load *L, const struct reader_rec *r);
void load_capture_finish(struct load *L);

/* load_offcpu.c: the wall sampler.  header.offcpu into pr->offcpu; one
 * OFFCPU record of the current file; once the file has been read (threads
 * known, module map complete), its stacks, owners, ring cut (records ending
 * before ring_cut dropped, ones across it cut to it) and (process, start)
 * order, and the data-quality warnings. */
void load_offcpu_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h);
void load_offcpu_rec(struct load *L, const struct reader_rec *r);
void load_offcpu_finish(struct load *L, uint64_t ring_cut);

/* load_mpi.c: distributed runs.  header.rank into pr->rank; one MPI or CLOCK
 * record of the current file; its call-site stacks and (process, start) order
 * once the file has been read; after every file, the clock alignment of the
 * ranks (prof_process.rank.clock_*). */
void load_mpi_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h);
void load_mpi_rec(struct load *L, const struct reader_rec *r);
void load_mpi_finish(struct load *L);
void load_mpi_align(struct load *L);

#endif
