/*
 * cuda_sites.c — launch sites: for every API call that launched GPU work, the
 * frame of its host stack that stands for the user's launch (past the CUDA
 * runtime and nvcc's glue), grouped by function, file, line and module.
 */
#include <string.h>

#include "cuda_int.h"

/*
 * The frame of stack s (leaf first) that stands for the user's launch: past
 * frames in the CUDA runtime, driver, CUPTI and us (by module); past what nvcc
 * generates in the user's executable and a static cudart
 * (cuda_frame_is_launch_glue()); and, once a __device_stub__ was passed, past
 * one host wrapper named like the kernel (the function `kernel<<<>>>()` calls,
 * often inlined into the caller) when there is a frame outside it.  Only one:
 * a host function overloading the kernel's name that calls it stays the site.
 * When nothing is left, the outermost generated frame of the user's module
 * (stub, .cudafe1.* code), else CUDA_NO_IDX.  kernel NULL: an allocation or
 * other non-launch call (mem_gpu.c's GPU allocation sites).
 */
uint32_t cuda_site_frame(const struct profile *p, uint32_t s, const char *kernel)
{
	const struct prof_stack *st;
	uint32_t i, fallback = CUDA_NO_IDX;
	const char *stub = NULL;
	int wrapper = 0;

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
			return f;
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
		return f;
	}
	return fallback;
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
	return c ? c : strcmp(x->file, y->file);
}

int cuda_sites_build(struct cuda_priv *pv, const struct profile *p, const struct cuda_nest *ns)
{
	struct cuda_analysis *a = &pv->pub;
	struct cuda_smap m = { 0 };
	const char **kname;   /* cuda_api index → name of the first kernel it launched */
	size_t cap = 0, i;
	int added, ret = -ENOMEM;

	kname = calloc(p->ncuda_api + 1, sizeof(*kname));
	if (!kname)
		return -ENOMEM;
	for (i = 0; i < p->ngpu_ops; i++) {
		const struct prof_gpu_op *op = &p->gpu_ops[i];

		if (op->kind == PROF_GPU_KERNEL && op->api < p->ncuda_api && !kname[op->api])
			kname[op->api] = op->name;
	}
	for (i = 0; i < p->ncuda_api; i++) {
		const struct cuda_node *x = &ns->n[ns->api_node[i]];
		uint32_t s = p->cuda_api[i].stack, f, v;
		const char *fn = "[no stack captured]", *file = "", *module = "";
		uint32_t line = 0;
		char *key;

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
		if (s != PROF_NONE) {
			f = cuda_site_frame(p, s, kname[i]);
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
		key = cuda_keep_str(pv, xasprintf("%s\x1f%s\x1f%u\x1f%s", fn, file, line, module));
		if (!key)
			goto out;
		v = cuda_smap_get(&m, key, (uint32_t)a->nsites, &added);
		if (v == CUDA_NO_IDX)
			goto out;
		if (added) {
			if (util_grow((void **)&a->sites, &cap, a->nsites, sizeof(*a->sites)))
				goto out;
			a->sites[a->nsites++] = (struct cuda_site){ .function = fn, .file = file,
								    .module = module, .line = line };
		} else {
			/* the key is not needed twice */
			free(pv->strs[--pv->nstrs]);
		}
		a->sites[v].launches++;
		a->sites[v].gpu_ns += x->direct_gpu;
	}
	if (a->nsites)
		qsort(a->sites, a->nsites, sizeof(*a->sites), cmp_site);
	ret = 0;
out:
	cuda_smap_free(&m);
	free(kname);
	return ret;
}
