/*
 * wait.c — the CPU side's "what is this run waiting for?" (wait.h): each
 * sample's activity, off-CPU time per thread and kind, call sites of the
 * waits, contended locks, the wall-clock view per function, the critical
 * thread and the overview figures.  The verdict and the rules are in
 * wait_rules.c.  Formulas: docs/waiting.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "span.h"
#include "util.h"
#include "wait_int.h"

#define WAIT_BUSY_SHARE 0.05         /* a busy thread is on the CPU this share of the wall */
#define WAIT_BUCKET_NS 10000000ull   /* critical thread: 10 ms buckets ... */
#define WAIT_BUCKET_CELLS (1u << 20) /* ... at most this many (threads x buckets) a process:
				     * 16 MiB of grid */
#define WAIT_CRIT_MIN 0.2            /* critical: its credit, of all waiting, at least */

/* --- what a function is ------------------------------------------------------ */

#define FC_SYS 0x01      /* a system library: not a call site of the program */
#define FC_OMP 0x02      /* an OpenMP runtime */
#define FC_LDSO 0x04     /* the dynamic loader */
#define FC_ALLOC 0x08    /* the allocator */
#define FC_MEMCPY 0x10   /* memcpy, memset and friends */
#define FC_SPIN 0x20     /* spins by design: pthread_spin_lock, sched_yield */
#define FC_MAIN 0x40     /* main */
#define FC_MUTEX 0x80    /* taking a mutex: a futex wait under it is lock contention */

static int pre(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The qualified name of a demangled function, without a return type or the
 * parameters: "void std::mutex::lock()" -> "std::mutex::lock".  Copies at
 * most len - 1 bytes into buf. */
const char *wait_bare_name(const char *name, char *buf, size_t len)
{
	const char *s = name, *q;
	int depth = 0;
	size_t n;

	for (q = name; *q; q++) {
		if (*q == '<')
			depth++;
		else if (*q == '>' && depth > 0)
			depth--;
		else if (depth == 0 && ((*q == '(' && q != name) || *q == '@'))
			break;   /* the parameters, or a symbol version (pthread_mutex_lock@@GLIBC_2.2.5) */
		else if (depth == 0 && *q == ' ' && !pre(q + 1, "operator") && !pre(s, "operator"))
			s = q + 1;
	}
	n = (size_t)(q - s) < len - 1 ? (size_t)(q - s) : len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	/* glibc's internal aliases: __GI___pthread_mutex_lock is __pthread_mutex_lock */
	return pre(buf, "__GI_") ? buf + 5 : buf;
}

static int is_one_of(const char *n, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(n, *set) == 0)
			return 1;
	return 0;
}

static int has_prefix(const char *n, const char *const *set)
{
	for (; *set; set++)
		if (pre(n, *set))
			return 1;
	return 0;
}

static const char *const sys_modules[] = {
	"libc.so", "libc-", "libpthread", "librt", "libdl", "ld-", "ld.so", "libgomp",
	"libiomp5", "libomp", "libstdc++", "libgcc_s", "linux-vdso", "linux-gate", "[vdso]",
	"libjemalloc", "libtcmalloc", "libmimalloc", "libcbottleneck", NULL
};
static const char *const omp_modules[] = { "libgomp", "libiomp5", "libomp", NULL };
static const char *const alloc_modules[] = { "libjemalloc", "libtcmalloc", "libmimalloc", NULL };

static const char *const alloc_names[] = {
	"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
	"posix_memalign", "valloc", "pvalloc", "cfree", "malloc_consolidate", "sysmalloc",
	"systrim", "unlink_chunk", "arena_get2", "_Znwm", "_Znam", "_ZdlPv", "_ZdaPv",
	"_ZdlPvm", "_ZdaPvm", "_ZnwmSt11align_val_t", "_ZdlPvSt11align_val_t", NULL
};
static const char *const alloc_prefixes[] = {
	"__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc", "__libc_memalign",
	"_int_malloc", "_int_free", "_int_realloc", "_int_memalign", "tcache_", "malloc_",
	"operator new", "operator delete", "je_", "tc_", "mi_", "__malloc_", NULL
};
static const char *const memcpy_names[] = {
	"memcpy", "memmove", "memset", "mempcpy", "bzero", "explicit_bzero", "wmemset",
	"wmemcpy", NULL
};
static const char *const memcpy_prefixes[] = {
	"__memmove", "__memcpy", "__memset", "__mempcpy", "__bzero", "__wmemset", "__wmemcpy",
	"__nss_database_lookup", NULL   /* glibc's IFUNC memcpy variants in old debug info */
};
static const char *const spin_names[] = {
	"pthread_spin_lock", "sched_yield", "__sched_yield", "thrd_yield", NULL
};
static const char *const mutex_names[] = {
	"pthread_mutex_lock", "pthread_mutex_timedlock", "pthread_mutex_clocklock",
	"lll_lock_wait", "std::mutex::lock", "std::recursive_mutex::lock",
	"std::timed_mutex::lock", "std::recursive_timed_mutex::lock", "__gthread_mutex_lock",
	"__gthread_recursive_mutex_lock", "_ZNSt5mutex4lockEv", "mtx_lock", "mtx_timedlock", NULL
};
static const char *const mutex_prefixes[] = {
	"__pthread_mutex_lock", "__pthread_mutex_timedlock", "__pthread_mutex_clocklock",
	"__pthread_mutex_cond_lock", "__lll_lock_wait",
	/* glibc 2.34+ names the implementations with three underscores */
	"___pthread_mutex_lock", "___pthread_mutex_timedlock", "___pthread_mutex_clocklock", NULL
};

