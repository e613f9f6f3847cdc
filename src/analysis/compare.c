/*
 * compare.c — `cbottleneck compare`: read two JSON reports (report/json.c's
 * shape, schema_version 1), evaluate every gate expression into table rows with
 * noise-aware verdicts, and decide the exit status (docs/ci.md).
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "cmp_internal.h"

#define CMP_SCHEMA_VERSION 1
#define CMP_MAX_REPORT_BYTES (1ull << 30)

/* One side of the comparison. */
struct cmp_side {
	const char *path;
	const char *role;        /* "baseline" or "current" */
	cJSON *root;
	cJSON *run;
	cJSON *cuda;             /* NULL when the report has none */
	int cuda_ok;             /* CUDA was traced: GPU metrics are meaningful */
	char cuda_why[200];      /* why not, when !cuda_ok */
	double period_ns;
};

static void *cmp_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "cbottleneck compare: out of memory\n");
		exit(CMP_USAGE);
	}
	return q;
}

static char *cmp_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(cmp_xrealloc(NULL, n), s, n);
}

static int json_num(const cJSON *obj, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(v))
		return -1;
	*out = v->valuedouble;
	return 0;
}

static const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* Read the whole file; NUL-terminated.  0, or -1 with a message in err. */
static int read_file(const char *path, const char *role, char **buf, size_t *len, char *err,
		     size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0, got;
	int ret = -1;

	if (!f) {
		snprintf(err, errlen, "cannot open %s report %s: %s", role, path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (cap - n < 65536) {
			if (cap >= CMP_MAX_REPORT_BYTES) {
				snprintf(err, errlen, "%s report %s is larger than 1 GiB; "
					 "is it really a cbottleneck JSON report?", role, path);
				goto out;
			}
			cap = cap ? cap * 2 : 262144;
			b = cmp_xrealloc(b, cap + 1);
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

static void side_cuda_state(struct cmp_side *s)
{
	const cJSON *status, *st;
	int started = 0, unavailable = 0;
	const char *msg = NULL;

	s->cuda = cJSON_GetObjectItemCaseSensitive(s->root, "cuda");
	if (!cJSON_IsObject(s->cuda)) {
		s->cuda = NULL;
		snprintf(s->cuda_why, sizeof(s->cuda_why), "the %s run has no CUDA data "
			 "(no GPU work was traced)", s->role);
		return;
	}
	status = cJSON_GetObjectItemCaseSensitive(s->cuda, "status");
	cJSON_ArrayForEach(st, status) {
		const char *state = json_str(st, "state");

		if (state && strcmp(state, "unavailable") == 0) {
			unavailable++;
			if (!msg)
				msg = json_str(st, "message");
		} else if (state && (strcmp(state, "started") == 0 ||
				     strcmp(state, "finished") == 0)) {
			started++;
		}
	}
	if (!started && unavailable) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "CUDA tracing was unavailable in the "
			 "%s run: %s", s->role, msg && *msg ? msg : "no reason given");
		return;
	}
	if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s->cuda, "totals"))) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "the %s run's cuda object has no "
			 "totals", s->role);
		return;
	}
	s->cuda_ok = 1;
}

