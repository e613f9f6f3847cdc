/*
 * load_finish.c — after every file of a session is read (load.c): warnings
 * for processes that ended abnormally, the checks on modules (missing debug
 * info, pseudo modules), and the run's totals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"
#include "load_meta.h"

/* --- after every file ------------------------------------------------------- */

static const char *argv0_of(const struct prof_process *pr)
{
	return pr->cmdline && pr->cmdline[0] ? pr->cmdline : pr->exe;
}

struct pid_seq {
	uint32_t pid, seq;
	size_t idx;              /* its process's index (load_before_agent) */
};

static int pid_seq_cmp(const void *a, const void *b)
{
	const struct pid_seq *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

#define ABNORMAL_LINES 5 /* one line each, then a summary: a tree may have thousands */

/* A child of fork that never exec'd (its pid's first image, its parent's
 * executable) and ended while its parent lived on: the _exit a forked child
 * makes by design (a crash there is as likely to stop the parent too). */
static int fork_exit(const struct profile *p, const struct prof_process *pr)
{
	size_t i;

	if (pr->exec_seq || pr == &p->processes[0] || !pr->exe)
		return 0;
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pa = &p->processes[i];

		if (pa->pid != pr->ppid || !pa->exe || strcmp(pa->exe, pr->exe))
			continue;
		if (pa->start <= pr->start && (!pa->end || !pr->end || pa->end >= pr->end))
			return 1;
	}
	return 0;
}

/* meta: the launcher saw the program (the root process's last image) exit
 * normally, even if it left through _exit (dash does) and skipped the agent's
 * exit handlers. */
/* pid was still running when the program ended (session.json). */
static int meta_running(const struct load_meta *meta, uint32_t pid)
{
	size_t i, n = meta->nrunning < 64 ? meta->nrunning : 64;

	for (i = 0; i < n; i++)
		if (meta->running[i] == pid)
			return 1;
	return 0;
}

/* One line for the processes the program left running (daemons): the report
 * covers them up to its end. */
static void running_warning(struct load *L, const struct load_meta *meta)
{
	const struct profile *p = L->p;
	char list[256] = "";
	size_t i, j, used = 0, named = 0;

	if (!meta->nrunning)
		return;
	for (i = 0; i < meta->nrunning && i < 64 && named < 3; i++) {
		for (j = 0; j < p->nprocesses; j++) {
			char name[64];

			if (p->processes[j].pid != meta->running[i])
				continue;
			snprintf(name, sizeof(name), "%s", argv0_of(&p->processes[j]));
			name[strcspn(name, " ")] = '\0';
			used += (size_t)snprintf(list + used, used < sizeof(list) ? sizeof(list) - used : 0,
						 "%s%u (%s)", named ? ", " : "", meta->running[i],
						 util_base_name(name));
			named++;
			break;
		}
	}
	load_warn(L, "%zu %s still running when the program ended%s%s%s: the report covers "
		     "%s up to then (--wait-all waits for them)",
		  meta->nrunning, meta->nrunning == 1 ? "process was" : "processes were",
		  named ? " (pid " : "", list, named ? (meta->nrunning > named ? ", ...)" : ")") : "",
		  meta->nrunning == 1 ? "it" : "them");
}

