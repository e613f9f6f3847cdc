/*
 * text_head.c — the text report's header: the verdict, the command and its
 * exit, the run's time, how it was sampled, its processes and the machine,
 * in at most a dozen lines; with -v the sampler's inner workings (its
 * signal, kernel stacks, pauses, weights, lost samples by reason) and the
 * environment block too.  Formats the analysis result only.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cpu.h"
#include "cuda_analysis.h"
#include "fmt.h"
#include "programs.h"
#include "steps_report.h"
#include "text_int.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"

void text_exit_desc(char *buf, size_t len, int status, int signo)
{
	if (signo > 0) {
		const char *abbr = sigabbrev_np(signo);

		if (abbr)
			snprintf(buf, len, "killed by signal %d (SIG%s)", signo, abbr);
		else
			snprintf(buf, len, "killed by signal %d", signo);
	} else {
		snprintf(buf, len, "%d", status);
	}
}

static void text_command(FILE *out, const struct profile *p)
{
	size_t i;

	if (p->argv && p->argv[0]) {
		for (i = 0; p->argv[i]; i++)
			fprintf(out, "%s%s", i ? " " : "", p->argv[i]);
	} else if (p->nprocesses && p->processes[0].cmdline) {
		fputs(p->processes[0].cmdline, out);
	} else {
		fputs("?", out);
	}
}

/* 1 if process image idx was replaced by exec: a later image has its pid. */
int text_execd(const struct profile *p, size_t idx)
{
	size_t i;

	for (i = 0; i < p->nprocesses; i++)
		if (i != idx && p->processes[i].pid == p->processes[idx].pid &&
		    p->processes[i].exec_seq > p->processes[idx].exec_seq)
			return 1;
	return 0;
}

/* Processes as the user counts them: an exec keeps the pid. */
static size_t text_distinct_pids(const struct profile *p)
{
	size_t i, k, n = 0;

	for (i = 0; i < p->nprocesses; i++) {
		for (k = 0; k < i; k++)
			if (p->processes[k].pid == p->processes[i].pid)
				break;
		if (k == i)
			n++;
	}
	return n;
}

/* Threads as the user counts them (an exec keeps the main thread's tid);
 * counting stops at 2, which is all the caller needs. */
size_t text_distinct_tids(const struct profile *p)
{
	size_t i, k, n = 0;

	for (i = 0; i < p->nthreads && n < 2; i++) {
		for (k = 0; k < i; k++)
			if (p->threads[k].tid == p->threads[i].tid)
				break;
		if (k == i)
			n++;
	}
	return n;
}

/* --ring: what the ring kept, and what it let go. */
static void text_ring(FILE *out, const struct profile *p)
{
	uint64_t ring = 0, recycled = 0, dropped = 0;
	size_t i;
	char b[32];

	for (i = 0; i < p->nprocesses; i++) {
		if (p->processes[i].ring_ns > ring)
			ring = p->processes[i].ring_ns;
		recycled += p->processes[i].ring_recycled;
		dropped += p->processes[i].ring_dropped;
	}
	if (!ring)
		return;
	fprintf(out, "  Ring:       the last %s of each process kept; %llu older chunks reused, "
		"%llu older samples left out\n", util_fmt_time(b, sizeof(b), ring),
		(unsigned long long)recycled, (unsigned long long)dropped);
}