static int side_load(struct cmp_side *s, const char *path, const char *role, char *err,
		     size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	const char *end = NULL;
	double version;
	int ret = -1;

	memset(s, 0, sizeof(*s));
	s->path = path;
	s->role = role;
	if (read_file(path, role, &buf, &len, err, errlen) < 0)
		return -1;
	s->root = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
	if (!s->root) {
		unsigned long line = 1;
		const char *p;

		for (p = buf; end && p < end && p < buf + len; p++)
			line += *p == '\n';
		snprintf(err, errlen, "%s report %s is not valid JSON (error near line %lu); "
			 "regenerate it with 'cbottleneck --json FILE'", role, path, line);
		goto out;
	}
	if (!cJSON_IsObject(s->root) || json_num(s->root, "schema_version", &version) < 0) {
		snprintf(err, errlen, "%s report %s is not a cbottleneck JSON report (no "
			 "schema_version); write it with 'cbottleneck --json FILE'", role, path);
		goto out;
	}
	if (version != CMP_SCHEMA_VERSION) {
		snprintf(err, errlen, "%s was written by schema %g; this cbottleneck reads %d "
			 "(%s): regenerate it with this version", role, version,
			 CMP_SCHEMA_VERSION, path);
		goto out;
	}
	s->run = cJSON_GetObjectItemCaseSensitive(s->root, "run");
	if (!cJSON_IsObject(s->run)) {
		snprintf(err, errlen, "%s report %s has no \"run\" object; is it truncated?", role,
			 path);
		goto out;
	}
	if (json_num(s->run, "period_ns", &s->period_ns) < 0 || s->period_ns < 0)
		s->period_ns = 0;
	side_cuda_state(s);
	ret = 0;
out:
	free(buf);
	if (ret < 0) {
		cJSON_Delete(s->root);
		s->root = NULL;
	}
	return ret;
}

