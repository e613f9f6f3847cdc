/*
 * json.c — the --json report (schema_version 5, docs/report.schema.json): run
 * totals, every function, hot lines, processes, threads, the CUDA object from
 * cuda_report.c, the memory object from mem_json.c, the steps object from
 * steps_json.c, the waiting object from wait_json.c, and warnings.  Keys are
 * public API: add, never rename.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "analysis.h"
#include "calltree_json.h"
#include "cpu.h"
#include "cuda_report.h"
#include "dist_report.h"
#include "html.h"
#include "json_keys.h"
#include "json_put.h"
#include "mem_json.h"
#include "names.h"
#include "outfile.h"
#include "ops_report.h"
#include "programs_report.h"
#include "report.h"
#include "steps_json.h"
#include "wait_report.h"

#ifndef CBN_VERSION
#define CBN_VERSION "0.1.0"
#endif

static int json_bool(cJSON *o, const char *key, int v)
{
	return cJSON_AddBoolToObject(o, key, v ? 1 : 0) ? 0 : -ENOMEM;
}

/* Exact CPU time from the kernel: null when unknown (0). */
static int json_measured(cJSON *o, uint64_t ns)
{
	if (!ns)
		return cJSON_AddNullToObject(o, "measured_cpu_ns") ? 0 : -ENOMEM;
	return json_put_num(o, "measured_cpu_ns", (double)ns);
}

/* Places of run.sampler.unwind.stopped written, the heaviest first. */
#define JSON_UNWIND_STOPS 32

/* {samples, share}: sample records and their share of the program's CPU. */
static int json_unwind_count(cJSON *o, const char *key, const struct cpu_profile *c,
			     uint64_t samples, uint64_t ns)
{
	cJSON *x = cJSON_AddObjectToObject(o, key);
	int err = 0;

	if (!x)
		return 1;
	err |= json_put_num(x, "samples", (double)samples);
	err |= json_put_num(x, "share", c->cpu_ns ? (double)ns / (double)c->cpu_ns : 0);
	return err;
}

/* run.sampler.unwind: unwinding past code without unwind information and
 * JIT code (docs/symbols.md), only when some stack held the agent's markers
 * or ran in JIT code, so that the reports of other sessions keep their
 * bytes. */
static int json_unwind(cJSON *sampler, const struct cpu_profile *c)
{
	const struct cpu_unwind *u = &c->unwind;
	cJSON *o, *a;
	size_t i;
	int err = 0;

	if (!u->present)
		return 0;
	o = cJSON_AddObjectToObject(sampler, "unwind");
	if (!o)
		return 1;
	err |= json_unwind_count(o, "recovered_fp", c, u->fp_samples, u->fp_ns);
	err |= json_unwind_count(o, "recovered_scan", c, u->scan_samples, u->scan_ns);
	err |= json_unwind_count(o, "stopped_total", c, u->stop_samples, u->stop_ns);
	err |= json_unwind_count(o, "jit", c, u->jit_samples, u->jit_ns);
	err |= json_unwind_count(o, "jit_unnamed", c, u->jit_anon_samples, u->jit_anon_ns);
	a = cJSON_AddArrayToObject(o, "stopped");
	if (!a)
		return 1;
	for (i = 0; i < u->nstops && i < JSON_UNWIND_STOPS; i++) {
		const struct cpu_unwind_stop *st = &u->stops[i];
		cJSON *e = cJSON_CreateObject();

		if (!e)
			return 1;
		cJSON_AddItemToArray(a, e);
		err |= json_put_str(e, "module", st->place);
		err |= json_put_str(e, "cause", cpu_unwind_cause_key(st->cause));
		err |= json_put_num(e, "samples", (double)st->samples);
		err |= json_put_num(e, "share", c->cpu_ns ? (double)st->ns / (double)c->cpu_ns : 0);
	}
	return err;
}

/* run.sampler.unwind_check: the unwinder's self-check (CBN_UNWIND_CHECK=1),
 * only when it ran. */
