/*
 * compare.c — the regression gate: evaluate every gate expression over two
 * runs (struct gate_run: a JSON report, or the run just analysed) into table
 * rows with noise-aware verdicts, and decide the exit status (docs/ci.md).
 * Out of memory is CMP_NOMEM, returned: the caller says so and exits.
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

#include "cmp_internal.h"
#include "gate_run.h"
#include "util.h"

/* One side of the comparison. */
struct cmp_side {
	const char *path;        /* the report's path, or what stands for the run */
	const char *role;        /* "baseline" or "current" */
	const struct gate_run *run;
	int cuda_ok;             /* CUDA was traced: GPU metrics are meaningful */
	char cuda_why[200];      /* why not, when !cuda_ok */
};

static char *cmp_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

static void side_cuda_state(struct cmp_side *s)
{
	const struct gate_run *r = s->run;
	const char *msg = r->cuda_message;

	s->cuda_ok = 0;
	if (!r->has_cuda) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "the %s run has no CUDA data "
			 "(no GPU work was traced)", s->role);
		return;
	}
	if (!r->cuda_started && r->cuda_unavailable) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "CUDA tracing was unavailable in the "
			 "%s run: %s", s->role, msg && *msg ? msg : "no reason given");
		return;
	}
	if (!r->has_totals) {
		snprintf(s->cuda_why, sizeof(s->cuda_why), "the %s run's cuda object has no "
			 "totals", s->role);
		return;
	}
	s->cuda_ok = 1;
}

static void side_init(struct cmp_side *s, const struct gate_run *run, const char *path,
		      const char *role)
{
	memset(s, 0, sizeof(*s));
	s->path = path;
	s->role = role;
	s->run = run;
	side_cuda_state(s);
}

static void side_command(const struct cmp_side *s, char *buf, size_t len)
{
	size_t n = 0, i;

	buf[0] = '\0';
	for (i = 0; i < s->run->ncommand; i++) {
		if (n + 1 >= len)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "", s->run->command[i]);
		if (n >= len)
			n = len - 1;
	}
}

/* --- rows ---------------------------------------------------------------- */

/* A new row, or NULL with r->nomem set. */
static struct cmp_row *row_add(struct cmp_result *r, const struct cmp_expr *e, const char *name)
{
	struct cmp_row *row;
	char *copy;

	if (r->nrows == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct cmp_row *rows = util_reallocarray(r->rows, cap, sizeof(*rows));

		if (!rows) {
			r->nomem = 1;
			return NULL;
		}
		r->rows = rows;
		r->cap = cap;
	}
	if (!(copy = cmp_strdup(name))) {
		r->nomem = 1;
		return NULL;
	}
	row = &r->rows[r->nrows++];
	memset(row, 0, sizeof(*row));
	row->name = copy;
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
	const struct gate_run *r = s->run;
	const struct gate_gpu *g = &r->gpu;
	struct cmp_val x = {0, NAN, 0};

