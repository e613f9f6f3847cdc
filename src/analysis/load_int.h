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

#include "../format/reader.h"
#include "../symbols/sym.h"
#include "load.h"

/* --- arena: owns every string of a profile ------------------------------- */

struct load_arena_block {
	struct load_arena_block *next;
	size_t used, cap;
	char data[];
};

struct load_arena {
	struct load_arena_block *head;
};

void *load_xrealloc(void *p, size_t n);
char *load_arena_strndup(struct load_arena *a, const char *s, size_t n);
void load_arena_free(struct load_arena *a);

/* Grow *arr (element size esz) so that it can hold n + 1 elements. */
void load_grow(void **arr, size_t *cap, size_t n, size_t esz);
#define LOAD_PUSH(arr, n, cap) \
	(load_grow((void **)&(arr), &(cap), (n), sizeof(*(arr))), &(arr)[(n)++])

/* --- hash index: 64-bit hash -> uint32 value; equality decided by the caller */

struct load_map_slot {
	uint64_t hash;
	uint32_t val;            /* UINT32_MAX: empty slot */
};

struct load_map {
	struct load_map_slot *slot; /* hash and value side by side: one cache miss a probe */
	size_t cap, n;
};

typedef int (*load_eq_fn)(const void *ctx, uint32_t val);

uint32_t load_map_find(const struct load_map *m, uint64_t h, load_eq_fn eq, const void *ctx);
void load_map_put(struct load_map *m, uint64_t h, uint32_t val);
void load_map_free(struct load_map *m);

uint64_t load_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t load_hash_u64(uint64_t x);
/* Two independent 64-bit hashes of n 64-bit words in one pass. */
void load_hash_words2(const uint64_t *w, size_t n, uint64_t seed, uint64_t out[2]);

/* --- interned strings ------------------------------------------------------ */

struct load_strings {
	struct load_map map;
	const char **s;
	size_t n, cap;
};

/* The arena copy of s (same text, same pointer every time). */
const char *load_intern(struct load_arena *a, struct load_strings *t, const char *s);
void load_strings_free(struct load_strings *t);

/* --- loader state --------------------------------------------------------- */

/* One MODULE_LOAD in a process, alive in [load_ts, unload_ts). */
struct load_mod {
	uint64_t base, load_ts, unload_ts;
	uint32_t seq;
	const char *path;
	struct sym_module *sym;
};

/* A runtime address range [start, end) of module mod. */
struct load_range {
	uint64_t start, end;
	uint32_t mod;
};

/* A sample as read, before symbolization: pcs point into the file buffer. */
struct load_raw {
	uint64_t ts;
	const uint64_t *pcs;
	uint32_t thread, weight, flags, nframes;
	uint32_t kweight;            /* of weight, periods the kernel spent for the thread */
};

struct load_cstack {         /* CUDA_STACK, joined to its API call by correlation */
	uint32_t correlation;
	uint32_t nframes;
	const uint64_t *pcs;
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
	size_t api_first, gpu_first;     /* this file's first cuda_api / gpu_op */
	int exited;                      /* PROCESS_EXIT seen */
	int32_t exit_status;
	uint64_t last_ts;                /* latest timestamp seen */
	uint32_t status_idx;             /* this process's cuda_status entry or PROF_NONE */
};

struct load_frame {          /* a resolved frame, before its runtime address */
	uint32_t func, line, inlined, nosym;
	const char *file;
};

struct load_symkey {         /* (module, vaddr) resolved once */
	struct sym_module *mod;
	uint64_t vaddr;
	uint32_t first, n;       /* into load.rframes */
};

struct load_stackkey {       /* a unique raw stack of one process and module epoch */
	uint32_t proc, epoch, nframes, stack;
	uint64_t hash, hash2;    /* two independent 64-bit hashes of the pcs: the key */
	uint32_t ret_all;        /* 1: every pc is a return address (CUDA stacks) */
};

struct load_symmod {         /* a module that had samples */
	struct sym_module *sym;
	const char *path;
};

struct load {
	struct profile *p;
	struct load_arena arena;
	struct load_strings strings;
	struct sym_ctx *sym;
	struct load_file *f;             /* file being read */

	size_t capfuncs, capframes, capstacks, capsamples, capthreads, capprocs, capwarn, capnd;
	size_t capranges, capapi, capgpu, capsyncs, capover, capdev, capctx, capmem, capstatus;
	size_t capmodules;
	struct sym_module **modsyms;     /* parallel to p->modules, until sym_free */

	struct load_map funcmap;         /* prof_func by content */
	struct load_map threadmap;       /* (process, tid) -> thread */
	struct load_map symmap;          /* (module, vaddr) -> symkeys */
	struct load_symkey *symkeys;     size_t nsymkeys, capsymkeys;
	struct load_frame *rframes;      size_t nrframes, caprframes;
	int fold_inline;                 /* --inline fold: inlined frames are left out */
	struct load_map stackmap;        /* raw stack -> stackkeys */
	struct load_map symstackmap;     /* symbolized frames -> prof_stack */
	struct load_stackkey *stackkeys; size_t nstackkeys, capstackkeys;
	struct load_map corrmap;         /* correlation -> cuda_api, current file */
	struct load_map symmodmap;       /* sym_module* -> symmods */
	struct load_symmod *symmods;     size_t nsymmods, capsymmods;
	uint32_t unknown_func;           /* "[unknown]" or PROF_NONE */
	uint32_t kernel_func;            /* "[kernel]" or PROF_NONE */
	uint32_t *kstack;                /* stack -> the same with a [kernel] leaf, +1; 0 none */
	size_t capkstack;
};

uint32_t load_thread(struct load *L, uint32_t proc, uint32_t tid);
uint32_t load_stack(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all);
void load_warn(struct load *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* load_cuda.c: one CUDA or range record of the current file; and the joins
 * (API stacks, GPU op -> API call) once the file has been read. */
void load_cuda_rec(struct load *L, const struct reader_rec *r);
void load_cuda_finish(struct load *L);

#endif
