/*
 * wait_class.c — what a function is to the waiting view (a system library,
 * an OpenMP runtime, the loader, the allocator, a copy, a spin, main, a
 * mutex), what a stack and a sample are doing (wait.h's activities), and
 * the spans and call sites the other wait files measure with.
 */

#include <string.h>

#include "names.h"
#include "util.h"
#include "wait_int.h"

static int pre(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The name the lists below hold: names_bare() of a function's name ("void
 * std::mutex::lock()" -> "std::mutex::lock"), a kernel frame's by the
 * kernel's own name ("[kernel] __memmove"), without a symbol version
 * (pthread_mutex_lock@@GLIBC_2.2.5) or glibc's prefix of its internal
 * aliases (__GI___pthread_mutex_lock is __pthread_mutex_lock).  At most
 * len - 1 bytes in buf. */
static const char *class_name(const char *name, char *buf, size_t len)
{
	if (pre(name, "[kernel] "))
		name += strlen("[kernel] ");
	names_bare_copy(buf, len, name);
	buf[strcspn(buf, "@")] = '\0';
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

uint16_t wait_classify(const struct prof_func *f)
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
	name = class_name(f->name, buf, sizeof(buf));
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

/* [*s, *e) of process pi: its start and end, else the run's. */
void wait_proc_span(const struct profile *p, uint32_t pi, uint64_t *s, uint64_t *e)
{
	const struct prof_process *pr = pi < p->nprocesses ? &p->processes[pi] : NULL;

	*s = pr && pr->start ? pr->start : p->start_ns;
	*e = pr && pr->end ? pr->end : p->start_ns + p->wall_ns;
	if (*e < *s)
		*e = *s;
}

/* Thread t's lifetime clipped to its process's. */
void wait_thread_span(const struct profile *p, uint32_t t, uint64_t *s, uint64_t *e)
{
	const struct prof_thread *th = &p->threads[t];

	wait_proc_span(p, th->process, s, e);
	if (th->start > *s && th->start < *e)
		*s = th->start;
	if (th->end && th->end < *e)
		*e = th->end > *s ? th->end : *s;
}

/* The call site of a waiting stack (wait.h): the innermost frame outside the
 * system libraries (the leaf when all are), and the outermost system frame
 * below it (the blocking call), PROF_NONE when none. */
const struct prof_frame *wait_site_of(const struct profile *p, const uint16_t *cls,
				      const struct prof_frame *fr, uint32_t n, uint32_t *call)
{
	uint32_t k = 0;

	while (k < n && (wait_cls_of(cls, p, fr[k].func) & FC_SYS))
		k++;
	if (k == n) {
		*call = PROF_NONE;
		return &fr[0];
	}
	*call = k ? fr[k - 1].func : PROF_NONE;
	return &fr[k];
}

int wait_in_mutex(const struct profile *p, const uint16_t *cls, uint32_t st)
{
	const struct prof_frame *fr;
	uint32_t n = 0, k;

	if (!(fr = stackw_frames(p, st, &n)))
		return 0;
	for (k = 0; k < n; k++)
		if (wait_cls_of(cls, p, fr[k].func) & FC_MUTEX)
			return 1;
	return 0;
}

/* --- activities ------------------------------------------------------------- */


uint8_t wait_stack_act(const struct profile *p, const uint16_t *cls, uint32_t st)
{
	const struct prof_frame *fr;
	uint32_t n = 0, k;
	uint16_t leaf, run, all = 0;
	uint8_t act;

	if (!(fr = stackw_frames(p, st, &n)))
		return WAIT_ACT_COMPUTE;
	for (k = 0; k < n; k++)
		all |= wait_cls_of(cls, p, fr[k].func);
	leaf = run = wait_cls_of(cls, p, fr[0].func);
	for (k = 1; k < n && (leaf & FC_SYS) && (wait_cls_of(cls, p, fr[k].func) & FC_SYS); k++)
		run |= wait_cls_of(cls, p, fr[k].func);
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
 * stacks; a truncated stack may have lost it; a fork child's main ran in
 * its parent, and its loader's work too). */
int wait_sample_act(const struct profile *p, const struct prof_sample *s, const uint8_t *sact,
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
	    pi < p->nprocesses && !p->processes[pi].forked && s->ts < first_main[pi] &&
	    p->threads[s->thread].tid == p->processes[pi].pid)
		return WAIT_ACT_STARTUP;
	return a & 0x7f;
}

