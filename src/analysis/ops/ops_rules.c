/*
 * ops_rules.c — which native frames enter a framework operator, and its name:
 * the one rules table (builtin[] below, after the user's --op-pattern rules),
 * label templates, and PyTorch's struct -> aten name mapping (from the
 * ATen/ops/<op>_ops.h headers installed beside libtorch when present, else from
 * the overload names PyTorch uses).  Launcher side only.
 */
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"
#include "ops.h"
#include "util.h"

enum {
	R_ATEN = 1,      /* label group 1 is an at::_ops struct: map it to its aten name */
	R_MERGE = 2,     /* a nested frame of this rule whose label extends its parent's
			  * with "_..." is a helper of the parent, not an operator */
};

struct rule_def {
	const char *framework;
	const char *must;        /* a substring every match contains (cheap filter), or NULL */
	const char *regex;       /* POSIX extended, over the name without return type and
				  * parameters */
	const char *label;       /* template (\N, \uN), NULL: not an operator (stops the
				  * rules below from matching) */
	unsigned flags;
};

/*
 * The built-in rules, first match wins.  Names are matched without return
 * type and parameter list (names_bare()).  docs/reading-the-report.md lists
 * them; keep it in step.
 */
static const struct rule_def builtin[] = {
	/* PyTorch: one struct per operator overload in namespace at::_ops; its
	 * call() is where torch.profiler records the operator (redispatch()
	 * records nothing, so it is no operator here either). */
	{ "pytorch", "at::_ops::", "^at::_ops::([A-Za-z0-9_]+)::call$", "aten::\\1", R_ATEN },
	/* autograd nodes run by the engine: generated ones are named by their
	 * class, the others by their qualified name (Node::name()) */
	{ "pytorch", "torch::autograd::", "^torch::autograd::generated::([A-Za-z0-9_]+)::apply$",
	  "\\1", 0 },
	{ "pytorch", "torch::autograd::",
	  "^torch::autograd::(AccumulateGrad|CopyBackwards|CopySlices|GraphRoot|Error|"
	  "DelayedError|UndefinedGradBackward|Identity)::apply$",
	  "torch::autograd::\\1", 0 },
	/* ggml (llama.cpp): the CPU backend's compute functions and the CUDA
	 * backend's operator functions, named as ggml_op_name() spells ops */
	{ "ggml", "ggml_", "^ggml_compute_forward_([a-z0-9_]+)$", "GGML \\u1", R_MERGE },
	{ "ggml", "ggml_", "^ggml_cuda_op_([a-z0-9_]+)$", "GGML \\u1", R_MERGE },
	{ "ggml", "ggml_", "^ggml_cuda_(mul_mat[a-z0-9_]*|cpy|dup|flash_attn_ext|argsort|"
	  "count_equal|get_rows|set_rows|concat|im2col)$", "GGML \\u1", R_MERGE },
	/* ONNX Runtime: OpKernel::Compute and the CUDA provider's ComputeInternal
	 * of each kernel class; the base classes only dispatch */
	{ "onnxruntime", "onnxruntime::", "^onnxruntime::(cuda::)?(CudaKernel|OpKernel)::Compute$",
	  NULL, 0 },
	{ "onnxruntime", "onnxruntime::",
	  "^onnxruntime::(.*::)?([A-Za-z0-9_]+)(<.*>)?::(Compute|ComputeInternal)$", "ORT \\2", 0 },
	/* TensorFlow: OpKernel::Compute / AsyncOpKernel::ComputeAsync of each
	 * kernel class; the devices' Compute only runs them */
	{ "tensorflow", "tensorflow::",
	  "^tensorflow::(.*::)?([A-Za-z0-9_]*Device|OpKernel|AsyncOpKernel)::Compute(Async)?$",
	  NULL, 0 },
	{ "tensorflow", "tensorflow::",
	  "^tensorflow::(.*::)?([A-Za-z0-9_]+)(<.*>)?::Compute(Async)?$", "TF \\2", 0 },
};

#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

struct crule {
	regex_t re;
	int compiled;
	const char *framework, *must, *label;
	unsigned flags;
};

/* at::_ops struct name -> aten name, once each */
struct aten_ent {
	char *sname, *name;
};

