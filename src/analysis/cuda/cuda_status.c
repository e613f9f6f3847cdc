/*
 * cuda_status.c — the CUDA status of every process: one row and line per
 * status record the layer wrote (traced, flush missing, fork child,
 * unavailable, records lost), and a line for each process that loaded the CUDA
 * runtime but never initialized CUDA for tracing (docs/cuda.md, "Status lines").
 */
#include <string.h>

#include "cuda_int.h"

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
	const char *n = m->name ? m->name : util_base_name(m->path);

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

/* "3.201 s" since the run's start. */
static void share_at(char *buf, size_t len, uint64_t ns)
{
	snprintf(buf, len, "%.3f s", (double)ns / 1e9);
}

/* One row and one line per span the program's own CUPTI client held. */
static int cuda_shares_build(struct cuda_analysis *a, const struct profile *p, size_t *cap)
{
	size_t i;

	if (!p->ncuda_shares)
		return 0;
	a->shares = calloc(p->ncuda_shares, sizeof(*a->shares));
	if (!a->shares)
		return -ENOMEM;
	for (i = 0; i < p->ncuda_shares; i++) {
		const struct prof_cuda_share *s = &p->cuda_shares[i];
		const struct prof_process *pr =
			s->process < p->nprocesses ? &p->processes[s->process] : NULL;
		struct cuda_share_row *r = &a->shares[a->nshares++];
		char from[32], to[32];
		int api = s->what == CBN_CUPTI_API;

		*r = (struct cuda_share_row){
			.pid = pr ? pr->pid : 0, .exe = pr ? util_base_name(pr->exe) : "?",
			.what = api ? "api" : "activity", .holder = nz(s->holder),
			.start_ns = s->start > p->start_ns ? s->start - p->start_ns : 0,
			.end_ns = s->end > p->start_ns ? s->end - p->start_ns : 0, .note = nz(s->note),
		};
		share_at(from, sizeof(from), r->start_ns);
		if (r->end_ns)
			share_at(to, sizeof(to), r->end_ns);
		if (add_line(a, cap,
			     xasprintf("CUDA: pid %u (%s): the program's own CUPTI client (%s) held %s "
				       "from %s to %s%s: its own profiler got them, this report has "
				       "none of them there%s%s",
				       r->pid, r->exe, *r->holder ? r->holder : "unnamed",
				       api ? "the CUDA API callbacks (API calls, launch stacks)"
					   : "the GPU activity records (kernels, copies, memory)",
				       from, r->end_ns ? to : "the end",
				       r->end_ns ? "" : " of the process", *r->note ? "; then " : "",
				       r->note)))
			return -ENOMEM;
	}
	return 0;
}

static const char *proc_host(const struct profile *p, uint32_t proc)
{
	return proc < p->nprocesses && p->processes[proc].rank.host
		       ? p->processes[proc].rank.host
		       : "";
}

/* One GPU seen by two processes: the same UUID; without UUIDs (older files),
 * the same id and name on the same host. */
static int same_gpu(const struct profile *p, const struct prof_cuda_device *x,
		    const struct prof_cuda_device *y)
{
	if (x->has_uuid && y->has_uuid)
		return memcmp(x->uuid, y->uuid, sizeof(x->uuid)) == 0;
	return x->id == y->id && !strcmp(nz(x->name), nz(y->name)) &&
	       !strcmp(proc_host(p, x->process), proc_host(p, y->process));
}

/* The GPUs of the run, each once (the header's and JSON's list), with the
 * number of processes that used each. */
