/*
 * unwind.c — the agent's private libunwind.  A copy of libunwind.so.8 with its
 * SONAME renamed and every definition hidden (unwind_copy.c) is the agent's
 * DT_NEEDED, mapped by the loader at start-up, so its state and locks belong
 * to the agent alone: a program that uses libunwind itself gets its own
 * instance, untouched (sampler-safety.md §1–2), and nothing resolves to ours.
 * Its imports are bound here to libc's definitions (not a program's), and a
 * few redirected, in its GOT, to versions that are safe in a signal handler
 * and visible to nobody:
 *
 *   dl_iterate_phdr  -> the agent's module snapshot (no loader lock)
 *   pipe2            -> refused: no memory-validation pipe, ever (libunwind #274)
 *   mmap, munmap     -> raw syscalls, with trace-cache blocks recycled
 *   __tls_get_addr   -> a block inside the agent's initial-exec TLS (no malloc,
 *                       no DTV update in the handler)
 *   pthread_key_create, pthread_getspecific, pthread_setspecific
 *                    -> one slot in the same TLS (no malloc for high keys)
 *   open, stat, fstat, malloc, free
 *                    -> refused (only libunwind's proc-name and debug-frame
 *                       paths use them; the agent never takes those)
 *   sigprocmask      -> within an unwind of the agent's, every signal blocked
 *                       once, at libunwind's first request, until the unwind
 *                       ends (unwind_sigprocmask)
 *
 * and the local address space's access_mem is replaced, so the reads libunwind
 * asks to validate are checked without a descriptor.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <libunwind.h>

#include "floor.h"
#include "modules.h"
#include "unwind.h"
#include "unwind_hold.h"
#include "elfsym.h"
#include "fastwalk.h"

/* glibc's argument to __tls_get_addr (x86-64 psABI). */
struct unwind_tls_index {
	unsigned long ti_module;
	unsigned long ti_offset;
};

static int (*unw_bt)(void **buf, int size);
/* The cursor API, for kernel stacks' placement only (unwind_place). */
static int (*unw_init2)(unw_cursor_t *c, unw_context_t *uc, int flag);
static int (*unw_stp)(unw_cursor_t *c);
static int (*unw_greg)(unw_cursor_t *c, unw_regnum_t r, unw_word_t *v);
/* Whether a pc has CFI (unwind_recover). */
static int (*unw_pinfo)(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, void *arg);
static unw_addr_space_t unw_as;
static uintptr_t copy_lo, copy_hi;        /* text of our copy */
static unsigned long unw_modid;           /* its TLS module id (0: the copy has no PT_TLS,
					  * unwind_copy.c) */
static void (*unw_key_dtor)(void *);
static int unw_key_taken;
static void *(*real_tls_get_addr)(struct unwind_tls_index *);

/* --- replacements for the copy's imports --------------------------------- */

static int unwind_pipe2(int fds[2], int flags)
{
	(void)flags;
	fds[0] = fds[1] = -1;
	errno = EMFILE;
	return -1;
}

static int unwind_open(const char *path, int flags, ...)
{
	(void)path;
	(void)flags;
	errno = EACCES;
	return -1;
}

static int unwind_stat(const char *path, void *st)
{
	(void)path;
	(void)st;
	errno = EACCES;
	return -1;
}

static int unwind_fstat(int fd, void *st)
{
	(void)fd;
	(void)st;
	errno = EBADF;
	return -1;
}

static void *unwind_malloc(size_t n)
{
	(void)n;
	errno = ENOMEM;
	return NULL;
}

static void unwind_free(void *p)
{
	(void)p;
}

/*
 * Trace caches: libunwind maps one per thread on its first backtrace (2^14
 * frames, more once it grows) and unmaps it at thread end.  Blocks are kept
 * for the next thread: page faults are most of the cost of a thread's first
 * sample.  Lock-free slots, usable from the handler (any thread).  A slot is
 * reserved (POOL_BUSY) before its length is written and the block published
 * with a release store, so a taker that sees a block also sees its length;
 * without the reservation two threads could fill one slot's length and the
 * block of the other, and a larger cache be given a smaller block.
 */
#define UNWIND_POOL 16
#define UNWIND_POOL_MIN (64u << 10)
#define POOL_BUSY ((void *)1)
static _Atomic(void *) pool_block[UNWIND_POOL];
static _Atomic size_t pool_len[UNWIND_POOL];

