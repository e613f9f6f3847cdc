/*
 * pprof.c — --pprof FILE: the CPU samples as a gzipped profile.proto
 * (github.com/google/pprof proto/profile.proto), hand-encoded: varints and
 * length-delimited fields only.  `go tool pprof -top FILE` and speedscope read it.
 * With host memory data the profile also carries pprof's heap sample types
 * (alloc_objects, alloc_space, inuse_objects, inuse_space): CPU samples have 0
 * there and allocation samples 0 for CPU; the default stays cpu.  With
 * off-CPU data (--off-cpu) two more, offcpu and wall (nanoseconds): a CPU
 * sample's wall is its CPU time, an off-CPU stretch's both its weight.
 */
#include "util.h"
#include "analysis.h"
#include "export.h"
#include "gz.h"
#include "mem_samples.h"
#include "wait.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* profile.proto field numbers */
enum {
	PB_PROFILE_SAMPLE_TYPE = 1,
	PB_PROFILE_SAMPLE = 2,
	PB_PROFILE_MAPPING = 3,
	PB_PROFILE_LOCATION = 4,
	PB_PROFILE_FUNCTION = 5,
	PB_PROFILE_STRING_TABLE = 6,
	PB_PROFILE_TIME_NANOS = 9,
	PB_PROFILE_DURATION_NANOS = 10,
	PB_PROFILE_PERIOD_TYPE = 11,
	PB_PROFILE_PERIOD = 12,
	PB_PROFILE_COMMENT = 13,
	PB_PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	PB_VALUETYPE_TYPE = 1,
	PB_VALUETYPE_UNIT = 2,
	PB_SAMPLE_LOCATION_ID = 1,
	PB_SAMPLE_VALUE = 2,
	PB_SAMPLE_LABEL = 3,
	PB_LABEL_KEY = 1,
	PB_LABEL_STR = 2,
	PB_LABEL_NUM = 3,
	PB_MAPPING_ID = 1,
	PB_MAPPING_FILENAME = 5,
	PB_MAPPING_HAS_FUNCTIONS = 7,
	PB_MAPPING_HAS_FILENAMES = 8,
	PB_MAPPING_HAS_LINE_NUMBERS = 9,
	PB_MAPPING_HAS_INLINE_FRAMES = 10,
	PB_LOCATION_ID = 1,
	PB_LOCATION_MAPPING_ID = 2,
	PB_LOCATION_ADDRESS = 3,
	PB_LOCATION_LINE = 4,
	PB_LINE_FUNCTION_ID = 1,
	PB_LINE_LINE = 2,
	PB_FUNCTION_ID = 1,
	PB_FUNCTION_NAME = 2,
	PB_FUNCTION_SYSTEM_NAME = 3,
	PB_FUNCTION_FILENAME = 4,
	PB_FUNCTION_START_LINE = 5,
};

/* A growing byte buffer; oom is sticky and checked once at the end. */
struct pb {
	uint8_t *p;
	size_t n, cap;
	int oom;
};

static void pb_raw(struct pb *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->n + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);

		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(b, t, n);
}

/* Varint field; proto3 leaves zero values out. */
static void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(b, (uint64_t)field << 3);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned field, const void *d, size_t n)
{
	pb_varint(b, (uint64_t)field << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, d, n);
}

/* Append a nested message from sub, then empty sub for reuse. */
static void pb_msg(struct pb *b, unsigned field, struct pb *sub)
{
	if (sub->oom)
		b->oom = 1;
	pb_bytes(b, field, sub->p, sub->n);
	sub->n = 0;
}

/* --- string table -------------------------------------------------------- */

struct strtab {
	const char **s;
	size_t n, cap;
	struct util_map index;
};

struct str_probe {
	const struct strtab *t;
	const char *s;
};

static int str_eq(const void *ctx, uint32_t v)
{
	const struct str_probe *k = ctx;

	return strcmp(k->t->s[v], k->s) == 0;
}

/* Index of s in the table, added when new; -1 on OOM.  s must outlive the
 * table (profile strings and literals do). */