static void side_command(const struct cmp_side *s, char *buf, size_t len)
{
	const cJSON *cmd = cJSON_GetObjectItemCaseSensitive(s->run, "command"), *a;
	size_t n = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(a, cmd) {
		if (!cJSON_IsString(a) || n + 1 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", a->valuestring);
		if (n >= len)
			n = len - 1;
	}
}

/* --- rows ---------------------------------------------------------------- */

static struct cmp_row *row_add(struct cmp_result *r, const struct cmp_expr *e, const char *name)
{
	struct cmp_row *row;

	if (r->nrows == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->rows = cmp_xrealloc(r->rows, r->cap * sizeof(*r->rows));
	}
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	row->name = cmp_xstrdup(name);
	row->expr = e;
	return row;
}

/* Decide one row's status from its numbers and its expression's threshold. */
static void row_judge(struct cmp_result *r, struct cmp_row *row)
{
	const struct cmp_threshold *th = &row->expr->th;
	double delta, d, rel;
	int fires;

	if (row->status == CMP_S_NA) {
		/* already decided */
	} else if (!row->has_base) {
		row->status = CMP_S_NEW;
	} else if (!row->has_cur) {
		row->status = CMP_S_MISSING;
	} else {
		delta = row->cur - row->base;
		d = th->dir * delta;
		if (row->base > 0)
			rel = d / row->base;
		else
			rel = d > 0 ? INFINITY : 0;
		fires = th->relative ? rel > th->value : d > th->value;
		if (fires && th->has_floor)
			fires = d >= th->floor;
		if (!fires)
			row->status = CMP_S_OK;
		else if (row->noise == CMP_N_SAMPLED && fabs(delta) <= CMP_NOISE_K * row->sigma)
			row->status = CMP_S_NOISE;
		else
			row->status = row->expr->level == CMP_LEVEL_FAIL ? CMP_S_FAIL : CMP_S_WARN;
	}
	if (row->status == CMP_S_NA && row->expr->level == CMP_LEVEL_FAIL)
		r->unmeasurable = 1;
	r->counts[row->status]++;
}

static void config_error(struct cmp_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void config_error(struct cmp_result *r, const char *fmt, ...)
{
	va_list ap;

	fputs("cbottleneck compare: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	r->config_error = 1;
}

/* A value and its sampling variance (ns^2), or the exact/single flavour. */
struct cmp_val {
	int ok;
	double v, var;
};

/* Sampled time in ns with its weight in samples: variance = p^2 * n, the
 * Poisson error of n counted periods of p = v / n each. */
static struct cmp_val sampled(double v, double n, double period)
{
	struct cmp_val x = {1, v, 0};

	if (n > 0)
		x.var = v * v / n;
	else
		x.var = v * period;
	return x;
}

static struct cmp_val scalar_value(const struct cmp_side *s, const struct cmp_expr *e)
{
	struct cmp_val x = {0, 0, 0};
	const cJSON *obj = s->run;
	const char *key = NULL;
	double w;

	switch (e->metric) {
	case CMP_M_WALL:
		key = "wall_ns";
		break;
	case CMP_M_CPU:
		if (json_num(obj, "cpu_ns", &x.v) < 0)
			return x;
		x.ok = 1;
		if (json_num(obj, "weight", &w) == 0 && w > 0)
			x.var = s->period_ns * s->period_ns * w;
		else
			x.var = x.v * s->period_ns;
		return x;
	case CMP_M_SAMPLES:
		if (json_num(obj, "samples", &x.v) < 0)
			return x;
		x.ok = 1;
		x.var = x.v;
		return x;
	case CMP_M_GPU:
		obj = s->cuda ? cJSON_GetObjectItemCaseSensitive(s->cuda, "totals") : NULL;
		switch (e->gpu) {
		case CMP_GPU_KERNELS: key = "kernels"; break;
		case CMP_GPU_KERNEL_TIME: key = "kernel_ns"; break;
		case CMP_GPU_MEMCPY_BYTES: key = "memcpy_bytes"; break;
		case CMP_GPU_MEMCPY_TIME: key = "memcpy_ns"; break;
		case CMP_GPU_MEMCPYS: key = "memcpy"; break;
		case CMP_GPU_API_CALLS: key = "api_calls"; break;
		case CMP_GPU_SYNC_TIME: key = "sync_ns"; break;
		case CMP_GPU_BUSY: key = "gpu_busy_ns"; break;
		case CMP_GPU_UTILIZATION:
			obj = s->cuda ? cJSON_GetObjectItemCaseSensitive(s->cuda, "overview")
				      : NULL;
			key = "gpu_utilization";
			break;
		}
		break;
	default:
		return x;
	}
	if (obj && key && json_num(obj, key, &x.v) == 0)
		x.ok = 1;
	return x;
}

static const char *scalar_key(const struct cmp_expr *e)
{
	static const char *gpu_keys[] = {
		[CMP_GPU_KERNELS] = "cuda.totals.kernels",
		[CMP_GPU_KERNEL_TIME] = "cuda.totals.kernel_ns",
		[CMP_GPU_MEMCPY_BYTES] = "cuda.totals.memcpy_bytes",
		[CMP_GPU_MEMCPY_TIME] = "cuda.totals.memcpy_ns",
		[CMP_GPU_MEMCPYS] = "cuda.totals.memcpy",
		[CMP_GPU_API_CALLS] = "cuda.totals.api_calls",
		[CMP_GPU_SYNC_TIME] = "cuda.totals.sync_ns",
		[CMP_GPU_BUSY] = "cuda.totals.gpu_busy_ns",
		[CMP_GPU_UTILIZATION] = "cuda.overview.gpu_utilization",
	};

	switch (e->metric) {
	case CMP_M_WALL: return "run.wall_ns";
	case CMP_M_CPU: return "run.cpu_ns";
	case CMP_M_SAMPLES: return "run.samples";
	case CMP_M_GPU: return gpu_keys[e->gpu];
	default: return "?";
	}
}

/* The metric part of an expression ("gpu.kernels" of "gpu.kernels:+0"), in
 * place: name holds a copy of e->text. */
static void expr_metric_name(const struct cmp_expr *e, char *name)
{
	size_t n = strlen(name), t = strlen(e->th_text);

	if (n > t && name[n - t - 1] == ':')
		name[n - t - 1] = '\0';
}

static int is_gpu_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_GPU || e->metric == CMP_M_KERNEL || e->metric == CMP_M_API;
}

static enum cmp_noise metric_noise(const struct cmp_expr *e)
{
	switch (e->metric) {
	case CMP_M_CPU:
	case CMP_M_SAMPLES:
	case CMP_M_FUNC:
	case CMP_M_LINE:
		return CMP_N_SAMPLED;
	case CMP_M_WALL:
		return CMP_N_SINGLE;
	default:
		return e->unit == CMP_U_NS || e->unit == CMP_U_RATIO ? CMP_N_SINGLE : CMP_N_EXACT;
	}
}

static void eval_scalar(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
			const struct cmp_expr *e)
{
	struct cmp_val vb = scalar_value(b, e), vc = scalar_value(c, e);
	struct cmp_row *row;

	/* A metric the baseline lacks is a configuration error, unless the current
	 * run cannot show it either (a GPU metric on two CPU-only runs: n/a). */
	if (!vb.ok && (e->metric != CMP_M_GPU || vc.ok)) {
		config_error(r, "'%s': the baseline %s has no %s; is it a complete cbottleneck "
			     "report?", e->text, b->path, scalar_key(e));
		return;
	}
	row = row_add(r, e, e->text);
	expr_metric_name(e, row->name);
	row->noise = metric_noise(e);
	row->has_base = vb.ok;
	row->base = vb.v;
	row->has_cur = vc.ok;
	row->cur = vc.v;
	row->sigma = sqrt(vb.var + vc.var);
	if (!vc.ok) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "the current report has no %s",
			 scalar_key(e));
	}
	row_judge(r, row);
}