static void *unwind_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r;
	int i;

	if (!addr && fd < 0 && (flags & MAP_ANONYMOUS) && len >= UNWIND_POOL_MIN) {
		for (i = 0; i < UNWIND_POOL; i++) {
			void *b = atomic_load_explicit(&pool_block[i], memory_order_acquire);

			if (b && b != POOL_BUSY &&
			    atomic_load_explicit(&pool_len[i], memory_order_relaxed) == len &&
			    atomic_compare_exchange_strong(&pool_block[i], &b, NULL))
				return b;
		}
	}
	r = agent_syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	return r < 0 && r > -4096 ? MAP_FAILED : (void *)r;
}

static int unwind_munmap(void *addr, size_t len)
{
	int i;

	if (len >= UNWIND_POOL_MIN) {
		for (i = 0; i < UNWIND_POOL; i++) {
			void *none = NULL;

			if (!atomic_compare_exchange_strong(&pool_block[i], &none, POOL_BUSY))
				continue;
			atomic_store_explicit(&pool_len[i], len, memory_order_relaxed);
			atomic_store_explicit(&pool_block[i], addr, memory_order_release);
			return 0;
		}
	}
	return (int)agent_syscall(SYS_munmap, addr, len);
}

static void *unwind_tls_get_addr(struct unwind_tls_index *ti)
{
	if (ti->ti_module == unw_modid && ti->ti_offset + sizeof(void *) <= AGENT_UNW_TLS)
		return agent_tls.unw_tls + ti->ti_offset;
	/* Not libunwind's own block (never seen with 1.6): the real one. */
	return real_tls_get_addr(ti);
}

static int unwind_key_create(pthread_key_t *key, void (*dtor)(void *))
{
	if (unw_key_taken)
		return EAGAIN;
	unw_key_taken = 1;
	unw_key_dtor = dtor;
	*key = 0;
	return 0;
}

static void *unwind_getspecific(pthread_key_t key)
{
	(void)key;
	return agent_tls.unw_key_val;
}

static int unwind_setspecific(pthread_key_t key, const void *v)
{
	(void)key;
	agent_tls.unw_key_val = (void *)v;
	return 0;
}

/*
 * libunwind blocks every signal around each of its locked sections and each
 * walk of the module list: two system calls each, and a sample that misses
 * the trace cache makes a dozen of them (~1 us each in a VM: most of a deep
 * sample's cost).  Within an unwind of the agent's (unwind_begin to
 * unwind_end) the first request blocks every signal for real and the rest
 * are answered without a system call: the thread stays blocked until
 * unwind_end restores the mask the first one found, which covers every
 * window libunwind asked for.  Outside one (start-up, a thread's end), the
 * real call.  SIGNAL-SAFE.
 */
static int unwind_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	struct agent_thread *t = &agent_tls;
	sigset_t all;

	if (t->unw_depth <= 0) {
		if (agent_syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) != 0)
			return -1;
		return 0;
	}
	_Static_assert(sizeof(t->unw_saved_mask) == _NSIG / 8, "the kernel's sigset");
	if (!t->unw_masked) {
		sigfillset(&all);
		if (agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &t->unw_saved_mask,
				  _NSIG / 8) != 0)
			return -1;
		/* the depth it belongs to: a handler's unwind nested in a
		 * normal one (before that one blocked anything) restores it
		 * at its own end, not the outer one's */
		t->unw_masked = (int16_t)t->unw_depth;
	}
	if (old)
		sigfillset(old); /* what libunwind restores to: the blocked mask */
	return 0;
}

static int unwind_dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	return modules_snap_iterate(cb, data);
}

/* The page-probe of gperftools' check_address: rt_sigprocmask reads the
 * "new set" from addr first and fails with EFAULT if it cannot, else with
 * EINVAL for the invalid how.  No descriptor, no state. */
static int unwind_probe(uintptr_t page)
{
	long r = agent_syscall(SYS_rt_sigprocmask, ~0, (void *)page, NULL, 8);

	return !(r < 0 && errno == EFAULT);
}