static int64_t strtab_id(struct strtab *t, const char *s)
{
	struct str_probe k = {t, s ? s : ""};
	uint64_t h = util_fnv1a_str(k.s, UTIL_FNV_INIT);
	uint32_t v = util_map_find(&t->index, h, str_eq, &k);

	if (v != UINT32_MAX)
		return v;
	if (t->n >= UINT32_MAX - 1 || util_grow((void **)&t->s, &t->cap, t->n, sizeof(*t->s)) < 0 ||
	    util_map_put(&t->index, h, (uint32_t)t->n) < 0)
		return -1;
	t->s[t->n] = k.s;
	return (int64_t)t->n++;
}

/* --- locations ----------------------------------------------------------- */

/* A location is one pc with its inline chain: frames f[0 .. n) of a stack
 * (analysis/cpu/stackw.h), innermost first, which is the order Location.line wants
 * ("the last entry represents the caller into which the preceding entries
 * were inlined"). */
struct loc {
	const struct prof_frame *f;
	uint32_t n;
};

struct loctab {
	struct loc *v;
	size_t n, cap;
	struct util_map index;
};

struct loc_probe {
	const struct loctab *t;
	const struct prof_frame *f;
	uint32_t n;
};

static uint64_t loc_hash(const struct prof_frame *fr, uint32_t n)
{
	uint64_t h = util_fnv1a(&fr[0].addr, sizeof(uint64_t), UTIL_FNV_INIT);

	for (uint32_t i = 0; i < n; i++) {
		const struct prof_frame *f = &fr[i];

		h = util_fnv1a(&f->func, sizeof(f->func), h);
		h = util_fnv1a(&f->line, sizeof(f->line), h);
	}
	return h;
}

static int loc_eq(const void *ctx, uint32_t v)
{
	const struct loc_probe *k = ctx;
	const struct loc *l = &k->t->v[v];

	if (l->n != k->n || l->f[0].addr != k->f[0].addr)
		return 0;
	for (uint32_t i = 0; i < k->n; i++) {
		const struct prof_frame *a = &l->f[i], *b = &k->f[i];

		if (a->func != b->func || a->line != b->line)
			return 0;
	}
	return 1;
}

/* Location id (1-based) of frames fr[0 .. n); 0 on OOM. */
static uint64_t loctab_id(struct loctab *t, const struct prof_frame *fr, uint32_t n)
{
	struct loc_probe k = {t, fr, n};
	uint64_t h = loc_hash(fr, n);
	uint32_t v = util_map_find(&t->index, h, loc_eq, &k);

	if (v != UINT32_MAX)
		return (uint64_t)v + 1;
	if (t->n >= UINT32_MAX - 1 || util_grow((void **)&t->v, &t->cap, t->n, sizeof(*t->v)) < 0 ||
	    util_map_put(&t->index, h, (uint32_t)t->n) < 0)
		return 0;
	t->v[t->n++] = (struct loc){fr, n};
	return t->n;
}

/* Length of the inline group starting at frame i of a stack of end frames:
 * inlined frames up to and including the first physical one, all of the
 * same pc. */
static uint32_t loc_group(const struct prof_frame *fr, uint32_t i, uint32_t end)
{
	uint32_t n = 1;

	while (i + n - 1 < end - 1 && fr[i + n - 1].inlined && fr[i + n].addr == fr[i].addr)
		n++;
	return n;
}

/* --- samples ------------------------------------------------------------- */

/* What one Sample message needs while the profile is encoded. */
struct pprof_ctx {
	const struct profile *p;
	struct strtab *st;
	struct loctab *lt;
	struct pb *sub, *sub2, *ids;
	uint8_t *func_used;
	int64_t s_thread, s_tid, s_pid, s_cpu, s_ns;   /* string ids */
	size_t nvalues;          /* values per Sample: 2, + 4 heap, + 2 off-CPU */
};

/* Append one Sample of stack and thread with values[0..n) to out; 0 or
 * -ENOMEM. */