static uint16_t classify(const struct prof_func *f)
{
	const char *mod = f->module ? util_base_name(f->module) : "";
	const char *name;
	char buf[256];
	uint16_t c = 0;

	if (has_prefix(mod, sys_modules) || strcmp(mod, "kernel") == 0 ||
	    (f->name && pre(f->name, "[kernel]")))
		c |= FC_SYS;
	if (has_prefix(mod, omp_modules))
		c |= FC_OMP;
	if (pre(mod, "ld-") || pre(mod, "ld.so"))
		c |= FC_LDSO;
	if (has_prefix(mod, alloc_modules))
		c |= FC_ALLOC;
	if (!f->name)
		return c;
	name = wait_bare_name(f->name, buf, sizeof(buf));
	if (is_one_of(name, alloc_names) || has_prefix(name, alloc_prefixes))
		c |= FC_ALLOC;
	if (is_one_of(name, memcpy_names) || has_prefix(name, memcpy_prefixes))
		c |= FC_MEMCPY;
	if (is_one_of(name, spin_names))
		c |= FC_SPIN;
	if (strcmp(name, "main") == 0)
		c |= FC_MAIN;
	if (is_one_of(name, mutex_names) || has_prefix(name, mutex_prefixes))
		c |= FC_MUTEX;
	return c;
}

/* --- helpers ------------------------------------------------------------------ */

/* Stack st's frames (leaf first), NULL when st is no valid stack. */
static const struct prof_frame *frames_of(const struct profile *p, uint32_t st, uint32_t *n)
{
	const struct prof_stack *s;

	if (st >= p->nstacks)
		return NULL;
	s = &p->stacks[st];
	if (!s->nframes || s->first >= p->nframes || s->nframes > p->nframes - s->first)
		return NULL;
	*n = s->nframes;
	return &p->frames[s->first];
}

static uint16_t cls_of(const uint16_t *cls, const struct profile *p, uint32_t func)
{
	return func < p->nfuncs ? cls[func] : 0;
}

/* [*s, *e) of process pi: its start and end, else the run's. */
static void proc_span(const struct profile *p, uint32_t pi, uint64_t *s, uint64_t *e)
{
	const struct prof_process *pr = pi < p->nprocesses ? &p->processes[pi] : NULL;

	*s = pr && pr->start ? pr->start : p->start_ns;
	*e = pr && pr->end ? pr->end : p->start_ns + p->wall_ns;
	if (*e < *s)
		*e = *s;
}

/* Thread t's lifetime clipped to its process's. */
static void thread_span(const struct profile *p, uint32_t t, uint64_t *s, uint64_t *e)
{
	const struct prof_thread *th = &p->threads[t];

	proc_span(p, th->process, s, e);
	if (th->start > *s && th->start < *e)
		*s = th->start;
	if (th->end && th->end < *e)
		*e = th->end > *s ? th->end : *s;
}

/* The call site of a waiting stack (wait.h): the innermost frame outside the
 * system libraries (the leaf when all are), and the outermost system frame
 * below it (the blocking call), PROF_NONE when none. */
static const struct prof_frame *site_of(const struct profile *p, const uint16_t *cls,
					const struct prof_frame *fr, uint32_t n, uint32_t *call)
{
	uint32_t k = 0;

	while (k < n && (cls_of(cls, p, fr[k].func) & FC_SYS))
		k++;
	if (k == n) {
		*call = PROF_NONE;
		return &fr[0];
	}
	*call = k ? fr[k - 1].func : PROF_NONE;
	return &fr[k];
}

static int in_mutex(const struct profile *p, const uint16_t *cls, uint32_t st)
{
	const struct prof_frame *fr;
	uint32_t n = 0, k;

	if (!(fr = frames_of(p, st, &n)))
		return 0;
	for (k = 0; k < n; k++)
		if (cls_of(cls, p, fr[k].func) & FC_MUTEX)
			return 1;
	return 0;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a > b ? -1 : a < b;
}

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

/* --- activities ------------------------------------------------------------- */

/*
 * What a stack's on-CPU time is, without the sample's flags and time:
 * SPIN (OpenMP runtime or spinning function at the leaf), STARTUP (the loader
 * at the leaf), ALLOC / MEMCPY (the leaf, or a frame of the system-library
 * run at the leaf, is the allocator / a copy: memcpy inside realloc is the
 * allocator's), else COMPUTE.  Bit 0x80: the stack has a main frame.
 */
#define ACT_HAS_MAIN 0x80

static uint8_t stack_act(const struct profile *p, const uint16_t *cls, uint32_t st)
{
	const struct prof_frame *fr;
	uint32_t n = 0, k;
	uint16_t leaf, run, all = 0;
	uint8_t act;

	if (!(fr = frames_of(p, st, &n)))
		return WAIT_ACT_COMPUTE;
	for (k = 0; k < n; k++)
		all |= cls_of(cls, p, fr[k].func);
	leaf = run = cls_of(cls, p, fr[0].func);
	for (k = 1; k < n && (leaf & FC_SYS) && (cls_of(cls, p, fr[k].func) & FC_SYS); k++)
		run |= cls_of(cls, p, fr[k].func);
	if (leaf & (FC_OMP | FC_SPIN))
		act = WAIT_ACT_SPIN;
	else if (leaf & FC_LDSO)
		act = WAIT_ACT_STARTUP;
	else if (run & FC_ALLOC)
		act = WAIT_ACT_ALLOC;
	else if (run & FC_MEMCPY)
		act = WAIT_ACT_MEMCPY;
	else
		act = WAIT_ACT_COMPUTE;
	return (uint8_t)(act | (all & FC_MAIN ? ACT_HAS_MAIN : 0));
}