void load_abnormal_warnings(struct load *L, const struct load_meta *meta)
{
	struct profile *p = L->p;
	struct pid_seq *ps;
	size_t i, n = p->nprocesses, shown = 0, more = 0;
	uint64_t more_samples = 0;
	char num[32];

	if (!n)
		return;
	ps = load_realloc(L, NULL, n * sizeof(*ps));
	if (!ps)
		return;
	for (i = 0; i < n; i++) {
		ps[i].pid = p->processes[i].pid;
		ps[i].seq = p->processes[i].exec_seq;
	}
	qsort(ps, n, sizeof(*ps), pid_seq_cmp);
	for (i = 0; i < n; i++) {
		const struct prof_process *pr = &p->processes[i];
		struct pid_seq key = {pr->pid, pr->exec_seq, 0}, *at;
		char name[64];

		if (pr->clean_exit)
			continue;
		/* _exit, its status known: a forked child's is counted as such */
		if (pr->exited) {
			p->fork_exits += fork_exit(p, pr);
			continue;
		}
		/* An image replaced by exec has a successor file: it did not crash. */
		at = bsearch(&key, ps, n, sizeof(*ps), pid_seq_cmp);
		if (at && at + 1 < ps + n && at[1].pid == pr->pid)
			continue;
		/* ... or an image that could not be profiled, named already. */
		if (pr->exec_unprofiled)
			continue;
		if (pr->pid == p->processes[0].pid && meta->found && meta->exit_signal == 0 &&
		    meta->exit_status >= 0)
			continue;
		/* Left running when the program ended, or attached to (its
		 * end, if seen, is not ours to know): not an abnormal end. */
		if (meta_running(meta, pr->pid) || pr->pid == meta->attached_pid)
			continue;
		if (fork_exit(p, pr)) {
			p->fork_exits++;
			continue;
		}
		if (shown == ABNORMAL_LINES) {
			more++;
			more_samples += pr->samples;
			continue;
		}
		snprintf(name, sizeof(name), "%s", argv0_of(pr));
		name[strcspn(name, " ")] = '\0';
		load_warn(L, "pid %u (%s) ended without exiting normally (crash, _exit or SIGKILL); "
			     "its %s samples up to that point are kept",
			  pr->pid, name, load_thousands(num, sizeof(num), pr->samples));
		shown++;
	}
	if (more)
		load_warn(L, "%zu more processes ended without exiting normally; their %s samples "
			     "are kept", more, load_thousands(num, sizeof(num), more_samples));
	free(ps);
	running_warning(L, meta);
}

static int pseudo_module(const char *base)
{
	return base[0] == '[' || strncmp(base, "linux-vdso", 10) == 0 ||
	       strncmp(base, "linux-gate", 10) == 0 || base[0] == '\0';
}

void load_module_checks(struct load *L)
{
	struct profile *p = L->p;
	size_t i, j, cap = 0, capm = 0;

	for (i = 0; i < L->nsymmods; i++) {
		struct sym_module *m = L->symmods[i].sym;
		const char *base = sym_module_basename(m), *file;
		struct prof_hitmod *hm;
		int dup = 0;

		if (!base || pseudo_module(base))
			continue;
		file = sym_module_filename(L->sym, m);
		hm = LOAD_PUSH(L, p->hitmods, p->nhitmods, capm);
		if (!hm)
			return;
		hm->file = load_intern(L, file);
		hm->soname = load_intern(L, sym_module_soname(L->sym, m));
		hm->path = load_intern(L, L->symmods[i].path ? L->symmods[i].path : "");
		hm->has_debuginfo = sym_module_has_debuginfo(L->sym, m);
		hm->producer = load_intern(L, sym_module_producer(L->sym, m));
		if (L->nomem)
			return;
		if (p->nprocesses && L->symmods[i].path && p->processes[0].exe &&
		    !strcmp(L->symmods[i].path, p->processes[0].exe) && !p->env.producer) {
			p->env.producer = hm->producer;
			p->env.program_debuginfo = hm->has_debuginfo;
		}
		base = file;
		if (sym_module_changed(L->sym, m))
			load_warn(L, "%s changed on disk since the run (build-id differs); its "
				     "functions may be misnamed: keep binaries unchanged until the "
				     "report is made", L->symmods[i].path);
		if (sym_module_has_debuginfo(L->sym, m))
			continue;
		for (j = 0; j < p->nnodebug_modules; j++)
			if (strcmp(p->nodebug_modules[j], base) == 0)
				dup = 1;
		if (!dup) {
			char *copy = load_strndup(L, base, strlen(base));
			char **slot = copy ? LOAD_PUSH(L, p->nodebug_modules, p->nnodebug_modules,
						       cap) : NULL;

			if (!slot)
				return;
			*slot = copy;
		}
	}
}

