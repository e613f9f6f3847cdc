/*
 * ops.h — framework operators recognised from native frames, without
 * instrumenting the framework: PyTorch's dispatcher entry points
 * (`at::_ops::<op>::call` -> `aten::<op>`), autograd nodes, ggml's compute
 * functions, ONNX Runtime and TensorFlow kernels, and the user's own
 * --op-pattern rules, all from one rules table (ops_rules.c).  Then the
 * operator table, torch.profiler's key_averages() columns from cbottleneck's
 * data (docs/reading-the-report.md, "Python and PyTorch programs"):
 *   Self CPU / CPU total   sampled on-CPU time whose stack has the operator
 *                          innermost / anywhere (once per sample);
 *   Self CUDA / CUDA total exact GPU time of the kernels, copies and sets
 *                          whose launching call's stack has it innermost /
 *                          anywhere (once per GPU op);
 *   Launches               API calls that launched GPU work from inside it.
 * Launcher side only; the result is read-only after ops_analyze().
 */
#ifndef CBN_OPS_H
#define CBN_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define OPS_NONE UINT32_MAX

/* --op-pattern REGEX=NAME: frames whose function name (without return type
 * and parameters) matches REGEX (POSIX extended) are operator NAME; \1..\9
 * in NAME insert the groups, \u1..\u9 in upper case. */
struct op_pattern {
	const char *regex;       /* regex_len bytes (0: the whole string) */
	size_t regex_len;
	const char *name;
};

/* Parse "REGEX=NAME" (split at the last '='; both parts non-empty, REGEX
 * valid).  out points into arg.  Returns 0, or -1 with a one-line reason in
 * err. */
int ops_pattern_parse(const char *arg, struct op_pattern *out, char *err, size_t errlen);

struct op_row {
	const char *name;        /* "aten::addmm", "AddmmBackward0", "GGML MUL_MAT" */
	const char *framework;   /* "pytorch", "ggml", "onnxruntime", "tensorflow", "user" */
	const char *entry;       /* the full signature of the first entry function seen */
	uint64_t self_cpu_ns, cpu_total_ns;     /* sampled: weight x period */
	uint64_t self_weight, total_weight;     /* the sample weights behind them */
	uint64_t self_cuda_ns, cuda_total_ns;   /* exact GPU time */
	uint64_t self_gpu_ops, gpu_ops;         /* kernels, copies and sets behind them */
	uint64_t self_launches, launches;       /* API calls that launched GPU work */
	uint32_t *parents;       /* rows it was seen nested in directly (row indices) */
	size_t nparents;
};

struct op_analysis {
	struct op_row *rows;     /* sorted by the default key (ops_sort) */
	size_t nrows;
	/* per profile index: its operator (row index), OPS_NONE */
	uint32_t *func_op;       /* p->nfuncs: the operator a function enters */
	uint32_t *api_op;        /* p->ncuda_api: innermost operator on its (or its
				  * enclosing call's) launch stack */
	uint64_t self_cpu_total_ns;    /* sum of self CPU over rows */
	uint64_t cpu_ns;               /* all sampled CPU time of the run */
	uint64_t self_cuda_total_ns;   /* sum of self CUDA over rows */
	uint64_t gpu_ns;               /* all GPU time (kernels, copies, sets) */
	uint64_t launches;             /* API calls that launched GPU work, all */
	const char *sort_key;          /* the key rows are sorted by */
	void *priv;                    /* strings owned by the analysis */
};

/* Recognise operators in p (built-in rules, after the user's patterns[0..n)
 * which take precedence) and build the table.  Returns 0 with *out (NULL
 * when no frame entered an operator), or -ENOMEM. */
int ops_analyze(const struct profile *p, const struct op_pattern *patterns, size_t npatterns,
		struct op_analysis **out);
void ops_free(struct op_analysis *o);

/* 1 if key is one of the keys ops_sort() knows (key_averages' spellings). */
int ops_sort_key_valid(const char *key);
/* Sort rows[0..n) by key: cuda_time_total, self_cuda_time_total,
 * cpu_time_total, self_cpu_time_total, count (= launches), with torch's
 * device_* spellings; anything else is the default (cuda_time_total when
 * some operator has GPU time, else cpu_time_total).  Ties by name.  Returns
 * the key used. */
const char *ops_sort(struct op_row *rows, size_t n, const char *key, int has_gpu);

/* --- the rules table (ops_rules.c) ------------------------------------------ */

struct ops_rules;

/* Compile the built-in rules after the user's patterns.  Returns 0 with *out,
 * -EINVAL with a message in err when a pattern does not compile, -ENOMEM. */
int ops_rules_new(const struct op_pattern *patterns, size_t n, struct ops_rules **out,
		  char *err, size_t errlen);
void ops_rules_free(struct ops_rules *r);

/* The operator a function enters: 1 with its label in buf and the rule's
 * framework in *framework (and *merge: a frame of the same rule whose label
 * starts with its parent's label and "_" belongs to the parent, as ggml's
 * helpers ggml_compute_forward_mul_mat_one_chunk do), 0 when it is none.
 * name is the demangled name; module_path (may be NULL) helps read
 * PyTorch's operator names from the headers installed beside libtorch. */
int ops_rules_match(struct ops_rules *r, const char *name, const char *module_path, char *buf,
		    size_t len, const char **framework, int *merge);

/* The aten name of an at::_ops struct ("add__Tensor" -> "add_",
 * "sum_dim_IntList" -> "sum") without headers: the struct name less the
 * longest trailing "_<overload>" whose overload is one PyTorch uses.
 * Writes the base into buf. */
void ops_aten_base(const char *sname, char *buf, size_t len);

#endif