/* One sample's activity (wait.h's order): the kernel's share, PAUSE-loop
 * leaves, the stack's own activity, and on the main thread (tid = pid) of a
 * process whose main was seen, before main first ran (first_main[process]),
 * a stack without main is start-up (other threads never have main on their
 * stacks; a truncated stack may have lost it). */
static int sample_act(const struct profile *p, const struct prof_sample *s, const uint8_t *sact,
		      const uint64_t *first_main)
{
	uint8_t a = s->stack < p->nstacks ? sact[s->stack] : WAIT_ACT_COMPUTE;
	uint32_t pi;

	if (s->flags & PROF_SAMPLE_KERNEL)
		return WAIT_ACT_KERNEL;
	if (s->flags & PROF_SAMPLE_SPIN || (a & 0x7f) == WAIT_ACT_SPIN)
		return WAIT_ACT_SPIN;
	if ((a & 0x7f) == WAIT_ACT_STARTUP)
		return WAIT_ACT_STARTUP;
	pi = s->thread < p->nthreads ? p->threads[s->thread].process : PROF_NONE;
	if (!(a & ACT_HAS_MAIN) && !(s->flags & CBN_SAMPLE_TRUNCATED) && s->stack < p->nstacks &&
	    pi < p->nprocesses && s->ts < first_main[pi] &&
	    p->threads[s->thread].tid == p->processes[pi].pid)
		return WAIT_ACT_STARTUP;
	return a & 0x7f;
}

/* --- sites -------------------------------------------------------------------- */

struct site_ent {
	uint32_t func, line, call, stack, thread, kind;
	const char *file;
	uint64_t ns;
};

static int site_key_cmp(const struct site_ent *a, const struct site_ent *b)
{
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->call != b->call)
		return a->call < b->call ? -1 : 1;
	return cmp_str(a->file, b->file);
}

static int site_ent_cmp(const void *x, const void *y)
{
	const struct site_ent *a = x, *b = y;
	int c = site_key_cmp(a, b);

	if (c)
		return c;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int site_cmp(const void *x, const void *y)
{
	const struct wait_site *a = x, *b = y;
	int c = cmp_u64_desc(a->ns, b->ns);

	return c ? c : (a->func < b->func ? -1 : a->func > b->func);
}

/* The call site of record r (no stack: one "[no stack]" site). */
static void site_fill(const struct profile *p, const uint16_t *cls, const struct prof_offcpu *r,
		      struct site_ent *e)
{
	const struct prof_frame *fr, *s;
	uint32_t n = 0;

	memset(e, 0, sizeof(*e));
	e->func = e->call = PROF_NONE;
	e->file = "";
	e->stack = r->stack < p->nstacks ? r->stack : PROF_NONE;
	e->thread = r->thread;
	e->kind = r->kind < CBN_OFF_NKINDS ? r->kind : CBN_OFF_OTHER;
	e->ns = r->weight_ns;
	if (!(fr = frames_of(p, r->stack, &n)))
		return;
	s = site_of(p, cls, fr, n, &e->call);
	e->func = s->func < p->nfuncs ? s->func : PROF_NONE;
	e->line = s->line;
	e->file = s->file ? s->file : "";
}

static int build_sites(const struct profile *p, const uint16_t *cls, struct wait_analysis *w)
{
	struct site_ent *e;
	uint32_t *stamp;
	size_t i, j, n = 0, ns = 0;
	int ret = -ENOMEM;

	e = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*e));
	stamp = calloc(p->nthreads ? p->nthreads : 1, sizeof(*stamp));
	if (!e || !stamp)
		goto out;
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];

		if (r->thread >= p->nthreads || r->kind == CBN_OFF_RUNQ || !r->weight_ns)
			continue;
		site_fill(p, cls, r, &e[n++]);
	}
	if (n)
		qsort(e, n, sizeof(*e), site_ent_cmp);
	for (i = 0; i < n; i = j)
		for (j = i, ns++; j < n && site_key_cmp(&e[i], &e[j]) == 0; j++)
			;
	if (ns && !(w->sites = calloc(ns, sizeof(*w->sites))))
		goto out;
	for (i = 0; i < n; i = j) {
		struct wait_site *s;
		uint64_t best = 0, run = 0;
		uint32_t k;

		for (j = i; j < n && site_key_cmp(&e[i], &e[j]) == 0; j++)
			;
		s = &w->sites[w->nsites++];
		memset(s, 0, sizeof(*s));
		s->func = e[i].func;
		s->file = e[i].file;
		s->line = e[i].line;
		s->call = e[i].call;
		s->stack = PROF_NONE;
		for (k = (uint32_t)i; k < j; k++) {
			s->ns += e[k].ns;
			s->kind_ns[e[k].kind] += e[k].ns;
			if (stamp[e[k].thread] != (uint32_t)w->nsites) {
				stamp[e[k].thread] = (uint32_t)w->nsites;
				s->nthreads++;
			}
			/* the heaviest stack: entries are sorted by stack within the site */
			run = (k > i && e[k].stack == e[k - 1].stack) ? run + e[k].ns : e[k].ns;
			if (run > best && e[k].stack != PROF_NONE) {
				best = run;
				s->stack = e[k].stack;
			}
		}
		for (k = 0; k < CBN_OFF_NKINDS; k++)
			if (s->kind_ns[k] > s->kind_ns[s->kind])
				s->kind = k;
	}
	if (w->nsites)
		qsort(w->sites, w->nsites, sizeof(*w->sites), site_cmp);
	ret = 0;