/* How the kernel's time is shown: named kernel stacks, or why not. */
static void text_kernel_stacks(FILE *out, const struct cpu_sampler *sm)
{
	if (sm->kstack_state == CBN_KSTACK_TAKEN) {
		fprintf(out, "  Kernel:     stacks named ([kernel] frames): %llu kernel samples on %llu "
			"thread%s", (unsigned long long)sm->kstack_samples,
			(unsigned long long)sm->kstack_threads, sm->kstack_threads == 1 ? "" : "s");
		if (sm->kstack_placed || sm->kstack_unplaced)
			fprintf(out, ", %llu on the calling stack, %llu on the next sample's",
				(unsigned long long)sm->kstack_placed,
				(unsigned long long)sm->kstack_unplaced);
		if (sm->kstack_lost)
			fprintf(out, ", %llu without a stack", (unsigned long long)sm->kstack_lost);
		if (sm->kstack_parks)
			fprintf(out, "; the kernel event paused %llu time%s on threads staying in user "
				"mode, resumed %llu", (unsigned long long)sm->kstack_parks,
				sm->kstack_parks == 1 ? "" : "s", (unsigned long long)sm->kstack_unparks);
		fputc('\n', out);
	} else if (sm->kstack_state == CBN_KSTACK_OFF) {
		fprintf(out, "  Kernel:     one [kernel] row, no kernel stacks (%s)\n",
			sm->kstack_reason ? sm->kstack_reason : "not available");
	}
}

/* The unwinder's self-check (CBN_UNWIND_CHECK=1), when it ran. */
static void text_unwind_check(FILE *out, const struct cpu_sampler *sm)
{
	const struct prof_unwind_check *u = &sm->ucheck;

	if (!u->samples)
		return;
	fprintf(out, "  Unwind check: %llu samples (%llu frames) compared with a full unwind: %llu "
		"differed; %llu cached CFI answers compared: %llu differed; %llu walked by the "
		"agent's own walk",
		(unsigned long long)u->samples, (unsigned long long)u->frames,
		(unsigned long long)u->differed, (unsigned long long)u->cfi_checked,
		(unsigned long long)u->cfi_differed, (unsigned long long)u->fast);
	if (u->first)
		fprintf(out, "; the first at frame %u (cached 0x%llx, full 0x%llx)", u->first_at,
			(unsigned long long)u->first_cached_pc, (unsigned long long)u->first_full_pc);
	fputc('\n', out);
}

/* The profiler's cost against the program's CPU, after lead: a share, or
 * "N times" where it is ten times the program's CPU or more (a program
 * that spends its time in our annotation writes). */
static void overhead_share(FILE *out, const char *lead, uint64_t ns, uint64_t cpu_ns)
{
	double r = (double)ns / (double)cpu_ns;

	if (r >= 10)
		fprintf(out, "%s%.0f times the program's CPU", lead, r);
	else
		fprintf(out, "%s%.1f%% of the program's CPU", lead, 100.0 * r);
}

/* The profiler's own CPU on one line, kept out of every table. */
static void text_overhead(FILE *out, const struct cpu_profile *c)
{
	const struct cpu_overhead *o = &c->overhead;
	const struct {
		uint64_t ns;
		const char *what;
	} part[] = {
		{ o->sampled_ns, "in its hooks and callbacks on the program's threads" },
		{ o->threads_ns, "in the CUDA layer's thread" },
		{ o->handler_ns, "in the sampling handler" },
		{ o->startup_ns, "starting up" },
		{ o->launcher_ns, "in the launcher, outside the program" },
	};
	char a[32];
	size_t i;
	int first = 1;

	if (!o->total_ns)
		return;
	fprintf(out, "  Profiler overhead: %s", util_fmt_time(a, sizeof(a), o->total_ns));
	if (c->cpu_ns)
		overhead_share(out, " (", o->total_ns, c->cpu_ns);
	else
		fprintf(out, " (");
	for (i = 0; i < sizeof(part) / sizeof(part[0]); i++) {
		if (!part[i].ns)
			continue;
		fprintf(out, "%s%s %s", first ? (c->cpu_ns ? ": " : "") : ", ",
			util_fmt_time(a, sizeof(a), part[i].ns), part[i].what);
		first = 0;
	}
	fprintf(out, "; in no table)\n");
}

/* "3.12.1", "3.13.0rc2" from PY_VERSION_HEX. */
static const char *text_py_version(char *buf, size_t len, uint32_t v)
{
	static const char *const level[16] = {[0xa] = "a", [0xb] = "b", [0xc] = "rc"};
	unsigned lv = (v >> 4) & 0xf;

	if (lv != 0xf && level[lv])
		snprintf(buf, len, "%u.%u.%u%s%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff,
			 level[lv], v & 0xf);
	else
		snprintf(buf, len, "%u.%u.%u", v >> 24, (v >> 16) & 0xff, (v >> 8) & 0xff);
	return buf;
}

