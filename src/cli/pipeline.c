/*
 * pipeline.c — the one way from a session directory to the analysis result
 * that every writer and the gate read: load (symbolize) it once, analyse it
 * once.  Running short of memory is reported here, in one line, as exit 125.
 */
#include <stdio.h>

#include "analysis.h"
#include "cli.h"
#include "load.h"

int cli_load(const char *dir, const struct cli_opts *o, struct profile **p, char *err,
	     size_t errlen)
{
	struct prof_load_opts lo = {(enum prof_inline)o->inline_view, o->ranks,
				    (enum prof_python)o->python_view};
	int lr = prof_load_with(dir, &lo, p, err, errlen);

	/* err says "out of memory ..." (load.h) */
	if (lr == PROF_LOAD_NOMEM)
		fprintf(stderr, "cbottleneck: %s; free some memory or raise the limit "
			"(ulimit -v) and try again\n", err);
	return lr;
}

int cli_analyse(const struct profile *p, const struct cli_opts *o, struct analysis *a)
{
	struct analysis_opts ao = {0};

	ao.step_regex = o ? o->step_regex : NULL;
	ao.step_func = o ? o->step_func : NULL;
	ao.op_patterns = o ? o->op_patterns : NULL;
	ao.nop_patterns = o ? o->nop_patterns : 0;
	ao.alloc_fns = o ? o->alloc_fns : NULL;
	ao.nalloc_fns = o ? o->nalloc_fns : 0;
	if (analysis_run(p, &ao, a) < 0) {
		fprintf(stderr, "cbottleneck: out of memory while analysing the profile; free "
			"some memory or raise the limit (ulimit -v) and try again\n");
		return CLI_EXIT_NOMEM;
	}
	return 0;
}