static int json_unwind_check(cJSON *sampler, const struct cpu_profile *c)
{
	const struct prof_unwind_check *u = &c->sampler.ucheck;
	cJSON *o;
	int err = 0;

	if (!u->samples)
		return 0;
	o = cJSON_AddObjectToObject(sampler, "unwind_check");
	if (!o)
		return 1;
	err |= json_put_num(o, "samples", (double)u->samples);
	err |= json_put_num(o, "frames", (double)u->frames);
	err |= json_put_num(o, "differed", (double)u->differed);
	err |= json_put_num(o, "cfi_checked", (double)u->cfi_checked);
	err |= json_put_num(o, "cfi_differed", (double)u->cfi_differed);
	err |= json_put_num(o, "fast", (double)u->fast);
	if (u->first)
		err |= json_put_num(o, "first_frame", (double)u->first_at);
	return err;
}

/* run.sampler: how the agent sampled, and what the program did with it. */
static int json_sampler(cJSON *run, const struct cpu_profile *c)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} notes[] = {
		{CBN_NOTE_SIG_HANDLER, "program_handled_signal"},
		{CBN_NOTE_SIG_BLOCKED, "program_blocked_signal"},
		{CBN_NOTE_SIG_WAITED, "program_waited_for_signal"},
		{CBN_NOTE_SIG_FORCED, "signal_chosen_by_user"},
		{CBN_NOTE_APP_ALTSTACK, "program_alternate_stacks"},
	};
	const struct cpu_sampler *sm = &c->sampler;
	cJSON *o = cJSON_AddObjectToObject(run, "sampler"), *a, *r;
	unsigned k;
	int err = 0;

	if (!o)
		return 1;
	err |= json_put_str(o, "mode", cpu_sampler_mode(c));
	err |= json_put_num(o, "perf_threads", (double)sm->threads_perf);
	err |= json_put_num(o, "timer_threads", (double)sm->threads_timer);
	err |= json_put_str(o, "timer_reason", sm->timer_reason ? sm->timer_reason : "");
	err |= json_put_num(o, "signal", sm->signo);
	err |= json_put_num(o, "first_signal", sm->signo_first);
	a = cJSON_AddArrayToObject(o, "notes");
	if (!a)
		return 1;
	for (k = 0; k < sizeof(notes) / sizeof(notes[0]); k++) {
		cJSON *s;

		if (!(sm->notes & notes[k].bit))
			continue;
		s = cJSON_CreateString(notes[k].name);
		if (!s)
			return 1;
		cJSON_AddItemToArray(a, s);
	}
	r = cJSON_AddObjectToObject(o, "pc_only");
	if (!r)
		return 1;
	for (k = 0; k < CBN_PCONLY_NREASONS; k++)
		if (cpu_pc_only_name(k))
			err |= json_put_num(r, cpu_pc_only_name(k), (double)sm->pc_only_why[k]);
	r = cJSON_AddObjectToObject(o, "unsampled_threads");
	if (!r)
		return 1;
	for (k = 0; k < CBN_UNSAMPLED_NREASONS; k++)
		if (cpu_unsampled_name(k))
			err |= json_put_num(r, cpu_unsampled_name(k), (double)sm->unsampled_why[k]);
	r = cJSON_AddObjectToObject(o, "kernel_stacks");
	if (!r)
		return 1;
	err |= json_put_str(r, "state", sm->kstack_state == CBN_KSTACK_TAKEN ? "taken"
				    : sm->kstack_state == CBN_KSTACK_OFF ? "off" : "");
	err |= json_put_num(r, "threads", (double)sm->kstack_threads);
	err |= json_put_num(r, "samples", (double)sm->kstack_samples);
	err |= json_put_num(r, "lost", (double)sm->kstack_lost);
	err |= json_put_num(r, "placed", (double)sm->kstack_placed);
	err |= json_put_num(r, "unplaced", (double)sm->kstack_unplaced);
	err |= json_put_num(r, "parks", (double)sm->kstack_parks);
	err |= json_put_num(r, "unparks", (double)sm->kstack_unparks);
	err |= json_put_str(r, "reason", sm->kstack_reason ? sm->kstack_reason : "");
	err |= json_unwind(o, c);
	err |= json_unwind_check(o, c);
	return err;
}

/* Attach item under key, or fail (item NULL means it could not be built). */
static int json_attach(cJSON *root, const char *key, cJSON *item)
{
	if (!item)
		return -ENOMEM;
	cJSON_AddItemToObject(root, key, item);
	return 0;
}

