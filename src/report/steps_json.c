/*
 * steps_json.c — the JSON report's "steps" object: where the steps came from,
 * their duration distribution, every step with what it cost, the slowest
 * ones with what grew in them, the cold start, and the capture windows, as
 * docs/report.schema.json documents.  Keys are public API: add, never rename.
 */
#include <errno.h>
#include <math.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "json_keys.h"
#include "json_put.h"
#include "steps.h"
#include "steps_json.h"

static int str_or_null(cJSON *o, const char *key, const char *v)
{
	if (!v)
		return cJSON_AddNullToObject(o, key) ? 0 : -ENOMEM;
	return cJSON_AddStringToObject(o, key, v) ? 0 : -ENOMEM;
}

static int boolean(cJSON *o, const char *key, int v)
{
	return cJSON_AddBoolToObject(o, key, v != 0) ? 0 : -ENOMEM;
}

const char *steps_cause_name(uint32_t cause)
{
	switch (cause) {
	case CBN_CAUSE_START: return "start";
	case CBN_CAUSE_API: return "api";
	case CBN_CAUSE_SCHEDULE: return "schedule";
	case CBN_CAUSE_DELAY: return "delay";
	case CBN_CAUSE_DURATION: return "duration";
	case CBN_CAUSE_NVTX: return "nvtx";
	case CBN_CAUSE_CUDA_PROFILER: return "cudaProfilerApi";
	case CBN_CAUSE_CTL: return "ctl";
	case CBN_CAUSE_SIGNAL: return "signal";
	case CBN_CAUSE_EXIT: return "exit";
	default: return "unknown";
	}
}

static const char *source_name(int source)
{
	switch (source) {
	case STEP_SRC_MARKER: return "marker";
	case STEP_SRC_RANGE: return "range";
	case STEP_SRC_FUNC: return "function";
	default: return "unknown";
	}
}

static double pid_of(const struct profile *p, uint32_t proc)
{
	return proc < p->nprocesses ? (double)p->processes[proc].pid : 0;
}

/* ns since the start of the run: steps and windows never start before it,
 * but a hand-edited or damaged profile might; clamp rather than wrap. */
static double rel(const struct profile *p, uint64_t ts)
{
	return ts > p->start_ns ? (double)(ts - p->start_ns) : 0;
}

/* "breakdown": the step's wall time by what went on, in priority order
 * (step_split.h); the parts add up to duration_ns. */
static int json_split(cJSON *o, const uint64_t *split)
{
	static const char *const key[STEP_SPLIT_N] = {
		[STEP_SPLIT_KERNEL] = "kernel_ns", [STEP_SPLIT_COPY] = "copy_ns",
		[STEP_SPLIT_SYNC] = "sync_wait_ns", [STEP_SPLIT_HOST] = "host_ns",
		[STEP_SPLIT_IDLE] = "idle_ns",
	};
	cJSON *b = cJSON_AddObjectToObject(o, "breakdown");
	int err = !b;

	for (int k = 0; b && k < STEP_SPLIT_N; k++)
		err |= json_put_fnum(b, key[k], (double)split[k]);
	return err;
}

