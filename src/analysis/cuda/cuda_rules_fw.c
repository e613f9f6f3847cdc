/*
 * cuda_rules_fw.c — the framework-aware CUDA rules (cuda_rules.c has the
 * table): what the kernels' names say of the framework around them, layout
 * transposes (channels-last), fp32 math on tensor-core GPUs, and chains of
 * tiny elementwise kernels to fuse.
 */
#include <string.h>

#include "cuda_rules_int.h"
#include "ops.h"
#include "util.h"

/* --- framework-aware rules: what the kernels' names say ----------------------- */

/* 1 if the (lower-cased) kernel name holds one of the words. */
static int name_has(const char *lname, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strstr(lname, words[i]))
			return 1;
	return 0;
}

static void lower(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < len; i++)
		dst[i] = (char)(src[i] >= 'A' && src[i] <= 'Z' ? src[i] - 'A' + 'a' : src[i]);
	dst[i] = '\0';
}

/* cuDNN's (and TensorRT's) layout transposes between NCHW and NHWC. */
static int is_layout_transpose(const char *lname)
{
	static const char *const w[] = { "nchwtonhwc", "nhwctonchw" };

	return name_has(lname, w, 2);
}

/* fp32 matrix multiplies and convolutions on the CUDA cores: cuBLAS's and
 * CUTLASS's sgemm, xmma kernels computing in f32 (not tf32), cuDNN's scudnn
 * and *_convolve_sgemm.  Tensor-core kernels (tf32, f16, bf16, hmma, the
 * s1688/s16816 TF32 tiles, "tensorop") are not. */
static int is_fp32_math(const char *lname)
{
	static const char *const yes[] = { "sgemm", "_f32f32_f32f32_f32", "scudnn",
					   "convolve_sgemm", "gemmsn_" };
	static const char *const no[] = { "tf32", "tensorop", "hmma", "f16", "bf16", "s1688",
					  "s16816", "h1688", "i8816", "imma" };

	return name_has(lname, yes, sizeof(yes) / sizeof(yes[0])) &&
	       !name_has(lname, no, sizeof(no) / sizeof(no[0]));
}

/* PyTorch's (and others') pointwise kernels. */
static int is_elementwise(const char *lname)
{
	static const char *const w[] = { "elementwise_kernel", "elementwise" };

	return name_has(lname, w, 2);
}

struct op_count {
	uint32_t row;
	uint64_t n, ns;
};

static int cmp_op_count(const void *a, const void *b)
{
	const struct op_count *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* "; launched from aten::cudnn_convolution (90%), aten::copy_ (10%)": the
 * operators (innermost on the launch stacks) behind the GPU ops sel[0..n),
 * by GPU time, three at most; "" without operators. */
static void by_operator(const struct cuda_rule_ctx *c, const uint32_t *sel, size_t n, char *buf,
			size_t len)
{
	const struct op_analysis *ops = c->ops;
	const struct profile *p = c->p;
	struct op_count *cnt;
	uint64_t all = 0;
	size_t i, k, used = 0;

	buf[0] = '\0';
	if (!ops || !ops->nrows || !(cnt = calloc(ops->nrows, sizeof(*cnt))))
		return;
	for (i = 0; i < ops->nrows; i++)
		cnt[i].row = (uint32_t)i;
	for (i = 0; i < n; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[sel[i]];
		uint64_t d = dur(g->start, g->end);
		uint32_t r = g->api < p->ncuda_api ? ops->api_op[g->api] : OPS_NONE;

		all += d;
		if (r == OPS_NONE)
			continue;
		cnt[r].n++;
		cnt[r].ns += d;
	}
	qsort(cnt, ops->nrows, sizeof(*cnt), cmp_op_count);
	for (k = 0; k < 3 && k < ops->nrows && cnt[k].n; k++) {
		int w = snprintf(buf + used, len - used, "%s%s (%.0f%%)",
				 k ? ", " : "; launched from ", ops->rows[cnt[k].row].name,
				 all ? 100.0 * (double)cnt[k].ns / (double)all : 0.0);

		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	free(cnt);
}

/* The GPU ops whose kernel name passes test (and, max_ns > 0, that ran
 * shorter than max_ns); *ns their GPU time, *names the first three distinct
 * display names.  Returns how many, or -ENOMEM (*sel is the caller's to
 * free). */
static long select_kernels(const struct cuda_rule_ctx *c, int (*test)(const char *),
			   uint64_t max_ns, uint32_t **sel, uint64_t *ns, char *names, size_t len)
{
	const struct profile *p = c->p;
	const char *seen[3] = { 0 };
	size_t i, n = 0, nseen = 0, used = 0;
	char lname[1024];

	*ns = 0;
	names[0] = '\0';
	if (!(*sel = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(**sel))))
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *g = &p->gpu_ops[i];

		if (g->kind != PROF_GPU_KERNEL || !g->name)
			continue;
		if (max_ns && dur(g->start, g->end) >= max_ns)
			continue;
		lower(lname, sizeof(lname), g->name);
		if (!test(lname))
			continue;
		(*sel)[n++] = (uint32_t)i;
		*ns += dur(g->start, g->end);
		if (nseen < 3) {
			size_t k;
			int w;

			for (k = 0; k < nseen && strcmp(seen[k], g->name); k++)
				;
			if (k < nseen)
				continue;
			seen[nseen++] = g->name;
			w = snprintf(names + used, len - used, "%s%s", k ? ", " : "",
				     cuda_display_of(c->a, g->name));
			if (w > 0 && (size_t)w < len - used)
				used += (size_t)w;
		}
	}
	return (long)n;
}

