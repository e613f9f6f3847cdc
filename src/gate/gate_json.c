/*
 * gate_json.c — a JSON report (report/json.c's shape, schema_version 1 to 4:
 * 2 only added "memory", 3 only "steps", 4 only "waiting") as a struct
 * gate_run: the side of a
 * comparison that was profiled earlier.  Key names come from
 * report/json_keys.h, the header the writers use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "gate_run.h"
#include "json_keys.h"

#define GATE_MAX_REPORT_BYTES (1ull << 30)

/*
 * A key whose value has the wrong type ("self_ns": "abc") is an error of the
 * whole report, not a missing figure: the first one seen is kept here and
 * gate_run_from_json names it (one report is read at a time; the launcher is
 * single-threaded there).  An absent key or null is "not known", as the
 * writer means it.
 */
static const cJSON *bad_item;
static const char *bad_want;

static void bad_type(const cJSON *v, const char *want)
{
	if (!bad_item) {
		bad_item = v;
		bad_want = want;
	}
}

/* The number under key, NAN when it is absent or null (a wrong type is
 * noted). */
static double num(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (v && !cJSON_IsNull(v))
		bad_type(v, "a number");
	return NAN;
}

static const char *str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (cJSON_IsString(v) && v->valuestring)
		return v->valuestring;
	if (v && !cJSON_IsNull(v))
		bad_type(v, "a string");
	return NULL;
}

/* The value under key when is() says it has the type wanted, NULL when it is
 * absent or null; another type is noted (cJSON would iterate an object's
 * members as if they were an array's elements). */
static const cJSON *typed(const cJSON *obj, const char *key, cJSON_bool (*is)(const cJSON *),
			  const char *want)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (is(v))
		return v;
	if (v && !cJSON_IsNull(v))
		bad_type(v, want);
	return NULL;
}

static const cJSON *arr_of(const cJSON *obj, const char *key)
{
	return typed(obj, key, cJSON_IsArray, "an array");
}

static const cJSON *obj_of(const cJSON *obj, const char *key)
{
	return typed(obj, key, cJSON_IsObject, "an object");
}

/* The path of item under node ("functions[3].self_ns") into buf; 1 found. */
static int json_path(const cJSON *node, const cJSON *item, char *buf, size_t len)
{
	const cJSON *c;
	size_t n = strlen(buf);
	int i = 0;

	for (c = node ? node->child : NULL; c; c = c->next, i++) {
		if (cJSON_IsArray(node))
			snprintf(buf + n, len - n, "[%d]", i);
		else
			snprintf(buf + n, len - n, "%s%s", n ? "." : "", c->string ? c->string : "?");
		if (c == item || json_path(c, item, buf, len))
			return 1;
		buf[n] = '\0';
	}
	return 0;
}

static const char *json_type(const cJSON *v)
{
	return cJSON_IsString(v) ? "a string" : cJSON_IsNumber(v) ? "a number" :
	       cJSON_IsBool(v) ? "a boolean" : cJSON_IsArray(v) ? "an array" :
	       cJSON_IsObject(v) ? "an object" : "something else";
}

/* Read the whole file; NUL-terminated.  0, -1 with a message in err, or
 * -ENOMEM. */
static int read_file(const char *path, const char *role, char **buf, size_t *len, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL, *nb;
	size_t n = 0, cap = 0, got;
	int ret = -1;

	if (!f) {
		snprintf(err, errlen, "cannot open %s report %s: %s", role, path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - n < 65536) {
			if (cap >= GATE_MAX_REPORT_BYTES) {
				snprintf(err, errlen, "%s report %s is larger than 1 GiB; "
					 "is it really a cbottleneck JSON report?", role, path);
				goto out;
			}
			cap = cap ? cap * 2 : 262144;
			nb = realloc(b, cap + 1);
			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read %s report %s: %s", role, path, strerror(errno));
		goto out;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
	ret = 0;
out:
	free(b);
	fclose(f);
	return ret;
}

static void *array_of(const cJSON *arr, size_t esz, size_t *n)
{
	size_t k = (size_t)cJSON_GetArraySize(arr);

	*n = 0;
	return calloc(k ? k : 1, esz);
}

static int read_cpu(const cJSON *root, struct gate_run *r)
{
	const cJSON *arr, *it;

	arr = arr_of(root, JK_FUNCTIONS);
	r->funcs = array_of(arr, sizeof(*r->funcs), &r->nfuncs);
	if (!r->funcs)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_func *f = &r->funcs[r->nfuncs];

		if (!(f->name = str(it, JK_NAME)))
			continue;
		f->self_ns = num(it, JK_SELF_NS);
		f->total_ns = num(it, JK_TOTAL_NS);
		f->self_samples = num(it, JK_SELF_SAMPLES);
		f->total_samples = num(it, JK_TOTAL_SAMPLES);
		f->calls = num(it, "calls");
		r->nfuncs++;
	}
	arr = arr_of(root, JK_LINES);
	r->lines = array_of(arr, sizeof(*r->lines), &r->nlines);
	if (!r->lines)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_line *l = &r->lines[r->nlines];

		if (!(l->file = str(it, JK_FILE)))
			continue;
		l->line = num(it, JK_LINE);
		l->self_ns = num(it, JK_SELF_NS);
		l->self_samples = num(it, JK_SELF_SAMPLES);
		r->nlines++;
	}
	return 0;
}

