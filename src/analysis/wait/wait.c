/*
 * wait.c — the CPU side's "what is this run waiting for?" (wait.h): each
 * sample's activity (what it is: wait_class.c), off-CPU time per thread and
 * kind, the overview figures and the evidence of spin; then the call sites,
 * contended locks and wall-clock view (wait_sites.c), the critical thread
 * (wait_crit.c), the verdict and the rules (wait_rules.c).  Formulas:
 * docs/waiting.md.  The names of activities, kinds and verdicts, which the
 * rules and every writer print, are wait_names.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "span.h"
#include "util.h"
#include "wait_int.h"

#define WAIT_BUSY_SHARE 0.05         /* a busy thread is on the CPU this share of the wall, */
#define WAIT_BUSY_LIFE 0.50          /* ... or this share of its own life, */
#define WAIT_BUSY_MIN_NS 20000000ull /* ... and then at least 20 ms: one of a build's
				      * hundred short compilers works as hard as a
				      * long-lived thread */

/* wait.h's busy thread: on the CPU 5 % of the span, or half its own life. */
static int wait_busy(const struct wait_thread *t, uint64_t span_ns)
{
	if (!t->cpu_ns)
		return 0;
	if ((double)t->cpu_ns >= WAIT_BUSY_SHARE * (double)span_ns)
		return 1;
	return t->cpu_ns >= WAIT_BUSY_MIN_NS && (double)t->cpu_ns >= WAIT_BUSY_LIFE * (double)t->wall_ns;
}

/* --- threads and the overview ----------------------------------------------------- */

static int thread_cmp(const void *x, const void *y)
{
	const struct wait_thread *a = x, *b = y;
	int c = wait_cmp_u64_desc(a->cpu_ns, b->cpu_ns);

	return c ? c : (a->thread < b->thread ? -1 : a->thread > b->thread);
}

struct spin_ent {
	uint32_t func, line;
	const char *file;
	uint64_t ns;
};

static int spin_ent_cmp(const void *x, const void *y)
{
	const struct spin_ent *a = x, *b = y;

	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return wait_cmp_str(a->file, b->file);
}

/* The heaviest user frame above OpenMP spin (the loop whose threads wait at
 * its barrier), and the heaviest leaf of the other spin. */
static int spin_evidence(const struct profile *p, const uint16_t *cls, const uint8_t *act,
			 struct wait_ctx *ctx)
{
	struct spin_ent *e = calloc(p->nsamples ? p->nsamples : 1, sizeof(*e));
	uint64_t *leaf_ns = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*leaf_ns));
	uint64_t best = 0, sum;
	size_t i, j, n = 0;
	int ret = -ENOMEM;

	if (!e || !leaf_ns)
		goto out;
	ctx->omp_func = ctx->spin_leaf = PROF_NONE;
	ctx->omp_file = "";
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const struct prof_frame *fr, *site;
		uint64_t ns;
		uint32_t nf = 0, call;

		if (act[i] != WAIT_ACT_SPIN || s->thread >= p->nthreads ||
		    !(fr = stackw_frames(p, s->stack, &nf)))
			continue;
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		if (!(wait_cls_of(cls, p, fr[0].func) & FC_OMP)) {
			if (fr[0].func < p->nfuncs)
				leaf_ns[fr[0].func] += ns;
			continue;
		}
		ctx->omp_spin_ns += ns;
		if (!ctx->omp_module && fr[0].func < p->nfuncs && p->funcs[fr[0].func].module)
			ctx->omp_module = util_base_name(p->funcs[fr[0].func].module);
		site = wait_site_of(p, cls, fr, nf, &call);
		if (site->func < p->nfuncs && !(cls[site->func] & FC_SYS))
			e[n++] = (struct spin_ent){ .func = site->func, .line = site->line,
						    .file = site->file ? site->file : "", .ns = ns };
	}
	if (n)
		qsort(e, n, sizeof(*e), spin_ent_cmp);
	for (i = 0; i < n; i = j) {
		for (j = i, sum = 0; j < n && spin_ent_cmp(&e[i], &e[j]) == 0; j++)
			sum += e[j].ns;
		if (sum > best) {
			best = sum;
			ctx->omp_func = e[i].func;
			ctx->omp_line = e[i].line;
			ctx->omp_file = e[i].file;
		}
	}
	for (i = 0, best = 0; i < p->nfuncs; i++)
		if (leaf_ns[i] > best) {
			best = leaf_ns[i];
			ctx->spin_leaf = (uint32_t)i;
		}
	ret = 0;
