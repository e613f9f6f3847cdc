/*
 * load.c — prof_load(): read every <pid>.<seq>.cbp of a session directory
 * (listed by load_dir.c) through the validating reader, one file at a time:
 * its process and threads, each record handed to the loader of its family,
 * its samples symbolized; then what needs every file (load_finish.c), and
 * the struct profile the analysis works from.  Families: module maps
 * load_modmap.c, symbols and frames load_frame.c, stacks load_stack.c, CUDA
 * load_cuda.c, memory load_mem.c, capture windows load_capture.c, off-CPU
 * load_offcpu.c, MPI load_mpi.c, Python load_python.c, kernel stacks
 * load_kernel.c, JIT code and unwinding past code without CFI load_jit.c;
 * session.json load_meta.c.  What they all call (warnings, threads, the
 * out-of-memory policy) is load_util.c's, below them.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "load_int.h"
#include "../../format/cbn_share.h"
#include "load_meta.h"

/* --- one file -------------------------------------------------------------- */

static void thread_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_thread *t = (const void *)r->raw;
	uint32_t idx = load_thread(L, L->f->proc, t->tid); /* may move the array */
	struct prof_thread *th;

	if (idx == PROF_NONE)
		return;
	th = &L->p->threads[idx];
	if (r->str_len)
		th->name = load_intern(L, r->str);
	if (r->type == CBN_REC_THREAD_START && (!th->start || t->ts < th->start))
		th->start = t->ts;
	if (r->type == CBN_REC_THREAD_END) {
		th->end = t->ts;
		th->cpu_ns = t->cpu_ns;
	}
}

/* An exec whose image could not be profiled (the agent of the image that
 * exec'd wrote it): named, so that its CPU is not missing without a word. */
static void unprofiled_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_unprofiled *u = (const void *)r->raw;
	const char *path = r->str_len ? r->str : "(a program without a name)";
	char why[160];

	switch (u->reason) {
	case CBN_UNPROF_NO_ACCESS:
		snprintf(why, sizeof(why), "it was exec'd as uid %u, who cannot write the session "
			 "directory (what the process did before the exec is kept)", u->euid);
		break;
	case CBN_UNPROF_SECCOMP:
		snprintf(why, sizeof(why), "it was exec'd under a seccomp filter of the program's, "
			 "where the agent makes no system call");
		break;
	case CBN_UNPROF_SECURE:
		snprintf(why, sizeof(why), "it is a set-user-ID or set-group-ID program, for which "
			 "the loader ignores LD_PRELOAD");
		break;
	default:
		snprintf(why, sizeof(why), "the agent could not follow it (reason %u)", u->reason);
		break;
	}
	load_warn(L, "pid %u: %s was not profiled: %s", u->pid, path, why);
}

static int rec_cb(void *ctx, const struct reader_rec *r)
{
	struct load *L = ctx;
	struct load_file *F = L->f;

	switch (r->type) {
	case CBN_REC_SAMPLE: {
		const struct cbn_rec_sample *s = (const void *)r->raw;
		struct load_raw *w = LOAD_PUSH(L, F->raw, F->nraw, F->capraw);

		if (!w)
			break;
		w->ts = s->ts;
		w->pcs = r->pcs;
		w->nframes = r->nframes;
		w->share = r->share;
		w->base_pcs = r->base_pcs;
		w->base_n = r->base_n;
		w->base_nn = r->base_nn;
		w->weight = s->weight;
		w->kweight = s->kweight <= s->weight ? s->kweight : s->weight;
		w->flags = r->flags;
		w->kstacks = r->kstacks;
		w->kplace = r->kplace;
		w->thread = load_thread(L, F->proc, r->chunk_tid);
		if (s->ts > F->last_ts)
			F->last_ts = s->ts;
		break;
	}
	case CBN_REC_THREAD_START:
	case CBN_REC_THREAD_END:
	case CBN_REC_THREAD_NAME:
		thread_rec(L, r);
		break;
	case CBN_REC_MODULE_LOAD:
	case CBN_REC_MODULE_UNLOAD:
		load_mod_event(L, r);
		break;
	case CBN_REC_MEM_ALLOC:
	case CBN_REC_MEM_FREE:
	case CBN_REC_MEM_COUNTERS:
		load_mem_rec(L, r);
		break;
	case CBN_REC_CAPTURE:
		load_capture_rec(L, r);
		break;
	case CBN_REC_OFFCPU:
		load_offcpu_rec(L, r);
		break;
	case CBN_REC_MPI:
	case CBN_REC_CLOCK:
		load_mpi_rec(L, r);
		break;
	case CBN_REC_PY_CODE:
		load_python_rec(L, r);
		break;
	case CBN_REC_PY_CALLS:
		load_python_calls_rec(L, r);
		break;
	case CBN_REC_PY_CCALLS:
		load_python_ccalls_rec(L, r);
		break;
	case CBN_REC_UNPROFILED:
		unprofiled_rec(L, r);
		break;
	case CBN_REC_JIT_REGION:
		load_jit_rec(L, r);
		break;
	case CBN_REC_CODE_FILE:
		load_codefile_rec(L, r);
		break;
	case CBN_REC_PROCESS_EXIT: {
		const struct cbn_rec_exit *e = (const void *)r->raw;
		F->exited = 1;
		F->exit_status = e->status;
		if (e->ts > F->last_ts)
			F->last_ts = e->ts;
		break;
	}
	default:
		load_cuda_rec(L, r);
		break;
	}
	return L->nomem ? -1 : 0; /* out of memory: the walk stops */
}

