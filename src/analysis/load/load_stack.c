/*
 * load_stack.c — symbols and stacks: each unique (module, address) symbolized
 * once, functions interned, raw stacks deduplicated per process, the frames
 * that belong to the profiler or to a neutral library (libc, the loader,
 * CUDA's driver) and spin loops recognised.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "load_int.h"
#include "load_meta.h"

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
	f->calls = f->primitive = 0;
	f->label = NULL;
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
	uint32_t first, n, unwind;
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

	return st->nframes == s->n && st->unwind == s->unwind &&
	       frames_same(s->p->frames + st->first, s->p->frames + s->first, s->n);
}

/* Frames [first, nframes) as a stack: an existing one with the same functions,
 * lines and files (raw stacks that differ only in pcs of one line, or that
 * differ only in frames that fold away) and the same unwinding is reused and
 * the new frames dropped. */
uint32_t stack_commit_unwind(struct load *L, size_t first, uint32_t unwind)
{
	struct profile *p = L->p;
	struct symstack_probe probe = {p, (uint32_t)first, (uint32_t)(p->nframes - first),
				       unwind};
	uint64_t h = 0x9e3779b97f4a7c15ull ^ probe.n ^ ((uint64_t)unwind << 40);
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
	s->unwind = unwind;
	load_map_put(&L->symstackmap, h, (uint32_t)(p->nstacks - 1));
	return (uint32_t)(p->nstacks - 1);
}

uint32_t stack_commit(struct load *L, size_t first)
{
	return stack_commit_unwind(L, first, 0);
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
uint32_t load_stack_kernel(struct load *L, uint32_t st)
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
	ks->unwind = p->stacks[st].unwind;
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

/* A pc in no module: JIT code's function (load_jit.c) or "[unknown]". */
void load_push_nomod(struct load *L, uint64_t pc, uint64_t addr, uint64_t ts)
{
	struct load_frame lf = {0, 0, 0, 0, ""};

	lf.func = pc ? load_jit_func(L, addr, ts) : PROF_NONE;
	if (lf.func == PROF_NONE)
		push_unknown(L, pc);
	else
		push_frame(L, &lf, pc);
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

	if (pc == 0 || !(m = load_mod_at(L->f, pc, ts)))
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
	struct load_mod *m = load_mod_at(L->f, addr, ts);

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
			    int ret_all, int *spin, int *ours, struct load_uwm *uwm)
{
	uint64_t kept[CBN_MAX_FRAMES];
	struct load_uwm u = {0, NULL};
	struct profile *p = L->p;
	struct load_file *F = L->f;
	struct stack_probe probe = {L, 0, n, F->proc, load_epoch_of(F, ts), ret_all ? 1u : 0u};
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
		if (uwm)
			*uwm = k->uwm;
		return k->stack;
	}
	/* the markers of unwinding past code without CFI: what they say is
	 * kept, they are no frames (the raw key above keeps them apart) */
	for (i = 0; i < n && !CBN_UWM_IS(pcs[i]); i++)
		;
	if (i < n) {
		if (n > CBN_MAX_FRAMES)
			n = CBN_MAX_FRAMES;
		n = load_uwm_strip(L, pcs, n, ts, ret_all, kept, &u);
		pcs = kept;
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
			if (pcs[i] == 0 || !(m = load_mod_at(F, addr, ts))) {
				if (owner == 1)
					owner = 0;
				load_push_nomod(L, pcs[i], addr, ts);
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
	sidx = stack_commit_unwind(L, first, u.unwind);
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
	k->uwm = u;
	load_map_put(&L->stackmap, h, (uint32_t)(L->nstackkeys - 1));
	if (ours)
		*ours = owner == 2;
	if (uwm)
		*uwm = u;
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
	return stack_build(L, pcs, n, ts, ret_all, NULL, NULL, NULL);
}

uint32_t load_stack_spin(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin)
{
	*spin = 0;
	return stack_build(L, pcs, n, ts, 0, spin, NULL, NULL);
}

uint32_t load_stack_ours(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int *spin,
			 int *ours, struct load_uwm *uwm)
{
	*spin = 0;
	*ours = 0;
	return stack_build(L, pcs, n, ts, 0, spin, ours, uwm);
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