/*
 * 2: page lies in memory nobody unmaps under us (the handler's own stack,
 * the live part of the unwound thread's own stack, a module of the
 * snapshot: dlclose waits for unwinding to end), read it
 * directly; 1: some other mapped page (the program's stacks, heap, an
 * anonymous mapping), which another thread may munmap between this check and
 * the read, so it is read with process_vm_readv (unwind_read); 0: unmapped.
 * Only direct pages are cached.
 */
static int unwind_page_ok(uintptr_t page)
{
	struct agent_thread *t = &agent_tls;
	int i, e;

	if (!page)
		return 0;
	if (t->live_lo <= page && page < t->live_hi)
		return 2;
	for (i = 0; i < t->nvalid; i++)
		if (t->valid_page[i] == page)
			return 2;
	if (!((uintptr_t)t->stack_lo <= page && page < (uintptr_t)t->stack_hi) &&
	    !modules_snap_readable(page, 4096)) {
		e = errno;
		i = unwind_probe(page);
		errno = e;
		return i ? 1 : 0;
	}
	t->valid_page[t->nvalid < 4 ? t->nvalid++ : 3] = page;
	return 2;
}

/* process_vm_readv refused (seccomp, an old kernel): probe and read. */
static _Atomic int unwind_no_vmread;

/*
 * Read 8 bytes that may be unmapped at any moment (a checked page of kind 1):
 * process_vm_readv on our own pid fails with EFAULT instead of faulting.
 * Seen without it: a kernel-stack placement read a page a thread of
 * tests/hostile's mem_forkexec had just munmapped (SIGSEGV, 1 run in 5).
 * SIGNAL-SAFE (one system call, errno saved).
 */
static int unwind_read(uintptr_t addr, unw_word_t *val)
{
	struct iovec local = {val, 8}, remote = {(void *)addr, 8};
	uint32_t pid = agent_tls.pid ? agent_tls.pid : agent.pid;
	int e = errno;
	long r;

	if (atomic_load_explicit(&unwind_no_vmread, memory_order_relaxed) || !pid) {
		*val = *(unw_word_t *)addr;
		return 0;
	}
	r = agent_syscall(SYS_process_vm_readv, (long)pid, &local, 1UL, &remote, 1UL, 0UL);
	if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
		atomic_store_explicit(&unwind_no_vmread, 1, memory_order_relaxed);
		errno = e;
		*val = *(unw_word_t *)addr;
		return 0;
	}
	errno = e;
	return r == 8 ? 0 : -1;
}

/*
 * The local address space's access_mem.  Every read is validated, not only
 * those libunwind marks (bit 0 of arg, x86-64 AS_ARG_VALIDATE_MASK, set for
 * signal frames): a sample can land where the registers do not match the
 * unwind tables — inside a setcontext or longjmp that is switching stacks,
 * hand-written assembly, a JIT — and the step from there computes garbage
 * addresses (0xfffffffffffffde0 was seen, interrupting libunwind's own
 * _Ux86_64_setcontext under a C++ throw).  The thread's stack and pages
 * already checked in this sample cost a compare.  SIGNAL-SAFE.
 */
/* While unwind_place unwinds the user stack at a kernel entry: the copy of
 * that stack the kernel took then, read instead of the live one (whose
 * frames may have returned and been overwritten since); while an unwind of
 * a stack not the thread's own runs: unwind_window's copy of it. */
static __thread const unsigned char *ovl_data AGENT_TLS;

/* How far above unwind_access_mem's frame libunwind's own context may lie
 * (unw_backtrace's frame and the few between: ~3 KiB measured). */
#define UNWIND_SELF_SPAN (16u << 10)
static __thread uintptr_t ovl_lo AGENT_TLS, ovl_hi AGENT_TLS;

static int unwind_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
			     void *arg)
{
	uintptr_t p0 = addr & ~(uintptr_t)4095, p1 = (addr + 7) & ~(uintptr_t)4095;

	(void)as;
	(void)arg;
	if (ovl_data && !write && addr >= ovl_lo && addr < ovl_hi && ovl_hi - addr >= 8) {
		memcpy(val, ovl_data + (addr - ovl_lo), 8);
		return 0;
	}
	int k0 = unwind_page_ok(p0), k1 = p1 != p0 ? unwind_page_ok(p1) : k0;

	if (!k0 || !k1)
		return -1;
	if (k0 == 2 && k1 == 2) {
		if (write)
			*(unw_word_t *)addr = *val;
		else
			*val = *(unw_word_t *)addr;
		return 0;
	}
	if (write) {
		/*
		 * libunwind writes only its own cursor's registers: in local-only
		 * mode they are addresses in the context unw_backtrace keeps in its
		 * frame, a little above this one on the stack we run on (the
		 * program's in normal code: cbn_agent_backtrace).  Refusing that
		 * write made the fast trace give up at its first frame, every
		 * time, and each backtrace fell back to unw_step frame by frame
		 * (two sigprocmask each): ~200 us a sample on a 200-deep stack.
		 */
		uintptr_t here = (uintptr_t)__builtin_frame_address(0);

		if (addr < here || addr - here > UNWIND_SELF_SPAN)
			return -1;
		*(unw_word_t *)addr = *val;
		return 0;
	}
	return unwind_read((uintptr_t)addr, val);
}