struct ops_rules {
	struct crule *r;
	size_t n;
	struct aten_ent *aten;
	size_t naten, capaten;
	struct util_map aten_map;       /* hash of sname -> index into aten */
	char incdir[PATH_MAX];          /* ATen/ops headers of the last libtorch seen */
	char incdir_of[PATH_MAX];       /* ... the module path they were looked up for */
	int incdir_ok;
};

int ops_pattern_parse(const char *arg, struct op_pattern *out, char *err, size_t errlen)
{
	const char *eq = arg ? strrchr(arg, '=') : NULL;
	char *re;
	regex_t rx;
	int bad;

	if (!eq || eq == arg || !eq[1]) {
		snprintf(err, errlen, "--op-pattern %s: expected REGEX=NAME, e.g. "
			 "'^myops::([a-z_]+)::run$=my::\\1'", arg ? arg : "");
		return -1;
	}
	re = strndup(arg, (size_t)(eq - arg));
	if (!re) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	bad = regcomp(&rx, re, REG_EXTENDED);
	if (!bad)
		regfree(&rx);
	free(re);
	if (bad) {
		snprintf(err, errlen, "--op-pattern %s: '%.*s' is not a valid regular expression "
			 "(POSIX extended)", arg, (int)(eq - arg), arg);
		return -1;
	}
	out->regex = arg;
	out->regex_len = (size_t)(eq - arg);
	out->name = eq + 1;
	return 0;
}

void ops_rules_free(struct ops_rules *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->n; i++)
		if (r->r[i].compiled)
			regfree(&r->r[i].re);
	for (i = 0; i < r->naten; i++) {
		free(r->aten[i].sname);
		free(r->aten[i].name);
	}
	free(r->aten);
	util_map_free(&r->aten_map);
	free(r->r);
	free(r);
}

int ops_rules_new(const struct op_pattern *patterns, size_t n, struct ops_rules **out,
		  char *err, size_t errlen)
{
	struct ops_rules *r = calloc(1, sizeof(*r));
	size_t i;

	*out = NULL;
	if (!r || !(r->r = calloc(n + NBUILTIN, sizeof(*r->r)))) {
		free(r);
		return -ENOMEM;
	}
	for (i = 0; i < n + NBUILTIN; i++) {
		struct crule *c = &r->r[i];
		const char *re;
		char *tmp = NULL;
		int bad;

		if (i < n) {
			tmp = patterns[i].regex_len
				? strndup(patterns[i].regex, patterns[i].regex_len)
				: strdup(patterns[i].regex);
			if (!tmp)
				goto nomem;
			re = tmp;
			c->framework = "user";
			c->label = patterns[i].name;
		} else {
			const struct rule_def *d = &builtin[i - n];

			re = d->regex;
			c->framework = d->framework;
			c->must = d->must;
			c->label = d->label;
			c->flags = d->flags;
		}
		bad = regcomp(&c->re, re, REG_EXTENDED);
		if (bad) {
			snprintf(err, errlen, "operator pattern '%s' is not a valid regular expression",
				 re);
			free(tmp);
			r->n = i;
			ops_rules_free(r);
			return -EINVAL;
		}
		free(tmp);
		c->compiled = 1;
		r->n = i + 1;
	}
	*out = r;
	return 0;
nomem:
	ops_rules_free(r);
	return -ENOMEM;
}

/* --- PyTorch's aten names ------------------------------------------------------ */

/* Overload names PyTorch's native_functions.yaml uses, as they end at::_ops
 * struct names.  Names that also end operator names ("values", "indices",
 * "min", "data") are left out: without the headers such a split would be a
 * guess either way, and keeping the whole struct name is the safer one. */
