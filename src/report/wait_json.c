/*
 * wait_json.c — the JSON report's "waiting" object (schema_version 4): the
 * CPU overview, the shares of thread time, off-CPU time by kind, the verdict,
 * the critical thread, every thread, the off-CPU sites, the contended locks,
 * the wall-clock functions and the CPU recommendations, as
 * docs/report.schema.json documents.  Keys are public API: add, never rename.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "json_keys.h"
#include "json_put.h"
#include "wait.h"
#include "wait_report.h"

#define WAIT_JSON_FUNCS 50       /* wall_functions[]: the heaviest this many */

static int str_or_null(cJSON *o, const char *key, const char *v)
{
	if (!v)
		return cJSON_AddNullToObject(o, key) ? 0 : -ENOMEM;
	return cJSON_AddStringToObject(o, key, v) ? 0 : -ENOMEM;
}

static const char *fname(const struct profile *p, uint32_t f)
{
	return f < p->nfuncs && p->funcs[f].name ? p->funcs[f].name : "";
}

static const char *tname(const struct profile *p, uint32_t th)
{
	return th < p->nthreads && p->threads[th].name ? p->threads[th].name : "";
}

static double tid(const struct profile *p, uint32_t th)
{
	return th < p->nthreads ? (double)p->threads[th].tid : 0;
}

/* {"other": ns, "futex": ns, ...}: every kind, RUNQ as "runnable". */
static cJSON *kinds(const uint64_t *ns)
{
	cJSON *o = cJSON_CreateObject();
	int k, err = 0;

	if (!o)
		return NULL;
	for (k = 0; k < CBN_OFF_NKINDS; k++)
		err |= json_put_fnum(o, wait_kind_name(k), (double)ns[k]);
	if (err) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int attach(cJSON *parent, const char *key, cJSON *item)
{
	if (!item)
		return -ENOMEM;
	cJSON_AddItemToObject(parent, key, item);
	return 0;
}

/* Append a new object to arr; NULL on failure. */
static cJSON *add_obj(cJSON *arr)
{
	cJSON *o = cJSON_CreateObject();

	if (o && !cJSON_AddItemToArray(arr, o)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static int overview(cJSON *o, const struct wait_analysis *w)
{
	cJSON *act, *sh, *cpu;
	int a, err = 0;

	err |= cJSON_AddBoolToObject(o, JK_WAIT_OFFCPU, w->offcpu != 0) ? 0 : -ENOMEM;
	err |= json_put_fnum(o, "rate_hz", w->rate_hz);
	err |= json_put_fnum(o, JK_WALL_NS, (double)w->wall_ns);
	err |= json_put_fnum(o, "span_ns", (double)w->span_ns);
	err |= cJSON_AddBoolToObject(o, "windowed", w->windowed != 0) ? 0 : -ENOMEM;
	err |= json_put_fnum(o, "thread_ns", (double)w->thread_ns);
	err |= json_put_fnum(o, JK_CPU_NS, (double)w->cpu_ns);
	err |= json_put_fnum(o, JK_WAIT_OFF_NS, (double)w->off_ns);
	err |= json_put_fnum(o, "blocked_est_ns", (double)w->blocked_est_ns);
	err |= json_put_fnum(o, "profiler_ns", (double)w->profiler_ns);
	err |= json_put_fnum(o, "threads", w->threads);
	err |= json_put_fnum(o, "busy_threads", w->busy_threads);
	err |= json_put_fnum(o, "busy_at_once", w->busy_at_once);
	err |= json_put_fnum(o, "cpus", w->cpus);
	err |= json_put_fnum(o, "cores_used", w->cores_used);
	err |= json_put_fnum(o, JK_WAIT_EFFICIENCY, w->efficiency);
	if (!(act = cJSON_AddObjectToObject(o, "activities")) ||
	    !(sh = cJSON_AddObjectToObject(o, "shares")) ||
	    !(cpu = cJSON_AddObjectToObject(o, "cpu_shares")))
		return -ENOMEM;
	for (a = 0; a < WAIT_ACT_N; a++) {
		err |= json_put_fnum(act, wait_activity_name(a), (double)w->act_ns[a]);
		err |= json_put_fnum(sh, wait_activity_name(a), w->cpu_share[a]);
		err |= json_put_fnum(cpu, wait_activity_name(a), w->of_cpu[a]);
	}
	err |= json_put_fnum(sh, "blocked", w->blocked_share);
	err |= json_put_fnum(sh, "children", w->child_share);
	err |= json_put_fnum(sh, "runnable", w->runq_share);
	err |= json_put_fnum(sh, "not_seen", w->other_share);
	err |= json_put_fnum(sh, "profiler", w->profiler_share);
	err |= attach(o, "off_cpu", kinds(w->kind_ns));
	return err ? -ENOMEM : 0;
}

static int verdict(cJSON *o, const struct profile *p, const struct wait_analysis *w)
{
	cJSON *c;
	int err = 0;

	err |= json_put_str(o, "verdict", wait_verdict_name(w->verdict));
	err |= str_or_null(o, "verdict_text", w->verdict_text);
	if (w->critical == PROF_NONE || w->critical >= p->nthreads)
		return err | (cJSON_AddNullToObject(o, "critical") ? 0 : -ENOMEM);
	if (!(c = cJSON_AddObjectToObject(o, "critical")))
		return -ENOMEM;
	err |= json_put_fnum(c, "tid", tid(p, w->critical));
	err |= json_put_str(c, "name", tname(p, w->critical));
	err |= json_put_fnum(c, "share", w->critical_share);
	err |= json_put_fnum(c, "waiters", w->critical_waiters);
	return err ? -ENOMEM : 0;
}

static int per_thread(cJSON *o, const struct profile *p, const struct wait_analysis *w)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "per_thread"), *e;
	size_t i;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < w->nthreads_v && !err; i++) {
		const struct wait_thread *th = &w->threads_v[i];

		if (!(e = add_obj(arr)))
			return -ENOMEM;
		err |= json_put_fnum(e, "tid", tid(p, th->thread));
		err |= json_put_str(e, "name", tname(p, th->thread));
		err |= json_put_fnum(e, JK_WALL_NS, (double)th->wall_ns);
		err |= json_put_fnum(e, JK_CPU_NS, (double)th->cpu_ns);
		err |= json_put_fnum(e, "spin_ns", (double)th->act_ns[WAIT_ACT_SPIN]);
		err |= json_put_fnum(e, JK_WAIT_OFF_NS, (double)th->off_ns);
		err |= attach(e, "off_cpu", kinds(th->kind_ns));
		err |= json_put_fnum(e, "lock_wait_ns", (double)th->lock_wait_ns);
		err |= json_put_fnum(e, "held_for_ns", (double)th->held_for_ns);
		err |= json_put_fnum(e, "busy", th->busy);
	}
	return err ? -ENOMEM : 0;
}