	switch (e->metric) {
	case CMP_M_WALL:
		x.v = r->wall_ns;
		break;
	case CMP_M_CPU:
		x.v = r->cpu_ns;
		if (!gate_has(x.v))
			break;
		if (gate_has(r->weight) && r->weight > 0)
			x.var = r->period_ns * r->period_ns * r->weight;
		else
			x.var = x.v * r->period_ns;
		break;
	case CMP_M_SAMPLES:
		x.v = r->samples;
		x.var = x.v;
		break;
	case CMP_M_GPU:
		if (!r->has_cuda)
			break;
		switch (e->gpu) {
		case CMP_GPU_KERNELS: x.v = g->kernels; break;
		case CMP_GPU_KERNEL_TIME: x.v = g->kernel_ns; break;
		case CMP_GPU_MEMCPY_BYTES: x.v = g->memcpy_bytes; break;
		case CMP_GPU_MEMCPY_TIME: x.v = g->memcpy_ns; break;
		case CMP_GPU_MEMCPYS: x.v = g->memcpy; break;
		case CMP_GPU_API_CALLS: x.v = g->api_calls; break;
		case CMP_GPU_SYNC_TIME: x.v = g->sync_ns; break;
		case CMP_GPU_BUSY: x.v = g->gpu_busy_ns; break;
		case CMP_GPU_UTILIZATION: x.v = g->gpu_utilization; break;
		}
		break;
	default:
		break;
	}
	x.ok = gate_has(x.v);
	if (!x.ok) {
		x.v = 0;
		x.var = 0;
	}
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
	case CMP_M_OP:
		/* sampled CPU; exact GPU times are one measurement per run,
		 * launches exact counts */
		return e->field == CMP_F_CPU || e->field == CMP_F_SELF_CPU ? CMP_N_SAMPLED
		       : e->field == CMP_F_LAUNCHES ? CMP_N_EXACT : CMP_N_SINGLE;
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
	if (!row)
		return;
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

/* Append m (its key copied); 0, or -1 with r->nomem set. */
static int match_add(struct cmp_result *r, struct cmp_matches *out, struct cmp_match m,
		     const char *key)
{
	if (out->n == out->cap) {
		size_t cap = out->cap ? out->cap * 2 : 16;
		struct cmp_match *v = util_reallocarray(out->m, cap, sizeof(*v));

		if (!v)
			goto nomem;
		out->m = v;
		out->cap = cap;
	}
	if (!(m.key = cmp_strdup(key)))
		goto nomem;
	out->m[out->n++] = m;
	return 0;
nomem:
	r->nomem = 1;
	return -1;
}

/* A value that must be there (else the entry is skipped), or one that
 * counts as 0 when absent. */
static int need(double v, double *out)
{
	if (!gate_has(v))
		return -1;
	*out = v;
	return 0;
}

static double or_zero(double v)
{
	return gate_has(v) ? v : 0;
}

static int name_matches(const struct cmp_expr *e, const char *name)
{
	return e->exact ? strcmp(e->pattern, name) == 0 : fnmatch(e->pattern, name, 0) == 0;
}

static void collect(struct cmp_result *r, const struct cmp_side *s, const struct cmp_expr *e,
		    struct cmp_matches *out)
{
	const struct gate_run *run = s->run;
	char key[CMP_PATTERN_MAX + 64];
	size_t i;

