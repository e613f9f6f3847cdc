/*
 * verdict.c — the run's one verdict (analysis.h, struct run_verdict): the
 * first question of torch.utils.bottleneck's advice, "CPU-bound or
 * GPU-bound, and where", answered from the CPU, GPU, waiting and memory
 * evidence together, after every view is analysed.  The views' own verdicts
 * (the CPU overview's, the CUDA overview's) are the detail of one area; this
 * line is built from them and says what they mean for the whole run, so the
 * report never shows "compute-bound" beside "overhead-bound" unexplained.
 * Thresholds are named here and in docs/reading-the-report.md ("Verdict").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cpu.h"
#include "cuda_analysis.h"
#include "memory.h"
#include "names.h"
#include "programs.h"
#include "wait.h"

#define V_GPU_BUSY 0.80          /* GPU utilization at least this: GPU-bound */
#define V_LAUNCH_SHARE 0.50      /* one thread in launching CUDA calls this share of the
				  * GPU window while the GPU was under V_GPU_BUSY */
#define V_MIN_SAMPLES 10         /* fewer CPU samples and no GPU work: no verdict */
#define V_ONE_PROGRAM 0.95       /* a program of one process with this share of the CPU is
				  * the run when it is the command's own image: else the
				  * verdict names the programs first */
#define V_NEXT_PROGRAM 0.05      /* ... and the next one when it has this share */
#define V_PROG_KERNEL 0.30       /* ... and the top one's kernel share when this much */

static const char *thread_label(char *buf, size_t len, const struct profile *p, uint32_t t)
{
	if (t >= p->nthreads)
		snprintf(buf, len, "an unknown thread");
	else if (p->threads[t].name && *p->threads[t].name)
		snprintf(buf, len, "%s (tid %u)", p->threads[t].name, p->threads[t].tid);
	else
		snprintf(buf, len, "tid %u", p->threads[t].tid);
	return buf;
}

struct api_iv {
	uint32_t thread;
	uint64_t s, e;
};