/* "a\0b\0c\0" -> "a b c" */
static const char *join_cmdline(struct load *L, const char *c, uint32_t len)
{
	char buf[sizeof(((struct cbn_file_header *)0)->cmdline) + 1];
	uint32_t i;

	while (len > 0 && c[len - 1] == '\0')
		len--;
	for (i = 0; i < len; i++)
		buf[i] = c[i] == '\0' ? ' ' : c[i];
	buf[len] = '\0';
	return load_strndup(L, buf, len);
}

static void process_from_header(struct load *L, struct prof_process *pr,
				const struct cbn_file_header *h, const char *name)
{
	memset(pr, 0, sizeof(*pr));
	pr->pid = h->pid;
	pr->ppid = h->ppid;
	pr->exec_seq = h->exec_seq;
	pr->exe = load_intern(L, h->exe);
	pr->cmdline = join_cmdline(L, h->cmdline, h->cmdline_len);
	pr->file = load_intern(L, name);
	pr->start = h->start_mono_ns;
	pr->end = h->end_mono_ns;
	pr->period_ns = h->period_ns;
	pr->signo = h->signo;
	pr->timer_kind = h->timer_kind;
	pr->max_depth = h->max_depth;
	pr->clean_exit = h->clean_exit == 1;
	pr->exited = h->clean_exit != 0; /* 2: _exit */
	pr->forked = h->parent_pid_file >= 0 && !h->exec_seq;
	pr->exec_unprofiled = h->guard.exec_unprofiled;
	pr->exit_code = h->exit_code;
	pr->start_cpu_ns = h->start_thread_cpu_ns;
	pr->exec_cpu_ns = h->exec_thread_cpu_ns;
	if (h->disabled)
		pr->disabled = load_strndup(L, h->disabled_reason[0] ?
						  h->disabled_reason : "disabled",
						  strlen(h->disabled_reason[0] ?
							 h->disabled_reason : "disabled"));
	pr->start_real_ns = h->start_real_ns;
	memcpy(pr->lost, (const void *)h->lost, sizeof(pr->lost));
	pr->truncated = h->truncated;
	pr->pc_only = h->pc_only;
	pr->threads_perf = h->threads_perf;
	pr->threads_timer = h->threads_timer;
	pr->signo_first = h->signo_first ? h->signo_first : h->signo;
	pr->notes = h->notes;
	pr->perf_errno = h->perf_errno;
	pr->timer_reason = load_strndup(L, h->timer_reason,
					      strnlen(h->timer_reason, sizeof(h->timer_reason)));
	pr->kstack_state = h->kstack_state;
	pr->kstack_errno = h->kstack_errno;
	pr->threads_kstacks = h->threads_kstacks;
	pr->kstack_samples = h->kstack_samples;
	pr->kstack_lost = h->kstack_lost;
	pr->kstack_placed = h->kstack_placed;
	pr->kstack_unplaced = h->kstack_unplaced;
	pr->kstack_parks = h->kstack_parks;
	pr->kstack_unparks = h->kstack_unparks;
	pr->ucheck.samples = h->unwind_check.samples;
	pr->ucheck.frames = h->unwind_check.frames;
	pr->ucheck.differed = h->unwind_check.differed;
	pr->ucheck.cfi_checked = h->unwind_check.cfi_checked;
	pr->ucheck.cfi_differed = h->unwind_check.cfi_differed;
	pr->ucheck.fast = h->unwind_check.fast;
	pr->ucheck.first = h->unwind_check.first_taken != 0;
	pr->ucheck.first_at = h->unwind_check.first_at;
	pr->ucheck.first_cached_pc = h->unwind_check.first_cached_pc;
	pr->ucheck.first_full_pc = h->unwind_check.first_full_pc;
	pr->kstack_reason = load_strndup(L, h->kstack_reason,
					       strnlen(h->kstack_reason, sizeof(h->kstack_reason)));
	memcpy(pr->pc_only_why, (const void *)h->pc_only_why, sizeof(pr->pc_only_why));
	memcpy(pr->unsampled_why, (const void *)h->unsampled_why, sizeof(pr->unsampled_why));
	pr->overhead_threads_ns = h->overhead.threads_cpu_ns;
	for (int k = 0; k < CBN_OVH_NSITES; k++) {
		pr->overhead_site_ns[k] = h->overhead.site_ns[k];
		pr->overhead_site_calls[k] = h->overhead.site_calls[k];
	}
	pr->overhead_init_ns = h->overhead.init_cpu_ns;
	load_mem_header(L, pr, h);
	load_capture_header(L, pr, h);
	load_offcpu_header(L, pr, h);
	load_mpi_header(L, pr, h);
	load_python_header(L, pr, h);
}