	switch (e->metric) {
	case CMP_M_FUNC:
	case CMP_M_LINE: {
		int self = e->field == CMP_F_SELF, line = e->metric == CMP_M_LINE;
		size_t n = line ? run->nlines : run->nfuncs;

		for (i = 0; i < n; i++) {
			const struct gate_func *f = line ? NULL : &run->funcs[i];
			const struct gate_line *l = line ? &run->lines[i] : NULL;
			struct cmp_match m = {0};
			struct cmp_val x;
			double v;

			if (line) {
				/* lines[] have self time only */
				if (l->line != (double)e->line || !file_matches(e->pattern, l->file))
					continue;
				snprintf(key, sizeof(key), "%s:%lu", l->file, e->line);
				if (!self || need(l->self_ns, &v) < 0)
					continue;
				x = sampled(v, or_zero(l->self_samples), run->period_ns);
			} else {
				if (!name_matches(e, f->name))
					continue;
				snprintf(key, sizeof(key), "%s", f->name);
				if (need(self ? f->self_ns : f->total_ns, &v) < 0)
					continue;
				x = sampled(v, or_zero(self ? f->self_samples : f->total_samples),
					    run->period_ns);
			}
			m.a = x.v;
			m.var = x.var;
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	}
	case CMP_M_OP:
		/* operators: CUDA and launches exact, CPU sampled */
		for (i = 0; i < run->nops; i++) {
			const struct gate_op *o = &run->ops[i];
			struct cmp_match m = {0};
			double v;

			if (!name_matches(e, o->name))
				continue;
			if (e->field == CMP_F_CPU || e->field == CMP_F_SELF_CPU) {
				int self = e->field == CMP_F_SELF_CPU;
				struct cmp_val x;

				if (need(self ? o->self_cpu_ns : o->cpu_total_ns, &v) < 0)
					continue;
				x = sampled(v, or_zero(self ? o->self_samples : o->total_samples),
					    run->period_ns);
				m.a = x.v;
				m.var = x.var;
			} else if (need(e->field == CMP_F_CUDA ? o->cuda_total_ns
					: e->field == CMP_F_SELF_CUDA ? o->self_cuda_ns : o->launches,
					&m.a) < 0) {
				continue;
			}
			snprintf(key, sizeof(key), "%s", o->name);
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	default: {
		/* kernel[]: count is instances; api[]: count is calls */
		const struct gate_count *v = e->metric == CMP_M_KERNEL ? run->kernels : run->api;
		size_t n = e->metric == CMP_M_KERNEL ? run->nkernels : run->napi;

		if (!run->has_cuda)
			break;
		for (i = 0; i < n; i++) {
			struct cmp_match m = {0};

			if (!name_matches(e, v[i].name))
				continue;
			if (e->field == CMP_F_CALLS) {
				if (need(v[i].count, &m.a) < 0)
					continue;
			} else {
				if (need(v[i].total_ns, &m.a) < 0)
					continue;
				m.n = or_zero(v[i].count);
			}
			snprintf(key, sizeof(key), "%s", v[i].name);
			if (match_add(r, out, m, key) < 0)
				return;
		}
		break;
	}
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
	case CMP_F_CUDA: return "cuda";
	case CMP_F_SELF_CUDA: return "self_cuda";
	case CMP_F_CPU: return "cpu";
	case CMP_F_SELF_CPU: return "self_cpu";
	case CMP_F_LAUNCHES: return "launches";
	default: return "?";
	}
}

static void eval_pattern(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
			 const struct cmp_expr *e)
{
	struct cmp_matches mb = {0}, mc = {0};
	const char *prefix = e->metric == CMP_M_FUNC ? "func"
			     : e->metric == CMP_M_LINE ? "line"
			     : e->metric == CMP_M_KERNEL ? "kernel"
			     : e->metric == CMP_M_OP ? "op" : "api";
	size_t i = 0, j = 0;
	char *name = NULL;

	collect(r, b, e, &mb);
	collect(r, c, e, &mc);
	if (r->nomem)
		goto out;
	fold(&mb);
	fold(&mc);
	if (mb.n == 0 && !e->exact) {
		config_error(r, "'%s': no %s in the baseline %s matches '%s'%s; check the name "
			     "(see the baseline's report)", e->text,
			     e->metric == CMP_M_FUNC ? "function"
			     : e->metric == CMP_M_LINE ? "source line"
			     : e->metric == CMP_M_KERNEL ? "kernel"
			     : e->metric == CMP_M_OP ? "operator" : "CUDA API function",
			     b->path, e->pattern,
			     e->metric == CMP_M_LINE ? " at that line"
			     : e->metric == CMP_M_OP && !b->run->has_ops
			     ? " (it has no operators: no frame entered one)" : "");
		goto out;
	}
	while (i < mb.n || j < mc.n) {
		int order = i >= mb.n ? 1 : j >= mc.n ? -1 : strcmp(mb.m[i].key, mc.m[j].key);
		struct cmp_row *row;
		const char *key = order <= 0 ? mb.m[i].key : mc.m[j].key;
		size_t len = strlen(prefix) + strlen(key) + 16;
		double var = 0;
		char *nn = realloc(name, len);

		if (!nn) {
			r->nomem = 1;
			goto out;
		}
		name = nn;
		snprintf(name, len, "%s[%s].%s", prefix, key, field_name(e->field));
		if (!(row = row_add(r, e, name)))
			goto out;
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

/* --- memory metrics: mem.peak, mem.leaked, mem.gpu[N].peak, mem.site[] ---- */

static int is_mem_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_MEM_PEAK || e->metric == CMP_M_MEM_LEAKED ||
	       e->metric == CMP_M_MEM_GPU || e->metric == CMP_M_MEM_SITE;
}

/* A host estimate from allocations sampled every rate bytes on average: its
 * variance is about value * rate (a Poisson count of sampled bytes); exact
 * when every allocation was recorded. */
static double mem_var(double v, double rate)
{
	return rate > 1 && v > 0 ? v * rate : 0;
}

static int site_matches(const struct cmp_expr *e, const struct gate_mem_site *s)
{
	if (e->line) {
		char file[CMP_PATTERN_MAX];
		char *colon;

		snprintf(file, sizeof(file), "%s", e->pattern);
		colon = strrchr(file, ':');
		if (colon)
			*colon = '\0';
		if (s->line == (double)e->line && file_matches(file, s->file))
			return 1;
	}
	return fnmatch(e->pattern, s->function, 0) == 0;
}

/* The value of a memory metric on one side: ok 0 with why set when the
 * side cannot give it. */
static struct cmp_val mem_value(const struct cmp_side *s, const struct cmp_expr *e, char *why,
				size_t len)
{
	const struct gate_run *r = s->run;
	struct cmp_val x = {0, 0, 0};
	size_t i;

	switch (e->metric) {
	case CMP_M_MEM_PEAK:
		if (!gate_has(r->mem_peak)) {
			snprintf(why, len, "no host memory data in the %s run", s->role);
			break;
		}
		x.ok = 1;
		x.v = r->mem_peak;
		x.var = r->mem_peak_exact ? 0 : mem_var(x.v, r->mem_rate);
		break;
	case CMP_M_MEM_LEAKED:
		if (!gate_has(r->mem_leaked)) {
			snprintf(why, len, "no host memory data in the %s run", s->role);
			break;
		}
		x.ok = 1;
		x.v = r->mem_leaked;
		x.var = mem_var(x.v, r->mem_rate);
		break;
	case CMP_M_MEM_GPU:
		for (i = 0; i < r->nmem_gpus; i++) {
			if (r->mem_gpus[i].device == (double)e->device) {
				x.ok = 1;
				x.v = r->mem_gpus[i].peak;
				break;
			}
		}
		if (!x.ok)
			snprintf(why, len, "no memory data for GPU %lu in the %s run", e->device,
				 s->role);
		break;
	case CMP_M_MEM_SITE: {
		int matched = 0;

		for (i = 0; i < r->nmem_sites; i++) {
			const struct gate_mem_site *m = &r->mem_sites[i];
			double v = e->field == CMP_F_ALLOCS ? m->allocs : m->bytes;

			if (!site_matches(e, m) || !gate_has(v))
				continue;
			matched = 1;
			x.v += v;
			if (!m->gpu && e->field == CMP_F_ALLOCS)
				x.var += m->bytes > 0 ? mem_var(v * v / m->bytes, r->mem_rate) : 0;
			else if (!m->gpu)
				x.var += mem_var(v, r->mem_rate);
		}
		/* a site that allocated nothing the agent saw is 0 */
		x.ok = 1;
		if (!matched && s->role[0] == 'b') {
			x.ok = 0;
			snprintf(why, len, "no allocation site in the %s %s matches '%s'", s->role,
				 s->path, e->pattern);
		}
		break;
	}
	default:
		break;
	}
	return x;
}

static void eval_mem(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		     const struct cmp_expr *e)
{
	struct cmp_val vb, vc;
	struct cmp_row *row;
	char why_b[CMP_PATTERN_MAX + 200] = "", why_c[CMP_PATTERN_MAX + 200] = "";

	/* Memory data is recorded only with --memory: a baseline without it
	 * cannot be gated on (config error), a current run without it cannot be
	 * measured (n/a). */
	if (!b->run->has_memory) {
		config_error(r, "'%s': no memory data in the baseline %s; record the baseline "
			     "with --memory", e->text, b->path);
		return;
	}
	vb = mem_value(b, e, why_b, sizeof(why_b));
	if (!vb.ok) {
		config_error(r, "'%s': %s", e->text, why_b);
		return;
	}
	row = row_add(r, e, e->text);
	if (!row)
		return;
	expr_metric_name(e, row->name);
	row->has_base = 1;
	row->base = vb.v;
	if (!c->run->has_memory) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "no memory data in the current run; "
			 "profile it with --memory");
	} else {
		vc = mem_value(c, e, why_c, sizeof(why_c));
		row->has_cur = vc.ok;
		row->cur = vc.v;
		row->sigma = sqrt(vb.var + vc.var);
		if (!vc.ok) {
			row->status = CMP_S_NA;
			snprintf(row->note, sizeof(row->note), "%.250s", why_c);
		}
	}
	row->noise = row->sigma > 0 ? CMP_N_SAMPLED : CMP_N_EXACT;
	row_judge(r, row);
}

/* --- step metrics: step.median, step.p90, step.count ----------------------- */

static int is_step_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN || e->metric == CMP_M_STEP_P90 ||
	       e->metric == CMP_M_STEP_COUNT;
}

static const char *step_key(const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN ? "steps.median_ns"
	       : e->metric == CMP_M_STEP_P90 ? "steps.p90_ns" : "steps.count";
}

static double step_value(const struct gate_run *run, const struct cmp_expr *e)
{
	return e->metric == CMP_M_STEP_MEDIAN ? run->step_median
	       : e->metric == CMP_M_STEP_P90 ? run->step_p90 : run->step_count;
}

/*
 * A figure of a section only some reports have (steps, distributed): a
 * baseline without the section cannot be gated on (config error: "'EXPR':
 * <base_pre> BASE<base_post>"), a current run without it could not be
 * measured (n/a, exit 3 for --fail: cur_note).
 */
struct section_gate {
	int base_has, cur_has;        /* the section is in the baseline / current run */
	double base, cur;             /* the figure (gate_has() says present) */
	const char *key;              /* its JSON key, for "has no KEY" */
	const char *base_pre, *base_post, *cur_note;
	int noise;                    /* CMP_N_* */
};

static void eval_section(struct cmp_result *r, const struct cmp_side *b, const struct cmp_expr *e,
			 const struct section_gate *g)
{
	struct cmp_row *row;

	if (!g->base_has) {
		config_error(r, "'%s': %s %s%s", e->text, g->base_pre, b->path, g->base_post);
		return;
	}
	if (!gate_has(g->base)) {
		config_error(r, "'%s': the baseline %s has no %s; is it a complete cbottleneck "
			     "report?", e->text, b->path, g->key);
		return;
	}
	row = row_add(r, e, e->text);
	if (!row)
		return;
	expr_metric_name(e, row->name);
	row->noise = g->noise;
	row->has_base = 1;
	row->base = g->base;
	if (!g->cur_has) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "%s", g->cur_note);
	} else if (!gate_has(g->cur)) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "the current report has no %s", g->key);
	} else {
		row->has_cur = 1;
		row->cur = g->cur;
	}
	row_judge(r, row);
}