static int api_iv_cmp(const void *a, const void *b)
{
	const struct api_iv *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* The thread that spent most time in CUDA calls that do not wait for the GPU
 * (launches, copies queued, allocations), each thread's calls as a union over
 * time (a runtime call and the driver call inside it count once); its time
 * in *ns.  PROF_NONE when no thread made such calls. */
static uint32_t launch_thread(const struct profile *p, uint64_t *ns)
{
	struct api_iv *v = calloc(p->ncuda_api ? p->ncuda_api : 1, sizeof(*v));
	uint32_t best = PROF_NONE;
	size_t i, n = 0;
	uint64_t cur = 0, ce = 0;

	*ns = 0;
	if (!v)
		return PROF_NONE;
	for (i = 0; i < p->ncuda_api; i++) {
		const struct prof_cuda_api *c = &p->cuda_api[i];

		if (c->thread >= p->nthreads || c->end <= c->start || !c->name ||
		    cuda_api_is_sync(c->name))
			continue;
		v[n++] = (struct api_iv){c->thread, c->start, c->end};
	}
	if (n)
		qsort(v, n, sizeof(*v), api_iv_cmp);
	for (i = 0; i < n; i++) {
		if (i && v[i].thread != v[i - 1].thread) {
			cur = 0;
			ce = 0;
		}
		if (v[i].e > ce) {
			cur += v[i].e - (v[i].s > ce ? v[i].s : ce);
			ce = v[i].e;
		}
		if (cur > *ns) {
			*ns = cur;
			best = v[i].thread;
		}
	}
	free(v);
	return best;
}

/* The hottest function by self time that is the program's work: the
 * kernel's rows are named apart ("in the kernel"), and the CPU no sample saw
 * ("[too short to sample]") is no function's. */
static const struct cpu_func *hottest(const struct analysis *a)
{
	const struct profile *p = a->profile;
	size_t i;

	for (i = 0; a->cpu && i < a->cpu->nfuncs; i++) {
		const struct cpu_func *f = &a->cpu->funcs[i];
		const char *mod = f->func < p->nfuncs ? p->funcs[f->func].module : NULL;

		if (f->func < p->nfuncs && (p->funcs[f->func].flags & PROF_FUNC_UNSEEN))
			continue;
		if (!mod || strcmp(mod, "kernel") != 0)
			return f->self_ns ? f : NULL;
	}
	return NULL;
}

#define V_NAME_MAX 100           /* bytes of a function name in the line, then "…" */

/* "heavy (examples/split.c:15)", "liblzma.so.5+0x15ae0 [no symbol]"; a long
 * name (C++ templates) cut at a character boundary: the line is one line */
static void func_label(char *buf, size_t len, const struct profile *p, const struct cpu_func *f)
{
	const struct prof_func *pf = &p->funcs[f->func];
	char bare[1024], cut[V_NAME_MAX + 8];
	/* as the tables print it: no return type, no parameters */
	const char *name = names_bare_copy(bare, sizeof(bare), pf->name ? pf->name : "?");
	size_t n = strlen(name);

	if (n > V_NAME_MAX) {
		for (n = V_NAME_MAX; n && ((unsigned char)name[n] & 0xc0) == 0x80; n--)
			;
		snprintf(cut, sizeof(cut), "%.*s\xe2\x80\xa6", (int)n, name);
		name = cut;
	}
	if (pf->file && *pf->file && pf->line)
		snprintf(buf, len, "%s (%s:%u)", name, pf->file, pf->line);
	else
		snprintf(buf, len, "%s", name);
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* The memory evidence that changes the answer: the allocator's share of the
 * CPU, and the memory rules that fired (their ids, each once: "alloc-churn
 * x3" for three sites). */
static void memory_clause(char *buf, size_t len, const struct analysis *a)
{
	size_t i, j, n = 0, k;

	buf[0] = '\0';
	size_t named = 0;

	if (a->wait && a->wait->verdict != WAIT_V_ALLOC && a->wait->of_cpu[WAIT_ACT_ALLOC] >= 0.10)
		n += (size_t)snprintf(buf + n, len - n, "; %.0f %% of the CPU in the allocator",
				      100.0 * a->wait->of_cpu[WAIT_ACT_ALLOC]);
	for (i = 0; a->memory && i < a->memory->nrecos && n < len; i++) {
		const char *id = a->memory->recos[i].id;

		if (strcmp(id, "alloc-churn") && strcmp(id, "leak-growing") &&
		    strcmp(id, "rss-retained"))
			continue;
		for (j = 0; j < i && strcmp(a->memory->recos[j].id, id); j++)
			;
		if (j < i)
			continue; /* named already */
		for (j = i, k = 0; j < a->memory->nrecos; j++)
			k += !strcmp(a->memory->recos[j].id, id);
		n += (size_t)snprintf(buf + n, len - n, "%s%s", named++ ? ", " : "; memory: ", id);
		if (k > 1 && n < len)
			n += (size_t)snprintf(buf + n, len - n, " \xc3\x97%zu", k);
	}
}

/* How busy the run kept the machine: "the run kept its 2 CPUs 73 % busy". */
static void cores_clause(char *buf, size_t len, const struct wait_analysis *w)
{
	if (w->cpus)
		snprintf(buf, len, "the run kept its %u CPU%s %.0f %% busy", w->cpus,
			 w->cpus == 1 ? "" : "s", 100.0 * w->cores_used / w->cpus);
	else
		snprintf(buf, len, "the run kept %.2f CPUs busy on average", w->cores_used);
}

/* Whether program name is the command's own: an image of the run's first
 * process (the command, or what it exec'd: a shim's python3.11).  A profile
 * without processes (built by hand) has only its own. */
static int command_program(const struct profile *p, const char *name)
{
	size_t i;

	if (!p->nprocesses)
		return 1;
	for (i = 0; i < p->nprocesses; i++)
		if (p->processes[i].pid == p->processes[0].pid &&
		    !strcmp(programs_name_of(p, (uint32_t)i), name))
			return 1;
	return 0;
}

/* A run of several programs (a build, a shell script, a launcher's shim):
 * the programs first, as perf report --sort comm says it, then how busy the
 * machine was.  NULL programs or one that is the whole run: 0, nothing
 * written. */
static int programs_side(const struct analysis *a, char *txt, size_t tlen)
{
	const struct prog_analysis *g = a->programs;
	const struct profile *p = a->profile;
	const struct program *top;
	char fl[512], cores[96];
	size_t n = 0;

	/* one program of one process is the run, when it is the command (or
	 * what the command exec'd); one of many processes (a build's
	 * compilers, a pool of workers), or a child that holds the run (gcc's
	 * cc1), is judged as a program, named first */
	if (!g || g->with_cpu < 2 || !g->cpu_ns || !a->wait ||
	    (share(g->v[0].cpu_ns, g->cpu_ns) >= V_ONE_PROGRAM && g->v[0].images < 2 &&
	     command_program(p, g->v[0].name)))
		return 0;
	top = &g->v[0];
	n += (size_t)snprintf(txt + n, tlen - n, ": %.0f %% of the CPU in %s", 100.0 *
			      share(top->cpu_ns, g->cpu_ns), top->name);
	if (top->images > 1)
		n += (size_t)snprintf(txt + n, tlen - n, " (%u processes)", top->images);
	if (n < tlen && share(top->kernel_ns, top->cpu_ns) >= V_PROG_KERNEL)
		n += (size_t)snprintf(txt + n, tlen - n, ", %.0f %% of it in the kernel",
				      100.0 * share(top->kernel_ns, top->cpu_ns));
	if (n < tlen && top->top_func < p->nfuncs) {
		struct cpu_func f = { .func = top->top_func };

		func_label(fl, sizeof(fl), p, &f);
		n += (size_t)snprintf(txt + n, tlen - n, ", hottest function %s with %.0f %%", fl,
				      100.0 * share(top->top_func_ns, g->cpu_ns));
	}
	if (n < tlen && g->n > 1 && share(g->v[1].cpu_ns, g->cpu_ns) >= V_NEXT_PROGRAM) {
		n += (size_t)snprintf(txt + n, tlen - n, "; %.0f %% in %s",
				      100.0 * share(g->v[1].cpu_ns, g->cpu_ns), g->v[1].name);
		if (g->v[1].images > 1 && n < tlen)
			n += (size_t)snprintf(txt + n, tlen - n, " (%u processes)", g->v[1].images);
	}
	cores_clause(cores, sizeof(cores), a->wait);
	if (n < tlen)
		snprintf(txt + n, tlen - n, "; %s", cores);
	return 1;
}

/* The CPU side's answer: where the CPU went, or what the threads waited
 * for (the CPU overview's verdict, in the run's words). */
static int cpu_side(const struct analysis *a, char *kind, size_t klen, char *txt, size_t tlen)
{
	const struct wait_analysis *w = a->wait;
	const struct profile *p = a->profile;
	const struct cpu_func *f = hottest(a);
	char fl[512] = "", th[160];

	if (f)
		func_label(fl, sizeof(fl), p, f);
	switch (w->verdict) {
	case WAIT_V_COMPUTE:
	case WAIT_V_KERNEL:
	case WAIT_V_ALLOC:
		/* several programs: which one, before what it does */
		if (programs_side(a, txt, tlen)) {
			snprintf(kind, klen, "CPU-bound");
			return 0;
		}
		break;
	default:
		break;
	}
	switch (w->verdict) {
	case WAIT_V_KERNEL:
		snprintf(kind, klen, "CPU-bound");
		snprintf(txt, tlen, " in the kernel: %.0f %% of the CPU in system calls and page "
			 "faults", 100.0 * w->of_cpu[WAIT_ACT_KERNEL]);
		return 0;
	case WAIT_V_ALLOC:
		snprintf(kind, klen, "CPU-bound");
		snprintf(txt, tlen, " in the allocator: %.0f %% of the CPU in malloc and free",
			 100.0 * w->of_cpu[WAIT_ACT_ALLOC]);
		return 0;
	case WAIT_V_STARTUP:
		snprintf(kind, klen, "start-up-bound");
		snprintf(txt, tlen, ": %.0f %% of the CPU in the dynamic loader and before main",
			 100.0 * w->of_cpu[WAIT_ACT_STARTUP]);
		return 0;
	case WAIT_V_SERIAL:
		snprintf(kind, klen, "CPU-bound");
		snprintf(txt, tlen, " on one thread, %s, while the others wait for it%s%s",
			 thread_label(th, sizeof(th), p, w->critical), *fl ? "; hottest: " : "",
			 fl);
		return 0;
	case WAIT_V_SYNC:
	case WAIT_V_IO:
	case WAIT_V_SLEEP:
		/* "waiting" only when it is true of the busy threads; else the
		 * CPU is the answer and the waiting a clause */
		if (w->busy_off_share > w->busy_on_share) {
			snprintf(kind, klen, "waiting");
			snprintf(txt, tlen, ": the busy threads were off the CPU %.0f %% of their "
				 "time, on it %.0f %%; %s", 100.0 * w->busy_off_share,
				 100.0 * w->busy_on_share,
				 w->verdict_text ? w->verdict_text : wait_verdict_name(w->verdict));
			return 0;
		}
		snprintf(kind, klen, "CPU-bound");
		if (f)
			snprintf(txt, tlen, ": %.0f %% of the CPU in %s; %s; the threads also waited: "
				 "%s", 100.0 * share(f->self_ns, a->cpu->cpu_ns), fl,
				 wait_efficiency_words(w, th, sizeof(th)),
				 w->verdict_text ? w->verdict_text : wait_verdict_name(w->verdict));
		else
			snprintf(txt, tlen, ": %s; the threads also waited: %s",
				 wait_efficiency_words(w, th, sizeof(th)),
				 w->verdict_text ? w->verdict_text : wait_verdict_name(w->verdict));
		return 0;
	default:
		snprintf(kind, klen, "CPU-bound");
		if (f)
			snprintf(txt, tlen, ": %.0f %% of the CPU in %s; %s",
				 100.0 * share(f->self_ns, a->cpu->cpu_ns), fl,
				 wait_efficiency_words(w, th, sizeof(th)));
		else
			snprintf(txt, tlen, ": %s", wait_efficiency_words(w, th, sizeof(th)));
		return 0;
	}
}

/* With GPU work: is the GPU the bottleneck, or what keeps it waiting? */
static void gpu_side(const struct analysis *a, char *kind, size_t klen, char *txt, size_t tlen)
{
	const struct cuda_overview *ov = &a->cuda->ov;
	const struct profile *p = a->profile;
	uint64_t lns = 0;
	uint32_t lt = launch_thread(p, &lns);
	char th[160], ck[64] = "", ct[900] = "";
	double idle = 1.0 - ov->gpu_utilization;

	if (ov->gpu_utilization >= V_GPU_BUSY) {
		snprintf(kind, klen, "GPU-bound");
		if (a->cuda->nkernels)
			snprintf(txt, tlen, ": the GPU was busy %.0f %% of the time; most in %s "
				 "(%.0f %% of kernel time)", 100.0 * ov->gpu_utilization,
				 a->cuda->kernels[0].display ? a->cuda->kernels[0].display
							     : a->cuda->kernels[0].name,
				 a->cuda->kernels[0].time_pct);
		else
			snprintf(txt, tlen, ": the GPU was busy %.0f %% of the time",
				 100.0 * ov->gpu_utilization);
		return;
	}
	if (lt != PROF_NONE &&
	    (!strcmp(ov->verdict, "overhead-bound") ||
	     share(lns, ov->window_ns) >= V_LAUNCH_SHARE)) {
		snprintf(kind, klen, "launch-bound");
		snprintf(txt, tlen, " on thread %s: the GPU was idle %.0f %% of the time while that "
			 "thread spent %.0f %% of it in CUDA calls that launch work",
			 thread_label(th, sizeof(th), p, lt), 100.0 * idle,
			 100.0 * share(lns, ov->window_ns));
		return;
	}
	/* the GPU waits for the host: the CPU side says why */
	if (a->wait && a->wait->verdict != WAIT_V_NONE) {
		cpu_side(a, ck, sizeof(ck), ct, sizeof(ct));
		snprintf(kind, klen, "%s", ck);
		snprintf(txt, tlen, ": the GPU was idle %.0f %% of the time; the host%s", 100.0 * idle,
			 ct);
		return;
	}
	snprintf(kind, klen, "mixed");
	snprintf(txt, tlen, ": the GPU was busy %.0f %% of the time", 100.0 * ov->gpu_utilization);
}

int verdict_run(struct analysis *a)
{
	const struct wait_analysis *w = a->wait;
	char kind[64] = "", txt[1200] = "", mem[512];
	int gpu = a->cuda && a->profile->ngpu_ops && a->cuda->ov.gpu_utilization >= 0;

	memset(&a->verdict, 0, sizeof(a->verdict));
	if (gpu) {
		gpu_side(a, kind, sizeof(kind), txt, sizeof(txt));
	} else if (w && w->verdict != WAIT_V_NONE && a->cpu && a->cpu->samples >= V_MIN_SAMPLES) {
		cpu_side(a, kind, sizeof(kind), txt, sizeof(txt));
	} else {
		return 0; /* too little data: no verdict */
	}
	memory_clause(mem, sizeof(mem), a);
	snprintf(a->verdict.kind, sizeof(a->verdict.kind), "%s", kind);
	if (asprintf(&a->verdict.text, "%s%s%s", kind, txt, mem) < 0) {
		a->verdict.text = NULL;
		return -ENOMEM;
	}
	return 0;
}

void verdict_free(struct analysis *a)
{
	free(a->verdict.text);
	a->verdict.text = NULL;
}