/* Which interpreter was read, or why not (docs/agent.md section 17). */
static void text_python(FILE *out, const struct cpu_python *py)
{
	uint64_t unread = 0;
	char v[32];
	unsigned k;

	for (k = 0; k < CBN_PYU_NREASONS; k++)
		unread += py->unread[k];
	if (py->state == CBN_PY_ON) {
		fprintf(out, "  Python:     CPython %s%s: Python frames in %.1f%% of its samples",
			text_py_version(v, sizeof(v), py->version), py->mixed ? " (and others)" : "",
			py->samples_of ? 100.0 * (double)py->samples / (double)py->samples_of : 0.0);
		if (py->truncated)
			fprintf(out, ", %llu stacks with their Python frames cut at the depth cap",
				(unsigned long long)py->truncated);
		if (unread)
			fprintf(out, ", %llu stacks kept native (their frames could not be read)",
				(unsigned long long)unread);
		if (py->walks && py->walk_frames)
			fprintf(out, "; reading them took %.2f us a sample (%.0f frames on average, "
				"%.0f ns a frame; %llu samples timed)",
				(double)py->walk_ns / (double)py->walks / 1e3,
				(double)py->walk_frames / (double)py->walks,
				(double)py->walk_ns / (double)py->walk_frames,
				(unsigned long long)py->walks);
		fputc('\n', out);
	} else if (py->state == CBN_PY_OFF) {
		fprintf(out, "  Python:     CPython %s, frames not read (--python off)\n",
			text_py_version(v, sizeof(v), py->version));
	} else if (py->state == CBN_PY_REFUSED) {
		fprintf(out, "  Python:     frames not read: %s\n", py->reason ? py->reason : "?");
	}
}

static void text_env_cuda(struct text_ctx *t);

/* The verdict, with paths under the current directory relative to it, as
 * in the tables (the analysis and the JSON keep them whole). */
static void text_verdict(struct text_ctx *t)
{
	if (!t->a->verdict.text)
		return;
	fprintf(t->out, "  Verdict:    ");
	fmt_rel_puts(t->out, t->a->verdict.text);
	fputc('\n', t->out);
}

/* "12 lost (3 buffer_full, 9 reentrant)" */
static void text_lost(FILE *out, const struct cpu_profile *c)
{
	unsigned k;
	int first = 1;

	if (!c->lost_total) {
		fprintf(out, "0 lost");
		return;
	}
	fprintf(out, "%llu lost (", (unsigned long long)c->lost_total);
	for (k = 0; k < CBN_LOST_NREASONS; k++) {
		const char *name = cpu_lost_name(k);

		if (!c->lost[k])
			continue;
		fprintf(out, "%s%llu %s", first ? "" : ", ", (unsigned long long)c->lost[k],
			name ? name : "other");
		first = 0;
	}
	fputc(')', out);
}

/* The CPU time, of the wall or of the captured time, sampled and measured. */
static void text_cpu_time(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	FILE *out = t->out;
	char a[64], b[64];

	fprintf(out, "  CPU time:   %s", util_fmt_time(a, sizeof(a), c->cpu_ns));
	if (t->a->wait && t->a->wait->windowed && t->a->wait->span_ns)
		fprintf(out, " (%.2f%% of the captured time, sampled",
			100.0 * (double)c->cpu_ns / (double)t->a->wait->span_ns);
	else if (p->wall_ns)
		fprintf(out, " (%.2f%% of wall, sampled", 100.0 * (double)c->cpu_ns / (double)p->wall_ns);
	else
		fprintf(out, " (sampled");
	/* the kernel's count, when every thread reported one at its end */
	if (c->measured_ns)
		fprintf(out, "; %s measured", util_fmt_time(b, sizeof(b), c->measured_ns));
	fprintf(out, ")");
	/* the overview's own figure (wait.h of_cpu), so the two cannot differ */
	if (!t->verbose && t->a->wait && t->a->wait->cpu_ns)
		fprintf(out, ", %.1f%% of it in the kernel", 100.0 * t->a->wait->of_cpu[WAIT_ACT_KERNEL]);
	fputc('\n', out);
}

