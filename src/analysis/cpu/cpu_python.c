/*
 * cpu_python.c — the Python side of the CPU view (docs/agent.md section 17):
 * which interpreter the agent read in the run's processes, or why not, and
 * how many samples carry Python frames; from the processes' headers and the
 * samples' stacks.  Launcher side only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* A stack holds a Python frame: 1, none: 0. */
static int cpu_py_stack(const struct profile *p, uint32_t s)
{
	const struct prof_stack *st;
	uint32_t k;

	if (s >= p->nstacks)
		return 0;
	st = &p->stacks[s];
	for (k = 0; k < st->nframes && st->first + k < p->nframes; k++) {
		uint32_t f = p->frames[st->first + k].func;

		if (f < p->nfuncs && (p->funcs[f].flags & PROF_FUNC_PYTHON))
			return 1;
	}
	return 0;
}

int cpu_python(const struct profile *p, struct cpu_python *py)
{
	unsigned char *has = NULL;   /* per stack: 0 not looked at, 1 no, 2 yes */
	size_t i, k;

	memset(py, 0, sizeof(*py));
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_python_proc *pp = &p->processes[i].python;

		if (pp->state == CBN_PY_NONE)
			continue;
		/* ON wins; else the first process that said why not */
		if (pp->state == CBN_PY_ON && py->state != CBN_PY_ON) {
			py->state = CBN_PY_ON;
			py->version = pp->version;
			py->reason = NULL;
		} else if (!py->state) {
			py->state = pp->state;
			py->version = pp->version;
			py->reason = pp->reason;
		}
		if (pp->state == CBN_PY_ON && pp->version != py->version)
			py->mixed = 1;
		py->truncated += pp->truncated;
		for (k = 0; k < CBN_PYU_NREASONS; k++)
			py->unread[k] += pp->unread[k];
		py->codes += pp->codes;
		py->codes_gone += pp->codes_gone;
		py->codes_missing += pp->codes_missing;
		py->table_full += pp->table_full;
		py->walk_ns += p->processes[i].overhead_site_ns[CBN_OVH_PYWALK];
		py->walks += p->processes[i].overhead_site_calls[CBN_OVH_PYWALK];
		py->walk_frames += p->processes[i].overhead_site_calls[CBN_OVH_PYFRAMES];
	}
	if (py->state != CBN_PY_ON)
		return 0;
	has = calloc(p->nstacks ? p->nstacks : 1, 1);
	if (!has)
		return -1;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t t = s->thread, pi = t < p->nthreads ? p->threads[t].process : PROF_NONE;

		/* a sample record of a process whose interpreter was read; the
		 * kernel share of a record is not a record of its own */
		if ((s->flags & PROF_SAMPLE_SPLIT) || pi >= p->nprocesses ||
		    p->processes[pi].python.state != CBN_PY_ON)
			continue;
		py->samples_of++;
		if (s->stack < p->nstacks && !has[s->stack])
			has[s->stack] = (unsigned char)(1 + cpu_py_stack(p, s->stack));
		if (s->stack < p->nstacks && has[s->stack] == 2)
			py->samples++;
	}
	free(has);
	return 0;
}

const char *cpu_python_unread_name(unsigned reason)
{
	switch (reason) {
	case CBN_PYU_FINALIZING:
		return "finalizing";
	case CBN_PYU_BAD_TSTATE:
		return "bad_thread_state";
	case CBN_PYU_BAD_FRAME:
		return "bad_frame";
	case CBN_PYU_BAD_CODE:
		return "bad_code";
	default:
		return NULL;
	}
}

/*
 * The k-th data-quality line about Python (docs/reading-the-report.md, Data
 * quality) into buf: returns the k to ask for next, 0 when there is none left.
 */
int cpu_python_warning(const struct cpu_python *py, int k, char *buf, size_t len)
{
	uint64_t unread = 0;
	unsigned i;

	for (i = 0; i < CBN_PYU_NREASONS; i++)
		unread += py->unread[i];
	switch (k) {
	case 0:
		if (py->state == CBN_PY_REFUSED) {
			snprintf(buf, len, "the Python interpreter was not read (%s): its stacks show "
				 "the interpreter's C functions only",
				 py->reason ? py->reason : "?");
			return 1;
		}
		/* fall through */
	case 1:
		if (py->state == CBN_PY_ON && unread * 100 > py->samples_of) {
			snprintf(buf, len, "%llu stacks of threads running Python were kept native "
				 "(%llu while the interpreter finalized, %llu with a thread state, "
				 "%llu with a frame, %llu with a code object that failed a check): "
				 "their Python functions are missing from them",
				 (unsigned long long)unread,
				 (unsigned long long)py->unread[CBN_PYU_FINALIZING],
				 (unsigned long long)py->unread[CBN_PYU_BAD_TSTATE],
				 (unsigned long long)py->unread[CBN_PYU_BAD_FRAME],
				 (unsigned long long)py->unread[CBN_PYU_BAD_CODE]);
			return 2;
		}
		/* fall through */
	case 2:
		if (py->state == CBN_PY_ON && py->truncated * 100 > py->samples_of) {
			snprintf(buf, len, "%llu stacks had their Python frames cut at the depth cap "
				 "(256 frames, native and Python together): their outermost Python "
				 "callers are missing, so those callers' cumtime is low",
				 (unsigned long long)py->truncated);
			return 3;
		}
		/* fall through */
	case 3:
		if (py->codes_gone * 50 > py->codes) {
			snprintf(buf, len, "%llu of %llu Python code objects had died before the agent "
				 "copied their names (code made and dropped while the program ran): "
				 "their frames read [unknown Python function], and with --calls "
				 "their calls are in no row",
				 (unsigned long long)py->codes_gone, (unsigned long long)py->codes);
			return 4;
		}
		/* fall through */
	case 4:
		if (py->table_full) {
			snprintf(buf, len, "%llu Python frames found no room in the agent's table of "
				 "code objects (49,152 per process): they read [unknown Python function]",
				 (unsigned long long)py->table_full);
			return 5;
		}
		/* fall through */
	default:
		return 0;
	}
}
