/*
 * cuda_sites.c — launch sites: for every API call that launched GPU work, the
 * frame of its host stack that stands for the user's launch (past the CUDA
 * runtime and nvcc's glue, vendor libraries, frameworks and the interpreter)
 * and the innermost operator there, grouped by function, file, line, module
 * and operator, with the kernel that took most of their GPU time.
 */
#include <string.h>

#include "cuda_int.h"
#include "ops.h"

/*
 * The frame of stack s (leaf first) that stands for the user's launch: past
 * frames in the CUDA runtime, driver, CUPTI and us (by module); past what nvcc
 * generates in the user's executable and a static cudart
 * (cuda_frame_is_launch_glue()); and, once a __device_stub__ was passed, past
 * one host wrapper named like the kernel (the function `kernel<<<>>>()` calls,
 * often inlined into the caller) when there is a frame outside it.  Only one:
 * a host function overloading the kernel's name that calls it stays the site.
 * Then the first frame that is the user's code (cuda_frame_class()).  When
 * nothing is left, the outermost generated frame of the user's module (stub,
 * .cudafe1.* code), else CUDA_NO_IDX.  kernel NULL: an allocation or other
 * non-launch call (mem_gpu.c's GPU allocation sites).
 */
uint32_t cuda_site_frame_ops(const struct profile *p, uint32_t s, const char *kernel,
			     const uint32_t *func_op)
{
	const struct prof_stack *st;
	uint32_t i, fallback = CUDA_NO_IDX, first = CUDA_NO_IDX, entry = CUDA_NO_IDX;
	uint32_t outer_op = CUDA_NO_IDX;
	const char *stub = NULL;
	int wrapper = 0, interp = 0;

	if (s >= p->nstacks)
		return CUDA_NO_IDX;
	st = &p->stacks[s];
	for (i = 0; i < st->nframes; i++) {
		uint32_t f = st->first + i;
		const struct prof_frame *fr;
		const struct prof_func *fn;
		const char *file;

		if (f >= p->nframes)
			break;
		fr = &p->frames[f];
		if (fr->func >= p->nfuncs)
			return first != CUDA_NO_IDX ? first : f;
		fn = &p->funcs[fr->func];
		if (cuda_module_is_runtime(fn->module))
			continue;
		/* the executing line's file, else the definition's */
		file = fr->file && *fr->file ? fr->file : fn->file;
		if (cuda_frame_is_launch_glue(fn->name, file) || cuda_file_is_generated(fn->file)) {
			if (cuda_frame_is_device_stub(fn->name)) {
				stub = fn->name;
				fallback = f;
			} else if (cuda_file_is_generated(file) || cuda_file_is_generated(fn->file)) {
				fallback = f;
			}
			continue;
		}
		if (stub && !wrapper && i + 1 < st->nframes && f + 1 < p->nframes &&
		    cuda_frame_is_host_wrapper(fn->name, kernel, stub)) {
			wrapper = 1;
			continue;
		}
		if (first == CUDA_NO_IDX)
			first = f;
		if (func_op && func_op[fr->func] != OPS_NONE)
			outer_op = f;
		switch (cuda_frame_class(fn->module, fn->name, file)) {
		case CUDA_FRAME_USER:
			return f;
		case CUDA_FRAME_VENDOR:
			if (!interp)
				entry = f;   /* the outermost one below the interpreter */
			break;
		case CUDA_FRAME_INTERP:
			interp = 1;
			break;
		case CUDA_FRAME_SYSTEM:
			break;
		}
	}
	/* No frame of the user's code (no Python frames in the stacks, or a
	 * framework's own thread such as PyTorch's autograd engine) */
	if (interp && entry != CUDA_NO_IDX)
		return entry;   /* what Python called: torch::autograd::THPVariable_addmm */
	if (outer_op != CUDA_NO_IDX)
		return outer_op;   /* AddmmBackward0::apply */
	return first != CUDA_NO_IDX ? first : fallback;
}

uint32_t cuda_site_frame(const struct profile *p, uint32_t s, const char *kernel)
{
	return cuda_site_frame_ops(p, s, kernel, NULL);
}

static int cmp_site(const void *a, const void *b)
{
	const struct cuda_site *x = a, *y = b;
	int c;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns > y->gpu_ns ? -1 : 1;
	if (x->launches != y->launches)
		return x->launches > y->launches ? -1 : 1;
	c = strcmp(x->function, y->function);
	if (!c)
		c = strcmp(x->file, y->file);
	return c ? c : strcmp(x->op, y->op);
}

/* GPU time per (site, kernel name), to name each site's heaviest kernel. */
struct site_kernel {
	uint32_t site;
	const char *name;        /* the profile's string (cuda_op_name) */
	uint64_t ns;
};

