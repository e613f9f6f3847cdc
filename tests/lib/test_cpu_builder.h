/*
 * test_cpu_builder.h — build small struct profile values by hand for the CPU,
 * text and JSON report tests, without a session on disk or a symbolizer.
 * Arrays grow and are freed by test_profile_builder.h (pb_free); strings
 * are the caller's literals.  Aborts on allocation failure (test code).
 */
#ifndef CBN_TEST_CPU_BUILDER_H
#define CBN_TEST_CPU_BUILDER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "test_profile_builder.h"

struct pb {
	struct profile p;
};

/* The next element of the profile's array arr (count n), not initialised. */
#define PB_PUSH(b, arr, n) PB_SLOT((b)->p.arr, (b)->p.n)

/* A run at period_ns (frequency derived), argv = {cmd, NULL}. */
static inline void pb_init(struct pb *b, uint64_t period_ns, const char *cmd)
{
	static char *argv_store[2];

	memset(b, 0, sizeof(*b));
	argv_store[0] = (char *)cmd;
	argv_store[1] = NULL;
	b->p.argv = argv_store;
	b->p.period_ns = period_ns;
	b->p.frequency_hz = period_ns ? 1e9 / (double)period_ns : 0;
	b->p.wall_ns = 1000000000ull;
}

static inline uint32_t pb_func(struct pb *b, const char *name, const char *file, uint32_t line,
			const char *module)
{
	struct prof_func *f = PB_PUSH(b, funcs, nfuncs);

	f->name = name;
	f->file = file ? file : "";
	f->line = line;
	f->module = module ? module : "";
	f->flags = 0;
	f->calls = f->primitive = 0;
	f->label = NULL;
	return (uint32_t)(b->p.nfuncs - 1);
}

static inline uint32_t pb_process(struct pb *b, uint32_t pid, uint32_t ppid, const char *exe,
			   const char *cmdline, uint64_t period_ns)
{
	struct prof_process *pr = PB_PUSH(b, processes, nprocesses);

	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	pr->ppid = ppid;
	pr->exe = exe;
	pr->cmdline = cmdline;
	pr->file = "";
	pr->period_ns = period_ns;
	pr->clean_exit = 1;
	pr->exited = 1;
	return (uint32_t)(b->p.nprocesses - 1);
}

static inline uint32_t pb_thread(struct pb *b, uint32_t tid, uint32_t process, const char *name)
{
	struct prof_thread *t = PB_PUSH(b, threads, nthreads);

	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->process = process;
	t->name = name ? name : "";
	return (uint32_t)(b->p.nthreads - 1);
}

/* A stack of n frames, leaf first: funcs[i] with line lines[i] (lines may be
 * NULL: each frame then runs at its function's line + 1).  inlined_mask bit i
 * marks frame i as inlined into frame i+1. */
static inline uint32_t pb_stack_inl(struct pb *b, size_t n, const uint32_t *funcs,
			     const uint32_t *lines, uint32_t inlined_mask)
{
	struct prof_stack *st = PB_PUSH(b, stacks, nstacks);
	size_t i;

	st->first = (uint32_t)b->p.nframes;
	st->nframes = (uint32_t)n;
	st->unwind = 0;
	for (i = 0; i < n; i++) {
		struct prof_frame *fr = PB_PUSH(b, frames, nframes);
		const struct prof_func *f = &b->p.funcs[funcs[i]];

		fr->func = funcs[i];
		fr->line = lines ? lines[i] : (f->line ? f->line + 1 : 0);
		fr->file = f->file;
		fr->inlined = (inlined_mask >> i) & 1;
		fr->addr = 0x1000 + 16 * i;
	}
	return (uint32_t)(b->p.nstacks - 1);
}

static inline uint32_t pb_stack(struct pb *b, size_t n, const uint32_t *funcs)
{
	return pb_stack_inl(b, n, funcs, NULL, 0);
}

/* count samples of weight w on thread t with stack st. */
static inline void pb_samples(struct pb *b, uint32_t t, uint32_t st, size_t count, uint32_t w,
		       uint32_t flags)
{
	size_t i;

	for (i = 0; i < count; i++) {
		struct prof_sample *s = PB_PUSH(b, samples, nsamples);

		s->ts = 1000 * (uint64_t)b->p.nsamples;
		s->stack = st;
		s->thread = t;
		s->weight = w;
		s->flags = flags;
		b->p.threads[t].weight += w;
		b->p.processes[b->p.threads[t].process].samples++;
		b->p.processes[b->p.threads[t].process].weight += w;
	}
}

static inline void pb_warning(struct pb *b, const char *w)
{
	char **s = PB_PUSH(b, warnings, nwarnings);

	*s = (char *)w;
}

static inline void pb_nodebug(struct pb *b, const char *m)
{
	char **s = PB_PUSH(b, nodebug_modules, nnodebug_modules);

	*s = (char *)m;
}

static inline void pb_free(struct pb *b)
{
	pb_profile_free(&b->p);
}

#endif