/* One line: how many samples at what rate, what was lost, what the
 * profiler cost; the sampler is named only when it is not perf events (the
 * fallback samples at the kernel's tick: docs/reading-the-report.md). */
static void text_samples_short(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	FILE *out = t->out;
	char a[64];

	fprintf(out, "  Samples:    %llu", (unsigned long long)c->samples);
	if (p->period_ns)
		fprintf(out, " at %s", fmt_hz(a, sizeof(a), 1e9 / (double)p->period_ns));
	else if (p->frequency_hz > 0)
		fprintf(out, " at %s", fmt_hz(a, sizeof(a), p->frequency_hz));
	if (c->sampler.threads_timer)
		fprintf(out, " (%s%s%s)", cpu_sampler_mode(c), c->sampler.timer_reason ? ": " : "",
			c->sampler.timer_reason ? c->sampler.timer_reason : "");
	fprintf(out, ", ");
	text_lost(out, c);
	if (c->overhead.total_ns && c->cpu_ns) {
		overhead_share(out, "; profiler overhead ", c->overhead.total_ns, c->cpu_ns);
		fprintf(out, ", in no table");
	}
	fputc('\n', out);
}

/* -v: every line of how the run was sampled. */
static void text_samples_verbose(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	FILE *out = t->out;
	char a[64], b[64];

	text_overhead(out, c);
	if (t->a->wait && t->a->wait->cpu_ns)
		fprintf(out, "  User/kernel: %.1f%% user, %.1f%% kernel (of the sampled CPU)\n",
			100.0 * (1.0 - t->a->wait->of_cpu[WAIT_ACT_KERNEL]),
			100.0 * t->a->wait->of_cpu[WAIT_ACT_KERNEL]);
	/* the period the agent actually used is the truth; the frequency asked
	 * for may have been rounded to a whole timer period */
	if (p->period_ns)
		fprintf(out, "  Sampling:   %s (period %s)\n",
			fmt_hz(a, sizeof(a), 1e9 / (double)p->period_ns),
			util_fmt_time(b, sizeof(b), p->period_ns));
	else if (p->frequency_hz > 0)
		fprintf(out, "  Sampling:   %s\n", fmt_hz(a, sizeof(a), p->frequency_hz));
	if (*cpu_sampler_mode(c)) {
		fprintf(out, "  Sampler:    %s", cpu_sampler_mode(c));
		if (c->sampler.signo)
			fprintf(out, ", signal %s", fmt_signal(b, sizeof(b), (int)c->sampler.signo));
		if (c->sampler.threads_timer && c->sampler.timer_reason)
			fprintf(out, " (timers: %s)", c->sampler.timer_reason);
		fputc('\n', out);
	}
	text_kernel_stacks(out, &c->sampler);
	text_unwind_check(out, &c->sampler);
	text_python(out, &c->python);
	fprintf(out, "  Samples:    %llu", (unsigned long long)c->samples);
	if (c->weight != c->samples && (c->sampler.threads_perf || c->sampler.threads_timer))
		fprintf(out, " (weight %llu: the periods of CPU they stand for)",
			(unsigned long long)c->weight);
	else if (c->weight != c->samples)
		fprintf(out, " (weight %llu: the timer overran %llu times)",
			(unsigned long long)c->weight,
			(unsigned long long)(c->weight > c->samples ? c->weight - c->samples : 0));
	fputc('\n', out);
	text_ring(out, p);
	report_wait_header(out, p, "  Off-CPU:    ", 1);
	fprintf(out, "  Lost:       ");
	text_lost(out, c);
	fputc('\n', out);
}

/* "1 (1 thread)", "82 in 5 programs (82 threads, 75 with samples)",
 * "2 (3 program images: exec replaced 1; 5 threads, 4 with samples)" */