/* --- GOT redirection ------------------------------------------------------ */

struct redirect {
	const char *name;
	void *fn;
};

struct relro_find {
	uintptr_t base;
	uintptr_t lo, hi;                /* PT_GNU_RELRO, absolute */
	uintptr_t text_lo, text_hi;
	size_t tls_modid;
};

static int unwind_find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct relro_find *f = arg;
	int i;

	(void)size;
	if (info->dlpi_addr != f->base)
		return 0;
	f->tls_modid = info->dlpi_tls_modid;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_GNU_RELRO) {
			f->lo = a;
			f->hi = a + ph->p_memsz;
		} else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			f->text_lo = a;
			f->text_hi = a + ph->p_memsz;
		}
	}
	return 1;
}

static void unwind_patch_slot(uintptr_t slot, void *fn, const struct relro_find *f)
{
	uintptr_t page = slot & ~(uintptr_t)4095;
	int ro = slot >= f->lo && slot < f->hi;

	if (ro && agent_syscall(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE) != 0)
		return;
	*(void **)slot = fn;
	if (ro)
		agent_syscall(SYS_mprotect, page, 4096, PROT_READ);
}

/*
 * Bind every import of the copy: the redirected ones to the functions above,
 * the others to their definition in libc (or ld.so), as RTLD_DEEPBIND did
 * when the copy was dlopened: a program's own definition of memcpy or
 * pthread_mutex_lock is not what our unwinder calls.  Every slot is filled
 * here, so the handler never enters the loader's lazy resolver (the copy is
 * loaded at start-up, lazily bound).  Returns the redirections made, or -1.
 */
static int unwind_redirect(struct link_map *lm, const struct redirect *rd, int nrd,
			   struct relro_find *f)
{
	struct link_map *libs[2];
	struct elfsym_obj copy, lib[2];
	const ElfW(Rela) *rel[2] = {NULL, NULL};
	size_t relsz[2] = {0, 0};
	const ElfW(Dyn) *d;
	size_t i;
	int k, j, n, nlib = 0, done = 0;

	if (elfsym_open(lm, &copy) != 0)
		return -1;
	libs[0] = elfsym_map_named(lm, "libc.so.6");
	libs[1] = elfsym_map_named(lm, "ld-linux-x86-64.so.2");
	for (k = 0; k < 2; k++)
		if (libs[k] && elfsym_open(libs[k], &lib[nlib]) == 0)
			nlib++;
	for (d = lm->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_JMPREL:
			rel[0] = (const ElfW(Rela) *)elfsym_dptr(lm, d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			relsz[0] = d->d_un.d_val;
			break;
		case DT_RELA:
			rel[1] = (const ElfW(Rela) *)elfsym_dptr(lm, d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relsz[1] = d->d_un.d_val;
			break;
		}
	}
	f->base = lm->l_addr;
	dl_iterate_phdr(unwind_find_cb, f);
	for (k = 0; k < 2; k++) {
		for (i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela)); i++) {
			const ElfW(Rela) *r = &rel[k][i];
			unsigned type = ELF64_R_TYPE(r->r_info);
			size_t si = ELF64_R_SYM(r->r_info);
			const ElfW(Sym) *sym = &copy.symtab[si];
			const char *name = copy.strtab + sym->st_name;
			void *fn = NULL;

			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    sym->st_shndx != SHN_UNDEF)
				continue;
			for (j = 0; j < nrd && !fn; j++)
				if (strcmp(name, rd[j].name) == 0) {
					fn = rd[j].fn;
					done++;
				}
			for (n = 0; n < nlib && !fn; n++)
				fn = elfsym_addr(&lib[n], name, elfsym_import_version(&copy, si), 0);
			if (fn)
				unwind_patch_slot(lm->l_addr + r->r_offset, fn, f);
			else if (ELF64_ST_BIND(sym->st_info) != STB_WEAK)
				return -1;
		}
	}
	return done;
}

