/*
 * cuda_display.c — how tables print kernel names: demangled (the readable
 * prefix when the demangler refused the name), shortened to CUDA_NAME_WIDTH
 * columns, two different kernels never printing alike (names.h).  Every
 * writer prints these; JSON keeps the full name beside them.
 */
#include <string.h>

#include "cuda_int.h"
#include "names.h"

int cuda_display_build(struct cuda_priv *pv)
{
	struct cuda_analysis *a = &pv->pub;
	const char **names = calloc(a->nkernels + 1, sizeof(*names));
	const char **shown = calloc(a->nkernels + 1, sizeof(*shown));
	char **out = calloc(a->nkernels + 1, sizeof(*out));
	char buf[1024];
	size_t i;
	int added, ret = -ENOMEM;

	if (!names || !shown || !out)
		goto out;
	for (i = 0; i < a->nkernels; i++) {
		names[i] = shown[i] = a->kernels[i].name;
		/* "_ZN17cutlass__5x_cudnn6KernelI...": cut at the agent's name
		 * limit, or something __cxa_demangle does not read */
		if (names_unmangle_prefix(names[i], buf, sizeof(buf)) == 0 &&
		    !(shown[i] = cuda_keep_str(pv, strdup(buf))))
			goto out;
	}
	if (a->nkernels && names_shorten(names, shown, a->nkernels, CUDA_NAME_WIDTH, out) < 0)
		goto out;
	for (i = 0; i < a->nkernels; i++) {
		a->kernels[i].display = cuda_keep_str(pv, out[i]);
		out[i] = NULL;
		if (!a->kernels[i].display ||
		    cuda_smap_get(&pv->kdisp, a->kernels[i].name, (uint32_t)i, &added) == CUDA_NO_IDX)
			goto out;
	}
	for (i = 0; i < a->nops; i++)
		a->ops[i].display = a->ops[i].kind == CUDA_ROW_KERNEL
			? cuda_display_of(a, a->ops[i].name) : a->ops[i].name;
	ret = 0;
out:
	for (i = 0; out && i < a->nkernels; i++)
		free(out[i]);
	free(out);
	free(names);
	free(shown);
	return ret;
}

const char *cuda_display_of(const struct cuda_analysis *a, const char *name)
{
	const struct cuda_priv *pv = (const struct cuda_priv *)a;
	uint32_t v = name ? cuda_smap_find(&pv->kdisp, name) : CUDA_NO_IDX;

	return v < a->nkernels ? a->kernels[v].display : name;
}