static int sites(cJSON *o, const struct profile *p, const struct wait_analysis *w)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "sites"), *e;
	size_t i;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < w->nsites && !err; i++) {
		const struct wait_site *s = &w->sites[i];

		if (!(e = add_obj(arr)))
			return -ENOMEM;
		err |= json_put_str(e, JK_WAIT_FUNCTION, fname(p, s->func));
		err |= json_put_str(e, JK_FILE, s->file);
		err |= json_put_fnum(e, JK_LINE, s->line);
		err |= json_put_str(e, "call", fname(p, s->call));
		err |= json_put_str(e, "kind", wait_kind_name((int)s->kind));
		err |= json_put_fnum(e, "ns", (double)s->ns);
		err |= json_put_fnum(e, "threads", s->nthreads);
	}
	return err ? -ENOMEM : 0;
}

static int locks(cJSON *o, const struct profile *p, const struct wait_analysis *w)
{
	cJSON *arr = cJSON_AddArrayToObject(o, JK_WAIT_LOCKS), *e;
	char addr[32];
	size_t i;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < w->nlocks && !err; i++) {
		const struct wait_lock *l = &w->locks[i];
		int known = l->holder != PROF_NONE && l->holder < p->nthreads;

		if (!(e = add_obj(arr)))
			return -ENOMEM;
		snprintf(addr, sizeof(addr), "0x%" PRIx64, l->addr);
		err |= json_put_str(e, "addr", addr);
		err |= json_put_str(e, JK_WAIT_FUNCTION, fname(p, l->func));
		err |= json_put_str(e, JK_FILE, l->file);
		err |= json_put_fnum(e, JK_LINE, l->line);
		err |= json_put_fnum(e, JK_WAIT_WAIT_NS, (double)l->wait_ns);
		err |= json_put_fnum(e, "contended_ns", (double)l->contended_ns);
		err |= json_put_fnum(e, "waiters", l->waiters);
		if (known) {
			err |= json_put_fnum(e, "holder_tid", tid(p, l->holder));
			err |= json_put_str(e, "holder_name", tname(p, l->holder));
		} else {
			err |= cJSON_AddNullToObject(e, "holder_tid") ? 0 : -ENOMEM;
			err |= cJSON_AddNullToObject(e, "holder_name") ? 0 : -ENOMEM;
		}
		err |= json_put_fnum(e, "holder_share", known ? l->holder_share : 0);
	}
	return err ? -ENOMEM : 0;
}

static int wall_functions(cJSON *o, const struct profile *p, const struct wait_analysis *w)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "wall_functions"), *e;
	size_t i;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < w->nfuncs && i < WAIT_JSON_FUNCS && !err; i++) {
		const struct wait_func *f = &w->funcs[i];

		if (!(e = add_obj(arr)))
			return -ENOMEM;
		err |= json_put_str(e, JK_WAIT_FUNCTION, fname(p, f->func));
		err |= json_put_fnum(e, "self_on_ns", (double)f->self_on);
		err |= json_put_fnum(e, "self_off_ns", (double)f->self_off);
		err |= json_put_fnum(e, "total_on_ns", (double)f->total_on);
		err |= json_put_fnum(e, "total_off_ns", (double)f->total_off);
	}
	return err ? -ENOMEM : 0;
}

static int recos(cJSON *o, const struct wait_analysis *w)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "recommendations"), *e;
	size_t i;
	int err = 0;

	if (!arr)
		return -ENOMEM;
	for (i = 0; i < w->nfindings && !err; i++) {
		if (!(e = add_obj(arr)))
			return -ENOMEM;
		err |= json_put_str(e, "id", w->findings[i].id);
		err |= json_put_str(e, "message", w->findings[i].message);
		err |= json_put_str(e, "evidence", w->findings[i].evidence);
	}
	return err ? -ENOMEM : 0;
}

int report_wait_json(const struct analysis *a, struct cJSON *root)
{
	const struct wait_analysis *w = a->wait;
	const struct profile *p = a->profile;
	cJSON *o;

	if (!w || !p)
		return 0;
	if (!(o = cJSON_AddObjectToObject(root, JK_WAITING)))
		return -ENOMEM;
	if (overview(o, w) < 0 || verdict(o, p, w) < 0 || per_thread(o, p, w) < 0 ||
	    sites(o, p, w) < 0 || locks(o, p, w) < 0 || wall_functions(o, p, w) < 0 ||
	    recos(o, w) < 0)
		return -ENOMEM;
	return 0;
}