out:
	free(e);
	free(stamp);
	return ret;
}

/* --- locks ------------------------------------------------------------------- */

struct lock_ent {
	uint64_t addr, start, end, ns;
	uint32_t process, thread, owner, stack;
};

static int lock_ent_cmp(const void *x, const void *y)
{
	const struct lock_ent *a = x, *b = y;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int lock_stack_cmp(const void *x, const void *y)
{
	const struct lock_ent *a = x, *b = y;

	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

static int lock_cmp(const void *x, const void *y)
{
	const struct wait_lock *a = x, *b = y;
	int c = cmp_u64_desc(a->wait_ns, b->wait_ns);

	if (c)
		return c;
	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* One lock: e[0 .. n) are its waits, by start. */
static void lock_fill(const struct profile *p, const uint16_t *cls, struct lock_ent *e, size_t n,
		      struct wait_lock *l, uint64_t *own_ns, uint32_t *stamp, uint32_t mark)
{
	uint64_t cur_s = 0, cur_e = 0, best = 0, run = 0;
	size_t k;

	memset(l, 0, sizeof(*l));
	l->addr = e[0].addr;
	l->process = e[0].process;
	l->func = l->holder = l->stack = PROF_NONE;
	l->file = "";
	for (k = 0; k < n; k++) {
		uint64_t s = e[k].start, t = e[k].end > s ? e[k].end : s;

		l->wait_ns += e[k].ns;
		if (stamp[e[k].thread] != mark) {
			stamp[e[k].thread] = mark;
			l->waiters++;
		}
		/* union of [start, end) over time: the intervals come by start */
		if (k == 0 || s > cur_e) {
			l->contended_ns += cur_e - cur_s;
			cur_s = s;
			cur_e = t;
		} else if (t > cur_e) {
			cur_e = t;
		}
		if (e[k].owner < p->nthreads && e[k].owner != e[k].thread)
			own_ns[e[k].owner] += e[k].ns;
	}
	l->contended_ns += cur_e - cur_s;
	for (k = 0; k < n; k++) {
		uint32_t o = e[k].owner;

		if (o < p->nthreads && own_ns[o] &&
		    (l->holder == PROF_NONE || own_ns[o] > own_ns[l->holder] ||
		     (own_ns[o] == own_ns[l->holder] && o < l->holder)))
			l->holder = o;
	}
	if (l->holder != PROF_NONE && l->wait_ns)
		l->holder_share = (double)own_ns[l->holder] / (double)l->wait_ns;
	for (k = 0; k < n; k++)
		if (e[k].owner < p->nthreads)
			own_ns[e[k].owner] = 0;
	/* the heaviest waiting stack, and its call site */
	qsort(e, n, sizeof(*e), lock_stack_cmp);
	for (k = 0; k < n; k++) {
		run = (k && e[k].stack == e[k - 1].stack) ? run + e[k].ns : e[k].ns;
		if (run > best && e[k].stack != PROF_NONE) {
			best = run;
			l->stack = e[k].stack;
		}
	}
	if (l->stack != PROF_NONE) {
		const struct prof_frame *fr, *s;
		uint32_t nf = 0, call;

		if ((fr = frames_of(p, l->stack, &nf))) {
			s = site_of(p, cls, fr, nf, &call);
			l->func = s->func < p->nfuncs ? s->func : PROF_NONE;
			l->file = s->file ? s->file : "";
			l->line = s->line;
		}
	}
}

static int build_locks(const struct profile *p, const uint16_t *cls, const uint8_t *is_lock,
		       struct wait_analysis *w)
{
	struct lock_ent *e;
	uint64_t *own_ns;
	uint32_t *stamp;
	size_t i, j, n = 0, nl = 0;
	int ret = -ENOMEM;

	e = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*e));
	own_ns = calloc(p->nthreads ? p->nthreads : 1, sizeof(*own_ns));
	stamp = calloc(p->nthreads ? p->nthreads : 1, sizeof(*stamp));
	if (!e || !own_ns || !stamp)
		goto out;
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_offcpu *r = &p->offcpu[i];

		if (!is_lock[i])
			continue;
		e[n++] = (struct lock_ent){ .addr = r->addr, .start = r->start, .end = r->end,
					    .ns = r->weight_ns, .process = r->process,
					    .thread = r->thread, .owner = r->owner_thread,
					    .stack = r->stack < p->nstacks ? r->stack : PROF_NONE };
	}
	if (n)
		qsort(e, n, sizeof(*e), lock_ent_cmp);
	for (i = 0; i < n; i = j)
		for (j = i, nl++; j < n && e[j].process == e[i].process && e[j].addr == e[i].addr; j++)
			;
	if (nl && !(w->locks = calloc(nl, sizeof(*w->locks))))
		goto out;
	for (i = 0; i < n; i = j) {
		for (j = i; j < n && e[j].process == e[i].process && e[j].addr == e[i].addr; j++)
			;
		lock_fill(p, cls, &e[i], j - i, &w->locks[w->nlocks], own_ns, stamp,
			  (uint32_t)w->nlocks + 1);
		w->nlocks++;
	}
	if (w->nlocks)
		qsort(w->locks, w->nlocks, sizeof(*w->locks), lock_cmp);
	ret = 0;
out:
	free(e);
	free(own_ns);
	free(stamp);
	return ret;
}

