/*
 * load.c — prof_load(): read every <pid>.<seq>.cbp of a session directory
 * through the validating reader, rebuild processes, threads and per-process
 * module maps (time-ordered, so dlclose and re-load elsewhere resolve right;
 * kept as prof.modules), deduplicate raw stacks, symbolize each unique
 * (module, address) once, and build the struct profile the reports work from.
 * CUDA records: load_cuda.c; session.json: load_meta.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load_int.h"
#include "load_meta.h"

void load_warn(struct load *L, const char *fmt, ...)
{
	struct profile *p = L->p;
	char buf[1024];
	va_list ap;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (i = 0; i < p->nwarnings; i++)
		if (strcmp(p->warnings[i], buf) == 0)
			return;
	*LOAD_PUSH(p->warnings, p->nwarnings, L->capwarn) =
		load_arena_strndup(&L->arena, buf, strlen(buf));
}

/* 34567 -> "34,567" */
static const char *thousands(char *buf, size_t len, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v), i, o = 0;

	for (i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/* --- threads --------------------------------------------------------------- */

struct thread_probe {
	const struct profile *p;
	uint32_t proc, tid;
};

static int thread_eq(const void *ctx, uint32_t v)
{
	const struct thread_probe *t = ctx;

	return t->p->threads[v].tid == t->tid && t->p->threads[v].process == t->proc;
}

uint32_t load_thread(struct load *L, uint32_t proc, uint32_t tid)
{
	struct profile *p = L->p;
	struct thread_probe probe = {p, proc, tid};
	uint64_t h = util_mix64(((uint64_t)proc << 32) | tid);
	uint32_t v = util_map_find(&L->threadmap, h, thread_eq, &probe);
	struct prof_thread *t;

	if (v != UINT32_MAX)
		return v;
	t = LOAD_PUSH(p->threads, p->nthreads, L->capthreads);
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->process = proc;
	t->name = "";
	v = (uint32_t)(p->nthreads - 1);
	load_map_put(&L->threadmap, h, v);
	return v;
}

uint32_t load_thread_find(struct load *L, uint32_t proc, uint32_t tid)
{
	struct thread_probe probe = {L->p, proc, tid};
	uint32_t v = util_map_find(&L->threadmap, util_mix64(((uint64_t)proc << 32) | tid),
				   thread_eq, &probe);

	return v == UINT32_MAX ? PROF_NONE : v;
}

/* --- functions and symbols ------------------------------------------------- */

struct func_probe {
	const struct profile *p;
	const char *name, *file, *module;
	uint32_t line;
};

static int func_eq(const void *ctx, uint32_t v)
{
	const struct func_probe *f = ctx;
	const struct prof_func *g = &f->p->funcs[v];

	return g->line == f->line && strcmp(g->name, f->name) == 0 &&
	       strcmp(g->file, f->file) == 0 && strcmp(g->module, f->module) == 0;
}

uint32_t intern_func(struct load *L, const char *name, const char *file, uint32_t line,
		     const char *module)
{
	struct profile *p = L->p;
	struct func_probe probe = {p, name ? name : "", file ? file : "", module ? module : "",
				   line};
	uint64_t h = util_hash_bytes(probe.name, strlen(probe.name), line);
	struct prof_func *f;
	uint32_t v;

	h = util_hash_bytes(probe.file, strlen(probe.file), h);
	h = util_hash_bytes(probe.module, strlen(probe.module), h);
	v = util_map_find(&L->funcmap, h, func_eq, &probe);
	if (v != UINT32_MAX)
		return v;
	f = LOAD_PUSH(p->funcs, p->nfuncs, L->capfuncs);
	f->name = load_intern(&L->arena, &L->strings, probe.name);
	f->file = load_intern(&L->arena, &L->strings, probe.file);
	f->line = line;
	f->module = load_intern(&L->arena, &L->strings, probe.module);
	f->flags = 0;
	v = (uint32_t)(p->nfuncs - 1);
	load_map_put(&L->funcmap, h, v);
	return v;
}

static void p_flag_func(struct load *L, uint32_t f, uint32_t flags)
{
	if (f < L->p->nfuncs)
		L->p->funcs[f].flags |= flags;
}

struct symkey_probe {
	const struct load *L;
	const struct sym_module *mod;
	uint64_t vaddr;
};

static int symkey_eq(const void *ctx, uint32_t v)
{
	const struct symkey_probe *k = ctx;

	return k->L->symkeys[v].mod == k->mod && k->L->symkeys[v].vaddr == k->vaddr;
}

/* The resolved frames of (mod, vaddr), innermost first: symbolized once. */
static const struct load_symkey *sym_lookup(struct load *L, struct sym_module *mod,
					    uint64_t vaddr)
{
	struct symkey_probe probe = {L, mod, vaddr};
	uint64_t h = util_mix64(util_mix64((uintptr_t)mod) ^ vaddr);
	uint32_t v = util_map_find(&L->symmap, h, symkey_eq, &probe);
	const struct sym_frame *fr = NULL;
	struct load_symkey *k;
	const char *modname;
	int n, i;

	if (v != UINT32_MAX)
		return &L->symkeys[v];
	n = sym_resolve(L->sym, mod, vaddr, &fr);
	modname = sym_module_filename(L->sym, mod);
	k = LOAD_PUSH(L->symkeys, L->nsymkeys, L->capsymkeys);
	k->mod = mod;
	k->vaddr = vaddr;
	k->first = (uint32_t)L->nrframes;
	k->spin = 0;
	for (i = 0; i < n && fr; i++) {
		struct load_frame *lf = LOAD_PUSH(L->rframes, L->nrframes, L->caprframes);
		lf->func = intern_func(L, fr[i].func, fr[i].func_file, fr[i].func_line, modname);
		lf->line = fr[i].line;
		lf->inlined = fr[i].inlined ? 1 : 0;
		lf->nosym = fr[i].nosym ? 1 : 0;
		p_flag_func(L, lf->func, (fr[i].nosym ? PROF_FUNC_NOSYM : 0) |
						 (fr[i].inlined && !L->fold_inline ? PROF_FUNC_INLINED
										    : 0));
		lf->file = load_intern(&L->arena, &L->strings, fr[i].file ? fr[i].file : "");
	}
	if (L->nrframes == k->first) {
		/* The symbolizer promises >= 1 frame; never trust that blindly. */
		char name[64 + PATH_MAX];
		struct load_frame *lf = LOAD_PUSH(L->rframes, L->nrframes, L->caprframes);
		snprintf(name, sizeof(name), "[%s+0x%" PRIx64 "]", modname, vaddr);
		lf->func = intern_func(L, name, "", 0, modname);
		lf->line = 0;
		lf->inlined = 0;
		lf->nosym = 0;
		lf->file = "";
	}
	k->n = (uint32_t)(L->nrframes - k->first);
	load_map_put(&L->symmap, h, (uint32_t)(L->nsymkeys - 1));
	return k;
}

struct symmod_probe {
	const struct load *L;
	const struct sym_module *sym;
};

static int symmod_eq(const void *ctx, uint32_t v)
{
	const struct symmod_probe *s = ctx;

	return s->L->symmods[v].sym == s->sym;
}

/* Remember that mod had samples (debug-info hint, changed-binary warning). */
static void note_symmod(struct load *L, struct load_mod *m)
{
	struct symmod_probe probe = {L, m->sym};
	uint64_t h = util_mix64((uintptr_t)m->sym);
	struct load_symmod *s;

	if (util_map_find(&L->symmodmap, h, symmod_eq, &probe) != UINT32_MAX)
		return;
	s = LOAD_PUSH(L->symmods, L->nsymmods, L->capsymmods);
	s->sym = m->sym;
	s->path = m->path;
	load_map_put(&L->symmodmap, h, (uint32_t)(L->nsymmods - 1));
}

/* --- module maps ----------------------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const struct load_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void modmap_finish(struct load_file *F)
{
	if (F->nranges)
		qsort(F->ranges, F->nranges, sizeof(*F->ranges), range_cmp);
	if (F->nevents)
		qsort(F->events, F->nevents, sizeof(*F->events), u64_cmp);
}

/* Number of module events at or before ts: samples in the same epoch see the
 * same set of loaded modules. */
static uint32_t epoch_of(const struct load_file *F, uint64_t ts)
{
	size_t lo = 0, hi = F->nevents;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (F->events[mid] <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

/* The module containing addr at time ts.  A module whose load event was
 * recorded a little late (the agent's periodic rescan catches loads that
 * bypassed dlopen) still matches: the best candidate alive at ts wins, else
 * the one loaded closest to ts. */
static struct load_mod *mod_at(struct load_file *F, uint64_t addr, uint64_t ts)
{
	size_t lo = 0, hi = F->nranges;
	struct load_mod *best = NULL;
	uint64_t best_dist = UINT64_MAX;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (F->ranges[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct load_range *r = &F->ranges[lo];
		struct load_mod *m;
		uint64_t dist;

		if (addr - r->start >= F->maxlen)
			break;
		if (addr >= r->end)
			continue;
		m = &F->mods[r->mod];
		if (m->load_ts <= ts && ts < m->unload_ts)
			return m;
		dist = m->load_ts > ts ? m->load_ts - ts : ts - m->unload_ts;
		if (dist < best_dist) {
			best_dist = dist;
			best = m;
		}
	}
	return best;
}

static const char *mod_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* cbottleneck's own libraries, loaded into the program. */
static int mod_ours(const char *path)
{
	const char *b = mod_base(path);

	return !strncmp(b, "libcbottleneck", 14) || !strncmp(b, "libcbn_", 7);
}

/* Libraries whose time is their caller's: the C library, the loader and the
 * vDSO, the C++ and unwinding runtimes, and CUDA's driver, runtime and CUPTI
 * (which run the layer's callbacks inside the program's CUDA calls). */
static int mod_neutral(const char *path)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "ld-linux", "ld64.so", "linux-vdso", "linux-gate",
		"libpthread", "libdl.so", "libdl-", "librt.so", "librt-", "libm.so",
		"libm-", "libgcc_s", "libstdc++", "libcupti", "libcuda.so", "libcudart",
	};
	const char *b = mod_base(path);
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

static void mod_event(struct load *L, const struct reader_rec *r)
{
	struct load_file *F = L->f;
	const struct cbn_rec_module *m = (const void *)r->raw;
	struct load_mod *mod;
	uint32_t i, nx = 0;
	size_t k;

	*LOAD_PUSH(F->events, F->nevents, F->capevents) = m->ts;
	if (r->type == CBN_REC_MODULE_UNLOAD) {
		for (k = F->nmods; k-- > 0;) {
			mod = &F->mods[k];
			if (mod->unload_ts == UINT64_MAX && mod->base == m->base &&
			    (mod->seq == m->seq || strcmp(mod->path, r->str) == 0)) {
				mod->unload_ts = m->ts;
				break;
			}
		}
		return;
	}
	mod = LOAD_PUSH(F->mods, F->nmods, F->capmods);
	mod->base = m->base;
	mod->load_ts = m->ts;
	mod->unload_ts = UINT64_MAX;
	mod->seq = m->seq;
	mod->path = load_intern(&L->arena, &L->strings, r->str);
	mod->sym = sym_module_get(L->sym, mod->path, m->build_id_len ? m->build_id : NULL,
				  m->build_id_len);
	mod->ours = mod_ours(mod->path);
	mod->neutral = mod_neutral(mod->path);
	for (i = 0; i < m->nseg; i++)
		nx += (m->seg[i].flags & 1) != 0; /* PF_X */
	for (i = 0; i < m->nseg; i++) {
		const struct cbn_segment *s = &m->seg[i];
		struct load_range *rg;
		uint64_t start = m->base + s->vaddr;

		if (nx && !(s->flags & 1))
			continue;
		if (s->memsz == 0 || start + s->memsz < start)
			continue;
		rg = LOAD_PUSH(F->ranges, F->nranges, F->capranges);
		rg->start = start;
		rg->end = start + s->memsz;
		rg->mod = (uint32_t)(F->nmods - 1);
		if (s->memsz > F->maxlen)
			F->maxlen = s->memsz;
	}
}

/* --- stacks ---------------------------------------------------------------- */

struct stack_probe {
	const struct load *L;
	uint64_t hash2;
	uint32_t n, proc, epoch, ret_all;
};

/* Raw stacks are told apart by two independent 64-bit hashes of their pcs
 * rather than by the pcs themselves: comparing hundreds of bytes at a random
 * place for each of a million samples was a third of a large report's time,
 * and a false match needs 128 bits to collide. */
static int stack_eq(const void *ctx, uint32_t v)
{
	const struct stack_probe *s = ctx;
	const struct load_stackkey *k = &s->L->stackkeys[v];

	return k->hash2 == s->hash2 && k->nframes == s->n && k->proc == s->proc &&
	       k->epoch == s->epoch && k->ret_all == s->ret_all;
}

struct symstack_probe {
	const struct profile *p;
	uint32_t first, n;
};

static int frames_same(const struct prof_frame *a, const struct prof_frame *b, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (a[i].func != b[i].func || a[i].line != b[i].line || a[i].file != b[i].file ||
		    a[i].inlined != b[i].inlined)
			return 0;
	return 1;
}

static int symstack_eq(const void *ctx, uint32_t v)
{
	const struct symstack_probe *s = ctx;
	const struct prof_stack *st = &s->p->stacks[v];

	return st->nframes == s->n &&
	       frames_same(s->p->frames + st->first, s->p->frames + s->first, s->n);
}

/* Frames [first, nframes) as a stack: an existing one with the same functions,
 * lines and files (raw stacks that differ only in pcs of one line, or that
 * differ only in frames that fold away) is reused and the new frames dropped. */
uint32_t stack_commit(struct load *L, size_t first)
{
	struct profile *p = L->p;
	struct symstack_probe probe = {p, (uint32_t)first, (uint32_t)(p->nframes - first)};
	uint64_t h = 0x9e3779b97f4a7c15ull ^ probe.n;
	uint32_t v, i;
	struct prof_stack *s;

	for (i = 0; i < probe.n; i++) {
		const struct prof_frame *f = &p->frames[first + i];

		h = util_mix64(h ^ ((uint64_t)f->func << 32 | f->line));
		h = util_mix64(h ^ (uintptr_t)f->file ^ f->inlined);
	}
	v = util_map_find(&L->symstackmap, h, symstack_eq, &probe);
	if (v != UINT32_MAX) {
		p->nframes = first;
		return v;
	}
	s = LOAD_PUSH(p->stacks, p->nstacks, L->capstacks);
	s->first = (uint32_t)first;
	s->nframes = probe.n;
	load_map_put(&L->symstackmap, h, (uint32_t)(p->nstacks - 1));
	return (uint32_t)(p->nstacks - 1);
}

static void push_frame(struct load *L, const struct load_frame *lf, uint64_t addr)
{
	struct profile *p = L->p;
	struct prof_frame *f = LOAD_PUSH(p->frames, p->nframes, L->capframes);

	f->func = lf->func;
	f->line = lf->line;
	f->file = lf->file;
	f->inlined = lf->inlined;
	f->addr = addr;
}

/* The stack st with a "[kernel]" frame as its leaf, made once per stack. */
static uint32_t kernel_stack(struct load *L, uint32_t st)
{
	struct profile *p = L->p;
	struct prof_stack *ks;
	struct prof_frame *f;
	uint32_t first, n, i;

	if (st < L->capkstack && L->kstack[st])
		return L->kstack[st] - 1;
	if (L->kernel_func == PROF_NONE)
		L->kernel_func = intern_func(L, "[kernel]", "", 0, "kernel");
	first = (uint32_t)p->nframes;
	n = p->stacks[st].nframes;
	f = LOAD_PUSH(p->frames, p->nframes, L->capframes);
	memset(f, 0, sizeof(*f));
	f->func = L->kernel_func;
	f->file = "";
	for (i = 0; i < n; i++) {
		f = LOAD_PUSH(p->frames, p->nframes, L->capframes);
		*f = p->frames[p->stacks[st].first + i];
	}
	ks = LOAD_PUSH(p->stacks, p->nstacks, L->capstacks);
	ks->first = first;
	ks->nframes = n + 1;
	if (st >= L->capkstack) {
		size_t old = L->capkstack;

		load_grow((void **)&L->kstack, &L->capkstack, (size_t)st, sizeof(*L->kstack));
		memset(L->kstack + old, 0, (L->capkstack - old) * sizeof(*L->kstack));
	}
	L->kstack[st] = (uint32_t)(p->nstacks - 1) + 1;
	return (uint32_t)(p->nstacks - 1);
}

static void push_unknown(struct load *L, uint64_t addr)
{
	struct load_frame lf = {0, 0, 0, 0, ""};

	if (L->unknown_func == PROF_NONE)
		L->unknown_func = intern_func(L, "[unknown]", "", 0, "");
	lf.func = L->unknown_func;
	push_frame(L, &lf, addr);
}

/*
 * Spin loops.  A thread that waits by spinning (an OpenMP barrier, a
 * pthread spinlock, a hand-written test-and-test-and-set) runs a short loop
 * around PAUSE (F3 90), which Intel and AMD ask every spin-wait loop to
 * execute and which compilers never emit for ordinary code.  So a sample
 * whose interrupted pc has PAUSE in the module's bytes shortly before it
 * (the loop's body: the pc usually sits on or just after the PAUSE, whose
 * long latency is where the timer finds the thread) or just after it is
 * spinning.  The window stops at the function's start (docs/waiting.md).
 */
#define SPIN_BEFORE 32 /* bytes looked at before the pc */
#define SPIN_AFTER 8   /* and from the pc on */

static int has_pause(const unsigned char *b, size_t n)
{
#if defined(__x86_64__) || defined(__i386__)
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (b[i] == 0xf3 && b[i + 1] == 0x90)
			return 1;
#else
	/* (other machines' spin hints, aarch64's YIELD or ISB, are not
	 * looked for yet: nothing is flagged there) */
	(void)b;
	(void)n;
#endif
	return 0;
}

/* 2 when the interrupted pc lies in a spin loop, 1 when not; from the
 * (module, address) cache, each looked at once. */
static uint32_t spin_at(struct load *L, uint64_t pc, uint64_t ts)
{
	struct load_mod *m;
	struct load_symkey *k;
	const unsigned char *b;
	uint64_t start;
	size_t n;

	if (pc == 0 || !(m = mod_at(L->f, pc, ts)))
		return 1;
	k = (struct load_symkey *)sym_lookup(L, m->sym, pc - m->base);
	if (k->spin)
		return k->spin;
	n = sym_code_bytes(L->sym, m->sym, pc - m->base, SPIN_BEFORE, SPIN_AFTER, &b, &start);
	k->spin = n && has_pause(b, n) ? 2 : 1;
	return k->spin;
}

/* The symbol key (index into L->symkeys) of the code at addr at time ts, and
 * its module; PROF_NONE (and *mod NULL) for an address in no module. */
uint32_t load_resolve(struct load *L, uint64_t addr, uint64_t ts, struct load_mod **mod)
{
	struct load_mod *m = mod_at(L->f, addr, ts);

	*mod = m;
	if (!m)
		return PROF_NONE;
	if (!m->ours)
		note_symmod(L, m);
	return (uint32_t)(sym_lookup(L, m->sym, addr - m->base) - L->symkeys);
}

/* The frames of symbol key k (innermost first) for pc, or "[unknown]". */
void load_push_symkey(struct load *L, uint32_t k, uint64_t pc)
{
	const struct load_symkey *sk;
	uint32_t j;

	if (k == PROF_NONE) {
		push_unknown(L, pc);
		return;
	}
	sk = &L->symkeys[k];
	for (j = 0; j < sk->n; j++) {
		/* fold: the containing function's frame, whose line is the
		 * inlined call's site, stands for the whole chain */
		if (L->fold_inline && L->rframes[sk->first + j].inlined)
			continue;
		push_frame(L, &L->rframes[sk->first + j], pc);
	}
}

/* The profile stack for raw pcs of the current file at time ts (leaf first).
 * pcs[0] is the interrupted pc unless ret_all; the others are return addresses
 * and are looked up at pc-1 so the call's line, not the next one, is shown.
 * Identical raw stacks (same process, same module epoch) are built once. */
/* A libc-style name without its decorations: "__GI___libc_malloc" and
 * "malloc" both give "malloc"; "__pthread_create_2_1" gives
 * "pthread_create_2_1". */
static const char *plain_name(const char *n)
{
	while (*n == '_')
		n++;
	if (!strncmp(n, "GI_", 3))
		for (n += 3; *n == '_'; n++)
			;
	if (!strncmp(n, "libc_", 5))
		n += 5;
	return n;
}

/* 1 when callee is the function an interposer named name stands for: the
 * same name, one a prefix of the other (versioned entry points). */
static int same_function(const char *name, const char *callee)
{
	size_t a, b;

	name = plain_name(name);
	callee = plain_name(callee);
	a = strlen(name);
	b = strlen(callee);
	return a && b && !strncmp(name, callee, a < b ? a : b);
}

/* Whose frame pc i is, for the profiler's own work: 0 the program's (this
 * decides), 1 a system library's or an interposer passing the call on (look
 * further out), 2 cbottleneck's own (this decides: overhead).  callee is the
 * function pc i called (the outermost frame of pc i-1), NULL at the leaf, and
 * callee_neutral says whether it lies in a system library. */
int load_frame_owner(struct load *L, const struct load_mod *m, const struct load_symkey *sk,
		     uint64_t addr, int leaf, const char *callee, int callee_neutral)
{
	const char *name;

	if (!m)
		return 0;
	if (m->neutral)
		return 1;
	if (!m->ours)
		return 0;
	/* Our code itself running (the leaf), work inlined into an interposer,
	 * or any of our functions that is not an interposer: ours.  An exported
	 * function of ours that is not the agent's own API (cbn_*, the CUDA and
	 * NVTX injection entry points) stands in for a libc, pthread, CUPTI or
	 * MPI function the program called: when what it called is that function
	 * (or the program's own code, a handler it chains to), the time is the
	 * program's; its own bookkeeping calls into libc (errno, clocks) are
	 * ours. */
	if (leaf || sk->n != 1 || !sym_is_exported(m->sym, addr - m->base))
		return 2;
	name = L->p->funcs[L->rframes[sk->first].func].name;
	if (!name || !strncmp(name, "cbn_", 4) || !strncmp(name, "InitializeInjection", 19))
		return 2;
	if (callee && callee_neutral && !same_function(name, callee))
		return 2;
	return 1;
}

/* The profile stack for raw pcs of the current file at time ts (leaf first).
 * pcs[0] is the interrupted pc unless ret_all; the others are return addresses
 * and are looked up at pc-1 so the call's line, not the next one, is shown.
 * Identical raw stacks (same process, same module epoch) are built once.
 * Frames in cbottleneck's own libraries are left out (load_stack_ours). */
static uint32_t stack_build(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts,
			    int ret_all, int *spin, int *ours)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	struct stack_probe probe = {L, 0, n, F->proc, epoch_of(F, ts), ret_all ? 1u : 0u};
	uint64_t hh[2], h;
	uint32_t v, i, sidx;
	struct load_stackkey *k;
	size_t first = p->nframes;
	int owner = 1; /* nobody's yet */
	const char *callee = NULL;
	int callee_neutral = 0;

	util_hash_words2(pcs, n,
			 ((uint64_t)probe.proc << 32) ^ ((uint64_t)probe.epoch << 1) ^ probe.ret_all,
			 hh);
	h = hh[0];
	probe.hash2 = hh[1];
	v = util_map_find(&L->stackmap, h, stack_eq, &probe);
	if (v != UINT32_MAX) {
		k = &L->stackkeys[v];
		if (spin) {
			if (!k->spin)
				k->spin = n ? spin_at(L, pcs[0], ts) : 1;
			*spin = k->spin == 2;
		}
		if (ours)
			*ours = (int)k->ours;
		return k->stack;
	}
	if (load_python_has(L, pcs, n)) {
		/* Python frames where their evaluation loop ran (load_python.c) */
		owner = load_python_frames(L, pcs, n, ts, ret_all);
	} else {
		for (i = 0; i < n; i++) {
			uint64_t addr = (i == 0 && !ret_all) ? pcs[i] : pcs[i] - 1;
			const struct load_symkey *sk;
			struct load_mod *m;
			uint32_t j;

			if (CBN_PYW_IS(pcs[i]))
				continue; /* --python off, or a file without its interpreter */
			if (pcs[i] == 0 || !(m = mod_at(F, addr, ts))) {
				if (owner == 1)
					owner = 0;
				push_unknown(L, pcs[i]);
				callee = NULL;
				continue;
			}
			sk = sym_lookup(L, m->sym, addr - m->base);
			if (owner == 1)
				owner = load_frame_owner(L, m, sk, addr, i == 0 && !ret_all, callee,
							 callee_neutral);
			callee = L->p->funcs[L->rframes[sk->first + sk->n - 1].func].name;
			callee_neutral = m->neutral;
			if (m->ours)
				continue; /* never a frame of the program's stack */
			note_symmod(L, m);
			for (j = 0; j < sk->n; j++) {
				/* fold: the containing function's frame, whose line is the
				 * inlined call's site, stands for the whole chain */
				if (L->fold_inline && L->rframes[sk->first + j].inlined)
					continue;
				push_frame(L, &L->rframes[sk->first + j], pcs[i]);
			}
		}
	}
	if (p->nframes == first)
		push_unknown(L, n ? pcs[0] : 0);
	sidx = stack_commit(L, first);
	k = LOAD_PUSH(L->stackkeys, L->nstackkeys, L->capstackkeys);
	k->proc = probe.proc;
	k->epoch = probe.epoch;
	k->nframes = n;
	k->ret_all = probe.ret_all;
	k->hash = h;
	k->hash2 = hh[1];
	k->stack = sidx;
	k->spin = 0;
	k->ours = owner == 2;
	load_map_put(&L->stackmap, h, (uint32_t)(L->nstackkeys - 1));
	if (ours)
		*ours = owner == 2;
	if (spin) {
		/* (spin_at may grow the stack keys: k is not used past here) */
		uint32_t sp = n ? spin_at(L, pcs[0], ts) : 1;

		L->stackkeys[L->nstackkeys - 1].spin = sp;
		*spin = sp == 2;
	}
	return sidx;
}

uint32_t load_stack(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all)
{
	return stack_build(L, pcs, n, ts, ret_all, NULL, NULL);
}

uint32_t load_stack_spin(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin)
{
	*spin = 0;
	return stack_build(L, pcs, n, ts, 0, spin, NULL);
}

uint32_t load_stack_ours(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin,
			 int *ours)
{
	*spin = 0;
	*ours = 0;
	return stack_build(L, pcs, n, ts, 0, spin, ours);
}

/* --- one file -------------------------------------------------------------- */

static void thread_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_thread *t = (const void *)r->raw;
	uint32_t idx = load_thread(L, L->f->proc, t->tid); /* may move the array */
	struct prof_thread *th = &L->p->threads[idx];

	if (r->str_len)
		th->name = load_intern(&L->arena, &L->strings, r->str);
	if (r->type == CBN_REC_THREAD_START && (!th->start || t->ts < th->start))
		th->start = t->ts;
	if (r->type == CBN_REC_THREAD_END) {
		th->end = t->ts;
		th->cpu_ns = t->cpu_ns;
	}
}

static int rec_cb(void *ctx, const struct reader_rec *r)
{
	struct load *L = ctx;
	struct load_file *F = L->f;

	switch (r->type) {
	case CBN_REC_SAMPLE: {
		const struct cbn_rec_sample *s = (const void *)r->raw;
		struct load_raw *w = LOAD_PUSH(F->raw, F->nraw, F->capraw);
		w->ts = s->ts;
		w->pcs = r->pcs;
		w->nframes = r->nframes;
		w->weight = s->weight;
		w->kweight = s->kweight <= s->weight ? s->kweight : s->weight;
		w->flags = r->flags;
		w->kstacks = r->kstacks;
		w->kplace = r->kplace;
		w->thread = load_thread(L, F->proc, r->chunk_tid);
		if (s->ts > F->last_ts)
			F->last_ts = s->ts;
		break;
	}
	case CBN_REC_THREAD_START:
	case CBN_REC_THREAD_END:
	case CBN_REC_THREAD_NAME:
		thread_rec(L, r);
		break;
	case CBN_REC_MODULE_LOAD:
	case CBN_REC_MODULE_UNLOAD:
		mod_event(L, r);
		break;
	case CBN_REC_MEM_ALLOC:
	case CBN_REC_MEM_FREE:
	case CBN_REC_MEM_COUNTERS:
		load_mem_rec(L, r);
		break;
	case CBN_REC_CAPTURE:
		load_capture_rec(L, r);
		break;
	case CBN_REC_OFFCPU:
		load_offcpu_rec(L, r);
		break;
	case CBN_REC_MPI:
	case CBN_REC_CLOCK:
		load_mpi_rec(L, r);
		break;
	case CBN_REC_PY_CODE:
		load_python_rec(L, r);
		break;
	case CBN_REC_PROCESS_EXIT: {
		const struct cbn_rec_exit *e = (const void *)r->raw;
		F->exited = 1;
		F->exit_status = e->status;
		if (e->ts > F->last_ts)
			F->last_ts = e->ts;
		break;
	}
	default:
		load_cuda_rec(L, r);
		break;
	}
	return 0;
}

/* "a\0b\0c\0" -> "a b c" */
static const char *join_cmdline(struct load *L, const char *c, uint32_t len)
{
	char buf[sizeof(((struct cbn_file_header *)0)->cmdline) + 1];
	uint32_t i;

	while (len > 0 && c[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		buf[i] = c[i] == '\0' ? ' ' : c[i];
	buf[len] = '\0';
	return load_arena_strndup(&L->arena, buf, len);
}

static void process_from_header(struct load *L, struct prof_process *pr,
				const struct cbn_file_header *h, const char *name)
{
	memset(pr, 0, sizeof(*pr));
	pr->pid = h->pid;
	pr->ppid = h->ppid;
	pr->exec_seq = h->exec_seq;
	pr->exe = load_intern(&L->arena, &L->strings, h->exe);
	pr->cmdline = join_cmdline(L, h->cmdline, h->cmdline_len);
	pr->file = load_intern(&L->arena, &L->strings, name);
	pr->start = h->start_mono_ns;
	pr->end = h->end_mono_ns;
	pr->period_ns = h->period_ns;
	pr->signo = h->signo;
	pr->timer_kind = h->timer_kind;
	pr->max_depth = h->max_depth;
	pr->clean_exit = h->clean_exit != 0;
	pr->exit_code = h->exit_code;
	if (h->disabled)
		pr->disabled = load_arena_strndup(&L->arena, h->disabled_reason[0] ?
						  h->disabled_reason : "disabled",
						  strlen(h->disabled_reason[0] ?
							 h->disabled_reason : "disabled"));
	pr->start_real_ns = h->start_real_ns;
	memcpy(pr->lost, (const void *)h->lost, sizeof(pr->lost));
	pr->truncated = h->truncated;
	pr->pc_only = h->pc_only;
	pr->threads_perf = h->threads_perf;
	pr->threads_timer = h->threads_timer;
	pr->signo_first = h->signo_first ? h->signo_first : h->signo;
	pr->notes = h->notes;
	pr->perf_errno = h->perf_errno;
	pr->timer_reason = load_arena_strndup(&L->arena, h->timer_reason,
					      strnlen(h->timer_reason, sizeof(h->timer_reason)));
	pr->kstack_state = h->kstack_state;
	pr->kstack_errno = h->kstack_errno;
	pr->threads_kstacks = h->threads_kstacks;
	pr->kstack_samples = h->kstack_samples;
	pr->kstack_lost = h->kstack_lost;
	pr->kstack_placed = h->kstack_placed;
	pr->kstack_unplaced = h->kstack_unplaced;
	pr->kstack_parks = h->kstack_parks;
	pr->kstack_unparks = h->kstack_unparks;
	pr->kstack_reason = load_arena_strndup(&L->arena, h->kstack_reason,
					       strnlen(h->kstack_reason, sizeof(h->kstack_reason)));
	memcpy(pr->pc_only_why, (const void *)h->pc_only_why, sizeof(pr->pc_only_why));
	memcpy(pr->unsampled_why, (const void *)h->unsampled_why, sizeof(pr->unsampled_why));
	pr->overhead_threads_ns = h->overhead.threads_cpu_ns;
	for (int k = 0; k < CBN_OVH_NSITES; k++)
		pr->overhead_site_ns[k] = h->overhead.site_ns[k];
	pr->overhead_init_ns = h->overhead.init_cpu_ns;
	load_mem_header(L, pr, h);
	load_capture_header(L, pr, h);
	load_offcpu_header(L, pr, h);
	load_mpi_header(L, pr, h);
	load_python_header(L, pr, h);
}

/* The current file's modules into p->modules (has_debuginfo: modules_finish). */
static void push_modules(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i, cap;

	for (i = 0; i < F->nmods; i++) {
		const struct load_mod *m = &F->mods[i];
		const char *slash = strrchr(m->path, '/');
		struct prof_module *pm;

		cap = L->capmodules;
		pm = LOAD_PUSH(p->modules, p->nmodules, L->capmodules);
		if (L->capmodules != cap)
			L->modsyms = load_xrealloc(L->modsyms, L->capmodules * sizeof(*L->modsyms));
		L->modsyms[p->nmodules - 1] = m->sym;
		pm->process = F->proc;
		pm->path = m->path;
		pm->name = slash ? slash + 1 : m->path;
		pm->base = m->base;
		pm->load_ts = m->load_ts;
		pm->unload_ts = m->unload_ts == UINT64_MAX ? 0 : m->unload_ts;
		pm->has_debuginfo = -1;
	}
}

static void file_free(struct load_file *F)
{
	free(F->mods);
	free(F->ranges);
	free(F->events);
	free(F->raw);
	free(F->cstacks);
	free(F->mstacks);
	free(F->capevs);
	free(F->ostacks);
	free(F->pstacks);
	free(F->pycodes);
}

/* Returns 0 when the file was read (maybe damaged: *damaged set), -1 when it
 * was unusable. */
static int load_one(struct load *L, const char *dir, const char *name, int *damaged)
{
	struct profile *p = L->p;
	struct reader_file rf;
	struct reader_result res;
	struct load_file F;
	struct prof_process *pr;
	char path[PATH_MAX], num[32];
	uint64_t ring_cut = 0, dropped = 0;
	size_t i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (reader_open(path, &rf, &res) != 0) {
		load_warn(L, "%s: %s; file skipped", name, res.reason);
		*damaged = 1;
		return -1;
	}
	memset(&F, 0, sizeof(F));
	F.proc = (uint32_t)p->nprocesses;
	F.status_idx = PROF_NONE;
	F.api_first = p->ncuda_api;
	F.gpu_first = p->ngpu_ops;
	F.malloc_first = p->nmem_allocs;
	F.mfree_first = p->nmem_frees;
	F.mctr_first = p->nmem_counters;
	F.offcpu_first = p->noffcpu;
	F.mpi_first = p->nmpi_calls;
	pr = LOAD_PUSH(p->processes, p->nprocesses, L->capprocs);
	process_from_header(L, pr, &rf.hdr, name);
	L->f = &F;
	F.py_on = rf.hdr.python.state == CBN_PY_ON;
	F.py_base = rf.hdr.python.module_base;
	util_map_free(&L->corrmap); /* correlation ids are per process */
	/* Raw stacks are deduplicated per process (the key holds the process). */
	util_map_free(&L->stackmap);
	L->nstackkeys = 0;

	reader_walk(&rf, rec_cb, L, &res);
	modmap_finish(&F);

	/* Ring mode: only the last ring_ns before the process's end. */
	if (rf.hdr.ring_ns) {
		uint64_t pe = p->processes[F.proc].end, end = F.last_ts > pe ? F.last_ts : pe;

		ring_cut = end > rf.hdr.ring_ns ? end - rf.hdr.ring_ns : 0;
	}
	load_grow((void **)&p->samples, &L->capsamples, p->nsamples + F.nraw, sizeof(*p->samples));
	for (i = 0; i < F.nraw; i++) {
		const struct load_raw *w = &F.raw[i];
		struct prof_sample *s;
		uint32_t n = w->nframes, ustack;
		size_t si;
		int spin, ours;

		if (w->ts < ring_cut) {
			dropped++;
			continue;
		}
		if ((w->flags & CBN_SAMPLE_PC_ONLY) && n > 1)
			n = 1;
		ustack = load_stack_ours(L, w->pcs, n, w->ts, &spin, &ours);
		if (ours) {
			/* the profiler's own CPU: counted apart, in no table */
			p->processes[F.proc].overhead_weight += w->weight;
			p->processes[F.proc].overhead_samples++;
			continue;
		}
		s = &p->samples[p->nsamples++];
		s->ts = w->ts;
		s->stack = ustack;
		si = p->nsamples - 1;
		s->thread = w->thread;
		s->weight = w->weight - w->kweight;
		/* the loader's own flags are not the file's to set */
		s->flags = w->flags & ~(uint32_t)(PROF_SAMPLE_KERNEL | PROF_SAMPLE_SPIN |
						  PROF_SAMPLE_SPLIT);
		p->threads[w->thread].weight += w->weight;
		p->processes[F.proc].weight += w->weight;
		if (w->kweight && w->kstacks &&
		    load_kernel_samples(L, p->nsamples - 1, w, F.nraw - i)) {
			/* the kernel's stacks, named (load_kernel.c) */
		} else if (w->kweight && w->kweight == w->weight) {
			/* all of it the kernel's: the record itself gets the leaf */
			s->stack = kernel_stack(L, s->stack);
			s->weight = w->weight;
			s->flags |= PROF_SAMPLE_KERNEL;
		} else if (w->kweight) {
			/* The CPU the kernel spent for the thread since its last sample
			 * (system calls, page faults: perf events do not fire there) is
			 * shown as a [kernel] frame on the stack it returned to. */
			struct prof_sample *k;

			load_grow((void **)&p->samples, &L->capsamples, p->nsamples + 1 + F.nraw - i,
				  sizeof(*p->samples));
			s = &p->samples[p->nsamples - 1];
			k = &p->samples[p->nsamples++];
			*k = *s;
			k->stack = kernel_stack(L, s->stack);
			k->weight = w->kweight;
			k->flags |= PROF_SAMPLE_KERNEL | PROF_SAMPLE_SPLIT;
		}
		/* the sample's own time in user code, not its kernel shares */
		s = &p->samples[si];
		if (spin && s->stack == ustack && !(s->flags & PROF_SAMPLE_KERNEL))
			s->flags |= PROF_SAMPLE_SPIN;
	}
	load_cuda_finish(L);
	load_mem_finish(L);
	load_offcpu_finish(L, ring_cut);
	load_mpi_finish(L);
	push_modules(L);
	load_python_finish(L);

	pr = &p->processes[F.proc];
	pr->samples = F.nraw - dropped;
	pr->ring_ns = rf.hdr.ring_ns;
	pr->ring_recycled = rf.hdr.ring_recycled;
	pr->ring_dropped = dropped;
	if (F.exited) {
		pr->clean_exit = 1;
		pr->exit_code = F.exit_status;
	}
	if (F.last_ts > pr->end)
		pr->end = F.last_ts;
	load_capture_finish(L);
	if (res.damaged) {
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: %s; kept %s samples", name, res.reason,
			  thousands(num, sizeof(num), res.samples));
	} else if (rf.hdr.samples > res.samples && !(rf.hdr.ring_ns && rf.hdr.ring_recycled)) {
		/* (a ring reuses its chunks: what they held is gone by design) */
		/* The agent counts a sample after committing it, so fewer readable
		 * samples than counted means chunks were zeroed or overwritten
		 * (an all-zero chunk alone is not proof: see reader.h). */
		char num2[32];
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: only %s of the %s samples the agent recorded could be read "
			     "(part of the file was zeroed or overwritten)", name,
			  thousands(num, sizeof(num), res.samples),
			  thousands(num2, sizeof(num2), (uint64_t)rf.hdr.samples));
	}
	if (res.unknown)
		load_warn(L, "%s: skipped %" PRIu64 " records of types added after this "
			     "cbottleneck (written by a newer version: report it with that one to "
			     "see them)", name, res.unknown);
	if (reader_changed(&rf)) {
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: the file was cut while being read (is another process writing "
			     "or truncating it?); what lay past the cut was dropped", name);
	}
	L->f = NULL;
	file_free(&F);
	reader_close(&rf);
	return 0;
}

/* --- the directory --------------------------------------------------------- */

struct cbp_name {
	char *name;
	uint64_t start;
	uint32_t pid, seq;
	int32_t rank;            /* header.rank, -1 not a rank */
};

static int cbp_cmp(const void *a, const void *b)
{
	const struct cbp_name *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Peek at a file's start time so processes come out in start order (root
 * first); a file whose header is unreadable sorts first and is reported. */
static void cbp_peek(const char *dir, struct cbp_name *c)
{
	struct cbn_file_header h;
	char path[PATH_MAX];
	int fd;

	const char *base = strrchr(c->name, '/');

	c->start = 0;
	c->rank = -1;
	sscanf(base ? base + 1 : c->name, "%" SCNu32 ".%" SCNu32, &c->pid, &c->seq);
	snprintf(path, sizeof(path), "%s/%s", dir, c->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    memcmp(h.magic, CBN_MAGIC, sizeof(h.magic)) == 0) {
		c->start = h.start_mono_ns;
		if (h.rank.source != CBN_RANK_NONE && h.rank.rank >= 0)
			c->rank = h.rank.rank;
	}
	close(fd);
}

/* The *.cbp of dir/sub (sub "" the top) into *out, names relative to dir;
 * with ranks, only files whose header names one of them. */
static int list_dir(const char *dir, const char *sub, const char *ranks, struct cbp_name **out,
		    size_t *n, size_t *cap)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s%s%s", dir, sub[0] ? "/" : "", sub);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		struct cbp_name *c;
		char name[PATH_MAX];

		/* a rank's session lives in OUT/rank-NNNNN/ (docs/distributed.md) */
		if (!sub[0] && strncmp(e->d_name, "rank-", 5) == 0) {
			list_dir(dir, e->d_name, ranks, out, n, cap);
			continue;
		}
		if (len <= strlen(CBN_FILE_EXT) ||
		    strcmp(e->d_name + len - strlen(CBN_FILE_EXT), CBN_FILE_EXT) != 0)
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sub, sub[0] ? "/" : "", e->d_name);
		c = LOAD_PUSH(*out, *n, *cap);
		memset(c, 0, sizeof(*c));
		c->name = strdup(name);
		if (!c->name) {
			(*n)--;
			continue;
		}
		cbp_peek(dir, c);
		if (ranks && (c->rank < 0 || prof_ranks_match(ranks, c->rank, NULL, 0) != 1)) {
			free(c->name);
			(*n)--;
		}
	}
	closedir(d);
	return 0;
}