/*
 * Steps exist only when the program marks them (cbn_step(), --step,
 * --step-func).  The median and p90 summarize many steps of one run but are
 * still one run's measurement: no sampling error is claimed for them (as
 * wall); the count is exact.
 */
static void eval_steps(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		       const struct cmp_expr *e)
{
	struct section_gate g = {
		b->run->has_steps, c->run->has_steps,
		b->run->has_steps ? step_value(b->run, e) : NAN,
		c->run->has_steps ? step_value(c->run, e) : NAN,
		step_key(e),
		"no steps in the baseline",
		"; mark the steps when recording it (cbn_step(), --step or --step-func)",
		"could not measure: no steps in the current run; mark them with cbn_step(), "
		"--step or --step-func",
		e->metric == CMP_M_STEP_COUNT ? CMP_N_EXACT : CMP_N_SINGLE,
	};

	eval_section(r, b, e, &g);
}

/* --- distributed metrics: rank.max.wall, mpi.time, imbalance ---------------- */

static int is_dist_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL || e->metric == CMP_M_MPI_TIME ||
	       e->metric == CMP_M_IMBALANCE;
}

static const char *dist_key(const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL ? "distributed.ranks[].wall_ns"
	       : e->metric == CMP_M_MPI_TIME ? "distributed.mpi_ns" : "distributed.imbalance";
}