/*
 * What each image spent before the agent could sample it: a first image
 * (exec_seq 0) all its main thread's CPU at the agent's start (a fork
 * child's header says 0: its clock starts at the fork, with the agent
 * running); a later one the CPU from its predecessor's exec to the agent's
 * start.  Mostly the dynamic loader's relocation: a C++ program with many
 * libraries spends 15-25 ms so (cmake -E), and a build starts hundreds.
 */
static void load_before_agent(struct load *L)
{
	struct profile *p = L->p;
	struct pid_seq *ps, key, *at;
	size_t i, n = p->nprocesses;

	ps = n ? load_realloc(L, NULL, n * sizeof(*ps)) : NULL;
	if (!ps)
		return;
	for (i = 0; i < n; i++) {
		ps[i].pid = p->processes[i].pid;
		ps[i].seq = p->processes[i].exec_seq;
		ps[i].idx = i;
	}
	qsort(ps, n, sizeof(*ps), pid_seq_cmp);
	for (i = 0; i < n; i++) {
		struct prof_process *pr = &p->processes[i];
		uint64_t from = 0;

		if (!pr->start_cpu_ns)
			continue;
		if (pr->exec_seq) {
			key.pid = pr->pid;
			key.seq = pr->exec_seq - 1;
			at = bsearch(&key, ps, n, sizeof(*ps), pid_seq_cmp);
			from = at ? p->processes[at->idx].exec_cpu_ns : 0;
			if (!from || from > pr->start_cpu_ns)
				continue;
		}
		pr->before_agent_ns = pr->start_cpu_ns - from;
		p->before_agent_ns += pr->before_agent_ns;
		p->before_agent_procs += pr->before_agent_ns > 0;
	}
	free(ps);
}

void load_run_totals(struct load *L, const struct load_meta *meta)
{
	struct profile *p = L->p;
	uint64_t start = UINT64_MAX, end = 0;
	size_t i;

	load_before_agent(L);
	for (i = 0; i < p->nprocesses; i++) {
		/* ranks on other hosts: on the reference clock (load_mpi_align) */
		uint64_t ps = prof_rank_time(p, (uint32_t)i, p->processes[i].start);
		uint64_t pe = prof_rank_time(p, (uint32_t)i, p->processes[i].end);

		if (p->processes[i].start && ps < start) {
			start = ps;
			p->start_real_ns = p->processes[i].start_real_ns;
		}
		if (pe > end)
			end = pe;
	}
	if (start == UINT64_MAX)
		start = 0;
	p->period_ns = p->nprocesses ? p->processes[0].period_ns : 0;
	if (meta->found) {
		/* profile.h: the earliest process start, the origin of every timeline. */
		p->start_ns = start ? start : meta->start_mono_ns;
		p->wall_ns = meta->end_mono_ns > meta->start_mono_ns ?
				     meta->end_mono_ns - meta->start_mono_ns : 0;
		p->frequency_hz = meta->frequency_hz;
		p->user_ns = meta->user_ns;
		p->sys_ns = meta->sys_ns;
		p->launcher_ns = meta->launcher_ns;
		p->exit_status = meta->exit_status;
		p->exit_signal = meta->exit_signal;
		p->attached_pid = meta->attached_pid;
	} else {
		const struct prof_process *root = p->nprocesses ? &p->processes[0] : NULL;
		p->start_ns = start;
		p->exit_status = root && root->exited ? root->exit_code : -1;
		p->exit_signal = 0;
	}
	if (!p->wall_ns && end > start)
		p->wall_ns = end - start;
	if (p->frequency_hz <= 0 && p->period_ns)
		p->frequency_hz = 1e9 / (double)p->period_ns;
	if (!p->argv) {
		/* No session.json: the root process's command line, split on NULs. */
		const struct prof_process *root = p->nprocesses ? &p->processes[0] : NULL;
		const char *c = root ? root->cmdline : "";
		size_t n = 0, cap = 0;
		char *copy = load_strndup(L, c, strlen(c)), *tok, *save = NULL;
		char **slot;

		if (!copy)
			return;
		for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!(slot = LOAD_PUSH(L, p->argv, n, cap)))
				return;
			*slot = tok;
		}
		if ((slot = LOAD_PUSH(L, p->argv, n, cap)))
			*slot = NULL;
	}
}