static int pprof_sample(struct pprof_ctx *x, struct pb *out, uint32_t stack, uint32_t thread,
			const uint64_t *values, size_t n)
{
	const struct profile *p = x->p;

	uint32_t end;
	const struct prof_frame *fr = stackw_frames(p, stack, &end);

	x->ids->n = 0;
	for (uint32_t f = 0; f < end;) {
		uint32_t nf = loc_group(fr, f, end);
		uint64_t id = loctab_id(x->lt, &fr[f], nf);

		if (!id)
			return -ENOMEM;
		pb_varint(x->ids, id);
		for (uint32_t k = 0; k < nf; k++)
			if (fr[f + k].func < p->nfuncs)
				x->func_used[fr[f + k].func] = 1;
		f += nf;
	}
	if (x->ids->n)
		pb_msg(x->sub, PB_SAMPLE_LOCATION_ID, x->ids); /* packed, leaf first */
	for (size_t k = 0; k < n; k++)
		pb_varint(x->ids, values[k]);
	pb_msg(x->sub, PB_SAMPLE_VALUE, x->ids);
	if (thread < p->nthreads) {
		const struct prof_thread *t = &p->threads[thread];
		uint32_t pid = t->process < p->nprocesses ? p->processes[t->process].pid : 0;

		if (t->name && *t->name) {
			int64_t v = strtab_id(x->st, t->name);

			if (v < 0)
				return -ENOMEM;
			pb_uint(x->sub2, PB_LABEL_KEY, (uint64_t)x->s_thread);
			pb_uint(x->sub2, PB_LABEL_STR, (uint64_t)v);
			pb_msg(x->sub, PB_SAMPLE_LABEL, x->sub2);
		}
		pb_uint(x->sub2, PB_LABEL_KEY, (uint64_t)x->s_tid);
		pb_uint(x->sub2, PB_LABEL_NUM, t->tid);
		pb_msg(x->sub, PB_SAMPLE_LABEL, x->sub2);
		pb_uint(x->sub2, PB_LABEL_KEY, (uint64_t)x->s_pid);
		pb_uint(x->sub2, PB_LABEL_NUM, pid);
		pb_msg(x->sub, PB_SAMPLE_LABEL, x->sub2);
	}
	pb_msg(out, PB_PROFILE_SAMPLE, x->sub);
	return 0;
}

static int cmp_mem_sample(const void *a, const void *b)
{
	const struct mem_sample *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}

/* The heap samples: host allocations merged per (stack, thread), values
 * after the two CPU ones (which are 0 here).  Sorted in a copy: the
 * analysis' order is every writer's. */
static int pprof_mem_samples(struct pprof_ctx *x, const struct analysis *a, struct pb *out)
{
	size_t n = a->nmem_samples;
	struct mem_sample *ms = n ? util_reallocarray(NULL, n, sizeof(*ms)) : NULL;
	int rc = 0;

	if (n && !ms)
		return -ENOMEM;
	if (n) {
		memcpy(ms, a->mem_samples, n * sizeof(*ms));
		qsort(ms, n, sizeof(*ms), cmp_mem_sample);
	}
	for (size_t i = 0; i < n && !rc;) {
		double v[4] = {0};
		uint64_t values[8] = {0};
		size_t j = i;

		for (; j < n && ms[j].stack == ms[i].stack && ms[j].thread == ms[i].thread; j++) {
			v[0] += ms[j].objects;
			v[1] += ms[j].bytes;
			v[2] += ms[j].live ? ms[j].objects : 0;
			v[3] += ms[j].live ? ms[j].bytes : 0;
		}
		for (int k = 0; k < 4; k++)
			values[2 + k] = (uint64_t)llround(v[k]);
		rc = pprof_sample(x, out, ms[i].stack, ms[i].thread, values, x->nvalues);
		i = j;
	}
	free(ms);
	return rc;
}

/* The off-CPU stretches (--off-cpu), one Sample each: offcpu and wall
 * nanoseconds, the last two values (the others 0). */