static double dist_value(const struct gate_run *run, const struct cmp_expr *e)
{
	return e->metric == CMP_M_RANK_MAX_WALL ? run->dist_max_wall
	       : e->metric == CMP_M_MPI_TIME ? run->dist_mpi_ns : run->dist_imbalance;
}

/* Only a distributed run (a process that is a rank) has these; each is one
 * run's measurement (as wall). */
static void eval_dist(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e)
{
	struct section_gate g = {
		b->run->has_dist, c->run->has_dist,
		b->run->has_dist ? dist_value(b->run, e) : NAN,
		c->run->has_dist ? dist_value(c->run, e) : NAN,
		dist_key(e),
		"the baseline",
		" is not a distributed run (no rank); profile the job's ranks "
		"(docs/distributed.md)",
		"could not measure: the current run is not a distributed run (no rank)",
		CMP_N_SINGLE,
	};

	eval_section(r, b, e, &g);
}

/* --- waiting metrics: wait.total, cpu.efficiency, lock[SITE].wait ---------- */

static int is_wait_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_WAIT_TOTAL || e->metric == CMP_M_CPU_EFFICIENCY ||
	       e->metric == CMP_M_LOCK;
}

/* The value of a waiting metric on one side: ok 0 with why set when the
 * side cannot give it.  wait.total and lock[] need --off-cpu: without it the
 * report has no off-CPU time to compare (0 would read as an improvement). */
