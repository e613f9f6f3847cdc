/*
 * cuda_rules.c — the CUDA recommendations: one test per rule over the tables
 * and the overview (here the launch, sync, copy and kernel-timing rules;
 * memory rules in cuda_rules_mem.c, framework-aware ones in
 * cuda_rules_fw.c), and the table cuda_rules[] (at the end) that gives each
 * its id, advice and order in the report (docs/cuda.md, "Recommendations").
 * To add a rule, write its test in the file of its kind and add its entry
 * where its findings should appear.
 */
#include <string.h>

#include "cuda_rules_int.h"
#include "ops.h"
#include "rules.h"
#include "span.h"
#include "util.h"

static int overhead_bound(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	const struct cuda_overview *ov = &a->ov;
	char b1[32], b2[32], b3[32];

	if (strcmp(ov->verdict, "overhead-bound"))
		return 0;
	return rules_fire(pass,
			  "GPU utilization %.1f%% over a %s window; non-synchronizing CUDA API "
			  "time %s (%.1f%% of the window); %llu kernels, median %s",
			  100 * ov->gpu_utilization, util_fmt_dur(b1, sizeof(b1), (double)ov->window_ns),
			  util_fmt_dur(b2, sizeof(b2), (double)ov->launch_api_ns),
			  ov->window_ns ? 100.0 * ov->launch_api_ns / ov->window_ns : 0.0,
			  (unsigned long long)a->totals.kernels,
			  util_fmt_dur(b3, sizeof(b3), ov->median_kernel_ns));
}

static int sync_dominated(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct cuda_analysis *a = c->a;
	const struct cuda_overview *ov = &a->ov;
	const struct cuda_api_row *top = NULL;
	struct run_span sp;
	uint64_t wall;

	char b1[32], b2[32], b3[32];
	size_t i;

	/* the span the run recorded (span.h): the capture windows when there
	 * are any */
	span_of_run(c->p, &sp);
	wall = sp.ns ? sp.ns : ov->window_ns;
	if (!wall || (double)ov->sync_blocked_ns <= CUDA_SYNC_FRACTION * (double)wall)
		return 0;
	for (i = 0; i < a->napi; i++)
		if (cuda_api_is_sync(a->api[i].name)) {
			top = &a->api[i];
			break;
		}
	return rules_fire(pass,
			  "CPU blocked %s in synchronizing calls = %.1f%% of the %s run%s%s%s%s",
			  util_fmt_dur(b1, sizeof(b1), (double)ov->sync_blocked_ns),
			  100.0 * ov->sync_blocked_ns / wall, util_fmt_dur(b2, sizeof(b2), (double)wall),
			  top ? "; largest: " : "", top ? top->name : "", top ? " " : "",
			  top ? util_fmt_dur(b3, sizeof(b3), (double)top->t.total) : "");
}

static int pageable_copies(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	uint64_t n = 0, ns = 0, bytes = 0, htod = 0, dtoh = 0;
	char b1[32], b2[32];
	size_t i;

	for (i = 0; i < a->nmemops; i++) {
		const struct cuda_memop_row *r = &a->memops[i];

		if (r->kind != CUDA_ROW_MEMCPY ||
		    (r->copy_kind != CBN_COPY_HTOD && r->copy_kind != CBN_COPY_DTOH))
			continue;
		n += r->pageable;
		ns += r->pageable_ns;
		bytes += r->pageable_bytes;
		if (r->copy_kind == CBN_COPY_HTOD)
			htod += r->pageable;
		else
			dtoh += r->pageable;
	}
	/* A stray 4-byte result copy is not worth a recommendation. */
	if (!n || (ns < CUDA_PAGEABLE_MIN_NS &&
		   (double)ns < CUDA_PAGEABLE_MIN_SHARE * (double)a->ov.gpu_ns))
		return 0;
	return rules_fire(pass,
			  "%llu copies from/to pageable host memory (HtoD %llu, DtoH %llu): "
			  "%s of GPU time, %s",
			  (unsigned long long)n, (unsigned long long)htod, (unsigned long long)dtoh,
			  util_fmt_dur(b1, sizeof(b1), (double)ns),
			  util_fmt_bytes(b2, sizeof(b2), (double)bytes));
}