static int list_cbp(const char *dir, const char *ranks, struct cbp_name **out, size_t *n,
		    char *err, size_t errlen)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (list_dir(dir, "", ranks, out, n, &cap) < 0) {
		snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		return -1;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), cbp_cmp);
	return 0;
}

/* --- after every file ------------------------------------------------------- */

static const char *argv0_of(const struct prof_process *pr)
{
	return pr->cmdline && pr->cmdline[0] ? pr->cmdline : pr->exe;
}

struct pid_seq {
	uint32_t pid, seq;
};

static int pid_seq_cmp(const void *a, const void *b)
{
	const struct pid_seq *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define ABNORMAL_LINES 5 /* one line each, then a summary: a tree may have thousands */

/* meta: the launcher saw the program (the root process's last image) exit
 * normally, even if it left through _exit (dash does) and skipped the agent's
 * exit handlers. */
static void abnormal_warnings(struct load *L, const struct load_meta *meta)
{
	struct profile *p = L->p;
	struct pid_seq *ps;
	size_t i, n = p->nprocesses, shown = 0, more = 0;
	uint64_t more_samples = 0;
	char num[32];

	if (!n)
		return;
	ps = load_xrealloc(NULL, n * sizeof(*ps));
	for (i = 0; i < n; i++) {
		ps[i].pid = p->processes[i].pid;
		ps[i].seq = p->processes[i].exec_seq;
	}
	qsort(ps, n, sizeof(*ps), pid_seq_cmp);
	for (i = 0; i < n; i++) {
		const struct prof_process *pr = &p->processes[i];
		struct pid_seq key = {pr->pid, pr->exec_seq}, *at;
		char name[64];

		if (pr->clean_exit)
			continue;
		/* An image replaced by exec has a successor file: it did not crash. */
		at = bsearch(&key, ps, n, sizeof(*ps), pid_seq_cmp);
		if (at && at + 1 < ps + n && at[1].pid == pr->pid)
			continue;
		if (pr->pid == p->processes[0].pid && meta->found && meta->exit_signal == 0 &&
		    meta->exit_status >= 0)
			continue;
		if (shown == ABNORMAL_LINES) {
			more++;
			more_samples += pr->samples;
			continue;
		}
		snprintf(name, sizeof(name), "%s", argv0_of(pr));
		name[strcspn(name, " ")] = '\0';
		load_warn(L, "pid %u (%s) ended without exiting normally (crash, _exit or SIGKILL); "
			     "its %s samples up to that point are kept",
			  pr->pid, name, thousands(num, sizeof(num), pr->samples));
		shown++;
	}
	if (more)
		load_warn(L, "%zu more processes ended without exiting normally; their %s samples "
			     "are kept", more, thousands(num, sizeof(num), more_samples));
	free(ps);
}

static int pseudo_module(const char *base)
{
	return base[0] == '[' || strncmp(base, "linux-vdso", 10) == 0 ||
	       strncmp(base, "linux-gate", 10) == 0 || base[0] == '\0';
}

static void module_checks(struct load *L)
{
	struct profile *p = L->p;
	size_t i, j, cap = 0, capm = 0;

	for (i = 0; i < L->nsymmods; i++) {
		struct sym_module *m = L->symmods[i].sym;
		const char *base = sym_module_basename(m), *file;
		struct prof_hitmod *hm;
		int dup = 0;

		if (!base || pseudo_module(base))
			continue;
		file = sym_module_filename(L->sym, m);
		hm = LOAD_PUSH(p->hitmods, p->nhitmods, capm);
		hm->file = load_intern(&L->arena, &L->strings, file);
		hm->soname = load_intern(&L->arena, &L->strings, sym_module_soname(L->sym, m));
		hm->path = load_intern(&L->arena, &L->strings, L->symmods[i].path ? L->symmods[i].path : "");
		hm->has_debuginfo = sym_module_has_debuginfo(L->sym, m);
		hm->producer = load_intern(&L->arena, &L->strings, sym_module_producer(L->sym, m));
		if (p->nprocesses && L->symmods[i].path && p->processes[0].exe &&
		    !strcmp(L->symmods[i].path, p->processes[0].exe) && !p->env.producer) {
			p->env.producer = hm->producer;
			p->env.program_debuginfo = hm->has_debuginfo;
		}
		base = file;
		if (sym_module_changed(L->sym, m))
			load_warn(L, "%s changed on disk since the run (build-id differs); its "
				     "functions may be misnamed: keep binaries unchanged until the "
				     "report is made", L->symmods[i].path);
		if (sym_module_has_debuginfo(L->sym, m))
			continue;
		for (j = 0; j < p->nnodebug_modules; j++)
			if (strcmp(p->nodebug_modules[j], base) == 0)
				dup = 1;
		if (!dup)
			*LOAD_PUSH(p->nodebug_modules, p->nnodebug_modules, cap) =
				load_arena_strndup(&L->arena, base, strlen(base));
	}
}

/* Debug info of the modules frames landed in (already opened for them);
 * the others stay -1 rather than opening every library of every process. */
static void modules_finish(struct load *L)
{
	struct profile *p = L->p;
	size_t i;

	for (i = 0; i < p->nmodules; i++) {
		struct symmod_probe probe = {L, L->modsyms[i]};

		if (!probe.sym || util_map_find(&L->symmodmap, util_mix64((uintptr_t)probe.sym),
						symmod_eq, &probe) == UINT32_MAX)
			continue;
		p->modules[i].has_debuginfo = sym_module_has_debuginfo(L->sym, L->modsyms[i]) ? 1 : 0;
	}
}

static void run_totals(struct load *L, const struct load_meta *meta)
{
	struct profile *p = L->p;
	uint64_t start = UINT64_MAX, end = 0;
	size_t i;

	for (i = 0; i < p->nprocesses; i++) {
		/* ranks on other hosts: on the reference clock (load_mpi_align) */
		uint64_t ps = prof_rank_time(p, (uint32_t)i, p->processes[i].start);
		uint64_t pe = prof_rank_time(p, (uint32_t)i, p->processes[i].end);

		if (p->processes[i].start && ps < start) {
			start = ps;
			p->start_real_ns = p->processes[i].start_real_ns;
		}
		if (pe > end)
			end = pe;
	}
	if (start == UINT64_MAX)
		start = 0;
	p->period_ns = p->nprocesses ? p->processes[0].period_ns : 0;
	if (meta->found) {
		/* profile.h: the earliest process start, the origin of every timeline. */
		p->start_ns = start ? start : meta->start_mono_ns;
		p->wall_ns = meta->end_mono_ns > meta->start_mono_ns ?
				     meta->end_mono_ns - meta->start_mono_ns : 0;
		p->frequency_hz = meta->frequency_hz;
		p->user_ns = meta->user_ns;
		p->sys_ns = meta->sys_ns;
		p->exit_status = meta->exit_status;
		p->exit_signal = meta->exit_signal;
	} else {
		const struct prof_process *root = p->nprocesses ? &p->processes[0] : NULL;
		p->start_ns = start;
		p->exit_status = root && root->clean_exit ? root->exit_code : -1;
		p->exit_signal = 0;
	}
	if (!p->wall_ns && end > start)
		p->wall_ns = end - start;
	if (p->frequency_hz <= 0 && p->period_ns)
		p->frequency_hz = 1e9 / (double)p->period_ns;
	if (!p->argv) {
		/* No session.json: the root process's command line, split on NULs. */
		const struct prof_process *root = p->nprocesses ? &p->processes[0] : NULL;
		const char *c = root ? root->cmdline : "";
		size_t n = 0, cap = 0;
		char *copy = load_arena_strndup(&L->arena, c, strlen(c)), *tok, *save = NULL;

		for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			*LOAD_PUSH(p->argv, n, cap) = tok;
		*LOAD_PUSH(p->argv, n, cap) = NULL;
	}
}

static void load_state_free(struct load *L)
{
	util_strings_free(&L->strings);
	util_map_free(&L->funcmap);
	util_map_free(&L->threadmap);
	util_map_free(&L->symmap);
	util_map_free(&L->stackmap);
	util_map_free(&L->symstackmap);
	util_map_free(&L->corrmap);
	util_map_free(&L->symmodmap);
	free(L->symkeys);
	free(L->kstack);
	load_kernel_free(L);
	free(L->rframes);
	free(L->stackkeys);
	free(L->symmods);
	free(L->modsyms);
	L->modsyms = NULL;
	if (L->sym)
		sym_free(L->sym);
	L->sym = NULL;
}

int prof_load(const char *session_dir, struct profile **out, char *err, size_t errlen)
{
	struct prof_load_opts o = {PROF_INLINE_EXPAND, NULL, PROF_PYTHON_ON};

	return prof_load_with(session_dir, &o, out, err, errlen);
}

/* The files of one session into L->p; PROF_LOAD_* (< 0 with err set). */
static int load_files(struct load *L, const char *session_dir, const struct cbp_name *names,
		      size_t nnames, char *err, size_t errlen)
{
	struct load_meta meta;
	size_t i, readable = 0;
	int damaged = 0;

	load_meta_read(L, session_dir, &meta);
	load_notes_read(L, session_dir);
	load_kernel_open(L, session_dir);
	for (i = 0; i < nnames; i++)
		if (load_one(L, session_dir, names[i].name, &damaged) == 0)
			readable++;
	if (readable == 0) {
		snprintf(err, errlen, "no readable session file in %s (%s)", session_dir,
			 L->p->nwarnings ? L->p->warnings[0] : "all damaged");
		return PROF_LOAD_EMPTY;
	}
	abnormal_warnings(L, &meta);
	module_checks(L);
	modules_finish(L);
	load_mpi_align(L);
	run_totals(L, &meta);
	/* the profile owns the strings from here on */
	L->p->arena = load_xrealloc(NULL, sizeof(struct util_arena));
	*(struct util_arena *)L->p->arena = L->arena;
	memset(&L->arena, 0, sizeof(L->arena));
	return damaged ? PROF_LOAD_PARTIAL : PROF_LOAD_OK;
}

/* load_files() with the loader's out-of-memory policy: load_oom() lands
 * here, and everything built so far is still reachable from L for freeing. */
static int load_guarded(struct load *L, const char *session_dir, const struct cbp_name *names,
			size_t nnames, char *err, size_t errlen)
{
	jmp_buf oom;
	int ret;

	if (setjmp(oom) == 0) {
		load_oom_target = &oom;
		ret = load_files(L, session_dir, names, nnames, err, errlen);
	} else {
		snprintf(err, errlen, "out of memory reading %s", session_dir);
		ret = PROF_LOAD_NOMEM;
	}
	load_oom_target = NULL;
	return ret;
}

int prof_load_with(const char *session_dir, const struct prof_load_opts *o, struct profile **out,
		   char *err, size_t errlen)
{
	struct load L;
	struct cbp_name *names = NULL;
	size_t nnames = 0, i;
	struct stat st;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (stat(session_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a session directory", session_dir);
		return PROF_LOAD_EMPTY;
	}
	if (o && o->ranks && prof_ranks_match(o->ranks, -1, err, errlen) < 0)
		return PROF_LOAD_EMPTY;
	if (list_cbp(session_dir, o ? o->ranks : NULL, &names, &nnames, err, errlen) < 0)
		return PROF_LOAD_EMPTY;
	if (nnames == 0 && o && o->ranks) {
		snprintf(err, errlen, "no session file of ranks %s in %s", o->ranks, session_dir);
		free(names);
		return PROF_LOAD_EMPTY;
	}
	if (nnames == 0) {
		snprintf(err, errlen, "no session files (*%s) in %s: not a cbottleneck session, or "
			 "the program never started", CBN_FILE_EXT, session_dir);
		free(names);
		return PROF_LOAD_EMPTY;
	}
	memset(&L, 0, sizeof(L));
	L.unknown_func = PROF_NONE;
	L.kernel_func = PROF_NONE;
	L.pyunknown_func = PROF_NONE;
	L.fold_inline = o && o->inline_view == PROF_INLINE_FOLD;
	L.python_native = o && o->python_view == PROF_PYTHON_NATIVE;
	L.python_off = o && o->python_view == PROF_PYTHON_OFF;
	L.p = calloc(1, sizeof(*L.p));
	L.sym = L.p ? sym_new() : NULL;
	if (!L.p || !L.sym) {
		snprintf(err, errlen, "out of memory starting to read %s", session_dir);
		ret = PROF_LOAD_NOMEM;
	} else {
		L.p->inline_folded = L.fold_inline;
		L.p->python_view = o ? (int)o->python_view : 0;
		if (o && o->ranks && !(L.p->rank_filter = strdup(o->ranks))) {
			snprintf(err, errlen, "out of memory starting to read %s", session_dir);
			ret = PROF_LOAD_NOMEM;
		} else {
			ret = load_guarded(&L, session_dir, names, nnames, err, errlen);
		}
	}
	for (i = 0; i < nnames; i++)
		free(names[i].name);
	free(names);
	load_state_free(&L);
	util_arena_free(&L.arena);
	if (ret < 0) {
		prof_free(L.p);
		return ret;
	}
	*out = L.p;
	return ret;
}

void prof_free(struct profile *p)
{
	if (!p)
		return;
	free(p->argv);
	free(p->rank_filter);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
	free(p->samples);
	free(p->threads);
	free(p->processes);
	free(p->modules);
	free(p->ranges);
	free(p->windows);
	free(p->ctl_marks);
	free(p->cuda_api);
	free(p->gpu_ops);
	free(p->syncs);
	free(p->overheads);
	free(p->devices);
	free(p->contexts);
	free(p->memory);
	free(p->mempools);
	free(p->mem_allocs);
	free(p->mem_frees);
	free(p->mem_counters);
	free(p->cuda_status);
	free(p->cuda_shares);
	free(p->offcpu);
	free(p->mpi_calls);
	free(p->warnings);
	free(p->nodebug_modules);
	free(p->hitmods);
	if (p->arena) {
		util_arena_free(p->arena);
		free(p->arena);
	}
	free(p);
}