static struct cmp_val wait_value(const struct cmp_side *s, const struct cmp_expr *e, char *why,
				 size_t len)
{
	const struct gate_run *r = s->run;
	struct cmp_val x = {0, 0, 0};
	int matched = 0;
	size_t i;

	if (!r->has_waiting) {
		snprintf(why, len, "no waiting object in the %s %s (a report older than schema 4, "
			 "or a run without CPU samples)", s->role, s->path);
		return x;
	}
	if (e->metric == CMP_M_CPU_EFFICIENCY) {
		x.ok = gate_has(r->wait_efficiency);
		x.v = r->wait_efficiency;
		if (!x.ok)
			snprintf(why, len, "the %s report has no waiting.efficiency", s->role);
		return x;
	}
	if (!r->wait_offcpu) {
		snprintf(why, len, "the %s run was recorded without --off-cpu", s->role);
		return x;
	}
	if (e->metric == CMP_M_WAIT_TOTAL) {
		x.ok = gate_has(r->wait_off_ns);
		x.v = r->wait_off_ns;
		if (!x.ok)
			snprintf(why, len, "the %s report has no waiting.off_ns", s->role);
		return x;
	}
	for (i = 0; i < r->nlocks; i++) {
		if (fnmatch(e->pattern, r->locks[i].function, 0) != 0)
			continue;
		matched = 1;
		x.v += r->locks[i].wait_ns;
	}
	/* a lock nobody waited for in the current run is 0 */
	x.ok = 1;
	if (!matched && s->role[0] == 'b') {
		x.ok = 0;
		snprintf(why, len, "no contended lock in the %s %s is taken in a function matching "
			 "'%s'", s->role, s->path, e->pattern);
	}
	return x;
}

/*
 * The waiting view is in every report of schema 4 with CPU samples; its
 * off-CPU figures only with --off-cpu.  A baseline that cannot give the
 * figure is a configuration error, a current run that cannot is n/a.  Each
 * figure is one run's measurement: no sampling error is claimed (as wall).
 */
