/*
 * compare.c — the regression gate: evaluate every gate expression over two
 * runs (struct gate_run: a JSON report, or the run just analysed) into table
 * rows with noise-aware verdicts, and decide the exit status (docs/ci.md).
 * The run's scalars (wall, cpu, samples, gpu.*) are evaluated here, each
 * view's metrics in a file of its own (cmp_pattern.c, cmp_mem.c,
 * cmp_steps.c, cmp_dist.c, cmp_wait.c: cmp_eval.h), the rows they all add
 * in cmp_row.c, below them.  Out of memory is CMP_NOMEM, returned: the
 * caller says so and exits.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_eval.h"
#include "gate_run.h"
#include "util.h"

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

static int is_gpu_metric(const struct cmp_expr *e)
{
	return e->metric == CMP_M_GPU || e->metric == CMP_M_KERNEL || e->metric == CMP_M_API;
}

static void eval_scalar(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
			const struct cmp_expr *e)
{
	struct cmp_val vb = scalar_value(b, e), vc = scalar_value(c, e);
	struct cmp_row *row;

	/* A metric the baseline lacks is a configuration error, unless the current
	 * run cannot show it either (a GPU metric on two CPU-only runs: n/a). */
	if (!vb.ok && (e->metric != CMP_M_GPU || vc.ok)) {
		cmp_config_error(r, "'%s': the baseline %s has no %s; is it a complete cbottleneck "
				 "report?", e->text, b->path, scalar_key(e));
		return;
	}
	row = cmp_row_add(r, e, e->text);
	if (!row)
		return;
	cmp_metric_name(e, row->name);
	row->noise = cmp_metric_noise(e);
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
	cmp_row_judge(r, row);
}

static void row_na(struct cmp_result *r, const struct cmp_expr *e, const char *why)
{
	struct cmp_row *row = cmp_row_add(r, e, e->text);

	if (!row)
		return;
	cmp_metric_name(e, row->name);
	row->noise = cmp_metric_noise(e);
	row->status = CMP_S_NA;
	snprintf(row->note, sizeof(row->note), "%s", why);
	cmp_row_judge(r, row);
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
			cmp_config_error(r, "'%s': %s; record the baseline with CUDA tracing on a "
					 "machine with a GPU", e->text, b->cuda_why);
			return;
		}
	}
	if (cmp_is_mem_metric(e))
		cmp_eval_mem(r, b, c, e);
	else if (cmp_is_step_metric(e))
		cmp_eval_steps(r, b, c, e);
	else if (cmp_is_wait_metric(e))
		cmp_eval_wait(r, b, c, e);
	else if (cmp_is_dist_metric(e))
		cmp_eval_dist(r, b, c, e);
	else if (e->metric == CMP_M_FUNC || e->metric == CMP_M_LINE || e->metric == CMP_M_KERNEL ||
		 e->metric == CMP_M_API || e->metric == CMP_M_OP)
		cmp_eval_pattern(r, b, c, e);
	else
		eval_scalar(r, b, c, e);
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