static int cuda_gpus_build(struct cuda_analysis *a, const struct profile *p)
{
	size_t *gpu = calloc(p->ndevices + 1, sizeof(*gpu)), *rep = calloc(p->ndevices + 1,
									    sizeof(*rep));
	size_t i, j;
	int ret = -ENOMEM;

	a->gpus = calloc(p->ndevices + 1, sizeof(*a->gpus));
	if (!gpu || !rep || !a->gpus)
		goto out;
	for (i = 0; i < p->ndevices; i++) {
		const struct prof_cuda_device *d = &p->devices[i];
		const uint8_t *u = d->uuid;
		struct cuda_gpu *g;

		for (j = 0; j < a->ngpus && !same_gpu(p, &p->devices[rep[j]], d); j++)
			;
		gpu[i] = j;
		if (j < a->ngpus) {
			size_t m;

			/* a process that recorded the GPU twice counts once */
			for (m = 0; m < i && !(gpu[m] == j && p->devices[m].process == d->process);
			     m++)
				;
			a->gpus[j].processes += m == i;
			continue;
		}
		rep[a->ngpus] = i;
		g = &a->gpus[a->ngpus++];
		g->name = nz(d->name);
		g->id = d->id;
		g->global_mem = d->global_mem;
		g->sm_count = d->sm_count;
		g->cc_major = d->cc_major;
		g->cc_minor = d->cc_minor;
		g->processes = 1;
		if (d->has_uuid)
			snprintf(g->uuid, sizeof(g->uuid),
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
				 u[11], u[12], u[13], u[14], u[15]);
	}
	ret = 0;
out:
	free(gpu);
	free(rep);
	return ret;
}

/* The row and the lines of one status record. */
static int status_row(struct cuda_analysis *a, const struct profile *p,
		      const struct prof_cuda_status *s, size_t *cap)
{
	static const char *const states[] = { "unavailable", "started", "unavailable", "finished",
					      "fork_child" };
	const struct prof_process *pr = s->process < p->nprocesses ? &p->processes[s->process] : NULL;
	struct cuda_status_row *r = &a->status[a->nstatus++];
	char ver[32] = "", who[160];
	char *line;

	*r = (struct cuda_status_row){
		.pid = pr ? pr->pid : 0, .exe = pr ? util_base_name(pr->exe) : "?",
		.state = s->state < 5 ? states[s->state] : "unavailable", .message = nz(s->message),
		.cupti_error = s->cupti_error, .cupti_version = s->cupti_version,
		.flush_timed_out = s->flush_timed_out, .dropped = s->dropped, .zero_ts = s->zero_ts,
		.buffers = s->buffers, .records = s->records, .note = nz(s->note),
	};
	if (s->cupti_version)
		snprintf(ver, sizeof(ver), " with CUPTI %u.%u", s->cupti_version / 10000,
			 s->cupti_version / 100 % 100);
	snprintf(who, sizeof(who), "CUDA: pid %u (%s)", r->pid, r->exe);
	switch (s->state) {
	case CBN_CUDA_FINISHED:
		line = xasprintf("%s: traced%s, %llu activity records in %llu buffers%s%s", who,
				 ver, (unsigned long long)r->records,
				 (unsigned long long)r->buffers, *r->note ? "; " : "", r->note);
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
		/* The layer's message names the CUPTI error itself. */
		line = *r->message
			       ? xasprintf("%s: CUDA tracing unavailable: %s; CPU profile only",
					   who, r->message)
			       : xasprintf("%s: CUDA tracing unavailable (CUPTI error %d); CPU "
					   "profile only",
					   who, r->cupti_error);
		break;
	}
	if (add_line(a, cap, line))
		return -ENOMEM;
	if (s->dropped &&
	    add_line(a, cap, xasprintf("%s: CUPTI dropped %llu activity records (buffers full): "
					"GPU tables undercount",
					who, (unsigned long long)s->dropped)))
		return -ENOMEM;
	if (s->zero_ts &&
	    add_line(a, cap, xasprintf("%s: %llu GPU records had no timestamps and were excluded",
					who, (unsigned long long)s->zero_ts)))
		return -ENOMEM;
	if (s->flush_timed_out &&
	    add_line(a, cap, xasprintf("%s: the final CUPTI flush timed out: the last GPU records "
					"may be missing",
					who)))
		return -ENOMEM;
	return 0;
}

int cuda_status_build(struct cuda_analysis *a, const struct profile *p)
{
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
	for (i = 0; i < p->ncuda_status; i++)
		if (status_row(a, p, &p->cuda_status[i], &cap))
			goto out;
	if (cuda_shares_build(a, p, &cap) || cuda_gpus_build(a, p))
		goto out;
	for (i = 0; i < p->nprocesses; i++) {
		struct cuda_status_row *r;

		if (!loaded[i])
			continue;
		r = &a->status[a->nstatus++];
		*r = (struct cuda_status_row){
			.pid = p->processes[i].pid, .exe = util_base_name(p->processes[i].exe), .state = "unavailable",
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