static void text_processes_line(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const struct cpu_profile *c = t->c;
	size_t npids = text_distinct_pids(p);
	FILE *out = t->out;

	if (t->verbose) {
		fprintf(out, "  Processes:  %zu", npids);
		if (npids != p->nprocesses)
			fprintf(out, " (%zu program images: exec replaced %zu)", p->nprocesses,
				p->nprocesses - npids);
		fprintf(out, "\n  Threads:    %zu", p->nthreads);
		if (c->nthreads_seen != p->nthreads)
			fprintf(out, " (%zu with samples)", c->nthreads_seen);
		fputc('\n', out);
		if (p->fork_exits)
			fprintf(out, "  Forked:     %u child%s of fork ended through _exit (no exit "
				"handlers) while the parent lived on, as such children do\n",
				p->fork_exits, p->fork_exits == 1 ? "" : "ren");
		return;
	}
	fprintf(out, "  Processes:  %zu", npids);
	if (t->a->programs && t->a->programs->with_cpu > 1)
		fprintf(out, " in %u programs", t->a->programs->with_cpu);
	fprintf(out, " (");
	if (npids != p->nprocesses)
		fprintf(out, "%zu program images: exec replaced %zu; ", p->nprocesses,
			p->nprocesses - npids);
	fprintf(out, "%zu thread%s", p->nthreads, p->nthreads == 1 ? "" : "s");
	if (c->nthreads_seen != p->nthreads)
		fprintf(out, ", %zu with samples", c->nthreads_seen);
	fprintf(out, ")\n");
}

/* The machine and the program's build in one line (-v: the environment
 * block instead): "AMD EPYC, 2 CPUs, load 1.62 at start, Linux 6.18.44;
 * program built by GNU C11 12.2.0 -O2, no debug info". */
static void text_machine(struct text_ctx *t)
{
	const struct prof_env *e = &t->p->env;
	FILE *out = t->out;
	char comp[128] = "";
	int opt;

	if (!e->found)
		return;
	fprintf(out, "  Machine:    %s, %d CPU%s", *e->cpu_model ? e->cpu_model : "unknown CPU",
		e->cpus, e->cpus == 1 ? "" : "s");
	if (e->load[0] >= 0)
		fprintf(out, ", load %.2f at start", e->load[0]);
	if (*e->kernel)
		fprintf(out, ", %s", e->kernel);
	if (e->producer && *e->producer) {
		cpu_producer_name(e->producer, comp, sizeof(comp));
		opt = cpu_producer_opt(e->producer);
		fprintf(out, "; program built by %s", comp);
		if (opt >= 0 && opt <= 3)
			fprintf(out, " -O%d", opt);
		else if (opt == 10)
			fprintf(out, " -Os/-Og");
	} else {
		fprintf(out, "; program's compiler unknown");
	}
	fprintf(out, "%s\n", e->program_debuginfo ? ", with debug info" : ", no debug info");
}

void text_header(struct text_ctx *t)
{
	const struct profile *p = t->p;
	FILE *out = t->out;
	char a[64];

	fprintf(out, "cbottleneck: CPU sampling profile\n");
	/* the answer first (verdict.c); the views below give its evidence */
	text_verdict(t);
	fprintf(out, "  Command:    ");
	text_command(out, p);
	fputc('\n', out);
	text_exit_desc(a, sizeof(a), p->exit_status, p->exit_signal);
	if (p->attached_pid)
		fprintf(out, "  Attached:   to running process %u: its start-up and exit status "
			"not seen\n", p->attached_pid);
	else
		fprintf(out, "  Exit:       %s\n", a);
	fprintf(out, "  Wall time:  %s\n", util_fmt_time(a, sizeof(a), p->wall_ns));
	/* what every figure below covers (span.h): the Captured line says so */
	report_steps_captured(out, p, "  Captured:   ");
	if (t->a->wait && t->a->wait->windowed)
		fprintf(out, "  Span:       every figure below covers the capture windows (%s), "
			"not the whole run\n", util_fmt_time(a, sizeof(a), t->a->wait->span_ns));
	if (p->rank_filter)
		fprintf(out, "  Ranks:      %s (--ranks): every figure below covers these ranks' "
			"processes only\n", p->rank_filter);
	text_cpu_time(t);
	if (t->verbose) {
		text_samples_verbose(t);
	} else {
		text_samples_short(t);
		text_python(out, &t->c->python);
		text_ring(out, p);
		report_wait_header(out, p, "  Off-CPU:    ", 0);
	}
	text_processes_line(t);
	if (!t->verbose) {
		text_machine(t);
		text_env_cuda(t);
	}
	fputc('\n', out);
}