/* The current file's modules into p->modules (has_debuginfo: modules_finish). */
static void push_modules(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i, cap;

	for (i = 0; i < F->nmods; i++) {
		const struct load_mod *m = &F->mods[i];
		struct prof_module *pm;

		if (m->alias)
			continue; /* its module is listed */
		cap = L->capmodules;
		pm = LOAD_PUSH(L, p->modules, p->nmodules, L->capmodules);
		if (!pm)
			return;
		if (L->capmodules != cap) {
			struct sym_module **ms = load_realloc(L, L->modsyms,
							      L->capmodules * sizeof(*ms));
			if (!ms) {
				p->nmodules--;
				return;
			}
			L->modsyms = ms;
		}
		L->modsyms[p->nmodules - 1] = m->sym;
		pm->process = F->proc;
		pm->path = m->path;
		pm->name = util_base_name(m->path);
		pm->base = m->base;
		pm->load_ts = m->load_ts;
		pm->unload_ts = m->unload_ts == UINT64_MAX ? 0 : m->unload_ts;
		pm->has_debuginfo = -1;
	}
}

static void file_free(struct load_file *F)
{
	free(F->mods);
	free(F->ranges);
	free(F->events);
	free(F->raw);
	free(F->cstacks);
	free(F->mstacks);
	free(F->capevs);
	free(F->ostacks);
	free(F->pstacks);
	free(F->pycodes);
	free(F->pycalls);
	free(F->pyccalls);
	load_jit_free(F);
}

/* 1 when the stack's Python words reach the chain's end: the last one
 * (the root-most) is not marked as cut. */
static int py_whole(const uint64_t *pcs, uint32_t n)
{
	uint32_t i;

	for (i = n; i-- > 0;)
		if (CBN_PYW_IS(pcs[i]))
			return !(CBN_PYW_FLAGS(pcs[i]) & CBN_PYW_TRUNC);
	return 0;
}

/* The current file's raw samples into p->samples, symbolized, each split
 * into its user part and the kernel's share; the profiler's own counted
 * apart; those before ring_cut (ring mode) dropped.  Returns how many were. */
