/*
 * load_kernel.c — kernel stacks: the stacks the agent's kernel-only perf event
 * sampled between two user samples become "[kernel] name" frames on top of
 * the user stack that entered the kernel where the agent could place them
 * (cbn_kplace), else the user stack the thread returned to, and the sample's kernel weight
 * (kweight, the kernel's own count) is shared among them by their counts.
 * Names come from the session's kernel-symbols file (written by the launcher
 * at the end of the run); without it a frame reads "[kernel] 0xADDR".
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

void load_kernel_open(struct load *L, const char *session_dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", session_dir, CBN_KSYMS_FILE);
	if (ksym_read_file(path, &L->ksyms) == -ENOMEM)
		load_nomem(L);
}

void load_kernel_free(struct load *L)
{
	ksym_free(&L->ksyms);
	util_map_free(&L->kfuncmap);
	util_map_free(&L->kstackmap);
	free(L->kfuncs);
	free(L->kstackkeys);
	L->kfuncs = NULL;
	L->kstackkeys = NULL;
}

struct kfunc_probe {
	const struct load *L;
	uint64_t key;
};

static int kfunc_eq(const void *ctx, uint32_t v)
{
	const struct kfunc_probe *k = ctx;

	return k->L->kfuncs[v].key == k->key;
}

/* The function of kernel pc (ret: a return address, looked up at pc-1). */
static uint32_t kernel_func(struct load *L, uint64_t pc, int ret)
{
	struct kfunc_probe probe = {L, pc << 1 | (ret ? 1u : 0u)};
	uint64_t h = util_mix64(probe.key ^ 0x6b65726e656cull);
	uint32_t v = util_map_find(&L->kfuncmap, h, kfunc_eq, &probe);
	const struct ksym *k;
	struct load_kfunc *kf;
	char name[256];

	if (v != UINT32_MAX)
		return L->kfuncs[v].func;
	k = ksym_find(&L->ksyms, ret ? pc - 1 : pc);
	if (k)
		snprintf(name, sizeof(name), "[kernel] %s", k->name);
	else
		snprintf(name, sizeof(name), "[kernel] 0x%" PRIx64, pc);
	kf = LOAD_PUSH(L, L->kfuncs, L->nkfuncs, L->capkfuncs);
	if (!kf)
		return PROF_NONE;
	kf->key = probe.key;
	kf->func = intern_func(L, name, "", 0, "kernel");
	if (L->nomem || load_map_put(L, &L->kfuncmap, h, (uint32_t)(L->nkfuncs - 1)) < 0)
		return PROF_NONE;
	return kf->func;
}

struct kstack_probe {
	const struct load *L;
	uint64_t hash2;
	uint32_t ustack;
};

static int kstack_eq(const void *ctx, uint32_t v)
{
	const struct kstack_probe *k = ctx;
	const struct load_kstackkey *e = &k->L->kstackkeys[v];

	return e->hash2 == k->hash2 && e->ustack == k->ustack;
}

/* Kernel stack k (leaf first) over user stack ustack, made once; PROF_NONE
 * when memory ran short. */
static uint32_t kernel_user_stack(struct load *L, const struct cbn_kstack *k, uint32_t ustack)
{
	struct profile *p = L->p;
	struct kstack_probe probe = {L, 0, ustack};
	struct load_kstackkey *e;
	uint64_t hh[2];
	size_t first = p->nframes;
	uint32_t v, i, n;

	util_hash_words2(k->pc, k->nframes, ((uint64_t)ustack << 16) ^ k->nframes, hh);
	probe.hash2 = hh[1];
	v = util_map_find(&L->kstackmap, hh[0], kstack_eq, &probe);
	if (v != UINT32_MAX)
		return L->kstackkeys[v].stack;
	if (ustack == PROF_NONE)
		return PROF_NONE;
	for (i = 0; i < k->nframes; i++) {
		struct prof_frame *f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes);

		if (!f)
			return PROF_NONE;
		memset(f, 0, sizeof(*f));
		f->func = kernel_func(L, k->pc[i], i > 0);
		f->file = "";
		f->addr = k->pc[i];
	}
	n = p->stacks[ustack].nframes;
	for (i = 0; i < n; i++) {
		struct prof_frame *f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes);

		if (!f)
			return PROF_NONE;
		*f = p->frames[p->stacks[ustack].first + i];
	}
	e = LOAD_PUSH(L, L->kstackkeys, L->nkstackkeys, L->capkstackkeys);
	if (!e)
		return PROF_NONE;
	e->hash2 = hh[1];
	e->ustack = ustack;
	e->stack = stack_commit_unwind(L, first, p->stacks[ustack].unwind);
	if (L->nomem || load_map_put(L, &L->kstackmap, hh[0], (uint32_t)(L->nkstackkeys - 1)) < 0)
		return PROF_NONE;
	return e->stack;
}

