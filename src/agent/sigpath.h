/*
 * sigpath.h — everything that runs in the sampling signal handler, and nothing
 * else.  Every function declared here is ASYNC-SIGNAL-SAFE: no malloc, no
 * stdio, no dlsym, no lock the program or another handler can hold while
 * waiting for us, no descriptor kept; errno is saved by the handler's entry.
 * The writer's signal-safe half is in src/format/writer.h (writer_chunk_new,
 * writer_chunk_retire, writer_reserve, writer_commit, writer_lost,
 * writer_grow_signal).  A function
 * that is not declared here or there, or listed below, must not be called from
 * the handler; a function declared elsewhere does not claim signal-safety.
 *
 * The call graph from sampler_entry (checked with gcc -fcallgraph-info; the
 * file-local helpers it reaches, which no header can declare):
 *
 *   sampler.c  sample_take, sample_admit, sample_sampler, sample_reserve,
 *              sample_why, sample_unwind, sample_frames, sample_kstacks,
 *              sample_commit, sample_now, sampler_drain, sampler_park, sampler_unpark
 *   timer.c    timer_period, timer_posix, timer_perf,
 *              timer_perf_open, timer_perf_failed, timer_perf_why,
 *              timer_refusal_final, timer_thread_sys, cbn_ts_ns
 *   kernel.c   kernel_thread_arm, kernel_off, kernel_why, kernel_thread_park,
 *              kernel_open, kernel_open_aside
 *   aside.c    aside_thread (in the transient thread)
 *   kstacks.c  kstacks_open, kstacks_drain, kstacks_pending, kstacks_parse,
 *              kstacks_parse_placed, kstacks_callchain, kstacks_user_read,
 *              kstacks_place, kstacks_add, kstacks_places_write, ring_copy
 *              (kstacks.h: all of it is signal-safe)
 *   sigwrap.c  sigwrap_owned, sigwrap_app, sigbit, sigwrap_oneshot_running
 *              (then the program's own handler, with sigpath_active()
 *              false: not ours to judge)
 *   unwind.c   unwind_flush_thread (libunwind's trace-cache destructor),
 *              unwind_place, unwind_place_step, unwind_place_upto,
 *              unwind_place_match (the
 *              cursor API: unw_init_local2, unw_step, unw_get_reg), and
 *              the copy's redirected imports and accessors it calls back:
 *              unwind_access_mem, unwind_page_ok, unwind_probe, unwind_read,
 *              unwind_dl_iterate_phdr, unwind_mmap, unwind_munmap,
 *              unwind_tls_get_addr, unwind_getspecific, unwind_setspecific,
 *              and the refusals unwind_malloc, unwind_free, unwind_open,
 *              unwind_stat, unwind_fstat, unwind_pipe2
 *   writer.c   writer_do_grow (its in_signal path), round_chunks,
 *              writer_recycle (ring mode)
 *   unwind_hold.c  unwind_enter, unwind_leave, unwind_generation
 *              (unwind_hold.h: the count fork and dlclose wait for)
 *   python_walk.c  py_chain, py_id, py_u64, py_count, py_page_ok, py_addr_ok,
 *              py_frame_ok, py_chunks, py_unread (the Python frames of the
 *              interrupted thread: raw loads of its own chain, each pointer
 *              checked first; docs/agent.md section 17)
 *   python_table.c  python_code_id, py_fresh_add (a code object's id)
 *   python_copy.c  py_room, py_copy_one, and pyread.c's cbn_py_code_record,
 *              cbn_py_code_key, py_code_now, py_str, rd64, utf8_put (the
 *              names of a code object met first: copies by python_read,
 *              python_find.c, into the thread's names chunk)
 *   floor.c    agent_vmread, agent_is_self, agent_sandboxed and
 *              agent_syscall (inline: agent.h)
 *
 * Outside our code the handler calls only: system calls (raw, agent_syscall;
 * glibc's clone() wrapper, aside.c;
 * clock_gettime through the vDSO, sigaction, fcntl, madvise; open, fstat and
 * close only to grow the file on kernels before 5.14), the pure libc helpers
 * memset, memmove, memcpy, sig{empty,fill,add,ismember,isempty}set and
 * __errno_location, pthread_getspecific (Python's thread-state key: glibc reads
 * the calling thread's key array, no lock, no allocation; not on POSIX's
 * async-signal-safe list, so named here), the system calls process_vm_readv
 * (reads of our own memory that fail instead of faulting) and rt_sigprocmask
 * with an invalid how (a probe that a page is mapped: it changes no mask), and the private libunwind's
 * unw_backtrace (and, for samples
 * that carry kernel stacks, its unw_init_local2, unw_step and unw_get_reg).  The copy binds
 * RTLD_DEEPBIND to libc, so its own calls never reach our interposers; in the
 * unwind path they are memcpy/memset, sigfillset, sigprocmask and
 * pthread_once, plus pthread_mutex_lock/unlock of its own locks (below).
 *
 * Locks the handler can take, none of which the program can hold:
 *   - the private libunwind's mutexes (rs cache, mempools, its init lock), on
 *     a trace-cache miss: taken only by the agent, always with every signal
 *     blocked first (libunwind's lock_acquire), and never held while waiting
 *     for anything else (docs/agent.md section 5);
 *   - sigwrap's app_spin, for a struct copy, held with every signal blocked;
 *   - writer.growing, a try-lock: waited for (yielding, about a millisecond
 *     at most) only while another thread holds it, never its own thread.
 *
 * The agent is linked with -z now, so no lazy PLT resolution (ld.so's
 * _dl_fixup) happens in the handler either.
 *
 * unwind_tls_get_addr answers for libunwind's own TLS block only; any other
 * module would go to ld.so's __tls_get_addr, which may allocate (never seen
 * with libunwind 1.6, whose one block is ours).
 *
 * The check: tests/agent builds a copy of the agent with sigcheck.c
 * (CMake option CBN_SIGPATH_CHECK, on by default) that interposes malloc,
 * calloc, realloc, free and pthread_mutex_lock and aborts when one runs while
 * sigpath_active() is true; ctest agent.sigpath_check runs a busy
 * multi-threaded program under it at 4 kHz (docs/agent.md section 7).
 */