static int read_counts(const cJSON *cuda, const char *key, const char *count_key,
		       struct gate_count **out, size_t *n)
{
	const cJSON *arr = arr_of(cuda, key), *it;
	struct gate_count *v = array_of(arr, sizeof(*v), n);

	if (!v)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_count *c = &v[*n];

		if (!(c->name = str(it, JK_NAME)))
			continue;
		c->count = num(it, count_key);
		c->total_ns = num(it, JK_TOTAL_NS);
		(*n)++;
	}
	*out = v;
	return 0;
}

static int read_cuda(const cJSON *root, struct gate_run *r)
{
	const cJSON *cuda = obj_of(root, JK_CUDA), *st, *totals, *ov;
	struct gate_gpu *g = &r->gpu;

	g->kernels = g->kernel_ns = g->memcpy_bytes = g->memcpy_ns = g->memcpy = NAN;
	g->api_calls = g->sync_ns = g->gpu_busy_ns = g->gpu_utilization = NAN;
	if (!cJSON_IsObject(cuda))
		return 0;
	r->has_cuda = 1;
	cJSON_ArrayForEach(st, arr_of(cuda, JK_STATUS)) {
		const char *state = str(st, JK_STATE);

		if (state && strcmp(state, JK_STATE_UNAVAILABLE) == 0) {
			r->cuda_unavailable++;
			if (!r->cuda_message)
				r->cuda_message = str(st, JK_MESSAGE);
		} else if (state && (strcmp(state, JK_STATE_STARTED) == 0 ||
				     strcmp(state, JK_STATE_FINISHED) == 0)) {
			r->cuda_started++;
		}
	}
	totals = obj_of(cuda, JK_TOTALS);
	r->has_totals = cJSON_IsObject(totals);
	g->kernels = num(totals, JK_KERNELS);
	g->kernel_ns = num(totals, JK_KERNEL_NS);
	g->memcpy_bytes = num(totals, JK_MEMCPY_BYTES);
	g->memcpy_ns = num(totals, JK_MEMCPY_NS);
	g->memcpy = num(totals, JK_MEMCPY);
	g->api_calls = num(totals, JK_API_CALLS);
	g->sync_ns = num(totals, JK_SYNC_NS);
	g->gpu_busy_ns = num(totals, JK_GPU_BUSY_NS);
	ov = obj_of(cuda, JK_OVERVIEW);
	g->gpu_utilization = num(ov, JK_GPU_UTILIZATION);
	if (read_counts(cuda, JK_KERNELS, JK_INSTANCES, &r->kernels, &r->nkernels) < 0 ||
	    read_counts(cuda, JK_API, JK_CALLS, &r->api, &r->napi) < 0)
		return -ENOMEM;
	return 0;
}

/* The operators object, when there is one. */
static int read_ops(const cJSON *root, struct gate_run *r)
{
	const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, JK_OPERATORS), *arr, *it;

	if (!cJSON_IsObject(o))
		return 0;
	r->has_ops = 1;
	arr = cJSON_GetObjectItemCaseSensitive(o, JK_OP_ROWS);
	r->ops = array_of(arr, sizeof(*r->ops), &r->nops);
	if (!r->ops)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_op *g = &r->ops[r->nops];

		if (!(g->name = str(it, JK_NAME)))
			continue;
		g->self_cpu_ns = num(it, JK_OP_SELF_CPU_NS);
		g->cpu_total_ns = num(it, JK_OP_CPU_TOTAL_NS);
		g->self_samples = num(it, JK_SELF_SAMPLES);
		g->total_samples = num(it, JK_TOTAL_SAMPLES);
		g->self_cuda_ns = num(it, JK_OP_SELF_CUDA_NS);
		g->cuda_total_ns = num(it, JK_OP_CUDA_TOTAL_NS);
		g->launches = num(it, JK_OP_LAUNCHES);
		r->nops++;
	}
	return 0;
}