/* The profiler's own CPU, apart from the program's (cpu_ns excludes it). */
static cJSON *json_overhead(const struct cpu_profile *c)
{
	const struct cpu_overhead *o = &c->overhead;
	cJSON *x = cJSON_CreateObject();
	int err = 0;

	if (!x)
		return NULL;
	err |= json_put_num(x, "cpu_ns", (double)o->total_ns);
	err |= json_put_num(x, "share_of_program_cpu",
			c->cpu_ns ? (double)o->total_ns / (double)c->cpu_ns : 0);
	err |= json_put_num(x, "program_threads_ns", (double)o->sampled_ns);
	err |= json_put_num(x, "program_threads_samples", (double)o->samples);
	err |= json_put_num(x, "helper_threads_ns", (double)o->threads_ns);
	err |= json_put_num(x, "handler_ns", (double)o->handler_ns);
	err |= json_put_num(x, "launcher_ns", (double)o->launcher_ns);
	err |= json_put_num(x, "startup_ns", (double)o->startup_ns);
	if (err) {
		cJSON_Delete(x);
		return NULL;
	}
	return x;
}

/* run.python: the interpreter read, or why not (docs/agent.md section 17). */
static int json_python(cJSON *run, const struct cpu_profile *c)
{
	const struct cpu_python *py = &c->python;
	cJSON *o = cJSON_AddObjectToObject(run, "python"), *u;
	char v[32];
	unsigned k;
	int err = 0;

	if (!o)
		return 1;
	err |= json_put_str(o, "state",
			    py->state == CBN_PY_ON ? "on" : py->state == CBN_PY_OFF ? "off"
			    : py->state == CBN_PY_REFUSED ? "refused" : "");
	if (py->version)
		snprintf(v, sizeof(v), "%u.%u.%u", py->version >> 24, (py->version >> 16) & 0xff,
			 (py->version >> 8) & 0xff);
	else
		v[0] = '\0';
	err |= json_put_str(o, "version", v);
	err |= json_put_num(o, "version_hex", (double)py->version);
	err |= json_put_str(o, "reason", py->reason ? py->reason : "");
	err |= json_put_num(o, "samples", (double)py->samples);
	err |= json_put_num(o, "samples_of", (double)py->samples_of);
	err |= json_put_num(o, "truncated", (double)py->truncated);
	if (py->walks) {
		cJSON *w = cJSON_AddObjectToObject(o, "walk");

		if (!w)
			return 1;
		err |= json_put_num(w, "timed", (double)py->walks);
		err |= json_put_num(w, "ns", (double)py->walk_ns);
		err |= json_put_num(w, "frames", (double)py->walk_frames);
	}
	u = cJSON_AddObjectToObject(o, "unread");
	if (!u)
		return 1;
	for (k = 0; k < CBN_PYU_NREASONS; k++)
		if (cpu_python_unread_name(k))
			err |= json_put_num(u, cpu_python_unread_name(k), (double)py->unread[k]);
	err |= json_put_num(o, "codes", (double)py->codes);
	err |= json_put_num(o, "codes_gone", (double)py->codes_gone);
	err |= json_put_num(o, "codes_missing", (double)py->codes_missing);
	err |= json_put_num(o, "table_full", (double)py->table_full);
	return err;
}