out:
	free(e);
	free(leaf_ns);
	return ret;
}

/* The per-function, per-stack and per-sample arrays wait_analyze() builds
 * the result from. */
struct wait_work {
	uint16_t *cls;           /* per function: FC_* */
	uint8_t *sact;           /* per stack: its activity (ACT_HAS_MAIN) */
	uint8_t *act;            /* per sample: its activity */
	uint8_t *is_lock;        /* per off-CPU record: a wait for a mutex */
	uint64_t *first_main;    /* per process: when main first ran */
	uint64_t *on, *off;      /* per stack: ns on and off the CPU */
	struct wait_thread *th;  /* per thread */
};

/* What every function, stack and sample is; when main first ran in each
 * process (before it, stacks without main are the start-up). */
static void wait_classify_all(const struct profile *p, struct wait_work *W)
{
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		W->cls[i] = wait_classify(&p->funcs[i]);
	for (i = 0; i < p->nstacks; i++)
		W->sact[i] = wait_stack_act(p, W->cls, (uint32_t)i);
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t pi = s->thread < p->nthreads ? p->threads[s->thread].process : PROF_NONE;

		if (pi < p->nprocesses && s->stack < p->nstacks &&
		    W->sact[s->stack] & ACT_HAS_MAIN &&
		    (!W->first_main[pi] || s->ts < W->first_main[pi]))
			W->first_main[pi] = s->ts;
	}
}

/* Threads: lifetime, then samples; then the off-CPU stretches. */
static void wait_threads(const struct profile *p, struct wait_work *W, struct wait_ctx *ctx,
			 int windowed)
{
	struct wait_thread *th = W->th;
	size_t i;

	for (i = 0; i < p->nthreads; i++) {
		uint64_t s, e;

		wait_thread_span(p, (uint32_t)i, &s, &e);
		th[i].thread = (uint32_t)i;
		th[i].wall_ns = span_in_process(p, p->threads[i].process, s, e);
		/* the profiler's own samples, in no table: on the CPU, not
		 * waiting (a loop of annotation marks, the hooks of --memory) */
		if (!windowed)
			th[i].profiler_ns = p->threads[i].overhead_weight *
					    prof_period_of_thread(p, (uint32_t)i);
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t ns;

		W->act[i] = (uint8_t)wait_sample_act(p, s, W->sact, W->first_main);
		if (s->thread >= p->nthreads)
			continue;
		ctx->samples += !(s->flags & PROF_SAMPLE_SPLIT);
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		th[s->thread].cpu_ns += ns;
		th[s->thread].act_ns[W->act[i]] += ns;
		if (s->stack < p->nstacks)
			W->on[s->stack] += ns;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];
		uint32_t kind = r->kind < CBN_OFF_NKINDS ? r->kind : CBN_OFF_OTHER;
		struct wait_thread *t;

		if (r->thread >= p->nthreads)
			continue;
		t = &th[r->thread];
		t->kind_ns[kind] += r->weight_ns;
		if (kind == CBN_OFF_RUNQ)
			continue;
		t->off_ns += r->weight_ns;
		if (r->stack < p->nstacks)
			W->off[r->stack] += r->weight_ns;
		if (kind == CBN_OFF_FUTEX && wait_in_mutex(p, W->cls, r->stack)) {
			W->is_lock[i] = 1;
			t->lock_wait_ns += r->weight_ns;
			if (r->owner_thread < p->nthreads && r->owner_thread != r->thread)
				th[r->owner_thread].held_for_ns += r->weight_ns;
		}
	}
}

struct edge {
	uint64_t ts;
	int d;                   /* +1 a busy thread starts, -1 it ends */
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->d - y->d; /* an end before a start at the same time */
}

/* The most busy threads alive at one time: a build's compilers, one after
 * the other two at a time, are 2, however many they are. */
static int wait_busy_at_once(const struct profile *p, const struct wait_thread *th,
			     struct wait_analysis *w)
{
	struct edge *e = util_reallocarray(NULL, 2 * (p->nthreads ? p->nthreads : 1), sizeof(*e));
	size_t i, n = 0;
	int cur = 0, best = 0;