/* The copy, which the loader mapped at start-up (the agent's DT_NEEDED). */
static struct link_map *unwind_copy_map(char *why, size_t len)
{
	struct link_map *self = NULL, *lm;
	Dl_info di;

	if (!dladdr1((void *)unwind_copy_map, &di, (void **)&self, RTLD_DL_LINKMAP) || !self) {
		snprintf(why, len, "cannot find the agent in the link map: pc-only samples");
		return NULL;
	}
	lm = elfsym_map_named(self, CBN_UNWIND_COPY);
	if (!lm)
		snprintf(why, len, CBN_UNWIND_COPY " is not loaded: pc-only samples");
	return lm;
}

/*
 * Prepare the unwinder; in the constructor, before any sampler is armed.
 * Returns 0, or -1 with why filled (samples are then PC-only).
 */
int unwind_init(char *why, size_t len)
{
	struct relro_find f = {0, 0, 0, 0, 0, 0};
	unw_accessors_t *(*get_acc)(unw_addr_space_t);
	unw_addr_space_t *as;
	unw_accessors_t *acc;
	struct link_map *lm, *ldso;
	struct elfsym_obj copy, ld;
	struct redirect rd[] = {
		{"dl_iterate_phdr", (void *)unwind_dl_iterate_phdr},
		{"pipe2", (void *)unwind_pipe2},
		{"mmap", (void *)unwind_mmap},
		{"munmap", (void *)unwind_munmap},
		{"__tls_get_addr", (void *)unwind_tls_get_addr},
		{"pthread_key_create", (void *)unwind_key_create},
		{"pthread_getspecific", (void *)unwind_getspecific},
		{"pthread_setspecific", (void *)unwind_setspecific},
		{"open", (void *)unwind_open},
		{"stat", (void *)unwind_stat},
		{"fstat", (void *)unwind_fstat},
		{"malloc", (void *)unwind_malloc},
		{"free", (void *)unwind_free},
		{"sigprocmask", (void *)unwind_sigprocmask},
	};

	if (unw_bt)
		return 0;
	lm = unwind_copy_map(why, len);
	if (!lm)
		return -1;
	ldso = elfsym_map_named(lm, "ld-linux-x86-64.so.2");
	if (ldso && elfsym_open(ldso, &ld) == 0)
		real_tls_get_addr = (void *(*)(struct unwind_tls_index *))elfsym_addr(
			&ld, "__tls_get_addr", NULL, 0);
	if (!real_tls_get_addr || elfsym_open(lm, &copy) != 0 ||
	    unwind_redirect(lm, rd, (int)(sizeof(rd) / sizeof(rd[0])), &f) < 0) {
		snprintf(why, len, "cannot prepare the private libunwind: pc-only samples");
		return -1;
	}
	/* The copy has no PT_TLS (unwind_copy.c): its module id is 0. */
	unw_modid = f.tls_modid;
	copy_lo = f.text_lo;
	copy_hi = f.text_hi;
	/* The copy into the snapshot: backtraces start in it. */
	modules_scan(0);
	get_acc = (unw_accessors_t * (*)(unw_addr_space_t)) elfsym_addr(&copy, "_Ux86_64_get_accessors", NULL, 1);
	as = (unw_addr_space_t *)elfsym_addr(&copy, "_ULx86_64_local_addr_space", NULL, 1);
	unw_bt = (int (*)(void **, int))elfsym_addr(&copy, "unw_backtrace", NULL, 1);
	if (!get_acc || !as || !unw_bt) {
		unw_bt = NULL;
		snprintf(why, len, "libunwind lacks unw_backtrace or its accessors: pc-only samples");
		return -1;
	}
	/* optional: without them kernel stacks sit on the next sample's stack */
	unw_init2 = (int (*)(unw_cursor_t *, unw_context_t *, int))elfsym_addr(&copy, "_ULx86_64_init_local2", NULL, 1);
	unw_stp = (int (*)(unw_cursor_t *))elfsym_addr(&copy, "_ULx86_64_step", NULL, 1);
	unw_greg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))elfsym_addr(&copy, "_ULx86_64_get_reg", NULL, 1);
	if (!unw_init2 || !unw_stp || !unw_greg)
		unw_init2 = NULL;
	unw_pinfo = (int (*)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *))elfsym_addr(
		&copy, "_ULx86_64_get_proc_info_by_ip", NULL, 1);
	unw_as = *as;
	/* get_accessors runs libunwind's one-time init (whose pipe2 is refused). */
	acc = get_acc(*as);
	if (!acc) {
		unw_bt = NULL;
		snprintf(why, len, "libunwind has no local address space: pc-only samples");
		return -1;
	}
	acc->access_mem = unwind_access_mem;
	/*
	 * No warm-up backtrace here: the first one sets up libunwind's trace
	 * cache (pthread_once, a pthread_key_create and mmaps, all redirected
	 * to signal-safe code above) and its mempools (mmap), and took 180 us
	 * of every process's start, most of which never takes a sample (a
	 * shell's children: bench/startup.sh).  The first sample pays it.
	 */
	return 0;
}