/* --- pattern metrics: func[], line[], kernel[], api[] -------------------- */

struct cmp_match {
	char *key;
	double a;                /* the value, or the total for an average */
	double n;                /* the count for an average */
	double var;
};

struct cmp_matches {
	struct cmp_match *m;
	size_t n, cap;
};

static int file_matches(const char *pattern, const char *file)
{
	const char *p;

	if (fnmatch(pattern, file, 0) == 0)
		return 1;
	/* "split.c" matches ".../examples/split.c": try every path suffix. */
	for (p = strchr(file, '/'); p; p = strchr(p + 1, '/'))
		if (fnmatch(pattern, p + 1, 0) == 0)
			return 1;
	return 0;
}

static const char *array_key(const struct cmp_expr *e)
{
	switch (e->metric) {
	case CMP_M_FUNC: return "functions";
	case CMP_M_LINE: return "lines";
	case CMP_M_KERNEL: return "kernels";
	default: return "api";
	}
}

static void collect(const struct cmp_side *s, const struct cmp_expr *e, struct cmp_matches *out)
{
	const cJSON *arr, *it;
	char key[CMP_PATTERN_MAX + 64];

	if (e->metric == CMP_M_KERNEL || e->metric == CMP_M_API)
		arr = s->cuda ? cJSON_GetObjectItemCaseSensitive(s->cuda, array_key(e)) : NULL;
	else
		arr = cJSON_GetObjectItemCaseSensitive(s->root, array_key(e));
	cJSON_ArrayForEach(it, arr) {
		const char *name = json_str(it, e->metric == CMP_M_LINE ? "file" : "name");
		struct cmp_match m = {0};
		double v = 0, n = 0, line;

		if (!name)
			continue;
		if (e->metric == CMP_M_LINE) {
			if (json_num(it, "line", &line) < 0 || line != (double)e->line ||
			    !file_matches(e->pattern, name))
				continue;
			snprintf(key, sizeof(key), "%s:%lu", name, e->line);
		} else {
			if (e->exact ? strcmp(e->pattern, name) != 0
				     : fnmatch(e->pattern, name, 0) != 0)
				continue;
			snprintf(key, sizeof(key), "%s", name);
		}
		switch (e->metric) {
		case CMP_M_FUNC:
		case CMP_M_LINE: {
			int self = e->field == CMP_F_SELF;
			struct cmp_val x;

			if (json_num(it, self ? "self_ns" : "total_ns", &v) < 0)
				continue;
			if (json_num(it, self ? "self_samples" : "total_samples", &n) < 0)
				n = 0;
			x = sampled(v, n, s->period_ns);
			m.a = x.v;
			m.var = x.var;
			break;
		}
		case CMP_M_KERNEL:
			if (e->field == CMP_F_CALLS) {
				if (json_num(it, "instances", &m.a) < 0)
					continue;
			} else {
				if (json_num(it, "total_ns", &m.a) < 0)
					continue;
				if (json_num(it, "instances", &m.n) < 0)
					m.n = 0;
			}
			break;
		default:
			if (e->field == CMP_F_CALLS) {
				if (json_num(it, "calls", &m.a) < 0)
					continue;
			} else {
				if (json_num(it, "total_ns", &m.a) < 0)
					continue;
				if (json_num(it, "calls", &m.n) < 0)
					m.n = 0;
			}
			break;
		}
		if (out->n == out->cap) {
			out->cap = out->cap ? out->cap * 2 : 16;
			out->m = cmp_xrealloc(out->m, out->cap * sizeof(*out->m));
		}
		m.key = cmp_xstrdup(key);
		out->m[out->n++] = m;
	}
}