	if (!e)
		return -ENOMEM;
	for (i = 0; i < p->nthreads; i++) {
		uint64_t s, t;

		if (!wait_busy(&th[i], w->span_ns))
			continue;
		wait_thread_span(p, (uint32_t)i, &s, &t);
		if (t <= s) { /* a life unknown: alive throughout */
			s = 0;
			t = UINT64_MAX;
		}
		e[n++] = (struct edge){ s, 1 };
		e[n++] = (struct edge){ t, -1 };
	}
	qsort(e, n, sizeof(*e), edge_cmp);
	for (i = 0; i < n; i++)
		if ((cur += e[i].d) > best)
			best = cur;
	free(e);
	w->busy_at_once = best > 0 ? (uint32_t)best : 1;
	w->usable = w->cpus && w->cpus < w->busy_at_once ? w->cpus : w->busy_at_once;
	return 0;
}

/* Each thread's busy share; the run's totals from the threads', and the
 * shares of thread time. */
static void wait_totals(const struct profile *p, struct wait_thread *th, struct wait_analysis *w)
{
	uint64_t on;
	size_t i, k;

	for (i = 0; i < p->nthreads; i++) {
		struct wait_thread *t = &th[i];

		t->busy = t->wall_ns ? (double)(t->cpu_ns - t->act_ns[WAIT_ACT_SPIN]) /
					       (double)t->wall_ns : 0.0;
		w->thread_ns += t->wall_ns;
		w->cpu_ns += t->cpu_ns;
		w->profiler_ns += t->profiler_ns;
		w->off_ns += t->off_ns;
		for (k = 0; k < WAIT_ACT_N; k++)
			w->act_ns[k] += t->act_ns[k];
		for (k = 0; k < CBN_OFF_NKINDS; k++)
			w->kind_ns[k] += t->kind_ns[k];
		if (wait_busy(t, w->span_ns))
			w->busy_threads++;
	}
	w->child_ns = w->kind_ns[CBN_OFF_CHILD];
	w->threads = (uint32_t)p->nthreads;
	if (!w->busy_threads)
		w->busy_threads = 1;
	on = w->cpu_ns + w->profiler_ns;
	w->blocked_est_ns = w->offcpu ? w->off_ns : (w->thread_ns > on ? w->thread_ns - on : 0);
	if (w->offcpu) {
		uint64_t seen = on + w->off_ns + w->kind_ns[CBN_OFF_RUNQ];

		w->runq_ns = w->kind_ns[CBN_OFF_RUNQ];
		w->other_ns = w->thread_ns > seen ? w->thread_ns - seen : 0;
	}
	/* shares of thread time that add up to 1 (wait.h) */
	w->share_ns = on + w->blocked_est_ns + w->runq_ns + w->other_ns;
	if (w->thread_ns > w->share_ns)
		w->share_ns = w->thread_ns;
	if (w->share_ns) {
		double d = (double)w->share_ns;

		for (k = 0; k < WAIT_ACT_N; k++)
			w->cpu_share[k] = (double)w->act_ns[k] / d;
		w->blocked_share = (double)(w->blocked_est_ns - w->child_ns) / d;
		w->child_share = (double)w->child_ns / d;
		w->runq_share = (double)w->runq_ns / d;
		w->other_share = (double)w->other_ns / d;
		w->profiler_share = (double)w->profiler_ns / d;
	}
	for (k = 0; k < WAIT_ACT_N && w->cpu_ns; k++)
		w->of_cpu[k] = (double)w->act_ns[k] / (double)w->cpu_ns;
}

/* Parallel efficiency and the cores used, once the busy threads at once
 * are known. */
static void wait_totals_efficiency(struct wait_analysis *w)
{
	if (w->span_ns) {
		/* what the run could use: its busy threads at once, at most the
		 * CPUs; sampling noise may put a fully parallel run a little
		 * over 1 */
		w->efficiency = (double)(w->cpu_ns - w->act_ns[WAIT_ACT_SPIN]) /
				((double)w->span_ns * (w->usable ? w->usable : 1));
		if (w->efficiency > 1.0)
			w->efficiency = 1.0;
		w->cores_used = (double)w->cpu_ns / (double)w->span_ns;
	}
}

/* The verdict's population: busy threads, all when none is. */
static void wait_population(const struct profile *p, const struct wait_thread *th,
			    const struct wait_analysis *w, struct wait_ctx *ctx)
{
	uint64_t on;
	size_t i, j, k;

	for (k = 0; k < 2 && !ctx->v_threads; k++)
		for (i = 0; i < p->nthreads; i++) {
			const struct wait_thread *t = &th[i];

			if (!k && !wait_busy(t, w->span_ns))
				continue;
			ctx->v_threads++;
			ctx->v_thread_ns += t->wall_ns;
			ctx->v_cpu_ns += t->cpu_ns;
			for (j = 0; j < WAIT_ACT_N; j++)
				ctx->v_act_ns[j] += t->act_ns[j];
			for (j = 0; j < CBN_OFF_NKINDS; j++)
				ctx->v_kind_ns[j] += t->kind_ns[j];
			on = t->cpu_ns + t->profiler_ns;
			ctx->v_blocked_ns += w->offcpu ? t->off_ns
					      : (t->wall_ns > on ? t->wall_ns - on : 0);
		}
}