static cJSON *json_run(const struct profile *p, const struct cpu_profile *c)
{
	cJSON *run = cJSON_CreateObject(), *cmd, *lost;
	unsigned k;
	int err = 0;

	if (!run)
		return NULL;
	cmd = cJSON_AddArrayToObject(run, JK_COMMAND);
	if (!cmd)
		goto fail;
	if (p->argv) {
		size_t i;

		for (i = 0; p->argv[i]; i++) {
			cJSON *s = cJSON_CreateString(p->argv[i]);

			if (!s)
				goto fail;
			cJSON_AddItemToArray(cmd, s);
		}
	}
	err |= json_put_num(run, "exit_status", p->exit_status);
	err |= json_put_num(run, "exit_signal", p->exit_signal);
	if (p->attached_pid)
		err |= json_put_num(run, "attached_pid", p->attached_pid);
	err |= json_put_num(run, JK_WALL_NS, (double)p->wall_ns);
	err |= json_put_num(run, JK_CPU_NS, (double)c->cpu_ns);
	err |= json_measured(run, c->measured_ns);
	err |= json_attach(run, "profiler_overhead", json_overhead(c));
	if (p->user_ns || p->sys_ns) {
		err |= json_put_num(run, "user_ns", (double)p->user_ns);
		err |= json_put_num(run, "kernel_ns", (double)p->sys_ns);
	} else {
		cJSON_AddNullToObject(run, "user_ns");
		cJSON_AddNullToObject(run, "kernel_ns");
	}
	err |= json_put_num(run, "before_agent_cpu_ns", (double)p->before_agent_ns);
	err |= json_put_num(run, "before_agent_processes", p->before_agent_procs);
	err |= json_put_num(run, "frequency_hz", p->frequency_hz);
	err |= json_put_num(run, JK_PERIOD_NS, (double)p->period_ns);
	err |= json_put_num(run, JK_SAMPLES, (double)c->samples);
	err |= json_put_num(run, JK_WEIGHT, (double)c->weight);
	lost = cJSON_AddObjectToObject(run, "lost");
	if (!lost)
		goto fail;
	for (k = 0; k < CBN_LOST_NREASONS; k++) {
		const char *name = cpu_lost_name(k);

		if (name)
			err |= json_put_num(lost, name, (double)c->lost[k]);
	}
	err |= json_put_str(run, "inline_view", p->inline_folded ? "fold" : "expand");
	err |= json_put_num(run, "truncated", (double)c->truncated);
	err |= json_put_num(run, "pc_only", (double)c->pc_only);
	err |= json_sampler(run, c);
	err |= json_python(run, c);
	err |= json_put_str(run, "python_view", p->python_view == 1 ? "native"
					    : p->python_view == 2 ? "off" : "on");
	err |= json_put_num(run, "processes", (double)p->nprocesses);
	err |= json_put_num(run, "threads", (double)p->nthreads);
	if (err)
		goto fail;
	return run;
fail:
	cJSON_Delete(run);
	return NULL;
}