static int pprof_offcpu_samples(struct pprof_ctx *x, const struct analysis *a, struct pb *out)
{
	size_t n = a->wait ? a->wait->nstretches : 0;

	for (size_t i = 0; i < n; i++) {
		const struct wait_stretch *o = &a->wait->stretches[i];
		uint64_t values[8] = {0};

		values[x->nvalues - 2] = values[x->nvalues - 1] = o->weight_ns;
		if (pprof_sample(x, out, o->stack, o->thread, values, x->nvalues) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Fixed strings first, so [0] is "" as the format requires; then
 * sample_type [samples count] [cpu nanoseconds], with memory data Go's heap
 * types after them, with off-CPU data time off the CPU and wall time (on +
 * off), as async-profiler's wall mode: a CPU sample's wall is its CPU time. */
static int pprof_sample_types(struct pprof_ctx *x, struct pb *out, int memory, int offcpu)
{
	static const char *const heap[4][2] = {
		{"alloc_objects", "count"}, {"alloc_space", "bytes"},
		{"inuse_objects", "count"}, {"inuse_space", "bytes"},
	};
	struct strtab *st = x->st;
	struct pb *sub = x->sub;
	int64_t s_samples, s_count;

	if (strtab_id(st, "") != 0)
		return -ENOMEM;
	s_samples = strtab_id(st, "samples");
	s_count = strtab_id(st, "count");
	x->s_cpu = strtab_id(st, "cpu");
	x->s_ns = strtab_id(st, "nanoseconds");
	x->s_thread = strtab_id(st, "thread");
	x->s_tid = strtab_id(st, "tid");
	x->s_pid = strtab_id(st, "pid");
	if (s_samples < 0 || s_count < 0 || x->s_cpu < 0 || x->s_ns < 0 || x->s_thread < 0 ||
	    x->s_tid < 0 || x->s_pid < 0)
		return -ENOMEM;
	pb_uint(sub, PB_VALUETYPE_TYPE, (uint64_t)s_samples);
	pb_uint(sub, PB_VALUETYPE_UNIT, (uint64_t)s_count);
	pb_msg(out, PB_PROFILE_SAMPLE_TYPE, sub);
	pb_uint(sub, PB_VALUETYPE_TYPE, (uint64_t)x->s_cpu);
	pb_uint(sub, PB_VALUETYPE_UNIT, (uint64_t)x->s_ns);
	pb_msg(out, PB_PROFILE_SAMPLE_TYPE, sub);
	for (int k = 0; memory && k < 4; k++) {
		int64_t ty = strtab_id(st, heap[k][0]), un = strtab_id(st, heap[k][1]);

		if (ty < 0 || un < 0)
			return -ENOMEM;
		pb_uint(sub, PB_VALUETYPE_TYPE, (uint64_t)ty);
		pb_uint(sub, PB_VALUETYPE_UNIT, (uint64_t)un);
		pb_msg(out, PB_PROFILE_SAMPLE_TYPE, sub);
	}
	if (offcpu) {
		int64_t off = strtab_id(st, "offcpu"), wall = strtab_id(st, "wall");

		if (off < 0 || wall < 0)
			return -ENOMEM;
		pb_uint(sub, PB_VALUETYPE_TYPE, (uint64_t)off);
		pb_uint(sub, PB_VALUETYPE_UNIT, (uint64_t)x->s_ns);
		pb_msg(out, PB_PROFILE_SAMPLE_TYPE, sub);
		pb_uint(sub, PB_VALUETYPE_TYPE, (uint64_t)wall);
		pb_uint(sub, PB_VALUETYPE_UNIT, (uint64_t)x->s_ns);
		pb_msg(out, PB_PROFILE_SAMPLE_TYPE, sub);
	}
	return 0;
}

/* The CPU samples, merged per (stack, thread); with off-CPU data their CPU
 * time is their wall time too. */
static int pprof_cpu_samples(struct pprof_ctx *x, const struct analysis *a, struct pb *out,
			     int offcpu)
{
	struct stackw_thread *v;
	size_t n;
	int rc = 0;

	if (stackw_by_thread(a, &v, &n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t values[8] = {0};

		values[0] = v[i].weight;
		values[1] = v[i].ns;
		if (offcpu)
			values[x->nvalues - 1] = values[1];
		rc = pprof_sample(x, out, v[i].stack, v[i].thread, values, x->nvalues) < 0 ? -ENOMEM : 0;
	}
	free(v);
	return rc;
}

/* Mappings: one per module (we have names, not address ranges), the main
 * executable first, as profile.proto expects.  map_of_module gets each
 * function's mapping id (0: none). */
static int pprof_mappings(struct pprof_ctx *x, struct pb *out, uint32_t *map_of_module)
{
	const struct profile *p = x->p;
	const char **modules = calloc(p->nfuncs + 2, sizeof(*modules));
	size_t nmodules = 0;
	int rc = 0;

	if (!modules)
		return -ENOMEM;
	if (p->nprocesses && p->processes[0].exe && *p->processes[0].exe) {
		const char *exe = strrchr(p->processes[0].exe, '/');

		modules[nmodules++] = exe ? exe + 1 : p->processes[0].exe;
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		const char *m = p->funcs[i].module;
		size_t k;

		if (!x->func_used[i] || !m || !*m)
			continue;
		for (k = 0; k < nmodules && strcmp(modules[k], m); k++)
			;
		if (k == nmodules)
			modules[nmodules++] = m;
		map_of_module[i] = (uint32_t)k + 1;
	}
	for (size_t k = 0; k < nmodules && !rc; k++) {
		int64_t fn = strtab_id(x->st, modules[k]);

		if (fn < 0) {
			rc = -ENOMEM;
			break;
		}
		pb_uint(x->sub, PB_MAPPING_ID, k + 1);
		pb_uint(x->sub, PB_MAPPING_FILENAME, (uint64_t)fn);
		/* already symbolized: pprof must not try to look the binary up */
		pb_uint(x->sub, PB_MAPPING_HAS_FUNCTIONS, 1);
		pb_uint(x->sub, PB_MAPPING_HAS_FILENAMES, 1);
		pb_uint(x->sub, PB_MAPPING_HAS_LINE_NUMBERS, 1);
		pb_uint(x->sub, PB_MAPPING_HAS_INLINE_FRAMES, 1);
		pb_msg(out, PB_PROFILE_MAPPING, x->sub);
	}
	free(modules);
	return rc;
}

/* Locations (the mapping is the module of the physical, outermost, frame),
 * then the functions some location uses, id = index + 1. */
static int pprof_locations(struct pprof_ctx *x, struct pb *out, const uint32_t *map_of_module)
{
	const struct profile *p = x->p;

	for (size_t i = 0; i < x->lt->n; i++) {
		const struct loc *l = &x->lt->v[i];
		uint32_t phys = l->f[l->n - 1].func;

		pb_uint(x->sub, PB_LOCATION_ID, i + 1);
		if (phys < p->nfuncs)
			pb_uint(x->sub, PB_LOCATION_MAPPING_ID, map_of_module[phys]);
		pb_uint(x->sub, PB_LOCATION_ADDRESS, l->f[0].addr);
		for (uint32_t k = 0; k < l->n; k++) {
			const struct prof_frame *f = &l->f[k];

			if (f->func < p->nfuncs)
				pb_uint(x->sub2, PB_LINE_FUNCTION_ID, (uint64_t)f->func + 1);
			pb_uint(x->sub2, PB_LINE_LINE, f->line);
			pb_msg(x->sub, PB_LOCATION_LINE, x->sub2);
		}
		pb_msg(out, PB_PROFILE_LOCATION, x->sub);
	}
	for (size_t i = 0; i < p->nfuncs; i++) {
		const struct prof_func *fn = &p->funcs[i];
		int64_t name, file;

		if (!x->func_used[i])
			continue;
		name = strtab_id(x->st, fn->name);
		file = strtab_id(x->st, fn->file);
		if (name < 0 || file < 0)
			return -ENOMEM;
		pb_uint(x->sub, PB_FUNCTION_ID, i + 1);
		pb_uint(x->sub, PB_FUNCTION_NAME, (uint64_t)name);
		pb_uint(x->sub, PB_FUNCTION_SYSTEM_NAME, (uint64_t)name);
		pb_uint(x->sub, PB_FUNCTION_FILENAME, (uint64_t)file);
		pb_uint(x->sub, PB_FUNCTION_START_LINE, fn->line);
		pb_msg(out, PB_PROFILE_FUNCTION, x->sub);
	}
	return 0;
}

/* The command line as a comment, the string table, then start time,
 * duration and period. */
static int pprof_trailer(struct pprof_ctx *x, struct pb *out)
{
	const struct profile *p = x->p;
	size_t len = 1;
	char *cmd, *d;

	for (char **a = p->argv; a && *a; a++)
		len += strlen(*a) + 1;
	cmd = d = malloc(len);
	if (!cmd)
		return -ENOMEM;
	*d = '\0';
	for (char **a = p->argv; a && *a; a++)
		d += sprintf(d, "%s%s", a == p->argv ? "" : " ", *a);
	if (*cmd) {
		/* the table keeps the pointer: encode the table before freeing */
		int64_t c = strtab_id(x->st, cmd);

		if (c < 0) {
			free(cmd);
			return -ENOMEM;
		}
		pb_uint(out, PB_PROFILE_COMMENT, (uint64_t)c);
	}
	for (size_t i = 0; i < x->st->n; i++)
		pb_bytes(out, PB_PROFILE_STRING_TABLE, x->st->s[i], strlen(x->st->s[i]));
	free(cmd);
	/* when the run started, wall clock (the earliest image's agent start);
	 * left out when unknown */
	pb_uint(out, PB_PROFILE_TIME_NANOS, p->start_real_ns);
	pb_uint(out, PB_PROFILE_DURATION_NANOS, p->wall_ns);
	pb_uint(x->sub, PB_VALUETYPE_TYPE, (uint64_t)x->s_cpu);
	pb_uint(x->sub, PB_VALUETYPE_UNIT, (uint64_t)x->s_ns);
	pb_msg(out, PB_PROFILE_PERIOD_TYPE, x->sub);
	pb_uint(out, PB_PROFILE_PERIOD, p->period_ns);
	pb_uint(out, PB_PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)x->s_cpu);
	return 0;
}

static int pprof_encode(const struct analysis *a, struct pb *out)
{
	const struct profile *p = a->profile;
	struct strtab st = {0};
	struct loctab lt = {0};
	struct pb sub = {0}, sub2 = {0}, ids = {0};
	uint32_t *map_of_module = NULL;
	int memory = export_has_memory(a), offcpu = export_has_offcpu(a);
	struct pprof_ctx x = {.p = p, .st = &st, .lt = &lt, .sub = &sub, .sub2 = &sub2, .ids = &ids,
			      .nvalues = 2 + (memory ? 4 : 0) + (offcpu ? 2 : 0)};
	int rc = -ENOMEM;

	x.func_used = calloc(p->nfuncs + 1, 1);
	map_of_module = calloc(p->nfuncs + 1, sizeof(*map_of_module));
	if (!x.func_used || !map_of_module || pprof_sample_types(&x, out, memory, offcpu) < 0 ||
	    pprof_cpu_samples(&x, a, out, offcpu) < 0 ||
	    (memory && pprof_mem_samples(&x, a, out) < 0) ||
	    (offcpu && pprof_offcpu_samples(&x, a, out) < 0) ||
	    pprof_mappings(&x, out, map_of_module) < 0 ||
	    pprof_locations(&x, out, map_of_module) < 0 || pprof_trailer(&x, out) < 0)
		goto out;
	rc = out->oom || sub.oom || sub2.oom || ids.oom ? -ENOMEM : 0;
out:
	free(st.s);
	util_map_free(&st.index);
	free(lt.v);
	util_map_free(&lt.index);
	free(sub.p);
	free(sub2.p);
	free(ids.p);
	free(x.func_used);
	free(map_of_module);
	return rc;
}

int export_pprof(const struct analysis *a, const char *path, char *err, size_t errlen)
{
	struct pb b = {0};
	struct gz_file *f = NULL;
	int rc;

	rc = pprof_encode(a, &b);
	if (rc) {
		snprintf(err, errlen, "cannot build pprof profile %s: out of memory", path);
		goto out;
	}
	/* profile.proto: "On-disk, the serialized proto must be gzip-compressed",
	 * whatever the file is called */
	rc = gz_open(&f, path, 1);
	if (rc) {
		snprintf(err, errlen,
		         "cannot create %s: %s; check the directory exists and is writable", path,
		         strerror(-rc));
		goto out;
	}
	gz_write(f, b.p, b.n);
	rc = gz_close(f);
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
out:
	free(b.p);
	return rc ? -1 : 0;
}