/* --- the wall-clock view ------------------------------------------------------- */

static int func_cmp(const void *x, const void *y)
{
	const struct wait_func *a = x, *b = y;
	int c = cmp_u64_desc(a->total_on + a->total_off, b->total_on + b->total_off);

	return c ? c : (a->func < b->func ? -1 : a->func > b->func);
}

static int build_funcs(const struct profile *p, const uint64_t *on, const uint64_t *off,
		       struct wait_analysis *w)
{
	struct wait_func *f;
	uint32_t *stamp;
	size_t i, n;
	int ret = -ENOMEM;

	f = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*f));
	stamp = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*stamp));
	if (!f || !stamp)
		goto out;
	for (i = 0; i < p->nstacks; i++) {
		const struct prof_frame *fr;
		uint32_t nf = 0, k;

		if ((!on[i] && !off[i]) || !(fr = frames_of(p, (uint32_t)i, &nf)))
			continue;
		if (fr[0].func < p->nfuncs) {
			f[fr[0].func].self_on += on[i];
			f[fr[0].func].self_off += off[i];
		}
		/* each function once per stack: recursion does not count twice */
		for (k = 0; k < nf; k++) {
			uint32_t fn = fr[k].func;

			if (fn >= p->nfuncs || stamp[fn] == (uint32_t)i + 1)
				continue;
			stamp[fn] = (uint32_t)i + 1;
			f[fn].total_on += on[i];
			f[fn].total_off += off[i];
		}
	}
	for (i = 0, n = 0; i < p->nfuncs; i++)
		if (f[i].total_on || f[i].total_off) {
			f[n] = f[i];
			f[n++].func = (uint32_t)i;
		}
	if (n)
		qsort(f, n, sizeof(*f), func_cmp);
	w->funcs = f;
	w->nfuncs = n;
	f = NULL;
	ret = 0;
out:
	free(f);
	free(stamp);
	return ret;
}

/* --- the critical thread --------------------------------------------------------- */

struct crit {
	double *credit;          /* per thread: others' waiting while it alone computed */
	double *waited;          /* per thread: its waiting, in the buckets */
	uint32_t *most;          /* per thread: most threads waiting at once while it computed */
	uint32_t *pos;           /* thread -> row in the process's grid */
	/* samples by process (a counting sort): those of process q are
	 * byproc[pfirst[q] .. pfirst[q + 1]); a scan of every sample per
	 * process was quadratic in a run of many processes (1024 MPI ranks) */
	uint32_t *byproc;
	size_t *pfirst;
};

/*
 * One process: per thread and bucket, compute (on-CPU but not spinning) and
 * wait (futex stretches spread over the buckets they overlap, plus spin;
 * without --off-cpu, the time alive and not on the CPU).  A bucket in which
 * exactly one thread computes half the bucket or more credits it with the
 * others' waiting there.
 */
