/*
 * mem_json.c — the JSON report's "memory" object: the sampling that stands
 * behind the host figures, every memory space (host per process, GPU per
 * device) with its peak and curve, allocation sites and leaks, as
 * docs/report.schema.json documents.  Keys are public API: add, never rename.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "json_keys.h"
#include "json_put.h"
#include "mem_json.h"
#include "memory.h"

static int whole(cJSON *o, const char *key, double v)
{
	return json_put_fnum(o, key, isfinite(v) ? (double)llround(v) : 0);
}

static int boolean(cJSON *o, const char *key, int v)
{
	return cJSON_AddBoolToObject(o, key, v != 0) ? 0 : -ENOMEM;
}

static int null(cJSON *o, const char *key)
{
	return cJSON_AddNullToObject(o, key) ? 0 : -ENOMEM;
}

static const char *kind_name(uint32_t kind)
{
	return kind == MEM_SPACE_GPU ? JK_MEM_KIND_GPU : JK_MEM_KIND_HOST;
}

/* Seconds since the start of the run; null when ts is unknown (0). */
static int seconds(cJSON *o, const char *key, const struct profile *p, uint64_t ts)
{
	if (!ts)
		return null(o, key);
	return json_put_fnum(o, key, ((double)ts - (double)p->start_ns) / 1e9);
}

static int space_timeline(cJSON *o, const struct profile *p, const struct mem_space *s)
{
	cJSON *tl = cJSON_AddObjectToObject(o, "timeline"), *t, *live, *res;

	if (!tl)
		return -ENOMEM;
	t = cJSON_AddArrayToObject(tl, "t_s");
	live = cJSON_AddArrayToObject(tl, "live_bytes");
	res = cJSON_AddArrayToObject(tl, "resident_bytes");
	if (!t || !live || !res)
		return -ENOMEM;
	for (size_t i = 0; i < s->ntimeline; i++) {
		const struct mem_point *pt = &s->timeline[i];
		cJSON *a = cJSON_CreateNumber(((double)pt->ts - (double)p->start_ns) / 1e9);
		cJSON *b = cJSON_CreateNumber((double)pt->live);
		cJSON *c = cJSON_CreateNumber((double)pt->rss);

		if (a)
			cJSON_AddItemToArray(t, a);
		if (b)
			cJSON_AddItemToArray(live, b);
		if (c)
			cJSON_AddItemToArray(res, c);
		if (!a || !b || !c)
			return -ENOMEM;
	}
	return 0;
}