/* The memory object (schema 2), when there is one. */
static int read_memory(const cJSON *root, struct gate_run *r)
{
	const cJSON *m = obj_of(root, JK_MEMORY), *arr, *it;
	const cJSON *procs = arr_of(root, JK_PROCESSES);
	double root_pid = num(cJSON_GetArrayItem(procs, 0), JK_PID);
	int root_seen = 0;

	r->mem_peak = r->mem_leaked = NAN;
	if (!cJSON_IsObject(m))
		return 0;
	r->has_memory = 1;
	r->mem_rate = num(m, JK_MEM_RATE);
	arr = arr_of(m, JK_MEM_SPACES);
	r->mem_gpus = array_of(arr, sizeof(*r->mem_gpus), &r->nmem_gpus);
	if (!r->mem_gpus)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		const char *kind = str(it, JK_MEM_KIND);
		double peak = num(it, JK_MEM_PEAK_BYTES);

		if (!kind || !gate_has(peak))
			continue;
		if (strcmp(kind, JK_MEM_KIND_GPU) == 0) {
			r->mem_gpus[r->nmem_gpus++] = (struct gate_mem_gpu){
				num(it, JK_MEM_DEVICE), peak};
		} else if (strcmp(kind, JK_MEM_KIND_HOST) == 0) {
			/* the root process (its exec'd images share the pid); the
			 * first host space when the report names no processes */
			int is_root = num(it, JK_PID) == root_pid;

			if (root_seen && !is_root)
				continue;
			if (is_root && !root_seen) {
				root_seen = 1;
				r->mem_peak = NAN;
			}
			if (!gate_has(r->mem_peak) || peak > r->mem_peak) {
				r->mem_peak = peak;
				r->mem_peak_exact = cJSON_IsTrue(
				    cJSON_GetObjectItemCaseSensitive(it, JK_MEM_PEAK_EXACT));
			}
		}
	}
	arr = arr_of(m, JK_MEM_SITES);
	r->mem_sites = array_of(arr, sizeof(*r->mem_sites), &r->nmem_sites);
	if (!r->mem_sites)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_mem_site *s = &r->mem_sites[r->nmem_sites];
		const char *kind = str(it, JK_MEM_KIND);

		s->function = str(it, JK_MEM_FUNCTION);
		s->file = str(it, JK_FILE);
		s->line = num(it, JK_LINE);
		s->bytes = num(it, JK_MEM_BYTES);
		s->allocs = num(it, JK_MEM_ALLOCS);
		s->gpu = kind && strcmp(kind, JK_MEM_KIND_GPU) == 0;
		if (!s->function || !s->file || !gate_has(s->bytes))
			continue;
		r->nmem_sites++;
		if (!s->gpu) {
			double leaked = num(it, JK_MEM_LIVE_END_BYTES);

			if (gate_has(leaked))
				r->mem_leaked = (gate_has(r->mem_leaked) ? r->mem_leaked : 0) + leaked;
		}
	}
	if (!gate_has(r->mem_leaked) && r->mem_rate > 0)
		r->mem_leaked = 0; /* host data and no site left anything behind */
	return 0;
}

/* The steps object (schema 3), when there is one. */
static void read_steps(const cJSON *root, struct gate_run *r)
{
	const cJSON *s = obj_of(root, JK_STEPS);

	r->step_count = r->step_median = r->step_p90 = NAN;
	if (!cJSON_IsObject(s))
		return;
	r->has_steps = 1;
	r->step_count = num(s, JK_STEP_COUNT);
	r->step_median = num(s, JK_STEP_MEDIAN_NS);
	r->step_p90 = num(s, JK_STEP_P90_NS);
}

/* The distributed object, when there is one (docs/distributed.md). */
static void read_dist(const cJSON *root, struct gate_run *r)
{
	const cJSON *d = obj_of(root, JK_DISTRIBUTED), *it;

	r->dist_max_wall = r->dist_mpi_ns = r->dist_imbalance = NAN;
	if (!cJSON_IsObject(d))
		return;
	r->has_dist = 1;
	r->dist_mpi_ns = num(d, JK_DIST_MPI_NS);
	r->dist_imbalance = num(d, JK_DIST_IMBALANCE);
	cJSON_ArrayForEach(it, arr_of(d, JK_DIST_RANKS)) {
		double w = num(it, JK_WALL_NS);

		if (gate_has(w) && (!gate_has(r->dist_max_wall) || w > r->dist_max_wall))
			r->dist_max_wall = w;
	}
}

