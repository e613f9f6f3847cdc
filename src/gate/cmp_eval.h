/*
 * cmp_eval.h — what the gate's evaluators share (compare.c and one cmp_*.c
 * per view, mirroring src/analysis): the two sides compared, the rows of
 * the result, and each view's test and evaluator.  Private to src/gate.
 */
#ifndef CBN_CMP_EVAL_H
#define CBN_CMP_EVAL_H

#include "cmp_internal.h"
#include "gate_run.h"

/* One side of the comparison. */
struct cmp_side {
	const char *path;        /* the report's path, or what stands for the run */
	const char *role;        /* "baseline" or "current" */
	const struct gate_run *run;
	int cuda_ok;             /* CUDA was traced: GPU metrics are meaningful */
	char cuda_why[200];      /* why not, when !cuda_ok */
};


/* A value and its sampling variance (ns^2), or the exact/single flavour. */
struct cmp_val {
	int ok;
	double v, var;
};


/* cmp_row.c: a copy of s (NULL when memory is short); sampled time v (ns)
 * of n counted periods as a value with its Poisson variance (v * period
 * without a count). */
char *cmp_strdup(const char *s);
struct cmp_val cmp_sampled(double v, double n, double period);

/* cmp_pattern.c: whether file matches pattern ("file.c" or a path glob). */
int cmp_file_matches(const char *pattern, const char *file);

/* cmp_row.c: a new row (NULL with r->nomem set); one row's status from its
 * numbers and its expression's threshold; a gate that names what the
 * baseline lacks (said on stderr, r->config_error set); the name of e's
 * metric into name; the noise of e's metric. */
struct cmp_row *cmp_row_add(struct cmp_result *r, const struct cmp_expr *e, const char *name);
void cmp_row_judge(struct cmp_result *r, struct cmp_row *row);
void cmp_config_error(struct cmp_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void cmp_metric_name(const struct cmp_expr *e, char *name);
enum cmp_noise cmp_metric_noise(const struct cmp_expr *e);

/*
 * A figure of a section only some reports have (steps, distributed): a
 * baseline without the section cannot be gated on (config error: "'EXPR':
 * <base_pre> BASE<base_post>"), a current run without it could not be
 * measured (n/a, exit 3 for --fail: cur_note).
 */
struct cmp_section {
	int base_has, cur_has;        /* the section is in the baseline / current run */
	double base, cur;             /* the figure (gate_has() says present) */
	const char *key;              /* its JSON key, for "has no KEY" */
	const char *base_pre, *base_post, *cur_note;
	int noise;                    /* CMP_N_* */
};


void cmp_eval_section(struct cmp_result *r, const struct cmp_side *b, const struct cmp_expr *e,
		      const struct cmp_section *g);

/* One evaluator per view: its metrics' test, and the rows of expression e. */
void cmp_eval_pattern(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		      const struct cmp_expr *e);
int cmp_is_mem_metric(const struct cmp_expr *e);
void cmp_eval_mem(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		  const struct cmp_expr *e);
int cmp_is_step_metric(const struct cmp_expr *e);
void cmp_eval_steps(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		    const struct cmp_expr *e);
int cmp_is_dist_metric(const struct cmp_expr *e);
void cmp_eval_dist(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		   const struct cmp_expr *e);
int cmp_is_wait_metric(const struct cmp_expr *e);
void cmp_eval_wait(struct cmp_result *r, const struct cmp_side *b, const struct cmp_side *c,
		   const struct cmp_expr *e);

#endif