int cuda_rule_channels_last(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	uint32_t *sel = NULL;
	uint64_t ns;
	char names[512], ops[512], b1[32];
	long n = select_kernels(c, is_layout_transpose, 0, &sel, &ns, names, sizeof(names));
	int ret = 0;

	if (n < 0)
		return (int)n;
	if (n && a->totals.kernel_ns &&
	    (double)ns >= CUDA_LAYOUT_SHARE * (double)a->totals.kernel_ns) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "%ld NCHW<->NHWC layout transposes took %s = %.1f%% of kernel time "
				 "(%s)%s",
				 n, util_fmt_dur(b1, sizeof(b1), (double)ns),
				 100.0 * (double)ns / (double)a->totals.kernel_ns, names, ops);
	}
	free(sel);
	return ret;
}

/* The device a GPU op ran on, NULL unknown. */
static const struct prof_cuda_device *device_of(const struct profile *p,
						 const struct prof_gpu_op *g)
{
	size_t i;

	for (i = 0; i < p->ndevices; i++)
		if (p->devices[i].process == g->process && p->devices[i].id == g->device)
			return &p->devices[i];
	return NULL;
}

int cuda_rule_fp32_math(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	const struct prof_cuda_device *dev = NULL;
	uint32_t *sel = NULL;
	uint64_t ns, on_tc = 0;
	char names[512], ops[512], b1[32];
	long n = select_kernels(c, is_fp32_math, 0, &sel, &ns, names, sizeof(names)), i;
	int ret = 0;

	if (n < 0)
		return (int)n;
	/* only time on GPUs known to have tensor cores (compute capability 7.0
	 * and later; TF32 from 8.0) */
	for (i = 0; i < n; i++) {
		const struct prof_gpu_op *g = &c->p->gpu_ops[sel[i]];
		const struct prof_cuda_device *d = device_of(c->p, g);

		if (d && d->cc_major >= 7) {
			on_tc += dur(g->start, g->end);
			if (!dev)
				dev = d;
		}
	}
	if (dev && a->totals.kernel_ns &&
	    (double)on_tc >= CUDA_FP32_MATH_SHARE * (double)a->totals.kernel_ns) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "fp32 GEMM/convolution kernels on CUDA cores took %s = %.1f%% of "
				 "kernel time on %s (compute capability %u.%u: tensor cores%s): "
				 "%s%s",
				 util_fmt_dur(b1, sizeof(b1), (double)on_tc),
				 100.0 * (double)on_tc / (double)a->totals.kernel_ns,
				 dev->name && *dev->name ? dev->name : "the GPU", dev->cc_major,
				 dev->cc_minor, dev->cc_major >= 8 ? ", TF32" : ", no TF32", names,
				 ops);
	}
	free(sel);
	return ret;
}

/* Iterations of the run: between cbn_step() markers on the thread with the
 * most of them; 1 without markers. */
static uint64_t run_steps(const struct profile *p)
{
	uint64_t best = 0;
	size_t i, j;

	for (i = 0; i < p->nthreads; i++) {
		uint64_t n = 0;

		for (j = 0; j < p->nranges; j++)
			n += p->ranges[j].kind == CBN_RANGE_STEP && p->ranges[j].thread == i;
		if (n > best)
			best = n;
	}
	return best > 1 ? best - 1 : 1;
}

int cuda_rule_fuse_elementwise(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	uint32_t *sel = NULL;
	uint64_t ns, steps = run_steps(c->p);
	char names[512], ops[512], b1[32], b2[32];
	long n = select_kernels(c, is_elementwise, CUDA_FUSE_KERNEL_NS, &sel, &ns, names,
				sizeof(names));
	int ret = 0;

	if (n < 0)
		return (int)n;
	if (n >= CUDA_FUSE_MIN_TOTAL && (uint64_t)n / steps >= CUDA_FUSE_MIN_PER_STEP) {
		by_operator(c, sel, (size_t)n, ops, sizeof(ops));
		ret = rules_fire(pass,
				 "%ld elementwise kernels under %s (%.0f per step over %llu "
				 "step%s) took %s of GPU time (%s)%s",
				 n, util_fmt_dur(b2, sizeof(b2), CUDA_FUSE_KERNEL_NS), (double)n / steps,
				 (unsigned long long)steps, steps == 1 ? ", the whole run" : "s",
				 util_fmt_dur(b1, sizeof(b1), (double)ns), names, ops);
	}
	free(sel);
	return ret;
}
