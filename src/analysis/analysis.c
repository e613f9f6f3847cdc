/*
 * analysis.c — run every analysis of a profile once (CPU aggregation, call
 * tree, operators, CUDA, memory and its samples, the stacks' weights, steps,
 * data-quality warnings) into one struct analysis.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "calltree.h"
#include "cpu.h"
#include "cuda_analysis.h"
#include "dist.h"
#include "mem_samples.h"
#include "memory.h"
#include "ops.h"
#include "programs.h"
#include "stackw.h"
#include "steps.h"
#include "wait.h"

/* Append line (owned, NULL: out of memory) to the data-quality lines. */
static int add_warning(struct analysis *a, char *line)
{
	char **w = line ? realloc(a->warnings, (a->nwarnings + 1) * sizeof(*w)) : NULL;

	if (!w) {
		free(line);
		return -ENOMEM;
	}
	a->warnings = w;
	a->warnings[a->nwarnings++] = line;
	return 0;
}

int analysis_run(const struct profile *p, const struct analysis_opts *opts, struct analysis *a)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->profile = p;
	if ((ret = cpu_aggregate(p, &a->cpu)) < 0)
		goto out;
	if ((ret = programs_analyze(p, &a->programs)) < 0)
		goto out;
	a->calltree = malloc(sizeof(*a->calltree));
	if (!a->calltree) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = ct_analyze(p, a->calltree)) < 0) {
		free(a->calltree);
		a->calltree = NULL;
		goto out;
	}
	/* before CUDA: launch sites and rules name the operators */
	if ((ret = ops_analyze(p, opts ? opts->op_patterns : NULL, opts ? opts->nop_patterns : 0,
			       &a->ops)) < 0)
		goto out;
	/* before CUDA too: its memory rules read the GPU spaces */
	if ((ret = mem_analyze(a, opts ? opts->alloc_fns : NULL, opts ? opts->nalloc_fns : 0)) < 0)
		goto out;
	if (!(opts && opts->cpu_only) &&
	    (ret = cuda_analyze_ops(p, a->ops, a->memory, &a->cuda)) < 0)
		goto out;
	if ((ret = mem_samples_build(p, &a->mem_samples, &a->nmem_samples)) < 0)
		goto out;
	/* after the call tree and the memory samples: it weighs their stacks */
	if (!(a->stackw = malloc(sizeof(*a->stackw)))) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = stackw_build(p, a->calltree, a->mem_samples, a->nmem_samples, a->stackw)) < 0) {
		free(a->stackw);
		a->stackw = NULL;
		goto out;
	}
	if ((ret = steps_analyze(p, opts ? opts->step_regex : NULL, opts ? opts->step_func : NULL,
				 &a->steps)) < 0)
		goto out;
	if ((ret = wait_analyze(p, &a->wait)) < 0)
		goto out;
	/* after steps and CUDA: the ranks' steps and GPU split come from them */
	a->dist = calloc(1, sizeof(*a->dist));
	if (!a->dist) {
		ret = -ENOMEM;
		goto out;
	}
	if ((ret = dist_analyze(p, a, a->dist)) <= 0) {
		free(a->dist);
		a->dist = NULL;
		if (ret < 0)
			goto out;
	}
	if ((ret = cpu_warnings(p, a->cpu, &a->warnings, &a->nwarnings)) < 0)
		goto out;
	/* waits for a core that other programs caused: about the measurement */
	if (a->wait && a->wait->load_note &&
	    (ret = add_warning(a, strdup(a->wait->load_note))) < 0)
		goto out;
	/* --step-func that gave no steps says why */
	if (!(a->steps && a->steps->source == STEP_SRC_FUNC) && opts && opts->step_func) {
		char *note;

		if ((ret = steps_func_note(p, opts->step_func, &note)) < 0 ||
		    (note && (ret = add_warning(a, note)) < 0))
			goto out;
	}
	ret = verdict_run(a); /* last: it reads every view */
out:
	if (ret < 0)
		analysis_free(a);
	return ret < 0 ? ret : 0;
}

void analysis_free(struct analysis *a)
{
	if (!a)
		return;
	verdict_free(a);
	cpu_warnings_free(a->warnings, a->nwarnings);
	cuda_analysis_free(a->cuda);
	ops_free(a->ops);
	mem_free(a->memory);
	free(a->mem_samples);
	stackw_free(a->stackw);
	free(a->stackw);
	steps_free(a->steps);
	wait_free(a->wait);
	if (a->dist) {
		dist_free(a->dist);
		free(a->dist);
	}
	cpu_free(a->cpu);
	programs_free(a->programs);
	ct_free(a->calltree);
	free(a->calltree);
	memset(a, 0, sizeof(*a));
}
