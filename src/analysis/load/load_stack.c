/*
 * load_stack.c — stacks: raw stacks deduplicated per process, each built
 * once from its frames (load_frame.c), Python's (load_python.c) and JIT
 * code's (load_jit.c); stacks of the same frames shared.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "load_int.h"
#include "load_meta.h"

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
 * the new frames dropped.  PROF_NONE when memory ran short (L->nomem). */
uint32_t stack_commit_unwind(struct load *L, size_t first, uint32_t unwind)
{
	struct profile *p = L->p;
	struct symstack_probe probe = {p, (uint32_t)first, (uint32_t)(p->nframes - first),
				       unwind};
	uint64_t h = 0x9e3779b97f4a7c15ull ^ probe.n ^ ((uint64_t)unwind << 40);
	uint32_t v, i;
	struct prof_stack *s;

	if (L->nomem)
		return PROF_NONE;
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
	s = LOAD_PUSH(L, p->stacks, p->nstacks, L->capstacks);
	if (!s)
		return PROF_NONE;
	s->first = (uint32_t)first;
	s->nframes = probe.n;
	s->unwind = unwind;
	if (load_map_put(L, &L->symstackmap, h, (uint32_t)(p->nstacks - 1)) < 0)
		return PROF_NONE;
	return (uint32_t)(p->nstacks - 1);
}

uint32_t stack_commit(struct load *L, size_t first)
{
	return stack_commit_unwind(L, first, 0);
}

/* The stack st with a "[kernel]" frame as its leaf, made once per stack;
 * PROF_NONE when memory ran short. */
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
	if (L->nomem || st == PROF_NONE)
		return PROF_NONE;
	first = (uint32_t)p->nframes;
	n = p->stacks[st].nframes;
	f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes);
	if (!f)
		return PROF_NONE;
	memset(f, 0, sizeof(*f));
	f->func = L->kernel_func;
	f->file = "";
	for (i = 0; i < n; i++) {
		if (!(f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes)))
			return PROF_NONE;
		*f = p->frames[p->stacks[st].first + i];
	}
	ks = LOAD_PUSH(L, p->stacks, p->nstacks, L->capstacks);
	if (!ks)
		return PROF_NONE;
	ks->first = first;
	ks->nframes = n + 1;
	ks->unwind = p->stacks[st].unwind;
	if (st >= L->capkstack) {
		size_t old = L->capkstack;

		if (load_grow(L, (void **)&L->kstack, &L->capkstack, (size_t)st,
			      sizeof(*L->kstack)) < 0)
			return PROF_NONE;
		memset(L->kstack + old, 0, (L->capkstack - old) * sizeof(*L->kstack));
	}
	L->kstack[st] = (uint32_t)(p->nstacks - 1) + 1;
	return (uint32_t)(p->nstacks - 1);
}

/* The stack st under a "[too short to sample]" leaf: the CPU a thread used
 * that no sample saw (CBN_SAMPLE_UNSEEN: st is its start routine alone),
 * which is not the start routine's own time.  PROF_NONE when memory ran
 * short. */
uint32_t load_stack_unseen(struct load *L, uint32_t st)
{
	struct profile *p = L->p;
	struct prof_frame *f;
	size_t first = p->nframes;
	uint32_t i, n;

	if (L->unseen_func == PROF_NONE) {
		L->unseen_func = intern_func(L, "[too short to sample]", "", 0, "");
		if (L->unseen_func != PROF_NONE)
			p->funcs[L->unseen_func].flags |= PROF_FUNC_UNSEEN;
	}
	if (L->nomem || st == PROF_NONE || L->unseen_func == PROF_NONE)
		return PROF_NONE;
	f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes);
	if (!f)
		return PROF_NONE;
	memset(f, 0, sizeof(*f));
	f->func = L->unseen_func;
	f->file = "";
	n = p->stacks[st].nframes;
	for (i = 0; i < n; i++) {
		if (!(f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes)))
			return PROF_NONE;
		*f = p->frames[p->stacks[st].first + i];
	}
	return stack_commit_unwind(L, first, p->stacks[st].unwind);
}

/* The profile stack for raw pcs of the current file at time ts (leaf first).
 * pcs[0] is the interrupted pc unless ret_all; the others are return addresses
 * and are looked up at pc-1 so the call's line, not the next one, is shown.
 * Identical raw stacks (same process, same module epoch) are built once.
 * Frames in cbottleneck's own libraries are left out (load_stack_ours).
 * PROF_NONE, *spin, *ours and *uwm unset, when memory ran short (L->nomem). */
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
				k->spin = n ? load_spin_at(L, pcs[0], ts) : 1;
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
			sk = load_sym_lookup(L, m->sym, addr - m->base);
			if (!sk)
				return PROF_NONE;
			if (owner == 1)
				owner = load_frame_owner(L, m, sk, addr, i == 0 && !ret_all, callee,
							 callee_neutral);
			callee = L->p->funcs[L->rframes[sk->first + sk->n - 1].func].name;
			callee_neutral = m->neutral;
			if (m->ours)
				continue; /* never a frame of the program's stack */
			load_note_symmod(L, m);
			for (j = 0; j < sk->n; j++) {
				/* fold: the containing function's frame, whose line is the
				 * inlined call's site, stands for the whole chain */
				if (L->fold_inline && L->rframes[sk->first + j].inlined)
					continue;
				load_push_frame(L, &L->rframes[sk->first + j], pcs[i]);
			}
		}
	}
	if (p->nframes == first)
		load_push_unknown(L, n ? pcs[0] : 0);
	sidx = stack_commit_unwind(L, first, u.unwind);
	if (L->nomem || !(k = LOAD_PUSH(L, L->stackkeys, L->nstackkeys, L->capstackkeys)))
		return PROF_NONE;
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
	if (load_map_put(L, &L->stackmap, h, (uint32_t)(L->nstackkeys - 1)) < 0)
		return PROF_NONE;
	if (ours)
		*ours = owner == 2;
	if (uwm)
		*uwm = u;
	if (spin) {
		/* (spin_at may grow the stack keys: k is not used past here) */
		uint32_t sp = n ? load_spin_at(L, pcs[0], ts) : 1;

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