static int crit_process(const struct profile *p, const struct wait_analysis *w, uint32_t pi,
			const uint8_t *act, struct crit *c)
{
	uint64_t ps, pe, width, span;
	uint32_t nt = 0, t, *rows;
	size_t nb, i, b;
	double *comp, *wait;
	int ret = -ENOMEM;

	proc_span(p, pi, &ps, &pe);
	span = pe - ps;
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].process == pi)
			c->pos[i] = nt++;
	if (nt < 2 || !span)
		return 0;
	width = WAIT_BUCKET_NS;
	if (prof_period_of_process(p, pi) > width && prof_period_of_process(p, pi) < span)
		width = prof_period_of_process(p, pi);
	nb = (size_t)((span + width - 1) / width);
	if (nb > WAIT_BUCKET_CELLS / nt) {
		nb = WAIT_BUCKET_CELLS / nt ? WAIT_BUCKET_CELLS / nt : 1;
		width = span / nb + 1;
		nb = (size_t)((span + width - 1) / width);
	}
	comp = calloc(nb * nt, sizeof(*comp));
	wait = calloc(nb * nt, sizeof(*wait));
	rows = calloc(nt, sizeof(*rows));
	if (!comp || !wait || !rows)
		goto out;
	for (i = 0, t = 0; i < p->nthreads; i++)
		if (p->threads[i].process == pi)
			rows[t++] = (uint32_t)i;
	for (size_t k = c->pfirst[pi]; k < c->pfirst[pi + 1]; k++) {
		const struct prof_sample *s = &p->samples[c->byproc[k]];
		uint64_t ns;

		i = c->byproc[k];
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		b = s->ts <= ps ? 0 : (size_t)((s->ts - ps) / width);
		if (b >= nb)
			b = nb - 1;
		if (act[i] == WAIT_ACT_SPIN)
			wait[(size_t)c->pos[s->thread] * nb + b] += (double)ns;
		else
			comp[(size_t)c->pos[s->thread] * nb + b] += (double)ns;
	}
	if (w->offcpu) {
		for (i = 0; i < p->noffcpu; i++) {
			const struct prof_offcpu *r = &p->offcpu[i];
			uint64_t s = r->start, e = r->end;
			double *row;

			/* only futex waits wait on another thread: a sleep, I/O or
			 * a child is no wait on the critical thread */
			if (r->thread >= p->nthreads || p->threads[r->thread].process != pi ||
			    r->kind != CBN_OFF_FUTEX || !r->weight_ns)
				continue;
			row = &wait[(size_t)c->pos[r->thread] * nb];
			if (e <= s || e <= ps || s >= pe) {
				b = s <= ps ? 0 : (size_t)((s - ps) / width);
				row[b < nb ? b : nb - 1] += (double)r->weight_ns;
				continue;
			}
			/* spread over the buckets it overlaps, in proportion */
			for (b = s <= ps ? 0 : (size_t)((s - ps) / width); b < nb; b++) {
				uint64_t bs = ps + b * width, be = bs + width;
				uint64_t lo = s > bs ? s : bs, hi = e < be ? e : be;

				if (lo >= e)
					break;
				if (hi > lo)
					row[b] += (double)r->weight_ns * (double)(hi - lo) /
						  (double)(e - s);
			}
		}
	} else {
		/* time alive and not on the CPU, inside what was recorded: a
		 * bucket only partly inside the capture windows counts that part */
		double *cov = calloc(nb, sizeof(*cov));

		if (!cov)
			goto out;
		for (b = 0; b < nb; b++)
			cov[b] = (double)span_in_process(p, pi, ps + b * width, ps + (b + 1) * width) /
				 (double)width;
		for (t = 0; t < nt; t++) {
			uint64_t ts, te;

			thread_span(p, rows[t], &ts, &te);
			for (b = 0; b < nb; b++) {
				uint64_t bs = ps + b * width, be = bs + width;
				uint64_t lo = ts > bs ? ts : bs, hi = te < be ? te : be;
				double idle = hi > lo ? (double)(hi - lo) * cov[b] - comp[t * nb + b] -
							      wait[t * nb + b] : 0.0;

				if (idle > 0)
					wait[t * nb + b] += idle;
			}
		}
		free(cov);
	}
	for (b = 0; b < nb; b++) {
		uint32_t busy = PROF_NONE, nbusy = 0, waiting = 0;
		double others = 0;

		for (t = 0; t < nt; t++) {
			c->waited[rows[t]] += wait[t * nb + b];
			if (comp[t * nb + b] >= 0.5 * (double)width) {
				busy = t;
				nbusy++;
			}
		}
		if (nbusy != 1)
			continue;
		for (t = 0; t < nt; t++) {
			if (t == busy)
				continue;
			others += wait[t * nb + b];
			waiting += wait[t * nb + b] >= 0.5 * (double)width;
		}
		c->credit[rows[busy]] += others;
		if (waiting > c->most[rows[busy]])
			c->most[rows[busy]] = waiting;
	}
	ret = 0;
out:
	free(comp);
	free(wait);
	free(rows);
	return ret;
}

static int critical_thread(const struct profile *p, struct wait_analysis *w, const uint8_t *act,
			   struct wait_ctx *ctx)
{
	struct crit c = { 0 };
	size_t n = p->nthreads ? p->nthreads : 1, i;
	double all = 0, others = 0;
	uint32_t best = PROF_NONE;
	int ret = -ENOMEM;

	c.credit = calloc(n, sizeof(*c.credit));
	c.waited = calloc(n, sizeof(*c.waited));
	c.most = calloc(n, sizeof(*c.most));
	c.pos = calloc(n, sizeof(*c.pos));
	c.byproc = calloc(p->nsamples ? p->nsamples : 1, sizeof(*c.byproc));
	c.pfirst = calloc(p->nprocesses + 2, sizeof(*c.pfirst));
	if (!c.credit || !c.waited || !c.most || !c.pos || !c.byproc || !c.pfirst)
		goto out;
	for (i = 0; i < p->nsamples; i++) {
		uint32_t t = p->samples[i].thread;

		if (t < p->nthreads && p->threads[t].process < p->nprocesses)
			c.pfirst[p->threads[t].process + 2]++;
	}
	for (i = 0; i < p->nprocesses; i++)
		c.pfirst[i + 2] += c.pfirst[i + 1];
	for (i = 0; i < p->nsamples; i++) {
		uint32_t t = p->samples[i].thread;

		if (t < p->nthreads && p->threads[t].process < p->nprocesses)
			c.byproc[c.pfirst[p->threads[t].process + 1]++] = (uint32_t)i;
	}
	for (i = 0; i < p->nprocesses; i++)
		if ((ret = crit_process(p, w, (uint32_t)i, act, &c)) < 0)
			goto out;
	for (i = 0; i < p->nthreads; i++) {
		all += c.waited[i];
		if (c.credit[i] > 0 && (best == PROF_NONE || c.credit[i] > c.credit[best]))
			best = (uint32_t)i;
	}
	ret = 0;
	if (best == PROF_NONE || c.credit[best] < WAIT_CRIT_MIN * all)
		goto out;
	for (i = 0; i < p->nthreads; i++)
		if (i != best && p->threads[i].process == p->threads[best].process) {
			uint64_t s, e;

			others += c.waited[i];
			thread_span(p, (uint32_t)i, &s, &e);
			ctx->critical_others_wall += span_in_process(p, p->threads[i].process, s, e);
		}
	w->critical = best;
	w->critical_share = others > 0 ? c.credit[best] / others : 0.0;
	if (w->critical_share > 1.0)
		w->critical_share = 1.0;
	w->critical_waiters = c.most[best];
	ctx->critical_credit = (uint64_t)c.credit[best];
out:
	free(c.credit);
	free(c.waited);
	free(c.most);
	free(c.pos);
	free(c.byproc);
	free(c.pfirst);
	return ret;
}