static int cmp_site_kernel(const void *a, const void *b)
{
	const struct site_kernel *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Each site's heaviest kernel (copy, set) and how many distinct ones. */
static int site_kernels(struct cuda_analysis *a, const struct profile *p, const uint32_t *api_site)
{
	struct site_kernel *sk = util_reallocarray(NULL, p->ngpu_ops + 1, sizeof(*sk));
	size_t n = 0, i, j;

	if (!sk)
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->api >= p->ncuda_api || api_site[op->api] == CUDA_NO_IDX)
			continue;
		sk[n++] = (struct site_kernel){ api_site[op->api], cuda_op_name(op),
						dur(op->start, op->end) };
	}
	if (n)
		qsort(sk, n, sizeof(*sk), cmp_site_kernel);
	for (i = 0; i < n; i = j) {
		struct cuda_site *s = &a->sites[sk[i].site];
		uint64_t ns = 0;

		for (j = i; j < n && sk[j].site == sk[i].site && !strcmp(sk[j].name, sk[i].name); j++)
			ns += sk[j].ns;
		s->kernels++;
		if (!s->kernel || ns > s->kernel_ns) {
			s->kernel = sk[i].name;
			s->kernel_ns = ns;
		}
	}
	for (i = 0; i < a->nsites; i++)
		a->sites[i].kernel_display = cuda_display_of(a, a->sites[i].kernel ? a->sites[i].kernel
										  : "");
	free(sk);
	return 0;
}

int cuda_sites_build(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns,
		     const struct op_analysis *ops)
{
	struct cuda_analysis *a = &pv->pub;
	struct cuda_smap m = { 0 };
	const char **kname;   /* cuda_api index → name of the first kernel it launched */
	uint32_t *api_site = NULL;   /* cuda_api index → site, CUDA_NO_IDX */
	size_t cap = 0, i;
	int added, ret = -ENOMEM;

	kname = calloc(p->ncuda_api + 1, sizeof(*kname));
	api_site = util_reallocarray(NULL, p->ncuda_api + 1, sizeof(*api_site));
	if (!kname || !api_site)
		goto out;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->kind == PROF_GPU_KERNEL && op->api < p->ncuda_api && !kname[op->api])
			kname[op->api] = op->name;
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct cuda_node *x = &ns->n[ns->api_node[i]];
		uint32_t s = p->cuda_api[i].stack, f, v;
		const char *fn = "[no stack captured]", *file = "", *module = "", *op = "";
		uint32_t line = 0;
		char *key;

		api_site[i] = CUDA_NO_IDX;
		if (!x->direct_ops)
			continue;
		/* A driver call inside a runtime call may have no stack of
		 * its own: the enclosing API call's stack is the same site. */
		if (s >= p->nstacks)
			s = PROF_NONE;   /* PROF_NONE, or an index the loader could not resolve */
		for (uint32_t up = x->parent; s == PROF_NONE && up != CUDA_NO_IDX;
		     up = ns->n[up].parent)
			if (ns->n[up].type == CUDA_NODE_API &&
			    p->cuda_api[ns->n[up].idx].stack < p->nstacks)
				s = p->cuda_api[ns->n[up].idx].stack;
		if (ops && ops->api_op[i] != OPS_NONE)
			op = ops->rows[ops->api_op[i]].name;
		if (s != PROF_NONE) {
			f = cuda_site_frame_ops(p, s, kname[i], ops ? ops->func_op : NULL);
			if (f == CUDA_NO_IDX) {
				fn = "[inside the CUDA runtime]";
			} else {
				const struct prof_frame *fr = &p->frames[f];

				if (fr->func < p->nfuncs) {
					fn = nz(p->funcs[fr->func].name);
					module = nz(p->funcs[fr->func].module);
				} else {
					fn = "[unknown]";
				}
				file = nz(fr->file);
				line = fr->line;
			}
		}
		key = cuda_keep_str(pv, xasprintf("%s\x1f%s\x1f%u\x1f%s\x1f%s", fn, file, line,
						  module, op));
		if (!key)
			goto out;
		v = cuda_smap_get(&m, key, (uint32_t)a->nsites, &added);
		if (v == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&a->sites, &cap, a->nsites, sizeof(*a->sites)))
				goto out;
			a->sites[a->nsites++] = (struct cuda_site){ .function = fn, .file = file,
								    .module = module, .line = line,
								    .op = op };
		} else {
			/* the key is not needed twice */
			free(pv->strs[--pv->nstrs]);
		}
		api_site[i] = v;
		a->sites[v].launches++;
		a->sites[v].gpu_ns += x->direct_gpu;
	}
	if (site_kernels(a, p, api_site) < 0)
		goto out;
	if (a->nsites)
		qsort(a->sites, a->nsites, sizeof(*a->sites), cmp_site);
	ret = 0;
out:
	cuda_smap_free(&m);
	free(kname);
	free(api_site);
	return ret;
}