static const char *const overloads[] = {
	"Tensor", "Scalar", "out", "int", "dim", "dims", "self", "other", "input", "List",
	"ScalarList", "TensorList", "Tensor_Scalar", "Scalar_Tensor", "Tensor_out", "Scalar_out",
	"Tensor_Tensor", "Tensor_Scalar_out", "Tensor_Tensor_out", "Scalar_Tensor_out",
	"dim_IntList", "IntList", "IntList_out", "names", "names_out", "Dimname", "dimname",
	"dimname_out", "memory_format", "dtype", "dtype_out", "dtype_layout", "device", "grad_input",
	"using_ints", "int_out", "dim_out", "correction", "correction_out", "start", "start_step",
	"start_out", "Tensor_mode", "ScalarOpt_dim", "ScalarOpt_dim_dtype", "ScalarOpt_dtype",
	"src", "value", "reduce", "two", "generator", "generator_out", "from", "to", "float",
	"bool", "str", "output", "SymInt", "vec", "padding", "prim_dtype", "self_int",
	"self_Tensor", "Tensor_other", "other_out", "self_out", "source_Tensor", "source_Storage",
	"default", "Scalar_mode", "dim_max", "dim_min", "dim_Dimname", "Dimname_out",
	"Tensor_Scalar_mode", "ScalarList_out", "List_out", "Tensor_list", "tensor", "array",
	"sizes", "values_out", "mode", "t", "complex", "Scalar_Tensor_mode",
};

static int is_overload(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(overloads) / sizeof(overloads[0]); i++)
		if (strcmp(s, overloads[i]) == 0)
			return 1;
	return 0;
}

void ops_aten_base(const char *sname, char *buf, size_t len)
{
	size_t n = strlen(sname), k;

	/* the leftmost split gives the longest overload: "sum_dim_IntList" is
	 * sum + dim_IntList, "add__Tensor" is add_ + Tensor */
	for (k = 1; k + 1 < n; k++)
		if (sname[k] == '_' && sname[k + 1] != '_' && is_overload(sname + k + 1)) {
			snprintf(buf, len, "%.*s", (int)k, sname);
			return;
		}
	snprintf(buf, len, "%s", sname);
}

/* ATen/ops beside a libtorch: <prefix>/torch/lib/libtorch_cpu.so ->
 * <prefix>/torch/include/ATen/ops (the wheel's layout). */
static int aten_incdir(struct ops_rules *r, const char *module_path)
{
	const char *slash;

	if (!module_path || !*module_path)
		return 0;
	if (strcmp(r->incdir_of, module_path) == 0)
		return r->incdir_ok;
	snprintf(r->incdir_of, sizeof(r->incdir_of), "%s", module_path);
	r->incdir_ok = 0;
	slash = strrchr(module_path, '/');
	if (!slash)
		return 0;
	snprintf(r->incdir, sizeof(r->incdir), "%.*s/../include/ATen/ops",
		 (int)(slash - module_path), module_path);
	r->incdir_ok = access(r->incdir, R_OK | X_OK) == 0;
	return r->incdir_ok;
}

/* The operator name that header file f gives struct sname ("aten::add"), or
 * NULL.  The header declares "struct TORCH_API <sname> {" and, inside, the
 * name as the first string literal holding "::". */
static char *aten_from_header(const char *f, const char *sname)
{
	char pat[300], *text = NULL, *at, *q, *e, *res = NULL;
	FILE *fp = fopen(f, "r");
	size_t cap = 1 << 20, n;

	if (!fp)
		return NULL;
	text = malloc(cap + 1);
	if (!text)
		goto out;
	n = fread(text, 1, cap, fp);
	text[n] = '\0';
	snprintf(pat, sizeof(pat), "struct TORCH_API %s {", sname);
	at = strstr(text, pat);
	if (!at)
		goto out;
	e = strstr(at, "};");
	for (q = strchr(at, '"'); q && (!e || q < e); q = strchr(q + 1, '"')) {
		char *end = strchr(q + 1, '"');

		if (!end)
			break;
		if (memchr(q + 1, ':', (size_t)(end - q - 1))) {
			res = strndup(q + 1, (size_t)(end - q - 1));
			break;
		}
		q = end;
	}
out:
	free(text);
	fclose(fp);
	return res;
}

/* The header holding struct sname: <base>_ops.h for some base that sname
 * starts with (in-place variants share their base's header: add_ -> add). */
