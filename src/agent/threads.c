/*
 * threads.c — the table of the target's live threads the agent follows
 * (pthread_t -> tid, CPU at start, agent_tls), for names set from another
 * thread, and for the THREAD_END of every thread still alive at exit.  The
 * registry only: who registers is the sampler (sampler_thread_begin/end),
 * who creates threads is threads_create.c; the count of the program's
 * threads that aside.c reads in signal context is the floor's
 * (agent_program_alone).  It calls only the floor.  Nothing here runs in
 * signal context.
 */
#include <string.h>

#include "floor.h"
#include "threads.h"
#include "../format/cbn_time.h"

#define THREADS_MAX 4096

struct thread_slot {
	pthread_t th;
	uint32_t tid;
	uint64_t cpu0;                   /* CPU time before this image (see sampler.c) */
	struct agent_thread *t;          /* its agent_tls: valid until it unregisters */
};

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct thread_slot threads_tab[THREADS_MAX];
static int threads_n;

void threads_register(pthread_t th, uint32_t tid, uint64_t cpu0, struct agent_thread *t)
{
	int i;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < threads_n; i++)
		if (pthread_equal(threads_tab[i].th, th))
			break;
	if (i == threads_n && threads_n < THREADS_MAX)
		threads_n++;
	if (i < THREADS_MAX) {
		threads_tab[i].th = th;
		threads_tab[i].tid = tid;
		threads_tab[i].cpu0 = cpu0;
		threads_tab[i].t = t;
	}
	pthread_mutex_unlock(&threads_lock);
}

void threads_unregister(pthread_t th)
{
	int i;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < threads_n; i++) {
		if (pthread_equal(threads_tab[i].th, th)) {
			threads_tab[i] = threads_tab[--threads_n];
			if (!pthread_equal(th, agent.main_thread))
				agent_program_add(-1);
			break;
		}
	}
	pthread_mutex_unlock(&threads_lock);
}

/* The tid of a live thread we know of, 0 when none. */
uint32_t threads_lookup(pthread_t th)
{
	uint32_t tid = 0;
	int i;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < threads_n; i++)
		if (pthread_equal(threads_tab[i].th, th))
			tid = threads_tab[i].tid;
	pthread_mutex_unlock(&threads_lock);
	return tid;
}

/*
 * At exit: a THREAD_END (with CPU time so far) for every thread still alive,
 * since exit() kills them without running key destructors.  No name: reading
 * another thread's would take a descriptor; THREAD_START and THREAD_NAME
 * records carry the names.  At _exit (maybe from a signal handler that
 * interrupted this thread holding the lock) only if the lock is free at once:
 * 0 when it was not.
 */
int threads_end_all(int quick)
{
	struct cbn_rec_thread r;
	struct timespec ts;
	clockid_t cid;
	int i;

	if (!quick)
		pthread_mutex_lock(&threads_lock);
	else if (pthread_mutex_trylock(&threads_lock) != 0)
		return 0;
	for (i = 0; i < threads_n; i++) {
		memset(&r, 0, sizeof(r));
		r.h.type = CBN_REC_THREAD_END;
		r.h.size = sizeof(r);
		r.ts = agent_now();
		r.tid = threads_tab[i].tid;
		if (pthread_getcpuclockid(threads_tab[i].th, &cid) == 0 &&
		    clock_gettime(cid, &ts) == 0)
			r.cpu_ns = cbn_ts_ns(&ts);
		r.cpu_ns = r.cpu_ns > threads_tab[i].cpu0 ? r.cpu_ns - threads_tab[i].cpu0 : 0;
		agent_event(&r, sizeof(r));
	}
	threads_n = 0;
	pthread_mutex_unlock(&threads_lock);
	agent_tls.ended = 1;
	return 1;
}

/*
 * fn on every live thread, under the table's lock: a thread unregisters (at its
 * end, under the lock) before its TLS goes away, so fn may touch t's atomics.
 * fn must not call back into this file.  Returns the threads visited.
 */
int threads_each(void (*fn)(struct agent_thread *t, uint32_t tid, void *arg), void *arg)
{
	int i, n;

	pthread_mutex_lock(&threads_lock);
	for (i = 0; i < threads_n; i++)
		fn(threads_tab[i].t, threads_tab[i].tid, arg);
	n = threads_n;
	pthread_mutex_unlock(&threads_lock);
	return n;
}

/* Live threads we know of (the caller included when it is registered). */
int threads_count(void)
{
	int n;

	pthread_mutex_lock(&threads_lock);
	n = threads_n;
	pthread_mutex_unlock(&threads_lock);
	return n;
}

/* In a forked child only the calling thread survives. */
void threads_after_fork_child(void)
{
	pthread_mutex_init(&threads_lock, NULL);
	threads_n = 0;
	atomic_store(&agent.program_others, 0);
}