/* The CUDA stack of the run (a header line; -v: in the environment): driver, runtime (its library's file names the
 * version), CUPTI, and the GPUs by model. */
static void text_env_cuda(struct text_ctx *t)
{
	const struct profile *p = t->p;
	const char *rt = NULL;
	uint32_t cupti = 0, driver = 0;
	size_t i, j;
	int first = 1;

	if (!p->ndevices && !p->ncuda_status)
		return;
	for (i = 0; i < p->ncuda_status; i++) {
		if (p->cuda_status[i].cupti_version)
			cupti = p->cuda_status[i].cupti_version;
		if (p->cuda_status[i].driver_version)
			driver = p->cuda_status[i].driver_version;
	}
	for (i = 0; i < p->nhitmods && !rt; i++)
		if (!strncmp(p->hitmods[i].file, "libcudart.so", 12))
			rt = p->hitmods[i].file;
	for (i = 0; i < p->nmodules && !rt; i++)
		if (!strncmp(p->modules[i].name, "libcudart.so", 12))
			rt = p->modules[i].name;
	fprintf(t->out, "  CUDA:       ");
	if (driver)
		fprintf(t->out, "driver %u.%u, ", driver / 1000, driver % 1000 / 10);
	fprintf(t->out, "runtime %s", rt ? rt : "unknown");
	if (cupti)
		fprintf(t->out, ", CUPTI API %u", cupti);
	/* Each GPU once, however many processes used it (by UUID). */
	for (i = 0; t->a->cuda && i < t->a->cuda->ngpus; i++) {
		const struct cuda_gpu *g = &t->a->cuda->gpus[i];
		unsigned n = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(t->a->cuda->gpus[j].name, g->name))
				break;
		if (j < i)
			continue;
		for (j = i; j < t->a->cuda->ngpus; j++)
			n += !strcmp(t->a->cuda->gpus[j].name, g->name);
		fprintf(t->out, "%s%s x%u", first ? "; " : ", ", g->name, n);
		first = 0;
	}
	fputc('\n', t->out);
}

/* What torch.utils.bottleneck prints first: the machine, the program's build
 * and the tools' versions. */
void text_environment(struct text_ctx *t)
{
	const struct prof_env *e = &t->p->env;
	FILE *out = t->out;

	if (!e->found)
		return;
	fprintf(out, "Environment\n");
	fprintf(out, "  Kernel:     %s\n", *e->kernel ? e->kernel : "unknown");
	fprintf(out, "  CPU:        %s, %d CPUs, frequency governor %s", *e->cpu_model ? e->cpu_model : "unknown model",
		e->cpus, *e->governor ? e->governor : "unknown");
	if (e->load[0] >= 0)
		fprintf(out, ", load %.2f %.2f %.2f at start", e->load[0], e->load[1], e->load[2]);
	fputc('\n', out);
	if (e->producer && *e->producer)
		fprintf(out, "  Program:    built by %s%s\n", e->producer,
			e->program_debuginfo ? "" : " (no debug info)");
	else
		fprintf(out, "  Program:    compiler unknown%s\n",
			e->program_debuginfo ? "" : " (no debug info)");
	fprintf(out, "  Tools:      glibc %s, libunwind %s (the agent's), elfutils %s (symbols)\n",
		*e->libc ? e->libc : "?", *e->libunwind ? e->libunwind : "?",
		*e->elfutils ? e->elfutils : "?");
	text_env_cuda(t);
	fputc('\n', out);
}