static char *aten_lookup_headers(struct ops_rules *r, const char *sname)
{
	char base[256], path[PATH_MAX + 300];
	size_t n = strlen(sname), k;

	for (k = n; k > 0; k--) {
		size_t b = k;

		if (k != n && sname[k] != '_')
			continue;
		while (b > 1 && sname[b - 1] == '_')
			b--;
		snprintf(base, sizeof(base), "%.*s", (int)b, sname);
		snprintf(path, sizeof(path), "%s/%s_ops.h", r->incdir, base);
		if (access(path, R_OK) == 0) {
			char *name = aten_from_header(path, sname);

			if (name)
				return name;
		}
	}
	return NULL;
}

static int aten_eq(const void *ctx, uint32_t v)
{
	const void *const *c = ctx;
	const struct ops_rules *r = c[0];

	return strcmp(r->aten[v].sname, (const char *)c[1]) == 0;
}

/* "aten::<name>" for struct sname into buf. */
static void aten_name(struct ops_rules *r, const char *sname, const char *module_path, char *buf,
		      size_t len)
{
	const void *ctx[2] = { r, sname };
	uint64_t h = util_fnv1a_str(sname, UTIL_FNV_INIT);
	uint32_t v = util_map_find(&r->aten_map, h, aten_eq, ctx);
	char base[256], *name = NULL;

	if (v != UINT32_MAX) {
		snprintf(buf, len, "%s", r->aten[v].name);
		return;
	}
	if (aten_incdir(r, module_path))
		name = aten_lookup_headers(r, sname);
	if (!name) {
		ops_aten_base(sname, base, sizeof(base));
		if (asprintf(&name, "aten::%s", base) < 0)
			name = NULL;
	}
	snprintf(buf, len, "%s", name ? name : sname);
	/* remember it; a failure only costs the lookup again */
	if (name && !util_grow((void **)&r->aten, &r->capaten, r->naten, sizeof(*r->aten))) {
		char *s = strdup(sname);

		if (s && util_map_put(&r->aten_map, h, (uint32_t)r->naten) == 0) {
			r->aten[r->naten].sname = s;
			r->aten[r->naten].name = name;
			r->naten++;
			return;
		}
		free(s);
	}
	free(name);
}

/* --- matching ------------------------------------------------------------------ */

/* Expand a label template: \N group N, \uN group N in upper case. */
static void expand(const char *tmpl, const char *subject, const regmatch_t *m, char *buf,
		   size_t len)
{
	size_t o = 0;
	const char *t;

	for (t = tmpl; *t && o + 1 < len; t++) {
		int upper = 0, g;

		if (t[0] != '\\' || !t[1]) {
			buf[o++] = *t;
			continue;
		}
		if (t[1] == 'u' && t[2] >= '1' && t[2] <= '9') {
			upper = 1;
			t++;
		}
		if (t[1] < '0' || t[1] > '9') {
			buf[o++] = *++t;   /* "\\" or "\x": the character */
			continue;
		}
		g = t[1] - '0';
		t++;
		if (m[g].rm_so < 0)
			continue;
		for (regoff_t i = m[g].rm_so; i < m[g].rm_eo && o + 1 < len; i++) {
			char c = subject[i];

			buf[o++] = upper && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
		}
	}
	buf[o] = '\0';
}

int ops_rules_match(struct ops_rules *r, const char *name, const char *module_path, char *buf,
		    size_t len, const char **framework, int *merge)
{
	char bare[4096];
	regmatch_t m[10];
	size_t i;

	if (!name || !*name || name[0] == '[')
		return 0;
	names_bare_copy(bare, sizeof(bare), name);
	for (i = 0; i < r->n; i++) {
		const struct crule *c = &r->r[i];

		if (c->must && !strstr(bare, c->must))
			continue;
		if (regexec(&c->re, bare, 10, m, 0) != 0)
			continue;
		if (!c->label)
			return 0;
		if (c->flags & R_ATEN) {
			char sname[256];

			snprintf(sname, sizeof(sname), "%.*s", (int)(m[1].rm_eo - m[1].rm_so),
				 bare + m[1].rm_so);
			aten_name(r, sname, module_path, buf, len);
		} else {
			expand(c->label, bare, m, buf, len);
		}
		if (!*buf)
			return 0;
		*framework = c->framework;
		*merge = (c->flags & R_MERGE) != 0;
		return 1;
	}
	return 0;
}
