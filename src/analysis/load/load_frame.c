/*
 * load_frame.c — functions, symbols and frames for the stacks (load_int.h):
 * each unique (module, address) symbolized once, functions interned, frames
 * pushed, the frames that belong to the profiler or to a neutral library
 * (libc, the loader, CUDA's driver) and spin loops recognised.  Below
 * load_stack.c, load_jit.c and load_python.c, which all push frames.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "load_int.h"

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
	f = LOAD_PUSH(L, p->funcs, p->nfuncs, L->capfuncs);
	if (!f)
		return PROF_NONE;
	f->name = load_intern(L, probe.name);
	f->file = load_intern(L, probe.file);
	f->line = line;
	f->module = load_intern(L, probe.module);
	f->flags = 0;
	f->calls = f->primitive = 0;
	f->label = NULL;
	v = (uint32_t)(p->nfuncs - 1);
	/* (a function whose strings could not be copied is in no map: never
	 * compared, gone with the load) */
	if (L->nomem || load_map_put(L, &L->funcmap, h, v) < 0)
		return PROF_NONE;
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

/* The resolved frames of (mod, vaddr), innermost first: symbolized once;
 * NULL when memory ran short. */
const struct load_symkey *load_sym_lookup(struct load *L, struct sym_module *mod,
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
	k = LOAD_PUSH(L, L->symkeys, L->nsymkeys, L->capsymkeys);
	if (!k)
		return NULL;
	k->mod = mod;
	k->vaddr = vaddr;
	k->first = (uint32_t)L->nrframes;
	k->spin = 0;
	for (i = 0; i < n && fr; i++) {
		struct load_frame *lf = LOAD_PUSH(L, L->rframes, L->nrframes, L->caprframes);

		if (!lf)
			return NULL;
		lf->func = intern_func(L, fr[i].func, fr[i].func_file, fr[i].func_line, modname);
		lf->line = fr[i].line;
		lf->inlined = fr[i].inlined ? 1 : 0;
		lf->nosym = fr[i].nosym ? 1 : 0;
		p_flag_func(L, lf->func, (fr[i].nosym ? PROF_FUNC_NOSYM : 0) |
						 (fr[i].inlined && !L->fold_inline ? PROF_FUNC_INLINED
										    : 0));
		lf->file = load_intern(L, fr[i].file ? fr[i].file : "");
	}
	if (L->nrframes == k->first) {
		/* The symbolizer promises >= 1 frame; never trust that blindly. */
		char name[64 + PATH_MAX];
		struct load_frame *lf = LOAD_PUSH(L, L->rframes, L->nrframes, L->caprframes);

		if (!lf)
			return NULL;
		snprintf(name, sizeof(name), "[%s+0x%" PRIx64 "]", modname, vaddr);
		lf->func = intern_func(L, name, "", 0, modname);
		lf->line = 0;
		lf->inlined = 0;
		lf->nosym = 0;
		lf->file = "";
	}
	k->n = (uint32_t)(L->nrframes - k->first);
	/* (a key left half-made is in no map: never found again) */
	if (L->nomem || load_map_put(L, &L->symmap, h, (uint32_t)(L->nsymkeys - 1)) < 0)
		return NULL;
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
void load_note_symmod(struct load *L, struct load_mod *m)
{
	struct symmod_probe probe = {L, m->sym};
	uint64_t h = util_mix64((uintptr_t)m->sym);
	struct load_symmod *s;

	if (util_map_find(&L->symmodmap, h, symmod_eq, &probe) != UINT32_MAX)
		return;
	s = LOAD_PUSH(L, L->symmods, L->nsymmods, L->capsymmods);
	if (!s)
		return;
	s->sym = m->sym;
	s->path = m->path;
	load_map_put(L, &L->symmodmap, h, (uint32_t)(L->nsymmods - 1));
}


void load_push_frame(struct load *L, const struct load_frame *lf, uint64_t addr)
{
	struct profile *p = L->p;
	struct prof_frame *f;

	if (L->nomem || !(f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes)))
		return; /* (the load stops: the stack it was for is not made) */
	f->func = lf->func;
	f->line = lf->line;
	f->file = lf->file;
	f->inlined = lf->inlined;
	f->addr = addr;
}

void load_push_unknown(struct load *L, uint64_t addr)
{
	struct load_frame lf = {0, 0, 0, 0, ""};

	if (L->unknown_func == PROF_NONE)
		L->unknown_func = intern_func(L, "[unknown]", "", 0, "");
	lf.func = L->unknown_func;
	load_push_frame(L, &lf, addr);
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
uint32_t load_spin_at(struct load *L, uint64_t pc, uint64_t ts)
{
	struct load_mod *m;
	struct load_symkey *k;
	const unsigned char *b;
	uint64_t start;
	size_t n;

	if (pc == 0 || !(m = load_mod_at(L->f, pc, ts)))
		return 1;
	k = (struct load_symkey *)load_sym_lookup(L, m->sym, pc - m->base);
	if (!k)
		return 1;
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
	struct load_mod *m = load_mod_at(L->f, addr, ts);
	const struct load_symkey *k;

	*mod = m;
	if (!m)
		return PROF_NONE;
	if (!m->ours)
		load_note_symmod(L, m);
	k = load_sym_lookup(L, m->sym, addr - m->base);
	return k ? (uint32_t)(k - L->symkeys) : PROF_NONE;
}

/* The frames of symbol key k (innermost first) for pc, or "[unknown]". */
void load_push_symkey(struct load *L, uint32_t k, uint64_t pc)
{
	const struct load_symkey *sk;
	uint32_t j;

	if (k == PROF_NONE) {
		load_push_unknown(L, pc);
		return;
	}
	sk = &L->symkeys[k];
	for (j = 0; j < sk->n; j++) {
		/* fold: the containing function's frame, whose line is the
		 * inlined call's site, stands for the whole chain */
		if (L->fold_inline && L->rframes[sk->first + j].inlined)
			continue;
		load_push_frame(L, &L->rframes[sk->first + j], pc);
	}
}

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

/* Debug info of the modules frames landed in (already opened for them);
 * the others stay -1 rather than opening every library of every process. */
void load_modules_finish(struct load *L)
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
