/*
 * sigpath.h — everything that runs in the sampling signal handler, and nothing
 * else.  Every function listed here is ASYNC-SIGNAL-SAFE: no malloc, no
 * stdio, no dlsym, no lock the program or another handler can hold while
 * waiting for us, no descriptor kept; errno is saved by the handler's entry.
 * Each is declared in its own file's header, marked SIGNAL-SAFE there, and
 * this header includes them all:
 *
 *   floor.h    agent_syscall, agent_syscall6, agent_sandboxed,
 *              agent_program_alone (inline), agent_is_self, agent_vmread
 *   sampler.h  sampler_entry, sampler_handler, sigpath_active
 *   stacks.h   agent_switch_top (read by sampler_entry)
 *   aside.h    aside_run
 *   timer.h    agent_thread_cpu, timer_is_ours, timer_sigqueue_full,
 *              timer_is_probe, timer_weigh, timer_upgrade,
 *              timer_rearm_signal, timer_slow, timer_disarm (and
 *              timer_remainder, with every signal blocked)
 *   sigwrap.h  sigwrap_chain
 *   sigwrap_watch.h  sigwrap_app_async
 *   capture.h  capture_is_on (inline)
 *   kernel.h   kernel_thread_sample, kernel_thread_unpark
 *   kstacks.h  all of it
 *   unwind_hold.h  unwind_enter, unwind_leave, unwind_generation
 *   unwind.h   unwind_available, unwind_begin, unwind_end,
 *              unwind_backtrace, unwind_place, unwind_has_cfi,
 *              unwind_cursor_init, unwind_cursor_step, unwind_cursor_reg,
 *              unwind_word
 *   unwind_nocfi.h  unwind_recover, unwind_recover_walk
 *   fastwalk.h fastwalk_stack, fastwalk_regs, fastwalk_step, fastwalk_flush,
 *              fastwalk_thread_end
 *   cfi.h      cfi_lookup, cfi_find, cfi_rule_at (pure)
 *   modules.h  modules_snap_iterate, modules_snap_readable,
 *              modules_snap_exec, modules_snap_cfi (and snap_exec_find)
 *   python_find.h  python_read, python_depth
 *   python_table.h  python_code_id
 *   python_walk.h  python_stack, python_stack_for, python_active
 *   python_copy.h  python_copy_ids
 *
 * The writer's signal-safe half is in src/format/writer.h (writer_chunk_new,
 * writer_chunk_retire, writer_reserve, writer_commit, writer_lost,
 * writer_grow_signal).  A function that is not listed here or there, or
 * below, must not be called from the handler; a function declared elsewhere
 * does not claim signal-safety.
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
 *              unwind_window, unwind_overlay, unwind_cursor_init, unwind_cursor_step,
 *              unwind_cursor_reg (the cursor API: unw_init_local2, unw_step,
 *              unw_get_reg), and
 *              the copy's redirected imports and accessors it calls back:
 *              unwind_access_mem, unwind_page_ok, unwind_probe, unwind_read,
 *              unwind_dl_iterate_phdr, unwind_mmap, unwind_munmap,
 *              unwind_tls_get_addr, unwind_getspecific, unwind_setspecific,
 *              and the refusals unwind_malloc, unwind_free, unwind_open,
 *              unwind_stat, unwind_fstat, unwind_pipe2
 *   fastwalk.c fw_thread_get, fw_rule, fw_read, fw_word, fw_step (the handler's own
 *              walk: a raw mmap of the thread's rule tables at its first
 *              sample, reads of the thread's live stack only)
 *   cfi.c      find_fde, read_cie, run, rd_u, rd_uleb, rd_sleb, rd_enc,
 *              enc_size, set_reg (reads of .eh_frame_hdr and .eh_frame,
 *              each bounded by the snapshot's segment that holds them)
 *   unwind_place.c  unwind_place, unwind_place_step, unwind_place_upto,
 *              unwind_place_match, unwind_place_by, place_walk_step (kernel
 *              stacks' placement: the agent's walk, else libunwind's cursor)
 *   unwind_nocfi.c  recover_caller, recover_mark, recover_lookahead, recover_cursor,
 *              recover_ra_ok, recover_call_before (callers past code
 *              without CFI: reads through unwind_word and, of code, only
 *              inside the snapshot's executable segments)
 *   writer.c   writer_do_grow (its in_signal path), round_chunks,
 *              writer_recycle (ring mode)
 *   python_walk.c  py_chain, py_id, py_u64, py_count, py_page_ok, py_addr_ok,
 *              py_frame_ok, py_chunks, py_unread (the Python frames of the
 *              interrupted thread: raw loads of its own chain, each pointer
 *              checked first; docs/agent.md section 17)
 *   python_table.c  py_fresh_add
 *   python_copy.c  py_room, py_copy_one, window_read, and pyread.c's
 *              cbn_py_code_record, cbn_py_code_key, py_code_now, py_str,
 *              rd64, utf8_put (the names of a code object met first:
 *              copies by python_read, through a window on the stack, into
 *              the thread's names chunk)
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

#include "aside.h"
#include "capture.h"
#include "floor.h"
#include "kernel.h"
#include "kstacks.h"
#include "modules.h"
#include "python_copy.h"
#include "python_find.h"
#include "python_table.h"
#include "python_walk.h"
#include "sampler.h"
#include "sigwrap.h"
#include "sigwrap_watch.h"
#include "stacks.h"
#include "timer.h"
#include "unwind.h"
#include "unwind_hold.h"
#include "unwind_nocfi.h"

#endif