/* --- threads and the overview ----------------------------------------------------- */

static int thread_cmp(const void *x, const void *y)
{
	const struct wait_thread *a = x, *b = y;
	int c = cmp_u64_desc(a->cpu_ns, b->cpu_ns);

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
	return cmp_str(a->file, b->file);
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
		    !(fr = frames_of(p, s->stack, &nf)))
			continue;
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		if (!(cls_of(cls, p, fr[0].func) & FC_OMP)) {
			if (fr[0].func < p->nfuncs)
				leaf_ns[fr[0].func] += ns;
			continue;
		}
		ctx->omp_spin_ns += ns;
		if (!ctx->omp_module && fr[0].func < p->nfuncs && p->funcs[fr[0].func].module)
			ctx->omp_module = util_base_name(p->funcs[fr[0].func].module);
		site = site_of(p, cls, fr, nf, &call);
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

int wait_analyze(const struct profile *p, struct wait_analysis **out)
{
	struct wait_analysis *w = NULL;
	struct wait_thread *th = NULL;
	struct wait_ctx ctx = { 0 };
	uint16_t *cls = NULL;
	uint8_t *sact = NULL, *act = NULL, *is_lock = NULL;
	uint64_t *first_main = NULL, *on = NULL, *off = NULL;
	size_t i, k;
	int ret = -ENOMEM;

	*out = NULL;
	if (!p->nsamples && !p->noffcpu)
		return 0;
	if (!(w = calloc(1, sizeof(*w))))
		goto out;
	w->critical = PROF_NONE;
	cls = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*cls));
	sact = calloc(p->nstacks ? p->nstacks : 1, sizeof(*sact));
	act = calloc(p->nsamples ? p->nsamples : 1, sizeof(*act));
	is_lock = calloc(p->noffcpu ? p->noffcpu : 1, sizeof(*is_lock));
	first_main = calloc(p->nprocesses ? p->nprocesses : 1, sizeof(*first_main));
	on = calloc(p->nstacks ? p->nstacks : 1, sizeof(*on));
	off = calloc(p->nstacks ? p->nstacks : 1, sizeof(*off));
	th = calloc(p->nthreads ? p->nthreads : 1, sizeof(*th));
	if (!cls || !sact || !act || !is_lock || !first_main || !on || !off || !th)
		goto out;

	w->offcpu = p->noffcpu > 0;
	for (i = 0; i < p->nprocesses; i++) {
		const struct prof_offcpu_proc *o = &p->processes[i].offcpu;

		if (o->state == CBN_OFFCPU_ON)
			w->offcpu = 1;
		if (!w->rate_hz && o->rate_hz)
			w->rate_hz = o->rate_hz;   /* the first process is the root */
	}
	w->wall_ns = p->wall_ns;
	{
		struct run_span sp;

		span_of_run(p, &sp);
		w->span_ns = sp.ns;
		w->windowed = sp.windowed;
	}

	for (i = 0; i < p->nfuncs; i++)
		cls[i] = classify(&p->funcs[i]);
	for (i = 0; i < p->nstacks; i++)
		sact[i] = stack_act(p, cls, (uint32_t)i);
	/* when main first ran in each process: before it, stacks without main
	 * are the start-up */
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint32_t pi = s->thread < p->nthreads ? p->threads[s->thread].process : PROF_NONE;

		if (pi < p->nprocesses && s->stack < p->nstacks && sact[s->stack] & ACT_HAS_MAIN &&
		    (!first_main[pi] || s->ts < first_main[pi]))
			first_main[pi] = s->ts;
	}

	/* threads: lifetime, then samples */
	for (i = 0; i < p->nthreads; i++) {
		uint64_t s, e;

		thread_span(p, (uint32_t)i, &s, &e);
		th[i].thread = (uint32_t)i;
		th[i].wall_ns = span_in_process(p, p->threads[i].process, s, e);
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t ns;

		act[i] = (uint8_t)sample_act(p, s, sact, first_main);
		if (s->thread >= p->nthreads)
			continue;
		ctx.samples += !(s->flags & PROF_SAMPLE_SPLIT);
		ns = (uint64_t)s->weight * prof_period_of_thread(p, s->thread);
		th[s->thread].cpu_ns += ns;
		th[s->thread].act_ns[act[i]] += ns;
		if (s->stack < p->nstacks)
			on[s->stack] += ns;
	}

	/* off-CPU stretches */
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
			off[r->stack] += r->weight_ns;
		if (kind == CBN_OFF_FUTEX && in_mutex(p, cls, r->stack)) {
			is_lock[i] = 1;
			t->lock_wait_ns += r->weight_ns;
			if (r->owner_thread < p->nthreads && r->owner_thread != r->thread)
				th[r->owner_thread].held_for_ns += r->weight_ns;
		}
	}

	/* totals */
	for (i = 0; i < p->nthreads; i++) {
		struct wait_thread *t = &th[i];

		t->busy = t->wall_ns ? (double)(t->cpu_ns - t->act_ns[WAIT_ACT_SPIN]) /
					       (double)t->wall_ns : 0.0;
		w->thread_ns += t->wall_ns;
		w->cpu_ns += t->cpu_ns;
		w->off_ns += t->off_ns;
		for (k = 0; k < WAIT_ACT_N; k++)
			w->act_ns[k] += t->act_ns[k];
		for (k = 0; k < CBN_OFF_NKINDS; k++)
			w->kind_ns[k] += t->kind_ns[k];
		if (t->cpu_ns && (double)t->cpu_ns >= WAIT_BUSY_SHARE * (double)w->span_ns)
			w->busy_threads++;
	}
	w->threads = (uint32_t)p->nthreads;
	if (!w->busy_threads)
		w->busy_threads = 1;
	w->blocked_est_ns = w->offcpu ? w->off_ns
				      : (w->thread_ns > w->cpu_ns ? w->thread_ns - w->cpu_ns : 0);
	if (w->offcpu) {
		uint64_t seen = w->cpu_ns + w->off_ns + w->kind_ns[CBN_OFF_RUNQ];

		w->runq_ns = w->kind_ns[CBN_OFF_RUNQ];
		w->other_ns = w->thread_ns > seen ? w->thread_ns - seen : 0;
	}
	if (w->span_ns) {
		/* sampling noise may put a fully parallel run a little over 1 */
		w->efficiency = (double)(w->cpu_ns - w->act_ns[WAIT_ACT_SPIN]) /
				((double)w->span_ns * w->busy_threads);
		if (w->efficiency > 1.0)
			w->efficiency = 1.0;
	}
	/* shares of thread time that add up to 1 (wait.h) */
	w->share_ns = w->cpu_ns + w->blocked_est_ns + w->runq_ns + w->other_ns;
	if (w->thread_ns > w->share_ns)
		w->share_ns = w->thread_ns;
	if (w->share_ns) {
		double d = (double)w->share_ns;

		for (k = 0; k < WAIT_ACT_N; k++)
			w->cpu_share[k] = (double)w->act_ns[k] / d;
		w->blocked_share = (double)w->blocked_est_ns / d;
		w->runq_share = (double)w->runq_ns / d;
		w->other_share = (double)w->other_ns / d;
	}
	for (k = 0; k < WAIT_ACT_N && w->cpu_ns; k++)
		w->of_cpu[k] = (double)w->act_ns[k] / (double)w->cpu_ns;

	/* the verdict's population: busy threads, all when none is */
	for (k = 0; k < 2 && !ctx.v_threads; k++)
		for (i = 0; i < p->nthreads; i++) {
			const struct wait_thread *t = &th[i];
			size_t j;

			if (!k && (!t->cpu_ns ||
				   (double)t->cpu_ns < WAIT_BUSY_SHARE * (double)w->span_ns))
				continue;
			ctx.v_threads++;
			ctx.v_thread_ns += t->wall_ns;
			ctx.v_cpu_ns += t->cpu_ns;
			for (j = 0; j < WAIT_ACT_N; j++)
				ctx.v_act_ns[j] += t->act_ns[j];
			for (j = 0; j < CBN_OFF_NKINDS; j++)
				ctx.v_kind_ns[j] += t->kind_ns[j];
			ctx.v_blocked_ns += w->offcpu ? t->off_ns
					     : (t->wall_ns > t->cpu_ns ? t->wall_ns - t->cpu_ns : 0);
		}

	if ((ret = build_sites(p, cls, w)) < 0 || (ret = build_locks(p, cls, is_lock, w)) < 0 ||
	    (ret = build_funcs(p, on, off, w)) < 0 || (ret = critical_thread(p, w, act, &ctx)) < 0 ||
	    (ret = spin_evidence(p, cls, act, &ctx)) < 0)
		goto out;

	if (p->nthreads)
		qsort(th, p->nthreads, sizeof(*th), thread_cmp);
	w->threads_v = th;
	w->nthreads_v = p->nthreads;
	th = NULL;

	ctx.p = p;
	ctx.w = w;
	if ((ret = wait_rules_run(&ctx, w)) < 0)
		goto out;
	*out = w;
	w = NULL;
	ret = 0;