/* The waiting object (schema 4), when there is one. */
static int read_waiting(const cJSON *root, struct gate_run *r)
{
	const cJSON *w = obj_of(root, JK_WAITING), *arr, *it;

	r->wait_off_ns = r->wait_efficiency = NAN;
	if (!cJSON_IsObject(w))
		return 0;
	r->has_waiting = 1;
	r->wait_offcpu = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, JK_WAIT_OFFCPU));
	r->wait_off_ns = num(w, JK_WAIT_OFF_NS);
	r->wait_efficiency = num(w, JK_WAIT_EFFICIENCY);
	arr = arr_of(w, JK_WAIT_LOCKS);
	r->locks = array_of(arr, sizeof(*r->locks), &r->nlocks);
	if (!r->locks)
		return -ENOMEM;
	cJSON_ArrayForEach(it, arr) {
		struct gate_lock *l = &r->locks[r->nlocks];

		if (!(l->function = str(it, JK_WAIT_FUNCTION)))
			continue;
		l->wait_ns = num(it, JK_WAIT_WAIT_NS);
		if (!gate_has(l->wait_ns))
			continue;
		r->nlocks++;
	}
	return 0;
}

int gate_run_from_json(const char *path, const char *role, struct gate_run *r, char *err,
		       size_t errlen)
{
	const cJSON *run, *cmd, *a;
	cJSON *root = NULL;
	char *buf = NULL;
	size_t len = 0;
	const char *end = NULL;
	double version;
	int ret;

	memset(r, 0, sizeof(*r));
	bad_item = NULL;
	ret = read_file(path, role, &buf, &len, err, errlen);
	if (ret < 0)
		return ret;
	ret = -1;
	root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
	if (!root) {
		unsigned long line = 1;
		const char *p;

		for (p = buf; end && p < end && p < buf + len; p++)
			line += *p == '\n';
		snprintf(err, errlen, "%s report %s is not valid JSON (error near line %lu); "
			 "regenerate it with 'cbottleneck --json FILE'", role, path, line);
		goto out;
	}
	r->owner = root;
	version = num(root, JK_SCHEMA_VERSION);
	if (!cJSON_IsObject(root) || !gate_has(version)) {
		snprintf(err, errlen, "%s report %s is not a cbottleneck JSON report (no "
			 "schema_version); write it with 'cbottleneck --json FILE'", role, path);
		goto out;
	}
	if (version < JK_SCHEMA_VERSION_OLDEST || version > JK_SCHEMA_VERSION_VALUE ||
	    version != (int)version) {
		snprintf(err, errlen, "%s was written by schema %g; this cbottleneck reads %d to %d "
			 "(%s): regenerate it with this version", role, version,
			 JK_SCHEMA_VERSION_OLDEST, JK_SCHEMA_VERSION_VALUE, path);
		goto out;
	}
	run = cJSON_GetObjectItemCaseSensitive(root, JK_RUN);
	if (!cJSON_IsObject(run)) {
		snprintf(err, errlen, "%s report %s has no \"run\" object; is it truncated?", role,
			 path);
		goto out;
	}
	cmd = arr_of(run, JK_COMMAND);
	r->command = calloc((size_t)cJSON_GetArraySize(cmd) + 1, sizeof(*r->command));
	if (!r->command) {
		ret = -ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(a, cmd)
		if (cJSON_IsString(a) && a->valuestring)
			r->command[r->ncommand++] = a->valuestring;
	r->wall_ns = num(run, JK_WALL_NS);
	r->cpu_ns = num(run, JK_CPU_NS);
	r->samples = num(run, JK_SAMPLES);
	r->weight = num(run, JK_WEIGHT);
	r->period_ns = num(run, JK_PERIOD_NS);
	if (!gate_has(r->period_ns) || r->period_ns < 0)
		r->period_ns = 0;
	if (read_cpu(root, r) < 0 || read_cuda(root, r) < 0 || read_ops(root, r) < 0 ||
	    read_memory(root, r) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	read_steps(root, r);
	read_dist(root, r);
	if (read_waiting(root, r) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if (bad_item) {
		char where[256] = "";

		json_path(root, bad_item, where, sizeof(where));
		snprintf(err, errlen, "%s report %s: \"%s\" is %s, expected %s; regenerate it "
			 "with 'cbottleneck --json FILE'", role, path, *where ? where : "?",
			 json_type(bad_item), bad_want);
		ret = -1;
		goto out;
	}
	ret = 0;
out:
	free(buf);
	if (ret < 0)
		gate_run_free(r);
	return ret;
}
