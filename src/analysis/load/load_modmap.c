/*
 * load_modmap.c — per-process module maps: MODULE_LOAD/UNLOAD records into
 * time-ordered address ranges, so an address resolves to the module loaded
 * there at the time (dlclose and a re-load elsewhere included).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"
#include "load_meta.h"

/* --- module maps ----------------------------------------------------------- */

static int range_cmp(const void *a, const void *b)
{
	const struct load_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void load_modmap_finish(struct load_file *F)
{
	if (F->nranges)
		qsort(F->ranges, F->nranges, sizeof(*F->ranges), range_cmp);
	if (F->nevents)
		qsort(F->events, F->nevents, sizeof(*F->events), util_u64_cmp);
}

/* Number of module events at or before ts: samples in the same epoch see the
 * same set of loaded modules. */
uint32_t load_epoch_of(const struct load_file *F, uint64_t ts)
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
 * the one loaded closest to ts (never a CODE_FILE's view outside its time). */
struct load_mod *load_mod_at(struct load_file *F, uint64_t addr, uint64_t ts)
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
		if (m->alias)
			continue; /* written as mapped: only while it is */
		dist = m->load_ts > ts ? m->load_ts - ts : ts - m->unload_ts;
		if (dist < best_dist) {
			best_dist = dist;
			best = m;
		}
	}
	return best;
}

/* cbottleneck's own libraries, loaded into the program. */
static int mod_ours(const char *path)
{
	const char *b = util_base_name(path);

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
	const char *b = util_base_name(path);
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(b, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

void load_mod_event(struct load *L, const struct reader_rec *r)
{
	struct load_file *F = L->f;
	const struct cbn_rec_module *m = (const void *)r->raw;
	struct load_mod *mod;
	uint32_t i, nx = 0;
	uint64_t *ev = LOAD_PUSH(L, F->events, F->nevents, F->capevents);
	size_t k;

	if (!ev)
		return;
	*ev = m->ts;
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
	mod = LOAD_PUSH(L, F->mods, F->nmods, F->capmods);
	if (!mod)
		return;
	mod->base = m->base;
	mod->load_ts = m->ts;
	mod->unload_ts = UINT64_MAX;
	mod->seq = m->seq;
	mod->path = load_intern(L, r->str);
	if (!mod->path) {
		F->nmods--;
		return;
	}
	mod->sym = sym_module_get(L->sym, mod->path, m->build_id_len ? m->build_id : NULL,
				  m->build_id_len);
	mod->ours = mod_ours(mod->path);
	mod->neutral = mod_neutral(mod->path);
	mod->alias = 0;
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
		rg = LOAD_PUSH(L, F->ranges, F->nranges, F->capranges);
		if (!rg)
			return;
		rg->start = start;
		rg->end = start + s->memsz;
		rg->seg_vaddr = s->vaddr;
		rg->seg_off = s->offset;
		rg->mod = (uint32_t)(F->nmods - 1);
		if (s->memsz > F->maxlen)
			F->maxlen = s->memsz;
	}
}


/* --- a module's code mapped again by the program --------------------------- */

void load_codefile_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_code_file *c = (const void *)r->raw;
	struct load_file *F = L->f;
	struct load_codefile *cf;
	char name[PATH_MAX];
	const char *path;

	if (c->len == 0 || c->start + c->len < c->start || c->name_len == 0 ||
	    c->name_len >= sizeof(name))
		return;
	memcpy(name, c->name, c->name_len);
	name[c->name_len] = '\0';
	path = load_intern(L, name);
	cf = path ? LOAD_PUSH(L, F->codefiles, F->ncodefiles, F->capcodefiles) : NULL;
	if (!cf)
		return;
	cf->ts = c->ts;
	cf->start = c->start;
	cf->len = c->len;
	cf->off = c->offset;
	cf->path = path;
}

/* The same file: the same path, or the same file once links are resolved
 * (a module loaded by a link's name, the mapping's path read from its fd). */
static int codefile_same(const char *mod, const char *path, const char *real)
{
	char buf[PATH_MAX];

	if (mod == path)
		return 1;
	return real && realpath(mod, buf) && strcmp(buf, real) == 0;
}

/* The range of an executable segment of a module of cf's file, alive at its
 * time, that holds its offset; -1 when none does. */
static long codefile_range(const struct load_file *F, const struct load_codefile *cf)
{
	char real[PATH_MAX];
	const char *rp = realpath(cf->path, real) ? real : NULL;
	size_t i;

	for (i = 0; i < F->nranges; i++) {
		const struct load_range *rg = &F->ranges[i];
		const struct load_mod *m = &F->mods[rg->mod];

		if (cf->off < rg->seg_off || cf->off - rg->seg_off >= rg->end - rg->start)
			continue;
		if (m->load_ts > cf->ts || cf->ts >= m->unload_ts)
			continue;
		if (codefile_same(m->path, cf->path, rp))
			return (long)i;
	}
	return -1;
}

/* When a GONE region (load_jit_rec) after ts first overlaps [start, end). */
static uint64_t codefile_gone(const struct load_file *F, uint64_t start, uint64_t end, uint64_t ts)
{
	uint64_t gone = UINT64_MAX;
	size_t i;

	for (i = 0; i < F->njitevs; i++) {
		const struct load_jitev *e = &F->jitevs[i];

		if (e->gone && e->ts >= ts && e->ts < gone && e->start < end &&
		    start < e->start + e->len)
			gone = e->ts;
	}
	return gone;
}

/*
 * Each CODE_FILE of a module's file becomes a module of its own: a copy of
 * that module (the same symbols) whose base puts the mapping's offset where
 * the module's segment has it, alive from the mapping until a GONE over it
 * or the module's unload.  A pc there is then that module's code, named and
 * symbolized as such.  Before load_modmap_finish sorts the ranges.
 */
void load_codefile_apply(struct load *L)
{
	struct load_file *F = L->f;
	size_t i;

	for (i = 0; i < F->ncodefiles && !L->nomem; i++) {
		const struct load_codefile *cf = &F->codefiles[i];
		long k = codefile_range(F, cf);
		struct load_range seg, *rg;
		struct load_mod *mod;
		uint64_t vaddr, len, *ev;

		if (k < 0)
			continue;
		seg = F->ranges[k];
		vaddr = seg.seg_vaddr + (cf->off - seg.seg_off);
		if (cf->start - vaddr == F->mods[seg.mod].base)
			continue; /* the module's own mapping (an attached run records all) */
		len = seg.end - seg.start - (cf->off - seg.seg_off);
		if (len > cf->len)
			len = cf->len;
		mod = LOAD_PUSH(L, F->mods, F->nmods, F->capmods);
		if (!mod)
			return;
		*mod = F->mods[seg.mod];
		mod->base = cf->start - vaddr;
		mod->load_ts = cf->ts;
		mod->alias = 1;
		if (mod->unload_ts > codefile_gone(F, cf->start, cf->start + len, cf->ts))
			mod->unload_ts = codefile_gone(F, cf->start, cf->start + len, cf->ts);
		rg = LOAD_PUSH(L, F->ranges, F->nranges, F->capranges);
		ev = rg ? LOAD_PUSH(L, F->events, F->nevents, F->capevents) : NULL;
		if (!ev)
			return;
		rg->start = cf->start;
		rg->end = cf->start + len;
		rg->seg_vaddr = vaddr;
		rg->seg_off = cf->off;
		rg->mod = (uint32_t)(F->nmods - 1);
		if (len > F->maxlen)
			F->maxlen = len;
		*ev = cf->ts;
	}
}