static int tiny_kernels(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32];

	if (a->totals.kernels <= CUDA_TINY_KERNELS_MIN ||
	    a->ov.median_kernel_ns >= CUDA_TINY_KERNEL_NS)
		return 0;
	return rules_fire(pass, "%llu kernel launches with a median duration of %s",
			  (unsigned long long)a->totals.kernels,
			  util_fmt_dur(b1, sizeof(b1), a->ov.median_kernel_ns));
}

static int small_grid(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->blocks_per_sm < 0 || k->blocks_per_sm >= CUDA_SMALL_GRID_BLOCKS ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		ret = rules_fire(pass,
				 "%s: %.2f blocks per SM (grid %dx%dx%d) and %.1f%% of kernel time",
				 k->display, k->blocks_per_sm, k->grid[0], k->grid[1], k->grid[2],
				 k->time_pct);
		if (ret)
			return ret;
	}
	return 0;
}

static int cold_kernel(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32], b2[32];
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];

		if (k->t.count < 2 || (double)k->first_ns <= CUDA_COLD_RATIO * k->rest_med_ns ||
		    (double)k->first_ns - k->rest_med_ns <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "%s: first instance %s vs median %s of the other %llu (%.1fx)",
				 k->display, util_fmt_dur(b1, sizeof(b1), (double)k->first_ns),
				 util_fmt_dur(b2, sizeof(b2), k->rest_med_ns),
				 (unsigned long long)(k->t.count - 1),
				 k->rest_med_ns > 0 ? k->first_ns / k->rest_med_ns : 0.0);
		if (ret)
			return ret;
	}
	return 0;
}

/* Cold start among repeated ranges: the earliest instance of a name against
 * the median of the others.  Ranges are grouped by name first (one pass),
 * so many distinct names cost nothing extra. */
static int cold_range(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	const char **range_names = c->range_names;
	uint64_t *scratch = c->scratch;
	struct cuda_smap m = { 0 };
	uint32_t *gid = util_reallocarray(NULL, p->nranges + 1, sizeof(*gid));
	uint32_t *first = NULL, *members = NULL;
	size_t *off = NULL, *fill = NULL, ng = 0, gcap = 0, i, j;
	int added, ret = -ENOMEM;

	if (!gid)
		goto out;
	for (i = 0; i < p->nranges; i++) {
		uint32_t g;

		gid[i] = CUDA_NO_IDX;
		if (!range_names[i] || !range_is_span(&p->ranges[i]))
			continue;
		g = cuda_smap_get(&m, range_names[i], (uint32_t)ng, &added);
		if (g == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&first, &gcap, ng, sizeof(*first)))
				goto out;
			first[ng++] = (uint32_t)i;
		} else if (p->ranges[i].start < p->ranges[first[g]].start) {
			first[g] = (uint32_t)i;
		}
		gid[i] = g;
	}
	off = calloc(ng + 2, sizeof(*off));
	fill = calloc(ng + 2, sizeof(*fill));
	members = util_reallocarray(NULL, p->nranges + 1, sizeof(*members));
	if (!off || !fill || !members)
		goto out;
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != CUDA_NO_IDX)
			off[gid[i] + 1]++;
	for (j = 0; j < ng; j++)
		off[j + 1] += off[j];
	memcpy(fill, off, (ng + 1) * sizeof(*fill));
	for (i = 0; i < p->nranges; i++)
		if (gid[i] != CUDA_NO_IDX)
			members[fill[gid[i]]++] = (uint32_t)i;
	ret = 0;
	for (j = 0; j < ng && !ret; j++) {
		const struct prof_range *f = &p->ranges[first[j]];
		uint64_t d0 = dur(f->start, f->end), n = 0;
		double med;
		char b1[32], b2[32];

		for (i = off[j]; i < off[j + 1]; i++)
			if (members[i] != first[j])
				scratch[n++] = dur(p->ranges[members[i]].start,
						   p->ranges[members[i]].end);
		if (n < 2)
			continue;
		qsort(scratch, n, sizeof(*scratch), cmp_u64);
		med = n % 2 ? (double)scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2.0;
		if ((double)d0 <= CUDA_COLD_RATIO * med || (double)d0 - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "range \"%s\": first instance %s vs median %s of the other %llu "
				 "(%.1fx)",
				 range_names[first[j]], util_fmt_dur(b1, sizeof(b1), (double)d0),
				 util_fmt_dur(b2, sizeof(b2), med), (unsigned long long)n,
				 med > 0 ? d0 / med : 0.0);
	}