int unwind_available(void)
{
	return unw_bt != NULL;
}

int unwind_in_copy(uintptr_t pc)
{
	return pc >= copy_lo && pc < copy_hi;
}

/*
 * Drop this thread's trace cache: what libunwind's key destructor does at
 * thread end (it asks to be called again a few times), then a fresh TLS
 * block so that the next backtrace builds a new cache.  Signal-safe: the
 * cache's memory goes back to the pool (unwind_munmap), its header to
 * libunwind's own mempool (a private lock taken with signals blocked).
 */
static void unwind_flush_thread(void)
{
	int i;

	for (i = 0; i < 4 && agent_tls.unw_key_val && unw_key_dtor; i++) {
		void *v = agent_tls.unw_key_val;

		agent_tls.unw_key_val = NULL;
		unw_key_dtor(v);
	}
	agent_tls.unw_key_val = NULL;
	memset(agent_tls.unw_tls, 0, sizeof(agent_tls.unw_tls));
	fastwalk_flush();
}

/* SIGNAL-SAFE.  1: the caller may unwind and must call unwind_end.  sp (or
 * 0): the stack pointer of this thread's own stack that will be unwound; the
 * pages from it to the top of the thread's stack are read directly (reading
 * them through process_vm_readv, one system call per word, made a sample of
 * a 200-deep stack cost ~1 ms and the program's CPU time with it). */
/*
 * SIGNAL-SAFE.  An unwind of a stack that is not the thread's own (a Go
 * program's goroutine stack, a coroutine's: sp outside [ustk_lo, ustk_hi))
 * read each word through a probe and a process_vm_readv, since another
 * thread may unmap such memory: a Go program's sample of some 30 frames
 * cost ~150 us.  When the unwind runs on the agent's own stack (the
 * sampling handler), the pages from sp up, UNWIND_WINDOW bytes or up to the
 * first that is unmapped, are copied in one process_vm_readv to that
 * stack's bottom, which lies below the handler's frame and the unwinder's
 * headroom, and this unwind reads them there (the overlay; unwind_place's
 * copy of a kernel entry's stack replaces it while that runs).
 */
#define UNWIND_WINDOW (8u << 10)
#define UNWIND_WINDOW_ROOM (24u << 10)   /* the handler's stack kept free above it */

static void unwind_window(struct agent_thread *t, uint64_t sp)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0), lo = (uintptr_t)t->stack_lo, p;
	uint32_t pid = t->pid ? t->pid : agent.pid;
	struct iovec local[UNWIND_WINDOW / 4096 + 1], remote[UNWIND_WINDOW / 4096 + 1];
	unsigned long n = 0;
	size_t want = 0;
	int e = errno;
	long r;

	if (!lo || here < lo || here >= (uintptr_t)t->stack_hi ||
	    here - lo < UNWIND_WINDOW + UNWIND_WINDOW_ROOM || (sp & 7) || !pid ||
	    atomic_load_explicit(&unwind_no_vmread, memory_order_relaxed))
		return;
	/* a piece a page: a read stops at the first page that fails */
	for (p = sp; want < UNWIND_WINDOW; p = (p | 4095) + 1, n++) {
		size_t len = ((p | 4095) + 1) - p;

		if (len > UNWIND_WINDOW - want)
			len = UNWIND_WINDOW - want;
		local[n] = (struct iovec){t->stack_lo + want, len};
		remote[n] = (struct iovec){(void *)p, len};
		want += len;
	}
	r = agent_syscall(SYS_process_vm_readv, (long)pid, local, n, remote, n, 0UL);
	errno = e;
	if (r >= 8)
		unwind_overlay(t->stack_lo, (uintptr_t)sp,
			       (uintptr_t)sp + ((uintptr_t)r & ~(uintptr_t)7));
}