static cJSON *json_step(const struct profile *p, const struct step *st,
			 const uint64_t *split)
{
	cJSON *o = cJSON_CreateObject();
	int err = 0;

	if (!o)
		return NULL;
	err |= json_put_fnum(o, "number", (double)st->number);
	err |= json_put_fnum(o, "process", pid_of(p, st->process));
	err |= json_put_fnum(o, "start_ns", rel(p, st->start));
	err |= json_put_fnum(o, "duration_ns",
				      st->end > st->start ? (double)(st->end - st->start) : 0);
	err |= json_put_fnum(o, "cpu_ns", (double)st->cpu_ns);
	err |= json_put_fnum(o, "gpu_busy_ns", (double)st->gpu_busy_ns);
	err |= json_put_fnum(o, "sync_ns", (double)st->sync_ns);
	err |= json_put_fnum(o, "kernels", st->kernels);
	err |= json_put_fnum(o, "copies", st->copies);
	/* 0 is what steps.h leaves when host memory was not recorded */
	if (st->mem_peak)
		err |= json_put_fnum(o, "mem_peak", (double)st->mem_peak);
	else
		err |= !cJSON_AddNullToObject(o, "mem_peak");
	if (split)
		err |= json_split(o, split);
	if (err) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *json_slow(const struct step_analysis *s, const struct step_slow *sl)
{
	cJSON *o = cJSON_CreateObject(), *grew;
	int err = 0;

	if (!o)
		return NULL;
	err |= json_put_fnum(o, "number",
				      sl->step < s->nsteps ? (double)s->steps[sl->step].number : 0);
	err |= json_put_fnum(o, "ratio", sl->ratio);
	if (err || !(grew = cJSON_AddArrayToObject(o, "grew")))
		goto fail;
	for (size_t i = 0; i < sl->ngrew && i < STEP_GROWTH_MAX; i++) {
		const struct step_growth *g = &sl->grew[i];
		cJSON *x = cJSON_CreateObject();

		if (!x)
			goto fail;
		cJSON_AddItemToArray(grew, x);
		err |= !cJSON_AddStringToObject(x, "name", g->name ? g->name : "");
		err |= boolean(x, "gpu", g->gpu);
		err |= json_put_fnum(x, "step_ns", (double)g->step_ns);
		err |= json_put_fnum(x, "median_ns", (double)g->median_ns);
	}
	if (err)
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

/* capture: the windows of every process (prof.windows), whether controls
 * were used and their time summed. */
static int json_capture(const struct analysis *a, cJSON *o)
{
	const struct profile *p = a->profile;
	const struct step_analysis *s = a->steps;
	cJSON *c = cJSON_AddObjectToObject(o, "capture"), *arr;
	int err = 0;

	if (!c)
		return -ENOMEM;
	err |= boolean(c, "controlled", s->controlled);
	err |= json_put_fnum(c, "window_ns", (double)s->window_ns);
	if (err || !(arr = cJSON_AddArrayToObject(c, "windows")))
		return -ENOMEM;
	for (size_t i = 0; i < p->nwindows; i++) {
		const struct prof_window *w = &p->windows[i];
		cJSON *x = cJSON_CreateObject();

		if (!x)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, x);
		err |= json_put_fnum(x, "process", pid_of(p, w->process));
		err |= json_put_fnum(x, "start_ns", rel(p, w->start));
		err |= json_put_fnum(x, "end_ns", rel(p, w->end));
		err |= !cJSON_AddStringToObject(x, "open_cause", steps_cause_name(w->open_cause));
		err |= !cJSON_AddStringToObject(x, "close_cause", steps_cause_name(w->close_cause));
		err |= json_put_fnum(x, "first_step", (double)w->first_step);
	}
	return err ? -ENOMEM : 0;
}

int report_steps_json(const struct analysis *a, cJSON *root)
{
	const struct step_analysis *s = a->steps;
	const struct profile *p = a->profile;
	cJSON *o, *arr, *cold;
	int err = 0;

	if (!s)
		return 0;
	o = cJSON_AddObjectToObject(root, JK_STEPS);
	if (!o)
		return -ENOMEM;
	err |= !cJSON_AddStringToObject(o, "source", source_name(s->source));
	err |= !cJSON_AddStringToObject(o, "what", s->what ? s->what : "");
	err |= str_or_null(o, "precision", s->precision);
	err |= !cJSON_AddStringToObject(o, "counts", s->counts ? s->counts : "");
	err |= !cJSON_AddNumberToObject(o, "between_ns", (double)s->between_ns);
	err |= json_put_fnum(o, JK_STEP_COUNT, (double)s->nsteps);
	err |= json_put_fnum(o, "min_ns", (double)s->min_ns);
	err |= json_put_fnum(o, JK_STEP_MEDIAN_NS, (double)s->median_ns);
	err |= json_put_fnum(o, JK_STEP_P90_NS, (double)s->p90_ns);
	err |= json_put_fnum(o, "max_ns", (double)s->max_ns);
	err |= json_put_fnum(o, "mean_ns", (double)s->mean_ns);
	err |= json_put_fnum(o, JK_TOTAL_NS, (double)s->total_ns);
	if (err || !(arr = cJSON_AddArrayToObject(o, JK_STEPS)))
		return -ENOMEM;
	for (size_t i = 0; i < s->nsteps; i++) {
		cJSON *x = json_step(p, &s->steps[i], s->split ? s->split[i] : NULL);

		if (!x)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, x);
	}
	if (!(arr = cJSON_AddArrayToObject(o, "slowest")))
		return -ENOMEM;
	for (size_t i = 0; i < s->nslow; i++) {
		cJSON *x = json_slow(s, &s->slow[i]);

		if (!x)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, x);
	}
	if (!(cold = cJSON_AddObjectToObject(o, "cold")))
		return -ENOMEM;
	err |= boolean(cold, "found", s->cold);
	err |= json_put_fnum(cold, "ratio", s->cold_ratio);
	if (err || json_capture(a, o) < 0)
		return -ENOMEM;
	/* The step rules' findings, as memory.recommendations has its own. */
	if (!(arr = cJSON_AddArrayToObject(o, "recommendations")))
		return -ENOMEM;
	for (size_t i = 0; i < s->nfindings; i++) {
		cJSON *r = cJSON_CreateObject();

		if (!r)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, r);
		err |= !cJSON_AddStringToObject(r, "id", s->findings[i].id ? s->findings[i].id : "");
		err |= !cJSON_AddStringToObject(r, "message",
						s->findings[i].message ? s->findings[i].message : "");
		err |= !cJSON_AddStringToObject(r, "evidence",
						s->findings[i].evidence ? s->findings[i].evidence : "");
	}
	return err ? -ENOMEM : 0;
}