static void eval_wait(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e)
{
	char why_b[CMP_PATTERN_MAX + 200] = "", why_c[CMP_PATTERN_MAX + 200] = "";
	struct cmp_val vb = wait_value(b, e, why_b, sizeof(why_b)), vc;
	struct cmp_row *row;

	if (!vb.ok) {
		config_error(r, "'%s': %s%s", e->text, why_b,
			     e->metric != CMP_M_CPU_EFFICIENCY && b->run->has_waiting
			     ? "; record the baseline with --off-cpu" : "");
		return;
	}
	row = row_add(r, e, e->text);
	if (!row)
		return;
	expr_metric_name(e, row->name);
	row->noise = CMP_N_SINGLE;
	row->has_base = 1;
	row->base = vb.v;
	vc = wait_value(c, e, why_c, sizeof(why_c));
	if (!vc.ok) {
		row->status = CMP_S_NA;
		snprintf(row->note, sizeof(row->note), "could not measure: %.230s", why_c);
	} else {
		row->has_cur = 1;
		row->cur = vc.v;
	}
	row_judge(r, row);
}

/* A row that could not be measured in the current run, saying why. */
static void row_na(struct cmp_result *r, const struct cmp_expr *e, const char *why)
{
	struct cmp_row *row = row_add(r, e, e->text);

	if (!row)
		return;
	expr_metric_name(e, row->name);
	row->noise = metric_noise(e);
	row->status = CMP_S_NA;
	snprintf(row->note, sizeof(row->note), "%s", why);
	row_judge(r, row);
}