static cJSON *json_functions(const struct profile *p, const struct cpu_profile *c)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	if (!arr)
		return NULL;
	/* c->funcs is in tottime order: self_ns descending */
	for (i = 0; i < c->nfuncs; i++) {
		const struct cpu_func *f = &c->funcs[i];
		const struct prof_func *pf = &p->funcs[f->func];
		cJSON *o = cJSON_CreateObject();
		char bare[4096];
		int err = 0;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
		err |= json_put_str(o, JK_NAME, pf->name);
		/* as table rows print it: C++ without return type and parameters */
		err |= json_put_str(o, "short_name", names_bare_copy(bare, sizeof(bare), pf->name));
		err |= json_put_str(o, JK_FILE, pf->file);
		err |= json_put_num(o, JK_LINE, pf->line);
		err |= json_put_str(o, "module", pf->module);
		err |= json_put_num(o, JK_SELF_NS, (double)f->self_ns);
		err |= json_put_num(o, JK_TOTAL_NS, (double)f->total_ns);
		err |= json_put_num(o, JK_SELF_SAMPLES, (double)f->self_w);
		err |= json_put_num(o, JK_TOTAL_SAMPLES, (double)f->total_w);
		if (f->counted && f->calls) { /* --calls: exact counts */
			err |= json_put_num(o, "calls", (double)f->calls);
			err |= json_put_num(o, "primitive_calls", (double)f->primitive);
			if (pf->label)
				err |= json_put_str(o, "cprofile_name", pf->label);
		}
		err |= json_bool(o, "nosym", (pf->flags & PROF_FUNC_NOSYM) != 0);
		err |= json_bool(o, "python", (pf->flags & PROF_FUNC_PYTHON) != 0);
		err |= json_bool(o, "inlined", f->inlined_into < p->nfuncs);
		err |= json_put_str(o, "inlined_into", f->inlined_into < p->nfuncs
							   ? p->funcs[f->inlined_into].name
							   : "");
		if (err)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *json_lines(const struct profile *p, const struct cpu_profile *c)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < c->nlines; i++) {
		const struct cpu_line *l = &c->lines[i];
		cJSON *o = cJSON_CreateObject();
		int err = 0;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
		err |= json_put_str(o, JK_FILE, l->file);
		err |= json_put_num(o, JK_LINE, l->line);
		err |= json_put_str(o, "function", p->funcs[l->func].name);
		err |= json_put_num(o, JK_SELF_NS, (double)l->self_ns);
		err |= json_put_num(o, JK_SELF_SAMPLES, (double)l->self_w);
		if (err)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *json_processes(const struct profile *p, const struct cpu_profile *c)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];
		cJSON *o = cJSON_CreateObject();
		int err = 0;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
		err |= json_put_num(o, JK_PID, pr->pid);
		err |= json_put_num(o, "ppid", pr->ppid);
		err |= json_put_num(o, "exec_seq", pr->exec_seq);
		err |= json_put_str(o, "exe", pr->exe);
		err |= json_put_str(o, "command", pr->cmdline);
		err |= json_put_num(o, "cpu_ns", (double)c->procs[i].ns);
		err |= json_measured(o, c->procs[i].measured_ns);
		err |= json_put_num(o, "before_agent_cpu_ns", (double)pr->before_agent_ns);
		err |= json_put_num(o, "samples", (double)c->procs[i].samples);
		err |= json_bool(o, "clean_exit", pr->clean_exit);
		err |= json_bool(o, "exited", pr->exited);
		/* exit_code means something only when it exited by itself */
		if (pr->exited)
			err |= json_put_num(o, "exit_code", pr->exit_code);
		else
			err |= cJSON_AddNullToObject(o, "exit_code") ? 0 : -ENOMEM;
		err |= json_bool(o, "damaged", pr->damaged);
		if (err)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *json_threads(const struct profile *p, const struct cpu_profile *c)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < p->nthreads; i++) {
		const struct prof_thread *th = &p->threads[i];
		cJSON *o = cJSON_CreateObject();
		int err = 0;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
		err |= json_put_num(o, "tid", th->tid);
		err |= json_put_num(o, JK_PID,
				th->process < p->nprocesses ? p->processes[th->process].pid : 0);
		err |= json_put_str(o, "name", th->name);
		err |= json_put_num(o, "cpu_ns", (double)c->threads[i].ns);
		err |= json_measured(o, c->threads[i].measured_ns);
		err |= json_put_num(o, "samples", (double)c->threads[i].samples);
		if (err)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

static cJSON *json_warnings(const struct analysis *a)
{
	cJSON *arr;
	char **w = a->warnings;
	size_t n = a->nwarnings, i;

	arr = cJSON_CreateArray();
	for (i = 0; arr && i < n; i++) {
		cJSON *s = cJSON_CreateString(w[i]);

		if (!s) {
			cJSON_Delete(arr);
			arr = NULL;
			break;
		}
		cJSON_AddItemToArray(arr, s);
	}
	return arr;
}

/* Every module a sampled frame landed in: its file, SONAME and path. */
static cJSON *json_modules(const struct profile *p)
{
	cJSON *arr = cJSON_CreateArray();
	size_t i;

	if (!arr)
		return NULL;
	for (i = 0; i < p->nhitmods; i++) {
		const struct prof_hitmod *m = &p->hitmods[i];
		cJSON *o = cJSON_CreateObject();
		int err = 0;

		if (!o)
			goto fail;
		cJSON_AddItemToArray(arr, o);
		err |= json_put_str(o, "file", m->file);
		err |= json_put_str(o, "soname", m->soname);
		err |= json_put_str(o, "path", m->path);
		err |= json_bool(o, "debuginfo", m->has_debuginfo);
		if (err)
			goto fail;
	}
	return arr;
fail:
	cJSON_Delete(arr);
	return NULL;
}

/* The environment summary (session.json), null for older sessions. */
static cJSON *json_environment(const struct profile *p)
{
	const struct prof_env *e = &p->env;
	cJSON *o, *l;
	int err = 0, i;

	if (!e->found)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	if (!o)
		return NULL;
	err |= json_put_str(o, "kernel", e->kernel);
	err |= json_put_str(o, "cpu_model", e->cpu_model);
	err |= json_put_num(o, "cpus", e->cpus);
	err |= json_put_str(o, "governor", e->governor);
	l = cJSON_AddArrayToObject(o, "load_at_start");
	for (i = 0; l && i < 3; i++)
		cJSON_AddItemToArray(l, e->load[i] >= 0 ? cJSON_CreateNumber(e->load[i])
							: cJSON_CreateNull());
	err |= !l;
	err |= json_put_str(o, "program_producer", e->producer ? e->producer : "");
	err |= json_bool(o, "program_debuginfo", e->program_debuginfo);
	err |= json_put_str(o, "libc", e->libc);
	err |= json_put_str(o, "libunwind", e->libunwind);
	err |= json_put_str(o, "elfutils", e->elfutils);
	if (err) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

/* Build the whole report.  Returns NULL on allocation failure. */
static cJSON *json_build(const struct analysis *a, const struct report_opts *o)
{
	const struct profile *p = a->profile;
	const struct cpu_profile *c = a->cpu;
	cJSON *root = NULL, *tool, *cuda;
	int err = 0;

	root = cJSON_CreateObject();
	if (!root)
		goto fail;
	err |= json_put_num(root, JK_SCHEMA_VERSION, JK_SCHEMA_VERSION_VALUE);
	tool = cJSON_AddObjectToObject(root, "tool");
	if (!tool)
		goto fail;
	err |= json_put_str(tool, "name", "cbottleneck");
	err |= json_put_str(tool, "version", CBN_VERSION);
	/* the run's one verdict (verdict.c), null with too little data */
	if (a->verdict.text) {
		cJSON *v = cJSON_AddObjectToObject(root, "verdict");

		if (!v)
			goto fail;
		err |= json_put_str(v, "kind", a->verdict.kind);
		err |= json_put_str(v, "text", a->verdict.text);
	} else if (!cJSON_AddNullToObject(root, "verdict")) {
		goto fail;
	}
	err |= json_attach(root, JK_RUN, json_run(p, c));
	err |= json_attach(root, JK_FUNCTIONS, json_functions(p, c));
	err |= json_attach(root, JK_LINES, json_lines(p, c));
	err |= json_attach(root, JK_PROCESSES, json_processes(p, c));
	err |= report_programs_json(a, root) < 0;
	err |= json_attach(root, "threads", json_threads(p, c));
	err |= json_attach(root, "modules", json_modules(p));
	err |= json_attach(root, "environment", json_environment(p));
	/* bounded (calltree.h): compare --html draws two runs' differential flame graph */
	err |= json_attach(root, "call_tree", report_calltree_json(a));
	if (err)
		goto fail;
	cuda = report_cuda_json(a, o);
	if (cuda)
		cJSON_AddItemToObject(root, JK_CUDA, cuda);
	if (report_ops_json(a, o, root) < 0)
		goto fail;
	if (report_mem_json(a, root) < 0)
		goto fail;
	if (report_steps_json(a, root) < 0)
		goto fail;
	if (report_wait_json(a, root) < 0)
		goto fail;
	if (report_dist_json(a, root) < 0)
		goto fail;
	if (json_attach(root, "warnings", json_warnings(a)) < 0)
		goto fail;
	return root;
fail:
	cJSON_Delete(root);
	return NULL;
}

/* The document and a newline (outfile_write's fill). */
static void json_fill(FILE *f, const void *text)
{
	fputs(text, f);
	fputc('\n', f);
}

int report_json_write(const struct analysis *a, const struct report_opts *o, const char *path,
		      char *err, size_t errlen)
{
	cJSON *root = json_build(a, o);
	char *text = NULL;
	int ret = -1;

	if (!root) {
		snprintf(err, errlen, "cannot build the JSON report: out of memory");
		goto out;
	}
	text = cJSON_PrintBuffered(root, 1 << 16, 1);
	if (!text) {
		snprintf(err, errlen, "cannot format the JSON report: out of memory");
		goto out;
	}
	ret = outfile_write(path, "--json", json_fill, text, err, errlen);
out:
	free(text);
	cJSON_Delete(root);
	return ret;
}

/* The document itself, for the writers that embed it (html.c). */
cJSON *report_json_build(const struct analysis *a, const struct report_opts *o)
{
	return json_build(a, o);
}