static uint64_t file_samples(struct load *L, uint64_t ring_cut)
{
	struct profile *p = L->p;
	const struct load_file *F = L->f;
	uint64_t dropped = 0;
	size_t i;

	if (load_grow(L, (void **)&p->samples, &L->capsamples, p->nsamples + F->nraw,
		      sizeof(*p->samples)) < 0)
		return 0;
	for (i = 0; i < F->nraw && !L->nomem; i++) {
		const struct load_raw *w = &F->raw[i];
		struct load_raw whole;
		uint64_t words[CBN_MAX_FRAMES];
		struct prof_sample *s;
		struct load_uwm uwm;
		uint32_t n = w->nframes, ustack;
		size_t si;
		int spin, ours;

		if (w->ts < ring_cut) {
			dropped++;
			continue;
		}
		if (w->share) {
			/* written as what changed since its base: made whole */
			whole = *w;
			whole.nframes = (uint32_t)cbn_share_expand(w->pcs, (int)w->nframes, w->base_pcs,
								   w->base_n, w->base_nn,
								   w->share->native,
								   w->share->python, words);
			whole.pcs = words;
			whole.share = NULL;
			w = &whole;
			n = w->nframes;
		}
		if ((w->flags & CBN_SAMPLE_PC_ONLY) && n > 1)
			n = 1;
		ustack = load_stack_ours(L, w->pcs, n, w->ts, &spin, &ours, &uwm);
		if (L->nomem)
			break;
		if (uwm.unwind && !ours)
			load_uwm_count(L, &uwm, w->weight);
		if (ours) {
			/* the profiler's own CPU: counted apart, in no table */
			p->processes[F->proc].overhead_weight += w->weight;
			p->processes[F->proc].overhead_samples++;
			if (w->thread < p->nthreads)
				p->threads[w->thread].overhead_weight += w->weight;
			continue;
		}
		s = &p->samples[p->nsamples++];
		s->ts = w->ts;
		/* a thread's CPU that no sample saw: under its start routine,
		 * not in it (load_stack_unseen); its kernel share stays as is */
		s->stack = (w->flags & CBN_SAMPLE_UNSEEN) ? load_stack_unseen(L, ustack) : ustack;
		si = p->nsamples - 1;
		s->thread = w->thread;
		s->weight = w->weight - w->kweight;
		/* the loader's own flags are not the file's to set */
		s->flags = w->flags & ~(uint32_t)(PROF_SAMPLE_KERNEL | PROF_SAMPLE_SPIN |
						  PROF_SAMPLE_SPLIT | PROF_SAMPLE_PY_WHOLE);
		if ((w->flags & CBN_SAMPLE_TRUNCATED) && py_whole(w->pcs, n))
			s->flags |= PROF_SAMPLE_PY_WHOLE;
		p->threads[w->thread].weight += w->weight;
		p->processes[F->proc].weight += w->weight;
		if (w->kweight && w->kstacks &&
		    load_kernel_samples(L, p->nsamples - 1, w, F->nraw - i)) {
			/* the kernel's stacks, named (load_kernel.c) */
		} else if (w->kweight && w->kweight == w->weight) {
			/* all of it the kernel's: the record itself gets the leaf */
			s->stack = load_stack_kernel(L, ustack);
			s->weight = w->weight;
			s->flags |= PROF_SAMPLE_KERNEL;
		} else if (w->kweight) {
			/* The CPU the kernel spent for the thread since its last sample
			 * (system calls, page faults: perf events do not fire there) is
			 * shown as a [kernel] frame on the stack it returned to. */
			struct prof_sample *k;

			if (load_grow(L, (void **)&p->samples, &L->capsamples,
				      p->nsamples + 1 + F->nraw - i, sizeof(*p->samples)) < 0)
				break;
			s = &p->samples[p->nsamples - 1];
			k = &p->samples[p->nsamples++];
			*k = *s;
			k->stack = load_stack_kernel(L, ustack);
			k->weight = w->kweight;
			k->flags |= PROF_SAMPLE_KERNEL | PROF_SAMPLE_SPLIT;
		}
		/* the sample's own time in user code, not its kernel shares */
		s = &p->samples[si];
		if (spin && s->stack == ustack && !(s->flags & PROF_SAMPLE_KERNEL))
			s->flags |= PROF_SAMPLE_SPIN;
	}
	return dropped;
}

/* The file's damage, counted and said: a damaged file (kept in part), fewer
 * samples read than the agent recorded, records of a newer version, a file
 * cut while being read. */