/* The recording: whether off-CPU samples were taken and at what rate, the
 * wall and the span that was recorded. */
static void wait_recording(const struct profile *p, struct wait_analysis *w)
{
	struct run_span sp;
	size_t i;

	w->offcpu = p->noffcpu > 0;
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_offcpu_proc *o = &p->processes[i].offcpu;

		if (o->state == CBN_OFFCPU_ON)
			w->offcpu = 1;
		if (!w->rate_hz && o->rate_hz)
			w->rate_hz = o->rate_hz;   /* the first process is the root */
	}
	w->wall_ns = p->wall_ns;
	w->cpus = p->env.found && p->env.cpus > 0 ? (uint32_t)p->env.cpus : 0;
	span_of_run(p, &sp);
	w->span_ns = sp.ns;
	w->windowed = sp.windowed;
}

int wait_analyze(const struct profile *p, struct wait_analysis **out)
{
	struct wait_analysis *w = NULL;
	struct wait_work W = { 0 };
	struct wait_ctx ctx = { 0 };
	int ret = -ENOMEM;

	*out = NULL;
	if (!p->nsamples && !p->noffcpu)
		return 0;
	if (!(w = calloc(1, sizeof(*w))))
		goto out;
	w->critical = PROF_NONE;
	W.cls = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*W.cls));
	W.sact = calloc(p->nstacks ? p->nstacks : 1, sizeof(*W.sact));
	W.act = calloc(p->nsamples ? p->nsamples : 1, sizeof(*W.act));
	W.is_lock = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*W.is_lock));
	W.first_main = calloc(p->nprocesses ? p->nprocesses : 1, sizeof(*W.first_main));
	W.on = calloc(p->nstacks ? p->nstacks : 1, sizeof(*W.on));
	W.off = calloc(p->nstacks ? p->nstacks : 1, sizeof(*W.off));
	W.th = calloc(p->nthreads ? p->nthreads : 1, sizeof(*W.th));
	if (!W.cls || !W.sact || !W.act || !W.is_lock || !W.first_main || !W.on || !W.off || !W.th)
		goto out;

	wait_recording(p, w);
	wait_classify_all(p, &W);
	wait_threads(p, &W, &ctx, w->windowed);
	wait_totals(p, W.th, w);
	if ((ret = wait_busy_at_once(p, W.th, w)) < 0)
		goto out;
	wait_totals_efficiency(w);
	wait_population(p, W.th, w, &ctx);

	if ((ret = wait_build_sites(p, W.cls, w)) < 0 ||
	    (ret = wait_build_stretches(p, W.cls, w)) < 0 ||
	    (ret = wait_build_locks(p, W.cls, W.is_lock, w)) < 0 ||
	    (ret = wait_build_funcs(p, W.on, W.off, w)) < 0 ||
	    (ret = wait_critical_thread(p, w, W.act, &ctx)) < 0 ||
	    (ret = spin_evidence(p, W.cls, W.act, &ctx)) < 0)
		goto out;

	if (p->nthreads)
		qsort(W.th, p->nthreads, sizeof(*W.th), thread_cmp);
	w->threads_v = W.th;
	w->nthreads_v = p->nthreads;
	W.th = NULL;

	ctx.p = p;
	ctx.w = w;
	if ((ret = wait_rules_run(&ctx, w)) < 0)
		goto out;
	*out = w;
	w = NULL;
	ret = 0;
out:
	wait_free(w);
	free(W.th);
	free(W.cls);
	free(W.sact);
	free(W.act);
	free(W.is_lock);
	free(W.first_main);
	free(W.on);
	free(W.off);
	return ret < 0 ? -ENOMEM : 0;
}

void wait_free(struct wait_analysis *w)
{
	if (!w)
		return;
	free(w->threads_v);
	free(w->sites);
	free(w->stretches);
	free(w->locks);
	free(w->funcs);
	free(w->verdict_text);
	free(w->load_note);
	rules_findings_free(w->findings, w->nfindings);
	free(w);
}