out:
	cuda_smap_free(&m);
	free(gid);
	free(first);
	free(members);
	free(off);
	free(fill);
	return ret;
}

static int cmp_step(const void *a, const void *b, void *ranges)
{
	const struct prof_range *x = &((const struct prof_range *)ranges)[*(const uint32_t *)a];
	const struct prof_range *y = &((const struct prof_range *)ranges)[*(const uint32_t *)b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Cold start over iterations: cbn_step() markers are instants, and an
 * iteration is the time from one marker to the next on the same thread. */
static int cold_iteration(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_rule_ctx *c = ctx;
	const struct profile *p = c->p;
	uint64_t *scratch = c->scratch;
	uint32_t *st = util_reallocarray(NULL, p->nranges + 1, sizeof(*st));
	size_t n = 0, i, j, k;
	int ret = 0;

	if (!st)
		return -ENOMEM;
	for (i = 0; i < p->nranges; i++)
		if (p->ranges[i].kind == CBN_RANGE_STEP && p->ranges[i].thread != PROF_NONE)
			st[n++] = (uint32_t)i;
	qsort_r(st, n, sizeof(*st), cmp_step, p->ranges);
	for (i = 0; i < n && !ret; i = j) {
		uint32_t th = p->ranges[st[i]].thread;
		uint64_t first, m = 0;
		double med;
		char b1[32], b2[32];

		for (j = i; j < n && p->ranges[st[j]].thread == th; j++)
			;
		if (j - i < 4)   /* at least three iterations: one first, two to compare */
			continue;
		first = dur(p->ranges[st[i]].start, p->ranges[st[i + 1]].start);
		for (k = i + 1; k + 1 < j; k++)
			scratch[m++] = dur(p->ranges[st[k]].start, p->ranges[st[k + 1]].start);
		qsort(scratch, m, sizeof(*scratch), cmp_u64);
		med = m % 2 ? (double)scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2.0;
		if ((double)first <= CUDA_COLD_RATIO * med ||
		    (double)first - med <= CUDA_COLD_MIN_NS)
			continue;
		ret = rules_fire(pass,
				 "iterations between step markers on thread %u: first %s vs median "
				 "%s of the other %llu (%.1fx)",
				 th < p->nthreads ? p->threads[th].tid : 0,
				 util_fmt_dur(b1, sizeof(b1), (double)first), util_fmt_dur(b2, sizeof(b2), med),
				 (unsigned long long)m, med > 0 ? first / med : 0.0);
	}
	free(st);
	return ret;
}

static int variable_kernel(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_analysis *a = ((const struct cuda_rule_ctx *)ctx)->a;
	char b1[32], b2[32], b3[32], b4[32];
	size_t i;
	int ret;

	for (i = 0; i < a->nkernels; i++) {
		const struct cuda_kernel_row *k = &a->kernels[i];
		double cv = k->t.avg > 0 ? k->t.stddev / k->t.avg : 0;

		if (k->t.count < CUDA_VARIABLE_MIN_INSTANCES || cv <= CUDA_VARIABLE_CV ||
		    k->time_pct < 100 * CUDA_SIGNIFICANT_SHARE)
			continue;
		ret = rules_fire(pass,
				 "%s: %llu instances, mean %s, stddev %s (CV %.2f), min %s, max %s",
				 k->display, (unsigned long long)k->t.count,
				 util_fmt_dur(b1, sizeof(b1), k->t.avg), util_fmt_dur(b2, sizeof(b2), k->t.stddev),
				 cv,
				 util_fmt_dur(b3, sizeof(b3), (double)k->t.min),
				 util_fmt_dur(b4, sizeof(b4), (double)k->t.max));
		if (ret)
			return ret;
	}
	return 0;
}

/* DtoD/PtoP copies the code did not ask for: launched by an API call that is
 * not a memcpy, or peer copies made by a plain memcpy (UVA cudaMemcpy between
 * devices) rather than a Peer call. */
static int implicit_dtod(const void *ctx, struct rules_pass *pass)
{
	const struct profile *p = ((const struct cuda_rule_ctx *)ctx)->p;
	uint64_t n = 0, ns = 0, bytes = 0;
	const char *via = NULL;
	char b1[32], b2[32];
	size_t i;

	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];
		const char *an;

		if (op->kind != PROF_GPU_MEMCPY ||
		    (op->copy_kind != CBN_COPY_DTOD && op->copy_kind != CBN_COPY_PTOP) ||
		    op->api == PROF_NONE || op->api >= p->ncuda_api)
			continue;
		an = nz(p->cuda_api[op->api].name);
		if (strcasestr(an, "memcpy") &&
		    (op->copy_kind == CBN_COPY_DTOD || strstr(an, "Peer")))
			continue;
		n++;
		ns += dur(op->start, op->end);
		bytes += op->bytes;
		if (!via)
			via = an;
	}
	if (!n)
		return 0;
	return rules_fire(pass,
			  "%llu device-to-device/peer copies (%s, %s) launched by calls "
			  "that are not explicit device copies, e.g. %s",
			  (unsigned long long)n, util_fmt_dur(b1, sizeof(b1), (double)ns),
			  util_fmt_bytes(b2, sizeof(b2), (double)bytes), via);
}