#ifndef CBN_SIGPATH_H
#define CBN_SIGPATH_H

#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>

#include "agent.h"

/* The handler the kernel calls (an assembly stub in sampler.c): it moves to
 * the thread's agent stack when the kernel ran it on the program's own
 * alternate stack, then calls sampler_handler. */
void sampler_entry(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;
void sampler_handler(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/*
 * Top of the agent stack to move to, or 0 when the handler already runs on it
 * (the kernel altstack is ours); read by sampler_entry with a plain load.  It
 * must always agree with the kernel's alternate stack (moving to the top of
 * the stack the kernel just put its frame on would overwrite that frame), so
 * stacks.c changes the two together with every signal blocked, or before the
 * thread's sampler is armed.
 */
extern __thread _Atomic uintptr_t agent_switch_top AGENT_TLS AGENT_HIDDEN;

/* 1 while this thread runs the agent's part of sampler_handler: not inside the
 * program's handler that sigwrap_chain calls (for the CBN_SIGPATH_CHECK
 * build; agent_tls.in_sigpath, written by the handler only). */
int sigpath_active(void) AGENT_HIDDEN;

/* aside.c: fn(arg) in a transient thread with a descriptor table of its own
 * (clone without CLONE_FILES, vfork-style), unless the process has no other
 * thread of the program's (threads_program_alone, an atomic count kept by
 * threads.c).  Returns fn's result, or -errno when the thread could not be
 * made. */
int aside_run(int (*fn)(void *), void *arg) AGENT_HIDDEN;
int threads_program_alone(void) AGENT_HIDDEN;

/* timer.c: the calling thread's CPU time, ns (a plain system call). */
uint64_t agent_thread_cpu(void) AGENT_HIDDEN;

/* Is this signal one of our samples: our timer's cookie, or the si_fd of the
 * thread's perf event? */
int timer_is_ours(const siginfo_t *si) AGENT_HIDDEN;

/* A kernel SIGIO on a perf-sampled thread: the event's signal could not be
 * queued (RLIMIT_SIGPENDING); the thread moves to a POSIX timer.  1 when
 * the signal was this (taken), 0 when it is the program's. */
int timer_sigqueue_full(struct agent_thread *t, const siginfo_t *si) AGENT_HIDDEN;
/* sigwrap.c: the program asked for SIGIO of its own (O_ASYNC, F_SETSIG). */
int sigwrap_app_async(void) AGENT_HIDDEN;

/* The probe timer_sigqueue_full queues to tell (one of ours: ignored). */
int timer_is_probe(const siginfo_t *si) AGENT_HIDDEN;

/* Normal context, signals blocked: the CPU since the thread's last sample at
 * its end, in periods, the fraction drawn (sampler.c's end sample). */
uint32_t timer_remainder(struct agent_thread *t, uint32_t *kernel) AGENT_HIDDEN;

/* Weight of this sample in periods, and how many of them the thread spent in
 * the kernel, from the thread's CPU clock and rusage (raw syscalls). */
void timer_weigh(struct agent_thread *t, uint32_t *weight, uint32_t *kernel) AGENT_HIDDEN;

/* A thread started on a POSIX timer (cheap to create and delete, for threads
 * that never run a full period) moves to a perf event at its first sample. */
void timer_upgrade(struct agent_thread *t) AGENT_HIDDEN;

/* Re-arm this thread's sampler on the current agent.signo after the signal
 * moved (raw syscalls only). */
void timer_rearm_signal(struct agent_thread *t, const ucontext_t *uc) AGENT_HIDDEN;

/* Move the thread's sampler to the park period (slow 1: outside a capture
 * window) or back (0), on the same kind of sampler (raw syscalls; a perf
 * event is opened again, aside; the CPU clocks restart).  0 or -errno. */
int timer_slow(struct agent_thread *t, int slow) AGENT_HIDDEN;

/* Stop the thread's sampler (raw syscalls; the handler calls it when the
 * sampling signal moved, and when the park period replaces a perf event). */
void timer_disarm(struct agent_thread *t) AGENT_HIDDEN;

/* The program's disposition for a signal we own that is not one of our samples. */
void sigwrap_chain(int sig, siginfo_t *si, void *uc) AGENT_HIDDEN;

/* kernel.c: at the thread's first sample, open its kernel-stack event (when
 * its sampler is a perf event); at the next ones, drain the kernel stacks
 * sampled since into out (at most cap bytes).  Returns the bytes written, 0
 * for none; *ksamples: the kernel time those samples (kept or lost) stand for,
 * in periods of the sampler (at most weight), UINT32_MAX when the thread had
 * no kernel event over that time.
 * weight: the sample's periods of CPU; a thread whose event saw no kernel
 * mode over CBN_KSTACK_PARK_NS of them closes it (parks), and
 * kernel_thread_unpark opens it again (the sampler calls it when a parked
 * thread's system time grew).  kstacks.c (kstacks.h) is signal-safe
 * throughout. */
size_t kernel_thread_sample(struct agent_thread *t, struct kstacks_placer *pl,
			    struct cbn_kstacks *out, size_t cap, uint32_t weight,
			    uint32_t *ksamples) AGENT_HIDDEN;
void kernel_thread_unpark(struct agent_thread *t) AGENT_HIDDEN;

/* unwind.c: the private libunwind.  unwind_begin returns 1 when the caller may
 * unwind (then it must call unwind_end), 0 while unwinding is held (fork,
 * dlclose); unwind_backtrace only between the two.  sp: the stack pointer of
 * the stack about to be unwound when it is this thread's own (the interrupted
 * one in a handler, the current one in normal code), else 0. */
int unwind_available(void) AGENT_HIDDEN;
int unwind_begin(uint64_t sp) AGENT_HIDDEN;
void unwind_end(void) AGENT_HIDDEN;
int unwind_backtrace(void **buf, int size) AGENT_HIDDEN;

/* unwind.c: past code without CFI.  pcs[0..n) a sample's native frames
 * (pcs[0] interrupted in uc); when the last has no unwind information, go
 * on by frame pointer or a bounded stack scan, with CBN_UWM_* marker words.
 * Returns the new count, at most cap.  Between unwind_begin and unwind_end. */
int unwind_recover(const ucontext_t *uc, uint64_t *pcs, int n, int cap) AGENT_HIDDEN;

/*
 * unwind.c, between unwind_begin and unwind_end: a kstacks_placer's place()
 * (kstacks.h), for samples that carry kernel stacks.  It unwinds the user
 * stack at the kernel entry (libunwind's cursor from the entry's ip, sp and
 * bp, reading the stack the kernel copied then, the live stack above it) up
 * to a frame that is still live in the interrupted thread's stack, which it
 * unwinds too with each frame's stack pointer, once per sample and only as
 * deep as the entries need; at most CBN_KPLACE_MAX_FRAMES steps per entry and
 * UNWIND_PLACE_DEPTH per sample.  ctx: a struct unwind_place_ctx with
 * ncur = -1 (the rest need not be initialised).
 */
#define UNWIND_PLACE_DEPTH 64
struct unwind_place_ctx {
	const ucontext_t *uc;            /* the interrupted context */
	const uint64_t *pcs;             /* the sample's pcs (sample_frames) */
	int npcs;
	int ncur;                        /* frames below, -1 before the first place() */
	int cdone;                       /* no frame beyond cpc[ncur - 1] */
	uint64_t cpc[UNWIND_PLACE_DEPTH], csp[UNWIND_PLACE_DEPTH];
	/* libunwind's cursor over the interrupted stack, stepped only as far
	 * as the entries' frames need (each step may cost two sigprocmask) */
	_Alignas(16) unsigned char cursor[1024];
};
int unwind_place(void *ctx, const struct kstacks_user *u, uint64_t *pc, uint16_t *drop)
	AGENT_HIDDEN;

/* python_walk.c: the calling thread's Python frames as CBN_PYW words, leaf
 * first (at most max; python_stack_for: the share of a budget of cap frames
 * that Python frames may take, docs/agent.md section 17); 0 when the thread
 * runs no Python or its chain fails a check (counted by reason in
 * header.python).  sp: the bottom of the live part of this thread's stack.
 * python_active: an interpreter is read. */
int python_stack(uint64_t *out, int max, uintptr_t sp) AGENT_HIDDEN;
int python_stack_for(uint64_t *out, int cap, uintptr_t sp) AGENT_HIDDEN;
int python_active(void) AGENT_HIDDEN;
/* python_copy.c: a PY_CODE record for each of ids not yet in this
 * generation's file, into the calling thread's names chunk (python_stack
 * calls it at the end of its walk; normal callers get every signal blocked
 * meanwhile). */
void python_copy_ids(const uint32_t *ids, int n) AGENT_HIDDEN;

/* modules.c: dl_iterate_phdr over the published module snapshot (what our
 * libunwind calls instead of the loader's), and whether a range lies in a
 * readable segment of a known module. */
int modules_snap_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
	AGENT_HIDDEN;
int modules_snap_readable(uintptr_t addr, size_t len) AGENT_HIDDEN;
int modules_snap_exec(uintptr_t addr) AGENT_HIDDEN;

#endif
