/*
 * cuda_status.c — the CUDA status of every process: one row and line per
 * status record the layer wrote (traced, flush missing, fork child,
 * unavailable, records lost), and a line for each process that loaded the CUDA
 * runtime but never initialized CUDA for tracing (docs/cuda.md, "Status lines").
 */
#include <string.h>

#include "cuda_int.h"

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : nz(path);
}

static int stack_has_cuda(const struct profile *p, uint32_t s)
{
	uint32_t i;

	if (s >= p->nstacks)
		return 0;
	for (i = 0; i < p->stacks[s].nframes; i++) {
		uint32_t f = p->stacks[s].first + i;
		const char *m;

		if (f >= p->nframes || p->frames[f].func >= p->nfuncs)
			break;
		m = p->funcs[p->frames[f].func].module;
		if (m && (!strncmp(m, "libcudart", 9) || !strncmp(m, "libcuda.", 8)))
			return 1;
	}
	return 0;
}

/* A module that says the process meant to use CUDA: the runtime (libcudart*)
 * whenever it was mapped, the driver (libcuda.so*) only when it was dlopened
 * during the run (cudart and frameworks load it that way to initialize CUDA).
 * A driver mapped from the start is often just a dependency (of libcupti, of
 * a plugin) that the program never calls; a frame in it still counts
 * (stack_has_cuda).  Start-up modules carry the process's start as load time. */
static int module_has_cuda(const struct profile *p, const struct prof_module *m)
{
	const char *n = m->name ? m->name : base(m->path);

	if (!strncmp(n, "libcudart", 9))
		return 1;
	return !strncmp(n, "libcuda.so", 10) && m->process < p->nprocesses &&
	       m->load_ts > p->processes[m->process].start;
}

static int add_line(struct cuda_analysis *a, size_t *cap, char *line)
{
	if (!line || util_grow((void **)&a->status_lines, cap, a->nstatus_lines, sizeof(char *))) {
		free(line);
		return -ENOMEM;
	}
	a->status_lines[a->nstatus_lines++] = line;
	return 0;
}

int cuda_status_build(struct cuda_analysis *a, const struct profile *p)
{
	static const char *const states[] = { "unavailable", "started", "unavailable", "finished",
					      "fork_child" };
	int8_t *seen = calloc(p->nstacks + 1, 1);
	char *has_status = calloc(p->nprocesses + 1, 1), *loaded = calloc(p->nprocesses + 1, 1);
	size_t cap = 0, i, n = 0;
	int ret = -ENOMEM;

	if (!seen || !has_status || !loaded)
		goto out;
	for (i = 0; i < p->ncuda_status; i++)
		if (p->cuda_status[i].process < p->nprocesses)
			has_status[p->cuda_status[i].process] = 1;
	for (i = 0; i < p->nmodules; i++) {
		const struct prof_module *m = &p->modules[i];

		if (m->process < p->nprocesses && !has_status[m->process] && module_has_cuda(p, m))
			loaded[m->process] = 1;
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t pr;

		if (s->thread >= p->nthreads || s->stack >= p->nstacks)
			continue;
		pr = p->threads[s->thread].process;
		if (pr >= p->nprocesses || has_status[pr] || loaded[pr])
			continue;
		if (!seen[s->stack])
			seen[s->stack] = stack_has_cuda(p, s->stack) ? 1 : -1;
		if (seen[s->stack] > 0)
			loaded[pr] = 1;
	}
	for (i = 0; i < p->nprocesses; i++)
		n += loaded[i];
	a->status = calloc(p->ncuda_status + n + 1, sizeof(*a->status));
	if (!a->status)
		goto out;
	for (i = 0; i < p->ncuda_status; i++) {
		const struct prof_cuda_status *s = &p->cuda_status[i];
		const struct prof_process *pr = s->process < p->nprocesses ? &p->processes[s->process] : NULL;
		struct cuda_status_row *r = &a->status[a->nstatus++];
		char ver[32] = "", who[160];
		char *line;

		*r = (struct cuda_status_row){
			.pid = pr ? pr->pid : 0, .exe = pr ? base(pr->exe) : "?",
			.state = s->state < 5 ? states[s->state] : "unavailable", .message = nz(s->message),
			.cupti_error = s->cupti_error, .cupti_version = s->cupti_version,
			.flush_timed_out = s->flush_timed_out, .dropped = s->dropped, .zero_ts = s->zero_ts,
			.buffers = s->buffers, .records = s->records,
		};
		if (s->cupti_version)
			snprintf(ver, sizeof(ver), " with CUPTI %u.%u", s->cupti_version / 10000,
				 s->cupti_version / 100 % 100);
		snprintf(who, sizeof(who), "CUDA: pid %u (%s)", r->pid, r->exe);
		switch (s->state) {
		case CBN_CUDA_FINISHED:
			line = xasprintf("%s: traced%s, %llu activity records in %llu buffers", who, ver,
					 (unsigned long long)r->records, (unsigned long long)r->buffers);
			break;
		case CBN_CUDA_STARTED:
			line = xasprintf("%s: tracing started%s but the final flush never ran (crash, kill "
					 "or _exit?): GPU activity of its last moments may be missing",
					 who, ver);
			break;
		case CBN_CUDA_FORK_CHILD:
			line = xasprintf("%s: forked from a CUDA process without exec: GPU tracing is off "
					 "in it (CUDA cannot be used across fork)",
					 who);
			break;
		default:
			line = xasprintf("%s: CUDA tracing unavailable: %s (CUPTI error %d); CPU profile only",
					 who, *r->message ? r->message : "no reason given", r->cupti_error);
			break;
		}
		if (add_line(a, &cap, line))
			goto out;
		if (s->dropped &&
		    add_line(a, &cap, xasprintf("%s: CUPTI dropped %llu activity records (buffers full): "
						"GPU tables undercount",
						who, (unsigned long long)s->dropped)))
			goto out;
		if (s->zero_ts &&
		    add_line(a, &cap, xasprintf("%s: %llu GPU records had no timestamps and were excluded",
						who, (unsigned long long)s->zero_ts)))
			goto out;
		if (s->flush_timed_out &&
		    add_line(a, &cap, xasprintf("%s: the final CUPTI flush timed out: the last GPU records "
						"may be missing",
						who)))
			goto out;
	}
	for (i = 0; i < p->nprocesses; i++) {
		struct cuda_status_row *r;

		if (!loaded[i])
			continue;
		r = &a->status[a->nstatus++];
		*r = (struct cuda_status_row){
			.pid = p->processes[i].pid, .exe = base(p->processes[i].exe), .state = "unavailable",
			.message = "loaded the CUDA runtime but CUDA was never initialized for tracing",
			.inferred = 1,
		};
		if (add_line(a, &cap, xasprintf("CUDA: %s (pid %u) loaded the CUDA runtime but CUDA was "
						"never initialized for tracing (no driver or no GPU?)",
						r->exe, r->pid)))
			goto out;
		r->text = a->status_lines[a->nstatus_lines - 1];
	}
	ret = 0;
out:
	free(seen);
	free(has_status);
	free(loaded);
	return ret;
}
