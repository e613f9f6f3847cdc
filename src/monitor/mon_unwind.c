/*
 * mon_unwind.c — the stack of a thread of another process, from outside:
 * its registers as far as known (pc and sp, from /proc/PID/task/TID/syscall
 * or a perf sample), a copy of the top of its stack, and the DWARF CFI of
 * the modules it has mapped, walked with elfutils' unwinder (libdwfl, as
 * `perf --call-graph dwarf` does: tools/perf/util/unwind-libdw.c).  Reads
 * beyond the copy go to the process's memory (process_vm_readv: they fail
 * instead of faulting), unless the copy is all there is to read (a running
 * thread's sample: the rest of its stack has moved on since; the walk stops
 * there and says so, mon_unwind_cut).  One Dwfl per process, its modules reported from
 * /proc/PID/maps and again when a pc falls in none of them (a dlopen since).
 * Launcher side only.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mon_int.h"
#include "../format/cbn_time.h"

#define UNW_REPORT_MIN_NS 100000000ull /* modules reported again at most this often */

struct mon_unwind {
	pid_t pid;
	Dwfl *dwfl;
	int attached;
	int arch_fd;                     /* this program's own ELF, for its architecture */
	Elf *arch_elf;
	uint64_t reported_ns;
	/* the walk in progress */
	pid_t tid;
	uint64_t pc, sp, bp;
	const unsigned char *stack;
	uint64_t stack_lo, stack_n;
	int copy_only;                   /* reads past the copy are refused ... */
	int cut;                         /* ... and the last walk met one */
};

static char *unw_debuginfo_path;
static const Dwfl_Callbacks unw_proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &unw_debuginfo_path,
};

static pid_t unw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct mon_unwind *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->tid;
}

static bool unw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct mon_unwind *u = arg;

	(void)dwfl;
	if (tid != u->tid)
		return false;
	*thread_argp = u;
	return true;
}

static bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct mon_unwind *u = arg;
	struct iovec local = {result, sizeof(*result)}, remote = {(void *)(uintptr_t)addr,
								 sizeof(*result)};

	(void)dwfl;
	if (addr >= u->stack_lo && addr + sizeof(*result) <= u->stack_lo + u->stack_n &&
	    addr + sizeof(*result) > addr) {
		memcpy(result, u->stack + (addr - u->stack_lo), sizeof(*result));
		return true;
	}
	if (u->copy_only && u->stack) {
		u->cut = 1;
		return false;
	}
	return process_vm_readv(u->pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof(*result);
}

/* x86-64 DWARF registers: rbp 6, rsp 7; the pc apart. */
static bool unw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct mon_unwind *u = arg;
	Dwarf_Word sp = u->sp, bp = u->bp;

	if (!dwfl_thread_state_registers(thread, 7, 1, &sp))
		return false;
	if (bp && !dwfl_thread_state_registers(thread, 6, 1, &bp))
		return false;
	dwfl_thread_state_register_pc(thread, u->pc);
	return true;
}

static const Dwfl_Thread_Callbacks unw_thread_callbacks = {
	.next_thread = unw_next_thread,
	.get_thread = unw_get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = unw_set_initial_registers,
};

/* (Re)build the process's module list; the state is attached once. */
static int unw_report(struct mon_unwind *u)
{
	if (!u->dwfl) {
		u->dwfl = dwfl_begin(&unw_proc_callbacks);
		if (!u->dwfl)
			return -1;
	}
	dwfl_report_begin(u->dwfl);
	if (dwfl_linux_proc_report(u->dwfl, u->pid) != 0) {
		dwfl_report_end(u->dwfl, NULL, NULL);
		return -1;
	}
	if (dwfl_report_end(u->dwfl, NULL, NULL) != 0)
		return -1;
	u->reported_ns = cbn_clock_ns(CLOCK_MONOTONIC);
	if (!u->attached) {
		if (!u->arch_elf || !dwfl_attach_state(u->dwfl, u->arch_elf, u->pid,
						       &unw_thread_callbacks, u))
			return -1;
		u->attached = 1;
	}
	return 0;
}

struct mon_unwind *mon_unwind_open(pid_t pid)
{
	struct mon_unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pid = pid;
	/* The architecture is this program's own (x86-64, as every process it
	 * reads), not libdwfl's guess from the first module of the list: in a
	 * process in the middle of execve that may be a file read half-way,
	 * and a wrong guess aborts in libdwfl (state_alloc's assertion on the
	 * register count). */
	elf_version(EV_CURRENT);
	u->arch_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	u->arch_elf = u->arch_fd >= 0 ? elf_begin(u->arch_fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (unw_report(u) < 0) {
		mon_unwind_close(u);
		return NULL;
	}
	return u;
}

void mon_unwind_close(struct mon_unwind *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	if (u->arch_elf)
		elf_end(u->arch_elf);
	if (u->arch_fd >= 0)
		close(u->arch_fd);
	free(u);
}

struct unw_walk {
	uint64_t *out;
	int n, max;
	uint64_t prev_sp;
	int outside;                     /* a pc in no module: the list is old */
	struct mon_unwind *u;
};

static int unw_frame(Dwfl_Frame *frame, void *arg)
{
	struct unw_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	if (!dwfl_addrmodule(w->u->dwfl, activation ? pc : pc - 1))
		w->outside = 1;
	w->out[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/*
 * Thread tid of the process, at pc with stack pointer sp (and frame pointer
 * bp, 0 when unknown), n bytes of its stack copied from sp into stack.
 * out[0] = pc, then return addresses; returns how many (0: none).
 */
int mon_unwind_stack(struct mon_unwind *u, pid_t tid, uint64_t pc, uint64_t sp, uint64_t bp,
		     const void *stack, size_t n, uint64_t *out, int max)
{
	struct unw_walk w = {out, 0, max, 0, 0, u};
	int again;

	if (!u || max <= 0)
		return 0;
	for (again = 0; again < 2; again++) {
		u->tid = tid;
		u->pc = pc;
		u->sp = sp;
		u->bp = bp;
		u->stack = stack;
		u->stack_lo = sp;
		u->stack_n = n;
		u->cut = 0;
		w.n = 0;
		w.outside = 0;
		dwfl_getthread_frames(u->dwfl, tid, unw_frame, &w);
		u->stack = NULL;
		/* A frame in a module loaded since: report them again, once. */
		if (!w.outside || again ||
		    cbn_clock_ns(CLOCK_MONOTONIC) - u->reported_ns < UNW_REPORT_MIN_NS ||
		    unw_report(u) < 0)
			break;
	}
	return w.n;
}

void mon_unwind_copy_only(struct mon_unwind *u, int on)
{
	if (u)
		u->copy_only = on;
}

int mon_unwind_cut(const struct mon_unwind *u)
{
	return u && u->cut;
}

int mon_unwind_module(struct mon_unwind *u, uint64_t pc, const char **path, uint64_t *bias,
		      const unsigned char **id, int *id_len)
{
	Dwfl_Module *m = u && u->dwfl ? dwfl_addrmodule(u->dwfl, pc) : NULL;
	const unsigned char *bits = NULL;
	GElf_Addr b = 0, id_at;
	const char *name;
	int n;

	if (!m)
		return -1;
	name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!name || !dwfl_module_getelf(m, &b))
		return -1;
	n = dwfl_module_build_id(m, &bits, &id_at);
	*path = name;
	*bias = b;
	*id = n > 0 ? bits : NULL;
	*id_len = n > 0 ? n : 0;
	return 0;
}