out:
	wait_free(w);
	free(th);
	free(cls);
	free(sact);
	free(act);
	free(is_lock);
	free(first_main);
	free(on);
	free(off);
	return ret < 0 ? -ENOMEM : 0;
}

void wait_free(struct wait_analysis *w)
{
	if (!w)
		return;
	free(w->threads_v);
	free(w->sites);
	free(w->locks);
	free(w->funcs);
	free(w->verdict_text);
	rules_findings_free(w->findings, w->nfindings);
	free(w);
}

/* --- names ------------------------------------------------------------------------ */

const char *wait_activity_name(int act)
{
	static const char *const n[WAIT_ACT_N] = { "compute", "spin", "kernel", "allocator",
						   "memcpy/memset", "start-up" };

	return act >= 0 && act < WAIT_ACT_N ? n[act] : "";
}

const char *wait_kind_name(int kind)
{
	static const char *const n[CBN_OFF_NKINDS] = { "other", "futex", "io", "poll",
						       "sleep", "child", "fault", "runnable" };

	return kind >= 0 && kind < CBN_OFF_NKINDS ? n[kind] : "";
}

const char *wait_verdict_name(int verdict)
{
	static const char *const n[] = { "", "compute-bound", "synchronization-bound",
					 "I/O-bound", "allocator-bound", "start-up-bound",
					 "serial", "idle", "system-bound" };

	return verdict >= 0 && verdict < (int)(sizeof(n) / sizeof(n[0])) ? n[verdict] : "";
}