static int match_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cmp_match *)a)->key, ((const struct cmp_match *)b)->key);
}

/* Sort by key and fold entries with the same key (one function name in two
 * modules, one kernel with two launch configurations) into one. */
static void fold(struct cmp_matches *ms)
{
	size_t i, o = 0;

	if (ms->n == 0)
		return;
	qsort(ms->m, ms->n, sizeof(*ms->m), match_cmp);
	for (i = 1; i < ms->n; i++) {
		if (strcmp(ms->m[o].key, ms->m[i].key) == 0) {
			ms->m[o].a += ms->m[i].a;
			ms->m[o].n += ms->m[i].n;
			ms->m[o].var += ms->m[i].var;
			free(ms->m[i].key);
		} else {
			ms->m[++o] = ms->m[i];
		}
	}
	ms->n = o + 1;
}

static double match_value(const struct cmp_expr *e, const struct cmp_match *m)
{
	if (e->field == CMP_F_AVG)
		return m->n > 0 ? m->a / m->n : 0;
	return m->a;
}

static void free_matches(struct cmp_matches *ms)
{
	size_t i;

	for (i = 0; i < ms->n; i++)
		free(ms->m[i].key);
	free(ms->m);
}

static const char *field_name(enum cmp_field f)
{
	switch (f) {
	case CMP_F_SELF: return "self";
	case CMP_F_TOTAL: return "total";
	case CMP_F_CALLS: return "calls";
	case CMP_F_AVG: return "avg";
	default: return "?";
	}
}

static void eval_pattern(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
			 const struct cmp_expr *e)
{
	struct cmp_matches mb = {0}, mc = {0};
	const char *prefix = e->metric == CMP_M_FUNC ? "func"
			     : e->metric == CMP_M_LINE ? "line"
			     : e->metric == CMP_M_KERNEL ? "kernel" : "api";
	size_t i = 0, j = 0;
	char *name = NULL;

	collect(b, e, &mb);
	collect(c, e, &mc);
	fold(&mb);
	fold(&mc);
	if (mb.n == 0 && !e->exact) {
		config_error(r, "'%s': no %s in the baseline %s matches '%s'%s; check the name "
			     "(see the baseline's report)", e->text,
			     e->metric == CMP_M_FUNC ? "function"
			     : e->metric == CMP_M_LINE ? "source line"
			     : e->metric == CMP_M_KERNEL ? "kernel" : "CUDA API function",
			     b->path, e->pattern,
			     e->metric == CMP_M_LINE ? " at that line" : "");
		goto out;
	}
	while (i < mb.n || j < mc.n) {
		int order = i >= mb.n ? 1 : j >= mc.n ? -1 : strcmp(mb.m[i].key, mc.m[j].key);
		struct cmp_row *row;
		const char *key = order <= 0 ? mb.m[i].key : mc.m[j].key;
		size_t len = strlen(prefix) + strlen(key) + 16;
		double var = 0;

		name = cmp_xrealloc(name, len);
		snprintf(name, len, "%s[%s].%s", prefix, key, field_name(e->field));
		row = row_add(r, e, name);
		row->noise = metric_noise(e);
		if (order <= 0) {
			row->has_base = 1;
			row->base = match_value(e, &mb.m[i]);
			var += mb.m[i].var;
		}
		if (order >= 0) {
			row->has_cur = 1;
			row->cur = match_value(e, &mc.m[j]);
			var += mc.m[j].var;
		}
		row->sigma = sqrt(var); /* the two runs' sampling errors are independent */
		if (order <= 0)
			i++;
		if (order >= 0)
			j++;
		row_judge(r, row);
	}
out:
	free(name);
	free_matches(&mb);
	free_matches(&mc);
}