static void file_warnings(struct load *L, struct prof_process *pr, const char *name,
			  const struct cbn_file_header *h, const struct reader_result *res,
			  int changed, int *damaged)
{
	char num[32];

	if (res->damaged) {
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: %s; kept %s samples", name, res->reason,
			  load_thousands(num, sizeof(num), res->samples));
	} else if (h->samples > res->samples && !(h->ring_ns && h->ring_recycled)) {
		/* (a ring reuses its chunks: what they held is gone by design) */
		/* The agent counts a sample after committing it, so fewer readable
		 * samples than counted means chunks were zeroed or overwritten
		 * (an all-zero chunk alone is not proof: see reader.h). */
		char num2[32];
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: only %s of the %s samples the agent recorded could be read "
			     "(part of the file was zeroed or overwritten)", name,
			  load_thousands(num, sizeof(num), res->samples),
			  load_thousands(num2, sizeof(num2), (uint64_t)h->samples));
	}
	if (res->unknown)
		load_warn(L, "%s: skipped %" PRIu64 " records of types added after this "
			     "cbottleneck (written by a newer version: report it with that one to "
			     "see them)", name, res->unknown);
	if (changed) {
		pr->damaged = 1;
		*damaged = 1;
		load_warn(L, "%s: the file was cut while being read (is another process writing "
			     "or truncating it?); what lay past the cut was dropped", name);
	}
}

/* What the program's own sandbox stopped (header.guard): said once per
 * process, since the samples it cost are only counted ("sandboxed"). */
static void guard_warnings(struct load *L, const struct prof_process *pr,
			   const struct cbn_file_header *h)
{
	const struct cbn_guard_state *g = &h->guard;
	uint32_t kind = g->seccomp, threads = g->seccomp_threads;
	double at = g->seccomp_ns > h->start_mono_ns ?
			    (double)(g->seccomp_ns - h->start_mono_ns) / 1e9 : 0.0;

	if (kind == CBN_SECCOMP_NONE)
		return;
	if (kind == CBN_SECCOMP_FILTER_ALL)
		load_warn(L, "pid %u: the program put all its threads under a seccomp filter "
			     "(TSYNC) %.3f s after it started: sampling of its %u threads and the "
			     "allocation counts stopped there; what came before is kept", pr->pid, at, threads);
	else
		load_warn(L, "pid %u: thread %u entered a seccomp %s of the program's %.3f s "
			     "after the process started: sampling of %u thread%s stopped there "
			     "(those it starts inherit it); what came before is kept",
			  pr->pid, g->seccomp_tid, kind == CBN_SECCOMP_STRICT ? "strict mode" : "filter",
			  at, threads, threads == 1 ? "" : "s");
}

/* The launcher's side file of the image (PID.SEQ.cbs: what it saw from
 * outside, cbn_format.h), read as part of it when there is one; open until
 * the image is loaded (records point into it, as into the image's file). */
static void load_side(struct load *L, const char *dir, const char *name)
{
	struct reader_file *rf = &L->f->side;
	struct reader_result res;
	char path[PATH_MAX];
	size_t n = strlen(name), ext = strlen(CBN_FILE_EXT);

	if (n <= ext)
		return;
	snprintf(path, sizeof(path), "%s/%.*s%s", dir, (int)(n - ext), name, CBN_SIDE_EXT);
	if (access(path, F_OK) != 0)
		return;
	if (reader_open(path, rf, &res) != 0) {
		load_warn(L, "%.*s%s: %s; the launcher's records of that process are skipped",
			  (int)(n - ext), name, CBN_SIDE_EXT, res.reason);
		return;
	}
	L->f->side_open = 1;
	reader_walk(rf, rec_cb, L, &res);
}

/* What comes after a file's records: its modules, stacks and families
 * finished, its process's figures and warnings.  Stops where memory ran
 * short (L->nomem). */
static void file_finish(struct load *L, const struct reader_file *rf, const char *dir,
			const char *name, const struct reader_result *res, int *damaged)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	struct prof_process *pr;
	uint64_t ring_cut = 0, dropped;

	load_codefile_apply(L);
	load_modmap_finish(F);
	load_python_builtins(L);
	load_jit_open(L, dir, name);
	if (L->nomem)
		return;
	/* Ring mode: only the last ring_ns before the process's end. */
	if (rf->hdr.ring_ns) {
		uint64_t pe = p->processes[F->proc].end, end = F->last_ts > pe ? F->last_ts : pe;

		ring_cut = end > rf->hdr.ring_ns ? end - rf->hdr.ring_ns : 0;
	}
	dropped = file_samples(L, ring_cut);
	if (L->nomem)
		return;
	load_jit_finish(L);
	load_cuda_finish(L);
	load_mem_finish(L);
	load_offcpu_finish(L, ring_cut);
	load_mpi_finish(L);
	push_modules(L);
	load_python_finish(L);
	if (L->nomem)
		return;

	pr = &p->processes[F->proc];
	pr->samples = F->nraw - dropped;
	pr->ring_ns = rf->hdr.ring_ns;
	pr->ring_recycled = rf->hdr.ring_recycled;
	pr->ring_dropped = dropped;
	if (F->exited) {
		pr->clean_exit = 1;
		pr->exited = 1;
		pr->exit_code = F->exit_status;
	}
	if (F->last_ts > pr->end)
		pr->end = F->last_ts;
	load_capture_finish(L);
	file_warnings(L, pr, name, &rf->hdr, res, reader_changed(rf), damaged);
	guard_warnings(L, pr, &rf->hdr);
}