/*
 * The user stack a kernel stack sits on: where the agent placed it, the user
 * stack at kernel entry (its pcs, down to a frame still live at the sample)
 * over the sample's pcs from drop on; else the sample's own stack.
 */
static uint32_t kernel_place(struct load *L, const struct load_raw *w,
			     const struct cbn_kplace *kp, uint32_t ustack)
{
	uint64_t pcs[CBN_KPLACE_MAX_FRAMES + CBN_MAX_FRAMES];
	uint32_t n, rest;

	if (!kp || kp->nuser == 0 || kp->drop > w->nframes || (w->flags & CBN_SAMPLE_PC_ONLY))
		return ustack;
	rest = w->nframes - kp->drop;
	if (rest > CBN_MAX_FRAMES)
		rest = CBN_MAX_FRAMES;
	n = kp->nuser;
	memcpy(pcs, kp->pc, (size_t)n * 8);
	memcpy(pcs + n, w->pcs + kp->drop, (size_t)rest * 8);
	return load_stack(L, pcs, n + rest, w->ts, 0);
}

int load_kernel_samples(struct load *L, size_t si, const struct load_raw *w, size_t left)
{
	struct profile *p = L->p;
	const struct cbn_kstacks *ks = w->kstacks;
	const struct cbn_kstack *k;
	const struct cbn_kplace *kp = w->kplace;
	struct prof_sample base = p->samples[si];
	unsigned __int128 cum = 0, total = 0;
	uint64_t prev = 0;
	int reuse = w->kweight == w->weight; /* the record itself is all kernel */
	uint32_t j;

	for (j = 0, k = reader_kstack_first(ks); j < ks->nstacks; j++, k = reader_kstack_next(k))
		total += k->count;
	if (total == 0)
		return 0;
	/* Cumulative rounding: the shares add up to kweight exactly, each within
	 * one period of count / total x kweight. */
	for (j = 0, k = reader_kstack_first(ks); j < ks->nstacks;
	     j++, k = reader_kstack_next(k), kp = kp ? reader_kplace_next(kp) : NULL) {
		uint64_t cur, share;
		uint32_t st;
		struct prof_sample *s;

		cum += k->count;
		cur = (uint64_t)((cum * w->kweight + total / 2) / total);
		share = cur - prev;
		prev = cur;
		if (share == 0)
			continue;
		st = kernel_user_stack(L, k, kernel_place(L, w, kp, base.stack));
		if (L->nomem)
			return 1;
		if (reuse) {
			/* the record itself: the kernel's time, still a record */
			s = &p->samples[si];
			s->stack = st;
			s->weight = (uint32_t)share;
			s->flags |= PROF_SAMPLE_KERNEL;
			reuse = 0;
			continue;
		}
		if (load_grow(L, (void **)&p->samples, &L->capsamples, p->nsamples + 1 + left,
			      sizeof(*p->samples)) < 0)
			return 1;
		s = &p->samples[p->nsamples++];
		*s = base;
		s->stack = st;
		s->weight = (uint32_t)share;
		s->flags |= PROF_SAMPLE_KERNEL | PROF_SAMPLE_SPLIT;
	}
	return 1;
}