static void eval_expr(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e)
{
	if (is_gpu_metric(e)) {
		if (!c->cuda_ok) {
			struct cmp_row *row = row_add(r, e, e->text);

			expr_metric_name(e, row->name);
			row->noise = metric_noise(e);
			row->status = CMP_S_NA;
			snprintf(row->note, sizeof(row->note), "%s", c->cuda_why);
			row_judge(r, row);
			return;
		}
		if (!b->cuda_ok) {
			config_error(r, "'%s': %s; record the baseline with CUDA tracing on a "
				     "machine with a GPU", e->text, b->cuda_why);
			return;
		}
	}
	if (e->metric == CMP_M_FUNC || e->metric == CMP_M_LINE || e->metric == CMP_M_KERNEL ||
	    e->metric == CMP_M_API)
		eval_pattern(r, b, c, e);
	else
		eval_scalar(r, b, c, e);
}

int cmp_result_status(const struct cmp_result *r)
{
	if (r->config_error)
		return CMP_USAGE;
	if (r->counts[CMP_S_FAIL])
		return CMP_REGRESSION;
	if (r->unmeasurable)
		return CMP_UNMEASURABLE;
	return CMP_PASS;
}

/* --- the default report -------------------------------------------------- */

struct top_func {
	const char *name;
	double self;
};