/* Returns 0 when the file was read (maybe damaged: *damaged set), -1 when it
 * was unusable or memory ran short (L->nomem). */
static int load_one(struct load *L, const char *dir, const char *name, int *damaged)
{
	struct profile *p = L->p;
	struct reader_file rf;
	struct reader_result res;
	struct load_file F;
	struct prof_process *pr;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (reader_open(path, &rf, &res) != 0) {
		load_warn(L, "%s: %s; file skipped", name, res.reason);
		*damaged = 1;
		return -1;
	}
	memset(&F, 0, sizeof(F));
	F.proc = (uint32_t)p->nprocesses;
	F.status_idx = PROF_NONE;
	F.api_first = p->ncuda_api;
	F.gpu_first = p->ngpu_ops;
	F.malloc_first = p->nmem_allocs;
	F.mfree_first = p->nmem_frees;
	F.mctr_first = p->nmem_counters;
	F.offcpu_first = p->noffcpu;
	F.mpi_first = p->nmpi_calls;
	pr = LOAD_PUSH(L, p->processes, p->nprocesses, L->capprocs);
	if (!pr) {
		reader_close(&rf);
		return -1;
	}
	process_from_header(L, pr, &rf.hdr, name);
	L->f = &F;
	F.py_on = rf.hdr.python.state == CBN_PY_ON;
	F.py_base = rf.hdr.python.module_base;
	util_map_free(&L->corrmap); /* correlation ids are per process */
	/* Raw stacks are deduplicated per process (the key holds the process). */
	util_map_free(&L->stackmap);
	L->nstackkeys = 0;

	if (!L->nomem)
		reader_walk(&rf, rec_cb, L, &res);
	if (!L->nomem)
		load_side(L, dir, name);
	if (!L->nomem)
		file_finish(L, &rf, dir, name, &res, damaged);
	L->f = NULL;
	file_free(&F);
	reader_close(&rf);
	if (F.side_open)
		reader_close(&F.side);
	return L->nomem ? -1 : 0;
}

static void load_state_free(struct load *L)
{
	util_strings_free(&L->strings);
	util_map_free(&L->funcmap);
	util_map_free(&L->threadmap);
	util_map_free(&L->symmap);
	util_map_free(&L->stackmap);
	util_map_free(&L->symstackmap);
	util_map_free(&L->corrmap);
	util_map_free(&L->symmodmap);
	free(L->symkeys);
	free(L->kstack);
	load_kernel_free(L);
	free(L->rframes);
	free(L->stackkeys);
	free(L->symmods);
	free(L->modsyms);
	L->modsyms = NULL;
	if (L->sym)
		sym_free(L->sym);
	L->sym = NULL;
}

int prof_load(const char *session_dir, struct profile **out, char *err, size_t errlen)
{
	struct prof_load_opts o = {PROF_INLINE_EXPAND, NULL, PROF_PYTHON_ON};

	return prof_load_with(session_dir, &o, out, err, errlen);
}

/* The files of one session into L->p; PROF_LOAD_* (< 0 with err set). */
static int load_files(struct load *L, const char *session_dir, const struct cbp_name *names,
		      size_t nnames, char *err, size_t errlen)
{
	struct load_meta meta;
	size_t i, readable = 0;
	int damaged = 0;

	load_meta_read(L, session_dir, &meta);
	load_notes_read(L, session_dir);
	load_kernel_open(L, session_dir);
	for (i = 0; i < nnames && !L->nomem; i++)
		if (load_one(L, session_dir, names[i].name, &damaged) == 0)
			readable++;
	if (L->nomem)
		return PROF_LOAD_NOMEM;
	if (readable == 0) {
		snprintf(err, errlen, "no readable session file in %s (%s)", session_dir,
			 L->p->nwarnings ? L->p->warnings[0] : "all damaged");
		return PROF_LOAD_EMPTY;
	}
	load_abnormal_warnings(L, &meta);
	load_module_checks(L);
	load_modules_finish(L);
	load_mpi_align(L);
	load_run_totals(L, &meta);
	if (L->nomem)
		return PROF_LOAD_NOMEM;
	/* the profile owns the strings from here on */
	L->p->arena = load_realloc(L, NULL, sizeof(struct util_arena));
	if (!L->p->arena)
		return PROF_LOAD_NOMEM;
	*(struct util_arena *)L->p->arena = L->arena;
	memset(&L->arena, 0, sizeof(L->arena));
	return damaged ? PROF_LOAD_PARTIAL : PROF_LOAD_OK;
}