/* Utilization counts kernels only; a run that keeps the GPU busy with copies
 * (few idle gaps) is not idle, so the gaps must agree. */
static int low_utilization(const void *ctx, struct rules_pass *pass)
{
	const struct cuda_overview *ov = &((const struct cuda_rule_ctx *)ctx)->a->ov;
	char b1[32], b2[32], b3[32], b4[32];

	if (ov->gpu_utilization < 0 || ov->gpu_utilization >= CUDA_LOW_UTIL ||
	    (double)ov->idle_gaps_ns < (1.0 - CUDA_LOW_UTIL) * (double)ov->window_ns)
		return 0;
	return rules_fire(pass,
			  "GPU utilization %.1f%%: kernels ran %s of a %s window; %llu idle gaps "
			  "totalling %s, largest %s",
			  100 * ov->gpu_utilization, util_fmt_dur(b1, sizeof(b1), (double)ov->gpu_busy_ns),
			  util_fmt_dur(b2, sizeof(b2), (double)ov->window_ns),
			  (unsigned long long)ov->ngaps,
			  util_fmt_dur(b3, sizeof(b3), (double)ov->idle_gaps_ns),
			  util_fmt_dur(b4, sizeof(b4), (double)ov->largest_gap_ns));
}

#define COLD_ITERATION_ADVICE                                                               \
	"The first iteration pays one-time costs (context creation, module loading, "      \
	"allocator growth, cuDNN/cuBLAS autotuning): warm up before timing, or exclude "   \
	"the first iteration from measurements; CUDA_MODULE_LOADING=EAGER moves lazy "     \
	"kernel loading to start-up."

/* The rules in report order; ids are public (docs/cuda.md lists them).  Rules
 * about single kernels, ranges or threads keep their first three findings. */