int unwind_begin(uint64_t sp)
{
	struct agent_thread *t = &agent_tls;
	unsigned gen;

	/* Counted (unwind_hold.c): fork and dlclose wait for it. */
	if (!unw_bt || !unwind_enter())
		return 0;
	t->unw_depth++;
	agent_tls.nvalid = 0;
	t->live_lo = t->live_hi = 0;
	if (sp && t->ustk_lo <= sp && sp < t->ustk_hi) {
		t->live_lo = (uintptr_t)sp & ~(uintptr_t)4095;
		t->live_hi = t->ustk_hi;
	} else if (sp && t->unw_depth == 1 && !ovl_data) {
		unwind_window(t, sp);
	}
	/* A library was unloaded since this thread's last unwind: its trace
	 * cache, keyed by address, goes. */
	gen = unwind_generation();
	if (agent_tls.unw_gen != gen) {
		agent_tls.unw_gen = gen;
		unwind_flush_thread();
	}
	return 1;
}

/* unwind_begin for a backtrace of the calling thread in normal context (the
 * CUDA layer's launch stacks, the allocation hooks'), from frame, an address
 * in the caller's frame: the unwinder's own frames and the register context
 * it keeps lie below it on the same stack, and are read directly too (each
 * of those reads was a probe and a process_vm_readv, 2 system calls a launch
 * stack: ~5 us of its ~6.5 us). */
int unwind_begin_here(uintptr_t frame)
{
	struct agent_thread *t = &agent_tls;
	uintptr_t sp = frame > UNWIND_SELF_SPAN ? frame - UNWIND_SELF_SPAN : 0;

	if (sp < t->ustk_lo && frame >= t->ustk_lo)
		sp = t->ustk_lo;
	return unwind_begin(sp);
}

void unwind_end(void)
{
	struct agent_thread *t = &agent_tls;

	t->live_lo = t->live_hi = 0;
	if (t->unw_depth == 1 && ovl_data == (const unsigned char *)t->stack_lo)
		unwind_overlay(NULL, 0, 0); /* unwind_window's */
	if (--t->unw_depth < 0)
		t->unw_depth = 0;
	if (t->unw_masked && t->unw_depth < t->unw_masked) {
		t->unw_masked = 0;
		agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &t->unw_saved_mask, NULL, _NSIG / 8);
	}
	unwind_leave();
}

/* SIGNAL-SAFE between unwind_begin and unwind_end. */
int unwind_backtrace(void **buf, int size)
{
	return unw_bt(buf, size);
}

/* At the end of a thread: free its trace cache. */
void unwind_thread_end(void)
{
	fastwalk_thread_end(); /* first: its tables go, not zeroed */
	unwind_flush_thread();
}

/*
 * The calling thread's frames from its caller on, with each frame's stack
 * pointer: ips[i] is a return address, pushed at sps[i] - 8 (the slot
 * pathcache.c verifies).  unw_step frame by frame, slower than the trace
 * cache (~0.1 us a frame): for a capture that is then cached.  Normal
 * context only.  Returns the frames.
 */
int unwind_backtrace_sp(uint64_t *ips, uintptr_t *sps, int max)
{
	unw_cursor_t cur;
	ucontext_t uc;
	unw_word_t ip, sp;
	volatile int n = 0; /* (getcontext returns here once: no longjmp) */

	if (!unw_init2 || max <= 0 || getcontext(&uc) < 0)
		return 0;
	if (!unwind_begin_here((uintptr_t)__builtin_frame_address(0)))
		return 0;
	agent_tls.in_agent++; /* a sample here would unwind libunwind re-entered */
	if (unw_init2(&cur, (unw_context_t *)&uc, 0) >= 0) {
		while (n < max && unw_stp(&cur) > 0) {
			if (unw_greg(&cur, UNW_REG_IP, &ip) < 0 || !ip ||
			    unw_greg(&cur, UNW_REG_SP, &sp) < 0)
				break;
			ips[n] = ip;
			sps[n] = sp;
			n++;
		}
	}
	agent_tls.in_agent--;
	unwind_end();
	return n;
}