int prof_load_with(const char *session_dir, const struct prof_load_opts *o, struct profile **out,
		   char *err, size_t errlen)
{
	struct load L;
	struct cbp_name *names = NULL;
	size_t nnames = 0, i;
	struct stat st;
	int ret;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (stat(session_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s is not a session directory", session_dir);
		return PROF_LOAD_EMPTY;
	}
	if (o && o->ranks && prof_ranks_match(o->ranks, -1, err, errlen) < 0)
		return PROF_LOAD_EMPTY;
	ret = load_list_files(session_dir, o ? o->ranks : NULL, &names, &nnames, err, errlen);
	if (ret < 0)
		return ret;
	if (nnames == 0 && o && o->ranks) {
		snprintf(err, errlen, "no session file of ranks %s in %s", o->ranks, session_dir);
		free(names);
		return PROF_LOAD_EMPTY;
	}
	if (nnames == 0) {
		snprintf(err, errlen, "no session files (*%s) in %s: not a cbottleneck session, or "
			 "the program never started", CBN_FILE_EXT, session_dir);
		free(names);
		return PROF_LOAD_EMPTY;
	}
	memset(&L, 0, sizeof(L));
	L.unknown_func = PROF_NONE;
	L.kernel_func = PROF_NONE;
	L.unseen_func = PROF_NONE;
	L.pyunknown_func = PROF_NONE;
	L.fold_inline = o && o->inline_view == PROF_INLINE_FOLD;
	L.python_native = o && o->python_view == PROF_PYTHON_NATIVE;
	L.python_off = o && o->python_view == PROF_PYTHON_OFF;
	L.p = calloc(1, sizeof(*L.p));
	L.sym = L.p ? sym_new() : NULL;
	if (!L.p || !L.sym) {
		snprintf(err, errlen, "out of memory starting to read %s", session_dir);
		ret = PROF_LOAD_NOMEM;
	} else {
		L.p->inline_folded = L.fold_inline;
		L.p->python_view = o ? (int)o->python_view : 0;
		if (o && o->ranks && !(L.p->rank_filter = strdup(o->ranks))) {
			snprintf(err, errlen, "out of memory starting to read %s", session_dir);
			ret = PROF_LOAD_NOMEM;
		} else {
			ret = load_files(&L, session_dir, names, nnames, err, errlen);
			if (ret == PROF_LOAD_NOMEM)
				snprintf(err, errlen, "out of memory reading %s", session_dir);
		}
	}
	for (i = 0; i < nnames; i++)
		free(names[i].name);
	free(names);
	load_state_free(&L);
	util_arena_free(&L.arena);
	if (ret < 0) {
		prof_free(L.p);
		return ret;
	}
	*out = L.p;
	return ret;
}

void prof_free(struct profile *p)
{
	if (!p)
		return;
	free(p->argv);
	free(p->rank_filter);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
	free(p->samples);
	free(p->threads);
	free(p->processes);
	free(p->modules);
	free(p->ranges);
	free(p->windows);
	free(p->ctl_marks);
	free(p->cuda_api);
	free(p->gpu_ops);
	free(p->syncs);
	free(p->overheads);
	free(p->devices);
	free(p->contexts);
	free(p->memory);
	free(p->mempools);
	free(p->mem_allocs);
	free(p->mem_frees);
	free(p->mem_counters);
	free(p->cuda_status);
	free(p->cuda_shares);
	free(p->offcpu);
	free(p->mpi_calls);
	free(p->unwind_stops);
	free(p->warnings);
	free(p->nodebug_modules);
	free(p->hitmods);
	if (p->arena) {
		util_arena_free(p->arena);
		free(p->arena);
	}
	free(p);
}
