/*
 * agent.h — state shared by the files of the preloaded agent (libcbottleneck.so):
 * the process-wide configuration, the per-thread TLS block the signal handler
 * uses, and the entry points each file offers the others.  Internal only.
 */
#ifndef CBN_AGENT_H
#define CBN_AGENT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "cbn_format.h"
#include "writer.h"

#define AGENT_TLS __attribute__((tls_model("initial-exec")))
#define AGENT_HIDDEN __attribute__((visibility("hidden")))

struct agent {
	struct writer w;                 /* this process image's session file */
	_Atomic int active;              /* 1 once init succeeded (file open, signal ours) */
	int signo;                       /* sampling signal, 0 until chosen */
	int depth;                       /* frames per sample cap */
	int quiet;
	uint32_t pid;                    /* pid the file belongs to */
	uint32_t exec_seq;
	uint64_t period_ns;
	uint64_t file_max;               /* bytes */
	int forked_child;                /* see cbn_agent_forked_child() */
	int not_preloaded;               /* loaded by dlopen: stays inert */
	pthread_t main_thread;
	char session[4096];
	char exe[1024];
};

extern struct agent agent AGENT_HIDDEN;

/* Per-thread state.  Initial-exec TLS: the handler reaches it without calling
 * __tls_get_addr (which may malloc). */
struct agent_thread {
	struct cbn_chunk_header *chunk;  /* current SAMPLES chunk, or NULL */
	uint32_t tid;                    /* 0: thread unknown to the agent */
	uint32_t pid;                    /* pid when armed; != agent.pid: foreign */
	int ready;                       /* libunwind warmed up in this thread */
	int in_handler;                  /* inside the sampling handler */
	int in_agent;                    /* cbn_agent_enter nesting: samples counted REENTRANT */
	int no_unwind;                   /* loader work in progress: PC-only samples */
	int armed;                       /* timer exists */
	int paused;                      /* timer deleted around an exec */
	int ended;                       /* THREAD_END written */
	timer_t timer;
	uint64_t cpu0;                   /* thread CPU time spent before this image */
	struct range_stack *ranges;      /* annotation ranges (ranges.c), heap */
};

extern __thread struct agent_thread agent_tls AGENT_TLS AGENT_HIDDEN;

/* agent.c */
uint64_t agent_now(void) AGENT_HIDDEN;
void *agent_real(const char *name) AGENT_HIDDEN;
int agent_event(const void *rec, size_t size) AGENT_HIDDEN;
void agent_disable(const char *why) AGENT_HIDDEN;
uint32_t agent_gettid(void) AGENT_HIDDEN;
void agent_bg_ensure(void) AGENT_HIDDEN;
int agent_loader_ok(void) AGENT_HIDDEN;
int agent_thread_name(uint32_t tid, char name[CBN_NAME_MAX]) AGENT_HIDDEN;

/* unwind.c: libunwind, dlopened RTLD_LOCAL.  unwind_backtrace is NULL when
 * libunwind could not be loaded (samples are then PC-only). */
extern int (*unwind_backtrace)(void **buf, int size) AGENT_HIDDEN;
int unwind_init(void) AGENT_HIDDEN;
void unwind_warm(void) AGENT_HIDDEN;
int unwind_begin(void) AGENT_HIDDEN;
void unwind_end(void) AGENT_HIDDEN;
void unwind_quiesce(void) AGENT_HIDDEN;
void unwind_release(void) AGENT_HIDDEN;
void unwind_after_fork_child(void) AGENT_HIDDEN;

/* sampler.c: signal handler and per-thread timers. */
void sampler_handler(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;
int sampler_thread_begin(void) AGENT_HIDDEN;
void sampler_thread_end(void) AGENT_HIDDEN;
void sampler_pause(void) AGENT_HIDDEN;
void sampler_resume(void) AGENT_HIDDEN;
void sampler_set_ldso(uint64_t lo, uint64_t hi) AGENT_HIDDEN;
void sampler_set_self(uint64_t lo, uint64_t hi) AGENT_HIDDEN;
int sampler_is_ours(const siginfo_t *si) AGENT_HIDDEN;

/* threads.c: pthread interposers and the live-thread table. */
int threads_init(void) AGENT_HIDDEN;
void threads_register(pthread_t th, uint32_t tid, uint64_t cpu0) AGENT_HIDDEN;
void threads_unregister(pthread_t th) AGENT_HIDDEN;
void threads_end_all(void) AGENT_HIDDEN;
void threads_after_fork_child(void) AGENT_HIDDEN;
int threads_count(void) AGENT_HIDDEN;
extern int threads_self_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *)
	AGENT_HIDDEN;
int threads_create_raw(pthread_t *th, void *(*fn)(void *), void *arg) AGENT_HIDDEN;

/* sigwrap.c: sigaction/signal/sigmask interposers, choice of signal. */
int sigwrap_install(void) AGENT_HIDDEN;
void sigwrap_chain(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;
int sigwrap_unblock(void) AGENT_HIDDEN;
int sigwrap_before_exec(void) AGENT_HIDDEN;
void sigwrap_exec_failed(int changed) AGENT_HIDDEN;
void sigwrap_after_fork_child(void) AGENT_HIDDEN;
int sigwrap_app_blocked(void) AGENT_HIDDEN;
void sigwrap_set_app_blocked(int blocked) AGENT_HIDDEN;
int sigwrap_real_sigmask(int how, const sigset_t *set, sigset_t *old) AGENT_HIDDEN;

/* modules.c: module map, dlopen/dlclose. */
int modules_init(void) AGENT_HIDDEN;
void modules_scan(int force) AGENT_HIDDEN;
int modules_pending(void) AGENT_HIDDEN;
void modules_lock(void) AGENT_HIDDEN;
void modules_unlock(void) AGENT_HIDDEN;
void modules_after_fork_child(void) AGENT_HIDDEN;
int modules_have(const char *basename_prefix) AGENT_HIDDEN;

/* nvtx.c */
void nvtx_thread_end(void) AGENT_HIDDEN;
void nvtx_after_fork_child(void) AGENT_HIDDEN;

/* ranges.c */
void ranges_thread_end(void) AGENT_HIDDEN;
int ranges_write(uint16_t kind, uint16_t source, uint64_t start, uint64_t end, uint32_t tid,
		 uint32_t depth, const char *domain, const char *name) AGENT_HIDDEN;

#endif