static const struct rule cuda_rules[] = {
	{ "overhead-bound", overhead_bound,
	  "The GPU mostly waits for the CPU to launch work: fuse small kernels, batch work into "
	  "fewer, larger launches, or capture the launch sequence in a CUDA graph "
	  "(cudaStreamBeginCapture/cudaGraphLaunch).", 1 },
	{ "sync-dominated", sync_dominated,
	  "The host spends much of the run waiting for the GPU: synchronize less often (no "
	  "cudaDeviceSynchronize per step), use events and cudaStreamWaitEvent to order streams, "
	  "and cudaMemcpyAsync from pinned memory so copies do not block.", 1 },
	{ "pageable-copies", pageable_copies,
	  "Pageable copies are staged through a driver buffer, run slower and cannot overlap "
	  "with kernels: allocate the host buffers with cudaHostAlloc or cudaMallocHost (or pin "
	  "them with cudaHostRegister) and use cudaMemcpyAsync.", 1 },
	{ "tiny-kernels", tiny_kernels,
	  "Each launch costs a few microseconds of CPU and GPU time: fuse small kernels (or let "
	  "a compiler such as torch.compile/XLA fuse them) and replay repeated launch sequences "
	  "as CUDA graphs.", 1 },
	{ "small-grid", small_grid,
	  "The grid has fewer blocks than the GPU has SMs, so some SMs stay idle: launch more, "
	  "smaller blocks, split the work further, or run independent kernels concurrently on "
	  "several streams.", 3 },
	{ "cold-start", cold_kernel,
	  "The first launch of this kernel pays one-time costs (lazy module loading, JIT, cache "
	  "warm-up): warm up before timing, or set CUDA_MODULE_LOADING=EAGER to load kernels at "
	  "start-up.", 3 },
	{ "cold-start", cold_range, COLD_ITERATION_ADVICE, 3 },
	{ "cold-start", cold_iteration, COLD_ITERATION_ADVICE, 3 },
	{ "variable-kernel", variable_kernel,
	  "Durations of this kernel vary widely: it may run with different input sizes (compare "
	  "launch configurations), contend with concurrent kernels or copies, or hit "
	  "data-dependent paths; look at its instances in a trace (--trace).", 3 },
	{ "implicit-dtod", implicit_dtod,
	  "Something copies device memory the code may not mean to copy (a library call, a "
	  "graph node, or a cudaMemcpy between devices without peer access): check the launch "
	  "sites, keep data on one device, and enable peer access (cudaDeviceEnablePeerAccess) "
	  "for intended cross-device copies.", 1 },
	{ "cuda-malloc-churn", cuda_rule_malloc_churn,
	  "cudaMalloc and cudaFree are called again and again: each call goes to the driver and "
	  "may synchronize the device.  Allocate once and reuse the buffers, use a memory pool "
	  "(a caching allocator, as PyTorch's), or cudaMallocAsync/cudaFreeAsync, which serve "
	  "repeated sizes from the stream-ordered pool.", 1 },
	{ "pinned-memory", cuda_rule_pinned_memory,
	  "Pinned (page-locked) host memory is scarce: the kernel can neither swap nor reclaim "
	  "it.  Pin only the staging buffers copies need, reuse them instead of allocating per "
	  "transfer, free them when done, and check cudaHostAlloc's result (fall back to "
	  "pageable memory when it fails).", 1 },
	{ "gpu-memory-full", cuda_rule_gpu_memory_full,
	  "Device memory came close to full: the next larger batch or model fails with out of "
	  "memory.  Look at the peak's allocation sites (memory view), free or reuse buffers "
	  "before the peak, lower the batch size, or trade memory for compute (activation "
	  "checkpointing, lower precision).", 4 },
	{ "channels-last", cuda_rule_channels_last,
	  "cuDNN transposes between NCHW and NHWC around its convolutions: keep tensors in the "
	  "layout it computes in.  In PyTorch convert the model and its inputs to channels_last "
	  "(model = model.to(memory_format=torch.channels_last), x = "
	  "x.to(memory_format=torch.channels_last)); elsewhere give cuDNN NHWC tensors.", 1 },
	{ "fp32-math", cuda_rule_fp32_math,
	  "Matrix multiplies and convolutions run in full fp32 on the CUDA cores while the GPU "
	  "has tensor cores: allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True or "
	  "torch.set_float32_matmul_precision('high'), and torch.backends.cudnn.allow_tf32 = "
	  "True; cublasSetMathMode(CUBLAS_TF32_TENSOR_OP_MATH) outside PyTorch) on compute "
	  "capability 8.0 and later, or train in mixed precision (torch.autocast with bfloat16 "
	  "or float16).", 1 },
	{ "fuse-elementwise", cuda_rule_fuse_elementwise,
	  "Many tiny elementwise kernels: each costs a launch and a trip through GPU memory.  "
	  "Fuse them: torch.compile(model) lets Inductor fuse pointwise operations, fused or "
	  "foreach optimizers (torch.optim.AdamW(..., fused=True)) update all parameters in a "
	  "few kernels, and CUDA graphs (torch.compile(mode=\"reduce-overhead\")) cut the "
	  "launch cost of what remains.", 1 },
	{ "low-utilization", low_utilization,
	  "The GPU is idle more than half of the time between its first and last activity: look "
	  "at the largest gaps in a trace (--trace) and at the CPU table for what the host did "
	  "meanwhile, and overlap host work, copies and kernels with streams.", 1 },
};

int cuda_rules_build(struct cuda_analysis *a, const struct profile *p, const char **range_names,
		     uint64_t *scratch, const struct op_analysis *ops,
		     const struct mem_analysis *mem)
{
	const struct cuda_rule_ctx ctx = { .a = a, .p = p, .range_names = range_names,
					   .scratch = scratch, .ops = ops, .mem = mem };
	struct rule_hit *hits;
	size_t nhits;
	int ret;

	ret = rules_run(cuda_rules, sizeof(cuda_rules) / sizeof(cuda_rules[0]), &ctx, &hits,
			&nhits);
	if (ret)
		return ret;
	return rules_keep(hits, nhits, &a->recos, &a->nrecos);
}