static cJSON *json_space(const struct profile *p, const struct mem_space *s)
{
	cJSON *o = cJSON_CreateObject(), *ap;
	int err = 0;

	if (!o)
		return NULL;
	err |= json_put_str(o, JK_MEM_KIND, kind_name(s->kind));
	err |= json_put_str(o, JK_NAME, s->name);
	if (s->kind == MEM_SPACE_HOST && s->process < p->nprocesses)
		err |= json_put_fnum(o, JK_PID, p->processes[s->process].pid);
	else
		err |= null(o, JK_PID);
	if (s->kind == MEM_SPACE_GPU)
		err |= json_put_fnum(o, JK_MEM_DEVICE, s->device);
	else
		err |= null(o, JK_MEM_DEVICE);
	err |= json_put_fnum(o, JK_MEM_PEAK_BYTES, (double)s->peak);
	err |= seconds(o, "peak_s", p, s->peak_ts);
	err |= boolean(o, JK_MEM_PEAK_EXACT, s->peak_exact);
	if (s->peak_range < p->nranges && p->ranges[s->peak_range].name)
		err |= json_put_str(o, "peak_range", p->ranges[s->peak_range].name);
	else
		err |= null(o, "peak_range");
	err |= json_put_fnum(o, "rss_peak_bytes", (double)s->rss_peak);
	err |= json_put_fnum(o, "reserved_peak_bytes", (double)s->reserved_peak);
	if (s->kind == MEM_SPACE_HOST) {
		err |= json_put_fnum(o, "address_reserved_peak_bytes", (double)s->address_peak);
		err |= boolean(o, "peak_in_windows", s->windowed);
	}
	if (s->total)
		err |= json_put_fnum(o, "total_bytes", (double)s->total);
	else
		err |= null(o, "total_bytes");
	err |= json_put_fnum(o, JK_MEM_LIVE_END_BYTES, (double)s->live_end);
	if (s->kind == MEM_SPACE_GPU)
		err |= json_put_fnum(o, "cached_end_bytes", (double)s->cached_end);
	err |= json_put_fnum(o, JK_MEM_ALLOCS, (double)s->allocs);
	err |= json_put_fnum(o, "frees", (double)s->frees);
	err |= json_put_fnum(o, "alloc_bytes", (double)s->alloc_bytes);
	err |= space_timeline(o, p, s);
	ap = cJSON_AddArrayToObject(o, "at_peak");
	for (size_t i = 0; ap && i < s->nat_peak; i++) {
		cJSON *e = cJSON_CreateObject();

		if (!e) {
			err = 1;
			break;
		}
		cJSON_AddItemToArray(ap, e);
		err |= json_put_fnum(e, JK_MEM_SITE, s->at_peak[i].site);
		err |= whole(e, JK_MEM_BYTES, s->at_peak[i].bytes);
	}
	if (s->kind == MEM_SPACE_HOST) {
		err |= whole(o, "at_peak_other_bytes", s->at_peak_other);
		err |= json_put_fnum(o, "at_peak_other_sites", s->nat_peak_other);
		err |= whole(o, "at_peak_rest_bytes", s->at_peak_rest);
		err |= json_put_fnum(o, "at_peak_rest_sites", s->nat_peak_rest);
	}
	if (err || !ap) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *json_site(const struct profile *p, const struct mem_site *s)
{
	cJSON *o = cJSON_CreateObject();
	int err = 0;

	if (!o)
		return NULL;
	err |= json_put_str(o, JK_MEM_KIND, kind_name(s->kind));
	if (s->kind == MEM_SPACE_GPU)
		err |= json_put_fnum(o, JK_MEM_DEVICE, s->device);
	else
		err |= null(o, JK_MEM_DEVICE);
	err |= json_put_str(o, JK_MEM_FUNCTION, s->func < p->nfuncs ? p->funcs[s->func].name : "");
	err |= json_put_str(o, JK_FILE, s->file);
	err |= json_put_fnum(o, JK_LINE, s->line);
	err |= boolean(o, "inlined", s->inlined);
	err |= whole(o, JK_MEM_BYTES, s->bytes);
	err |= whole(o, JK_MEM_ALLOCS, s->allocs);
	err |= json_put_fnum(o, "records", (double)s->records);
	err |= whole(o, JK_MEM_LIVE_END_BYTES, s->live_end_bytes);
	if (s->kind == MEM_SPACE_GPU)
		err |= boolean(o, "caching_allocator", s->caching);
	err |= whole(o, "live_end_blocks", s->live_end_blocks);
	err |= whole(o, "max_live_bytes", s->max_live);
	err |= boolean(o, "max_live_known", s->max_live_known);
	err |= whole(o, "short_lived", s->short_lived);
	/* a block never freed has no lifetime */
	if (s->median_life_ns)
		err |= json_put_fnum(o, "median_life_ns", (double)s->median_life_ns);
	else
		err |= null(o, "median_life_ns");
	if (s->kind == MEM_SPACE_HOST && s->via < p->nfuncs)
		err |= json_put_str(o, "via", p->funcs[s->via].name);
	else
		err |= null(o, "via");
	if (s->arena)
		err |= json_put_str(o, "arena", s->arena);
	else
		err |= null(o, "arena");
	if (err) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int report_mem_json(const struct analysis *a, cJSON *root)
{
	const struct mem_analysis *m = a->memory;
	const struct profile *p = a->profile;
	cJSON *o, *arr;
	int err = 0;

	if (!m)
		return 0;
	o = cJSON_AddObjectToObject(root, JK_MEMORY);
	if (!o)
		return -ENOMEM;
	err |= json_put_fnum(o, JK_MEM_RATE, (double)m->rate);
	err |= boolean(o, "exact", m->exact);
	err |= json_put_fnum(o, "sampled", (double)m->sampled);
	err |= json_put_fnum(o, "lost", (double)m->lost);
	err |= json_put_fnum(o, "untracked", (double)m->untracked);
	err |= json_put_fnum(o, "no_stack", (double)m->no_stack);
	if (m->refused)
		err |= json_put_str(o, "refused", m->refused);
	else
		err |= null(o, "refused");
	err |= whole(o, "arena_end_bytes", m->arena_end_bytes);
	if (err)
		return -ENOMEM;
	if (!(arr = cJSON_AddArrayToObject(o, JK_MEM_SPACES)))
		return -ENOMEM;
	for (size_t i = 0; i < m->nspaces; i++) {
		cJSON *s = json_space(p, &m->spaces[i]);

		if (!s)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, s);
	}
	if (!(arr = cJSON_AddArrayToObject(o, JK_MEM_SITES)))
		return -ENOMEM;
	for (size_t i = 0; i < m->nsites; i++) {
		cJSON *s = json_site(p, &m->sites[i]);

		if (!s)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, s);
	}
	if (!(arr = cJSON_AddArrayToObject(o, JK_MEM_LEAKS)))
		return -ENOMEM;
	for (size_t i = 0; i < m->nleaks; i++) {
		const struct mem_site *s = m->leaks[i] < m->nsites ? &m->sites[m->leaks[i]] : NULL;
		cJSON *l;

		if (!s)
			continue;
		if (!(l = cJSON_CreateObject()))
			return -ENOMEM;
		cJSON_AddItemToArray(arr, l);
		err |= json_put_fnum(l, JK_MEM_SITE, m->leaks[i]);
		err |= whole(l, JK_MEM_BYTES, s->live_end_bytes);
		err |= whole(l, "blocks", s->live_end_blocks);
	}
	/* The memory rules' findings, as cuda.recommendations has the CUDA ones. */
	if (!(arr = cJSON_AddArrayToObject(o, "recommendations")))
		return -ENOMEM;
	for (size_t i = 0; i < m->nrecos; i++) {
		cJSON *r = cJSON_CreateObject();

		if (!r)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, r);
		err |= json_put_str(r, "id", m->recos[i].id);
		err |= json_put_str(r, "message", m->recos[i].message);
		err |= json_put_str(r, "evidence", m->recos[i].evidence);
	}
	return err ? -ENOMEM : 0;
}