/* SIGNAL-SAFE.  While data is set, reads of [lo, hi) come from it (the
 * kernel's copy of a stack, unwind_place.c); NULL ends it. */
void unwind_overlay(const void *data, uintptr_t lo, uintptr_t hi)
{
	ovl_data = data;
	ovl_lo = lo;
	ovl_hi = hi;
}

/* --- for unwind_nocfi.c: libunwind's cursor and unwind tables -------------- */

/*
 * The answers of unwind_has_cfi, direct-mapped by pc: each entry is the pc
 * (above bit 16), the module snapshot it was given for (bits 1-15 of
 * modules_snap_seq) and the answer (bit 0).  libunwind's lookup walks the
 * module list each time; every sample asks about its outermost frame.  An
 * answer counts only for the snapshot it was given under: a new one (a
 * library loaded or unloaded) makes every entry miss.  Entries are single
 * words: a racing writer leaves one whole answer or the other.
 */
#define CFI_CACHE_BITS 12
static _Atomic uint64_t cfi_cache[1u << CFI_CACHE_BITS];

/* SIGNAL-SAFE.  1 when libunwind has unwind information for pc. */
int unwind_has_cfi(uint64_t pc)
{
	unw_proc_info_t pi;
	uint64_t key, e;
	size_t slot;
	int has;

	if (!unw_pinfo || pc < 4096)
		return 0;
	if (pc >> 47)
		return unw_pinfo(unw_as, (unw_word_t)pc, &pi, NULL) == 0;
	key = pc << 16 | (uint64_t)(modules_snap_seq() & 0x7fffu) << 1;
	slot = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> (64 - CFI_CACHE_BITS));
	e = atomic_load_explicit(&cfi_cache[slot], memory_order_relaxed);
	if ((e & ~1ull) == key)
		return (int)(e & 1);
	has = unw_pinfo(unw_as, (unw_word_t)pc, &pi, NULL) == 0;
	atomic_store_explicit(&cfi_cache[slot], key | (uint64_t)has, memory_order_relaxed);
	return has;
}

/* SIGNAL-SAFE.  unwind_has_cfi without the cache (unwind_check.c). */
int unwind_has_cfi_fresh(uint64_t pc)
{
	unw_proc_info_t pi;

	return unw_pinfo && pc >= 4096 && unw_pinfo(unw_as, (unw_word_t)pc, &pi, NULL) == 0;
}

/* SIGNAL-SAFE.  libunwind's cursor API (0 or 1 when available, as libunwind
 * returns; -1 when the copy lacks it). */
int unwind_cursor_init(void *c, const ucontext_t *uc, int signal_frame)
{
	if (!unw_init2 || !unw_pinfo)
		return -1;
	return unw_init2((unw_cursor_t *)c, (unw_context_t *)(uintptr_t)uc,
			 signal_frame ? UNW_INIT_SIGNAL_FRAME : 0);
}

int unwind_cursor_step(void *c)
{
	return unw_stp((unw_cursor_t *)c);
}

int unwind_cursor_reg(void *c, int reg, uint64_t *v)
{
	unw_word_t w;
	int r = unw_greg((unw_cursor_t *)c, (unw_regnum_t)reg, &w);

	*v = w;
	return r;
}

/* SIGNAL-SAFE.  A word at addr: direct within the unwound thread's live
 * stack, else through process_vm_readv (unwind_read). */
int unwind_word(uintptr_t addr, uint64_t *v)
{
	struct agent_thread *t = &agent_tls;
	unw_word_t w;

	if (addr & 7)
		return -1;
	if (t->live_lo <= addr && addr + 8 <= t->live_hi) {
		*v = *(const uint64_t *)addr;
		return 0;
	}
	if (ovl_data && addr >= ovl_lo && addr < ovl_hi && ovl_hi - addr >= 8) {
		memcpy(v, ovl_data + (addr - ovl_lo), 8);
		return 0;
	}
	if (unwind_read(addr, &w) < 0)
		return -1;
	*v = w;
	return 0;
}