static int top_cmp(const void *a, const void *b)
{
	double x = ((const struct top_func *)a)->self, y = ((const struct top_func *)b)->self;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* With no expressions: warn at +10% on wall, cpu and the baseline's hottest
 * functions (by self time; names taken literally).  Warnings never fail. */
static size_t default_exprs(const struct cmp_side *b, struct cmp_expr **out)
{
	const cJSON *funcs = cJSON_GetObjectItemCaseSensitive(b->root, "functions"), *f;
	struct top_func *tops = NULL;
	size_t ntops = 0, i, n = 0;
	struct cmp_expr *e;
	char err[256];

	cJSON_ArrayForEach(f, funcs) {
		const char *name = json_str(f, "name");
		double self;

		if (!name || json_num(f, "self_ns", &self) < 0 || self <= 0 ||
		    strlen(name) >= CMP_PATTERN_MAX)
			continue;
		for (i = 0; i < ntops && strcmp(tops[i].name, name) != 0; i++)
			;
		if (i < ntops) {
			tops[i].self += self;
			continue;
		}
		tops = cmp_xrealloc(tops, (ntops + 1) * sizeof(*tops));
		tops[ntops].name = name;
		tops[ntops++].self = self;
		if (ntops >= 1000)
			break;
	}
	if (ntops)  /* qsort's base must not be NULL, even for 0 elements */
		qsort(tops, ntops, sizeof(*tops), top_cmp);
	if (ntops > CMP_DEFAULT_TOP)
		ntops = CMP_DEFAULT_TOP;
	e = cmp_xrealloc(NULL, (2 + ntops) * sizeof(*e));
	if (cmp_expr_parse("wall:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
		n++;
	if (cmp_expr_parse("cpu:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
		n++;
	for (i = 0; i < ntops; i++) {
		if (cmp_expr_parse("func[x].self:+10%", CMP_LEVEL_WARN, &e[n], err,
				   sizeof(err)) < 0)
			continue;
		snprintf(e[n].pattern, sizeof(e[n].pattern), "%s", tops[i].name);
		e[n].text = "default: function self time +10%";
		e[n].exact = 1;
		n++;
	}
	free(tops);
	*out = e;
	return n;
}

/* --- entry point ----------------------------------------------------------- */

static void current_scalars(struct cmp_result *r, const struct cmp_side *c)
{
	struct cmp_expr e;
	struct cmp_val v;

	memset(&e, 0, sizeof(e));
	e.metric = CMP_M_WALL;
	v = scalar_value(c, &e);
	r->has_wall = v.ok;
	r->wall = v.v;
	e.metric = CMP_M_CPU;
	v = scalar_value(c, &e);
	r->has_cpu = v.ok;
	r->cpu = v.v;
	r->cpu_sigma = sqrt(v.var);
}

static void result_free(struct cmp_result *r)
{
	size_t i;

	for (i = 0; i < r->nrows; i++)
		free(r->rows[i].name);
	free(r->rows);
}

int cmp_run(const char *baseline_path, const char *current_path, const struct cmp_opts *o,
	    FILE *out)
{
	struct cmp_side b = {0}, c = {0};
	struct cmp_result r;
	struct cmp_expr *exprs = NULL;
	size_t nexprs = 0, i;
	char err[768];
	int ret = CMP_USAGE;

	memset(&r, 0, sizeof(r));
	if (!baseline_path || !current_path) {
		fprintf(stderr, "cbottleneck compare: need a baseline and a current report\n");
		return CMP_USAGE;
	}
	/* Reject every bad expression before reading anything. */
	nexprs = o->nfail + o->nwarn;
	exprs = cmp_xrealloc(NULL, (nexprs ? nexprs : 1) * sizeof(*exprs));
	for (i = 0; i < nexprs; i++) {
		int fail = i < o->nfail;
		const char *text = fail ? o->fail[i] : o->warn[i - o->nfail];

		if (cmp_expr_parse(text ? text : "", fail ? CMP_LEVEL_FAIL : CMP_LEVEL_WARN,
				   &exprs[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "cbottleneck compare: %s (--%s)\n", err,
				fail ? "fail" : "warn");
			goto out;
		}
	}
	if (side_load(&b, baseline_path, "baseline", err, sizeof(err)) < 0 ||
	    side_load(&c, current_path, "current", err, sizeof(err)) < 0) {
		fprintf(stderr, "cbottleneck compare: %s\n", err);
		goto out;
	}
	if (nexprs == 0) {
		free(exprs);
		nexprs = default_exprs(&b, &exprs);
		r.defaults = 1;
	}
	r.base_path = baseline_path;
	r.cur_path = current_path;
	side_command(&b, r.base_cmd, sizeof(r.base_cmd));
	side_command(&c, r.cur_cmd, sizeof(r.cur_cmd));
	for (i = 0; i < nexprs; i++)
		eval_expr(&r, &b, &c, &exprs[i]);
	current_scalars(&r, &c);
	cmp_print_table(out, &r, o->quiet);
	ret = cmp_result_status(&r);
	if (o->markdown && cmp_write_markdown(o->markdown, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbottleneck compare: %s\n", err);
		ret = CMP_USAGE;
	}
	if (o->bench_json && cmp_write_bench_json(o->bench_json, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbottleneck compare: %s\n", err);
		ret = CMP_USAGE;
	}
out:
	result_free(&r);
	free(exprs);
	cJSON_Delete(b.root);
	cJSON_Delete(c.root);
	return ret;
}