static void eval_expr(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e)
{
	/* operators in the baseline, none at all now (not one that went):
	 * nothing to compare with */
	if (e->metric == CMP_M_OP && b->run->has_ops && !c->run->has_ops) {
		row_na(r, e, "the current report has no operators (no frame entered one)");
		return;
	}
	if (is_gpu_metric(e)) {
		if (!c->cuda_ok) {
			row_na(r, e, c->cuda_why);
			return;
		}
		if (!b->cuda_ok) {
			config_error(r, "'%s': %s; record the baseline with CUDA tracing on a "
				     "machine with a GPU", e->text, b->cuda_why);
			return;
		}
	}
	if (is_mem_metric(e))
		eval_mem(r, b, c, e);
	else if (is_step_metric(e))
		eval_steps(r, b, c, e);
	else if (is_wait_metric(e))
		eval_wait(r, b, c, e);
	else if (is_dist_metric(e))
		eval_dist(r, b, c, e);
	else if (e->metric == CMP_M_FUNC || e->metric == CMP_M_LINE || e->metric == CMP_M_KERNEL ||
		 e->metric == CMP_M_API || e->metric == CMP_M_OP)
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

/* With no expressions: warn at +10% on wall, cpu, the baseline's hottest
 * functions (by self time; names taken literally) and, when the baseline has
 * host memory data, its peak, and when it has steps, their median.  Warnings
 * never fail.
 * Returns the number of expressions, or -1 out of memory. */
static long default_exprs(const struct cmp_side *b, struct cmp_expr **out)
{
	const struct gate_run *run = b->run;
	struct top_func *tops = NULL, *nt;
	size_t ntops = 0, i, k, n = 0;
	struct cmp_expr *e;
	char err[256];

	for (k = 0; k < run->nfuncs; k++) {
		const char *name = run->funcs[k].name;
		double self = run->funcs[k].self_ns;

		if (!name || !gate_has(self) || self <= 0 || strlen(name) >= CMP_PATTERN_MAX)
			continue;
		for (i = 0; i < ntops && strcmp(tops[i].name, name) != 0; i++)
			;
		if (i < ntops) {
			tops[i].self += self;
			continue;
		}
		if (!(nt = realloc(tops, (ntops + 1) * sizeof(*tops)))) {
			free(tops);
			return -1;
		}
		tops = nt;
		tops[ntops].name = name;
		tops[ntops++].self = self;
		if (ntops >= 1000)
			break;
	}
	if (ntops)
		qsort(tops, ntops, sizeof(*tops), top_cmp);
	if (ntops > CMP_DEFAULT_TOP)
		ntops = CMP_DEFAULT_TOP;
	if (!(e = malloc((4 + ntops) * sizeof(*e)))) {
		free(tops);
		return -1;
	}
	if (cmp_expr_parse("wall:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
		n++;
	if (cmp_expr_parse("cpu:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
		n++;
	if (run->has_memory && gate_has(run->mem_peak) &&
	    cmp_expr_parse("mem.peak:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
		n++;
	if (run->has_steps && gate_has(run->step_median) &&
	    cmp_expr_parse("step.median:+10%", CMP_LEVEL_WARN, &e[n], err, sizeof(err)) == 0)
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
	return (long)n;
}

/* --- entry points ---------------------------------------------------------- */

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

/* Load a report for side role; 0, CMP_USAGE (message printed) or CMP_NOMEM. */
static int load(const char *path, const char *role, struct gate_run *run)
{
	char err[768];
	int ret = gate_run_from_json(path, role, run, err, sizeof(err));

	if (ret == -ENOMEM)
		return CMP_NOMEM;
	if (ret < 0) {
		fprintf(stderr, "cbottleneck compare: %s\n", err);
		return CMP_USAGE;
	}
	return 0;
}

/*
 * The baseline is read from base_path; the current run is cur (the run just
 * analysed), or read from cur_path when cur is NULL.  cur_label names the
 * current run in the table.
 */
static int cmp_eval(const char *base_path, const char *cur_path, const struct gate_run *cur,
		    const char *cur_label, const struct cmp_opts *o, FILE *out)
{
	struct gate_run brun, crun;
	struct cmp_side b, c;
	struct cmp_result r;
	struct cmp_expr *exprs = NULL;
	size_t nexprs = 0, i;
	char err[768];
	int ret = CMP_USAGE;

	memset(&r, 0, sizeof(r));
	memset(&brun, 0, sizeof(brun));
	memset(&crun, 0, sizeof(crun));
	if (!base_path || (!cur && !cur_path)) {
		fprintf(stderr, "cbottleneck compare: need a baseline and a current report\n");
		return CMP_USAGE;
	}
	/* Reject every bad expression before reading anything. */
	nexprs = o->nfail + o->nwarn;
	exprs = malloc((nexprs ? nexprs : 1) * sizeof(*exprs));
	if (!exprs)
		return CMP_NOMEM;
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
	if ((ret = load(base_path, "baseline", &brun)) != 0)
		goto out;
	if (!cur) {
		if ((ret = load(cur_path, "current", &crun)) != 0)
			goto out;
		cur = &crun;
		cur_label = cur_path;
	}
	ret = CMP_USAGE;
	side_init(&b, &brun, base_path, "baseline");
	side_init(&c, cur, cur_label, "current");
	if (nexprs == 0) {
		long n;

		free(exprs);
		exprs = NULL;
		if ((n = default_exprs(&b, &exprs)) < 0) {
			ret = CMP_NOMEM;
			goto out;
		}
		nexprs = (size_t)n;
		r.defaults = 1;
	}
	r.base_path = base_path;
	r.cur_path = cur_label;
	side_command(&b, r.base_cmd, sizeof(r.base_cmd));
	side_command(&c, r.cur_cmd, sizeof(r.cur_cmd));
	for (i = 0; i < nexprs && !r.nomem; i++)
		eval_expr(&r, &b, &c, &exprs[i]);
	if (r.nomem) {
		ret = CMP_NOMEM;
		goto out;
	}
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
	gate_run_free(&brun);
	gate_run_free(&crun);
	return ret;
}

int cmp_run(const char *baseline_path, const char *current_path, const struct cmp_opts *o,
	    FILE *out)
{
	return cmp_eval(baseline_path, current_path, NULL, NULL, o, out);
}

int cmp_run_current(const char *baseline_path, const struct gate_run *cur, const char *cur_label,
		    const struct cmp_opts *o, FILE *out)
{
	return cmp_eval(baseline_path, NULL, cur, cur_label, o, out);
}
