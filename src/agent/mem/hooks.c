/*
 * hooks.c — the functions libcbottleneck_mem.so interposes: the malloc family,
 * C++ operator new/delete (every variant), anonymous mmap/munmap/mremap and
 * the program's own sbrk/brk.  Each forwards to the next definition (a
 * user-preloaded jemalloc or tcmalloc, else libc) and hands the result to
 * mem.c, with mem_tls.in_hook set so that whatever the real function calls
 * (our own code, operator new's malloc, a signal handler of the program that
 * allocates) passes straight through.  errno is the real function's.
 *
 * Every hook calls mem_alloc_done itself (never through a helper that is not
 * inlined): the records' stacks skip a fixed number of frames (mem.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mem.h"
#include "agent_api.h"

#define MEM_INLINE static inline __attribute__((always_inline))

static size_t mem_page(void)
{
	return 4096; /* the smallest page: rounding only */
}

/* The aligned allocation of the real allocator, whichever of its functions
 * it has (mem.c dropped those that belong to another object). */
MEM_INLINE void *mem_aligned(size_t align, size_t size)
{
	void *p = NULL;
	int ret;

	if (mem_real.memalign)
		return mem_real.memalign(align, size);
	if (mem_real.posix_memalign) {
		ret = mem_real.posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align,
					      size);
		if (ret)
			errno = ret;
		return ret ? NULL : p;
	}
	if (mem_real.aligned_alloc)
		return mem_real.aligned_alloc(align, (size + align - 1) & ~(align - 1));
	errno = ENOMEM;
	return NULL;
}

/*
 * Count heap block p of size bytes that the real allocator returned: the fast
 * path (mem.h), else mem_alloc_done with errno kept (the real function's).
 * Inlined, so that the hook stays the frame below mem_alloc_done.
 */
MEM_INLINE void mem_heap_alloc(void *p, size_t size, int fn)
{
	int e;

	if (__builtin_expect(mem_alloc_fast(p, size), 1))
		return;
	e = errno;
	mem_alloc_done(p, size, CBN_ALLOC_HEAP, fn);
	errno = e;
}

/* Count heap block p before it goes back to the real allocator; returns what
 * mem_free_begin returns (0 from the fast path: not in the table). */
MEM_INLINE uint64_t mem_heap_free(void *p, int fn)
{
	uint64_t val;
	int e;

	if (__builtin_expect(mem_free_fast(p), 1))
		return 0;
	e = errno;
	val = mem_free_begin(p, fn);
	errno = e;
	return val;
}

/* --- the malloc family ---------------------------------------------------- */

MEM_API void *malloc(size_t size)
{
	void *p;

	if (!mem_ready())
		return mem_arena_alloc(size, 16);
	if (mem_tls.in_hook)
		return mem_real.malloc(size);
	mem_tls.in_hook = 1;
	p = mem_real.malloc(size);
	mem_heap_alloc(p, size, CBN_AFN_MALLOC);
	mem_tls.in_hook = 0;
	return p;
}

/* Our own malloc's address: a reference to `malloc` from this library goes
 * through the GOT and finds whichever definition wins (mem.c compares). */
extern __typeof__(malloc) mem_malloc_self
	__attribute__((alias("malloc"), visibility("hidden"), copy(malloc)));

MEM_API void *calloc(size_t n, size_t size)
{
	void *p;

	if (!mem_ready()) {
		/* The arena is static memory never handed out twice: zero. */
		if (size && n > (size_t)-1 / size) {
			errno = ENOMEM;
			return NULL;
		}
		return mem_arena_alloc(n * size, 16);
	}
	if (mem_tls.in_hook)
		return mem_real.calloc(n, size);
	mem_tls.in_hook = 1;
	p = mem_real.calloc(n, size);
	if (p)
		mem_heap_alloc(p, n * size, CBN_AFN_CALLOC);
	mem_tls.in_hook = 0;
	return p;
}

MEM_API void free(void *p)
{
	if (!p || mem_arena_owns(p))
		return;
	if (!mem_ready())
		return; /* nothing to give it back to: not ours, so never happens */
	if (mem_tls.in_hook) {
		mem_real.free(p);
		return;
	}
	mem_tls.in_hook = 1;
	mem_heap_free(p, CBN_AFN_FREE);
	mem_real.free(p); /* errno is the real free's, as without us */
	mem_tls.in_hook = 0;
}

/* realloc and reallocarray: inlined into each, so that the hook is the frame
 * below mem_alloc_done. */
MEM_INLINE void *mem_realloc(void *p, size_t size, int fn)
{
	uint64_t val;
	void *q;
	int e;

	if (!mem_ready()) {
		q = mem_arena_alloc(size, 16);
		if (q && p)
			memcpy(q, p, mem_arena_size(p) < size ? mem_arena_size(p) : size);
		return q;
	}
	if (p && mem_arena_owns(p)) {
		/* A block from start-up: move it to the real allocator. */
		q = mem_real.malloc(size ? size : 1);
		if (q)
			memcpy(q, p, mem_arena_size(p) < size ? mem_arena_size(p) : size);
		e = errno;
		if (q && !mem_tls.in_hook) {
			mem_tls.in_hook = 1;
			mem_alloc_done(q, size, CBN_ALLOC_HEAP, fn);
			mem_tls.in_hook = 0;
		}
		errno = e;
		return q;
	}
	if (mem_tls.in_hook)
		return mem_real.realloc(p, size);
	mem_tls.in_hook = 1;
	val = p ? mem_heap_free(p, fn) : 0;
	q = mem_real.realloc(p, size);
	if (q) {
		mem_heap_alloc(q, size, fn);
	} else if (p && size) {
		e = errno;
		mem_free_undo(p, val, fn); /* failed: p is still the program's */
		errno = e;
	}
	mem_tls.in_hook = 0;
	return q;
}

MEM_API void *realloc(void *p, size_t size)
{
	return mem_realloc(p, size, CBN_AFN_REALLOC);
}

MEM_API void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > (size_t)-1 / size) {
		errno = ENOMEM;
		return NULL;
	}
	return mem_realloc(p, n * size, CBN_AFN_REALLOCARRAY);
}

MEM_API int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;
	int e, ret = 0;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	if (!mem_ready()) {
		p = mem_arena_alloc(size, align);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	if (mem_tls.in_hook) {
		if (mem_real.posix_memalign)
			return mem_real.posix_memalign(out, align, size);
		p = mem_aligned(align, size);
		if (!p)
			return ENOMEM;
		*out = p;
		return 0;
	}
	e = errno;
	mem_tls.in_hook = 1;
	if (mem_real.posix_memalign) {
		ret = mem_real.posix_memalign(&p, align, size);
	} else {
		p = mem_aligned(align, size);
		ret = p ? 0 : ENOMEM;
	}
	if (ret == 0) {
		*out = p;
		mem_heap_alloc(p, size, CBN_AFN_POSIX_MEMALIGN);
	}
	mem_tls.in_hook = 0;
	errno = e;
	return ret;
}

MEM_API void *aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (!mem_ready())
		return mem_arena_alloc(size, align);
	if (mem_tls.in_hook)
		return mem_real.aligned_alloc ? mem_real.aligned_alloc(align, size)
					      : mem_aligned(align, size);
	mem_tls.in_hook = 1;
	p = mem_real.aligned_alloc ? mem_real.aligned_alloc(align, size) : mem_aligned(align, size);
	mem_heap_alloc(p, size, CBN_AFN_ALIGNED_ALLOC);
	mem_tls.in_hook = 0;
	return p;
}

/* The real allocator's own valloc/pvalloc/memalign when it has them (its
 * results exactly: glibc's pvalloc(0) is a 24-byte block, not a page), else
 * its aligned allocation of the rounded size. */
MEM_INLINE void *mem_memalign_real(size_t align, size_t size)
{
	return mem_real.memalign ? mem_real.memalign(align, size) : mem_aligned(align, size);
}

MEM_INLINE void *mem_valloc_real(size_t size)
{
	return mem_real.valloc ? mem_real.valloc(size)
			       : mem_aligned((size_t)sysconf(_SC_PAGESIZE), size);
}

MEM_INLINE void *mem_pvalloc_real(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), rounded;

	if (mem_real.pvalloc)
		return mem_real.pvalloc(size);
	rounded = size ? (size + page - 1) & ~(page - 1) : page;
	if (rounded < size) {
		errno = ENOMEM;
		return NULL;
	}
	return mem_aligned(page, rounded);
}

MEM_API void *memalign(size_t align, size_t size)
{
	void *p;

	if (!mem_ready())
		return mem_arena_alloc(size, align);
	if (mem_tls.in_hook)
		return mem_memalign_real(align, size);
	mem_tls.in_hook = 1;
	p = mem_memalign_real(align, size);
	mem_heap_alloc(p, size, CBN_AFN_MEMALIGN);
	mem_tls.in_hook = 0;
	return p;
}

MEM_API void *valloc(size_t size)
{
	void *p;

	if (!mem_ready())
		return mem_arena_alloc(size, mem_page());
	if (mem_tls.in_hook)
		return mem_valloc_real(size);
	mem_tls.in_hook = 1;
	p = mem_valloc_real(size);
	mem_heap_alloc(p, size, CBN_AFN_VALLOC);
	mem_tls.in_hook = 0;
	return p;
}

MEM_API void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (!mem_ready()) {
		size_t rounded = size ? (size + page - 1) & ~(page - 1) : page;

		return rounded < size ? NULL : mem_arena_alloc(rounded, mem_page());
	}
	if (mem_tls.in_hook)
		return mem_pvalloc_real(size);
	mem_tls.in_hook = 1;
	p = mem_pvalloc_real(size);
	mem_heap_alloc(p, size, CBN_AFN_PVALLOC);
	mem_tls.in_hook = 0;
	return p;
}

MEM_API size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (mem_arena_owns(p))
		return mem_arena_size(p);
	if (!mem_ready() || !mem_real.usable_next)
		return 0;
	return mem_real.usable_next(p);
}

/* --- C++ operator new and delete ------------------------------------------ */

/*
 * The next definition of a C++ operator (libstdc++'s, or tcmalloc's), looked
 * up at its first call (the library that defines it may come later) and kept,
 * found or not: a lookup that fails costs microseconds (glibc's dlsym builds
 * an error message), and retrying it at every call made --memory cost a
 * dispatch-bound PyTorch loop 2.2x.
 *
 * RTLD_NEXT searches the global scope only.  A libstdc++ loaded with
 * RTLD_LOCAL under a dlopen'd module (CPython's extension modules: torch,
 * libproj) is not in it, yet its operators are the ones that module's calls
 * reach without us (the global scope has none, its own scope is searched
 * next).  So the first caller's own scope is searched then (dlopen of its
 * object with RTLD_NOLOAD), and the object found there (made RTLD_NODELETE,
 * so that no pointer kept can dangle) gives every other operator too: its
 * operator new[] calls operator new through its PLT, which is ours, with
 * our hook as the caller.  When neither has one, the fallback (the real
 * malloc and free, which libstdc++'s operators call) is used from then on.
 */
#define MEM_NEXT_NONE ((void *)1)

static void *_Atomic mem_cxx_lib;         /* the C++ runtime found in a caller's scope */

/* The object defining name in the scope of the object holding caller (not
 * this library), as a handle: NULL when none.  Sets *looked when the
 * caller's scope could be searched (the answer is final). */
static void *mem_cxx_find(const void *caller, const char *name, int *looked)
{
	Dl_info self, di, fi;
	void *h, *f, *lib = NULL;

	if (!dladdr((void *)mem_cxx_find, &self) || !dladdr(caller, &di) || !di.dli_fname ||
	    di.dli_fbase == self.dli_fbase)
		return NULL;
	*looked = 1;
	h = dlopen(di.dli_fname[0] ? di.dli_fname : NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return NULL;
	f = dlsym(h, name);
	if (f && dladdr(f, &fi) && fi.dli_fname && fi.dli_fbase != self.dli_fbase)
		lib = dlopen(fi.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
	dlclose(h);
	return lib;
}

/* 1 when f is libstdc++'s: its unaligned operator new is malloc (of 1 byte
 * for 0) with the new-handler loop and std::bad_alloc after a failure, its
 * unaligned operator delete is free. */
static int mem_is_libstdcxx(void *f)
{
	const char *base = mem_object_name(f);

	return base && strncmp(base, "libstdc++.so", 12) == 0;
}

static __attribute__((noinline)) void *mem_next_find(void *_Atomic *cache, _Atomic int *direct,
						      const char *name, const void *caller)
{
	void *f, *lib, *none = NULL;
	int looked = 0, e = errno;

	mem_tls.in_hook++;
	f = dlsym(RTLD_NEXT, name);
	if (!f) {
		lib = atomic_load_explicit(&mem_cxx_lib, memory_order_acquire);
		if (!lib) {
			lib = mem_cxx_find(caller, name, &looked);
			if (lib && !atomic_compare_exchange_strong(&mem_cxx_lib, &none, lib)) {
				dlclose(lib); /* another thread's is kept (the same object) */
				lib = none;
			}
		}
		if (lib) {
			f = dlsym(lib, name);
			looked = 1;
		}
	} else {
		looked = 1;
	}
	if (looked) {
		atomic_store_explicit(direct, mem_is_libstdcxx(f), memory_order_relaxed);
		atomic_store_explicit(cache, f ? f : MEM_NEXT_NONE, memory_order_release);
	}
	mem_tls.in_hook--;
	errno = e;
	return f;
}

/* The next definition of an operator; *direct (valid once it is found) says
 * that it is libstdc++'s. */
MEM_INLINE void *mem_next(void *_Atomic *cache, _Atomic int *direct, const char *name,
			  const void *caller)
{
	void *f = atomic_load_explicit(cache, memory_order_acquire);

	if (__builtin_expect(f != NULL, 1))
		return f == MEM_NEXT_NONE ? NULL : f;
	return mem_next_find(cache, direct, name, caller);
}

/* An exception out of the next operator new must not leave the guard set
 * (the library is built with -fexceptions so that this cleanup runs). */
static void mem_guard_off(int *g)
{
	(void)g;
	mem_tls.in_hook = 0;
}

/*
 * operator new: P the parameter list, A the arguments, AL the alignment (0
 * for the unaligned ones).  When the next operator is libstdc++'s unaligned
 * one, its malloc is made here: the same call it would make (through its
 * PLT, to our malloc, to the real one), without passing through libstdc++
 * and a second hook; only a failed malloc goes to libstdc++'s operator,
 * which tries again, calls the new-handler and throws std::bad_alloc.
 */
#define MEM_NEW(sym, P, A, AL)                                                           \
	MEM_API void *sym P                                                              \
	{                                                                                \
		static void *_Atomic next;                                               \
		static _Atomic int direct;                                               \
		void *(*f) P;                                                            \
		void *p;                                                                 \
                                                                                         \
		if (!mem_ready())                                                        \
			return mem_arena_alloc(n, (AL));                                 \
		f = (void *(*) P)mem_next(&next, &direct, #sym,                          \
					  __builtin_return_address(0));                  \
		if (mem_tls.in_hook)                                                     \
			return f ? f A : (AL) ? mem_aligned((AL), n) : mem_real.malloc(n); \
		{                                                                        \
			int guard __attribute__((cleanup(mem_guard_off))) =              \
				(mem_tls.in_hook = 1);                                   \
			(void)guard;                                                     \
			p = NULL;                                                        \
			if (!(AL) && atomic_load_explicit(&direct, memory_order_relaxed)) \
				p = mem_real.malloc(n ? n : 1);                          \
			if (!p)                                                          \
				p = f ? f A : (AL) ? mem_aligned((AL), n) : mem_real.malloc(n); \
			mem_heap_alloc(p, n, CBN_AFN_MALLOC);                            \
		}                                                                        \
		return p;                                                                \
	}

/* operator delete: AL 1 for the aligned ones.  libstdc++'s unaligned
 * operator delete is free(): made here, as for operator new. */
#define MEM_DELETE(sym, P, A, AL)                                                        \
	MEM_API void sym P                                                               \
	{                                                                                \
		static void *_Atomic next;                                               \
		static _Atomic int direct;                                               \
		void (*f) P;                                                             \
                                                                                         \
		if (!p || mem_arena_owns(p) || !mem_ready())                             \
			return;                                                          \
		f = (void (*) P)mem_next(&next, &direct, #sym, __builtin_return_address(0)); \
		if (mem_tls.in_hook) {                                                   \
			if (f)                                                           \
				f A;                                                     \
			else                                                             \
				mem_real.free(p);                                        \
			return;                                                          \
		}                                                                        \
		mem_tls.in_hook = 1;                                                     \
		mem_heap_free(p, CBN_AFN_FREE);                                          \
		if (f && ((AL) || !atomic_load_explicit(&direct, memory_order_relaxed))) \
			f A;                                                             \
		else                                                                     \
			mem_real.free(p);                                                \
		mem_tls.in_hook = 0;                                                     \
	}

/* The C++ declarations these stand for: a std::nothrow_t const & is a
 * pointer, a std::align_val_t a size_t. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#pragma GCC diagnostic ignored "-Wmissing-declarations"
MEM_NEW(_Znwm, (size_t n), (n), 0)
MEM_NEW(_Znam, (size_t n), (n), 0)
MEM_NEW(_ZnwmRKSt9nothrow_t, (size_t n, const void *nt), (n, nt), 0)
MEM_NEW(_ZnamRKSt9nothrow_t, (size_t n, const void *nt), (n, nt), 0)
MEM_NEW(_ZnwmSt11align_val_t, (size_t n, size_t al), (n, al), al)
MEM_NEW(_ZnamSt11align_val_t, (size_t n, size_t al), (n, al), al)
MEM_NEW(_ZnwmSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void *nt), (n, al, nt),
	al)
MEM_NEW(_ZnamSt11align_val_tRKSt9nothrow_t, (size_t n, size_t al, const void *nt), (n, al, nt),
	al)

MEM_DELETE(_ZdlPv, (void *p), (p), 0)
MEM_DELETE(_ZdaPv, (void *p), (p), 0)
MEM_DELETE(_ZdlPvm, (void *p, size_t n), (p, n), 0)
MEM_DELETE(_ZdaPvm, (void *p, size_t n), (p, n), 0)
MEM_DELETE(_ZdlPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt), 0)
MEM_DELETE(_ZdaPvRKSt9nothrow_t, (void *p, const void *nt), (p, nt), 0)
MEM_DELETE(_ZdlPvSt11align_val_t, (void *p, size_t al), (p, al), 1)
MEM_DELETE(_ZdaPvSt11align_val_t, (void *p, size_t al), (p, al), 1)
MEM_DELETE(_ZdlPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al), 1)
MEM_DELETE(_ZdaPvmSt11align_val_t, (void *p, size_t n, size_t al), (p, n, al), 1)
MEM_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, const void *nt),
	   (p, al, nt), 1)
MEM_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, (void *p, size_t al, const void *nt),
	   (p, al, nt), 1)
#pragma GCC diagnostic pop

/* --- mappings and the program break --------------------------------------- */

static size_t mem_pages(size_t len)
{
	return (len + mem_page() - 1) & ~(mem_page() - 1);
}

/* Anonymous mappings the program makes (glibc's own, for large blocks and
 * thread stacks, go through its internal mmap and are not seen); the
 * agent's own are left out. */
MEM_INLINE void *mem_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off,
			  void *caller)
{
	void *p;
	int e;

	if (!mem_ready())
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (mem_tls.in_hook || !(flags & MAP_ANONYMOUS) || cbn_agent_mem_ours((uintptr_t)caller))
		return mem_real.mmap(addr, len, prot, flags, fd, off);
	mem_tls.in_hook = 1;
	p = mem_real.mmap(addr, len, prot, flags, fd, off);
	e = errno;
	/* PROT_NONE reserves address space (libcuda reserves tens of GiB so):
	 * no memory until a part is mapped again or made accessible */
	if (p != MAP_FAILED && prot == PROT_NONE)
		mem_reserve_done(p, mem_pages(len));
	else if (p != MAP_FAILED)
		mem_alloc_done(p, mem_pages(len), CBN_ALLOC_MMAP, CBN_AFN_MMAP);
	mem_tls.in_hook = 0;
	errno = e;
	return p;
}

MEM_API void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mem_mmap(addr, len, prot, flags, fd, off, __builtin_return_address(0));
}

MEM_API void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mem_mmap(addr, len, prot, flags, fd, off, __builtin_return_address(0));
}

MEM_API int munmap(void *addr, size_t len)
{
	uint64_t val;
	int ret, e;

	if (!mem_ready())
		return (int)syscall(SYS_munmap, addr, len);
	if (mem_tls.in_hook)
		return mem_real.munmap(addr, len);
	mem_tls.in_hook = 1;
	val = mem_free_begin(addr, CBN_AFN_MUNMAP);
	ret = mem_real.munmap(addr, len);
	e = errno;
	if (ret < 0)
		mem_free_undo(addr, val, CBN_AFN_MUNMAP);
	else
		mem_unmap_done(addr, len, val);
	mem_tls.in_hook = 0;
	errno = e;
	return ret;
}

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* The new address is an argument with MREMAP_FIXED and with
 * MREMAP_DONTUNMAP (a hint there), as glibc's mremap reads it; every flag
 * goes to the real call as given.  With MREMAP_DONTUNMAP the old range stays
 * mapped (empty): it stays live. */
MEM_API void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *want = NULL, *p;
	uint64_t val = 0;
	va_list ap;
	int e;

	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (!mem_ready())
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, want);
	if (mem_tls.in_hook)
		return mem_real.mremap(old, old_len, new_len, flags, want);
	mem_tls.in_hook = 1;
	if (!(flags & MREMAP_DONTUNMAP))
		val = mem_free_begin(old, CBN_AFN_MREMAP);
	p = mem_real.mremap(old, old_len, new_len, flags, want);
	e = errno;
	if (p == MAP_FAILED) {
		mem_free_undo(old, val, CBN_AFN_MREMAP);
	} else if (val) {
		/* What old_len did not cover stays where it was. */
		mem_unmap_done(old, old_len, val);
		mem_alloc_done(p, mem_pages(new_len), CBN_ALLOC_MMAP, CBN_AFN_MREMAP);
	} else if ((flags & MREMAP_DONTUNMAP) &&
		   memtable_maybe(&mem_table, (uint64_t)(uintptr_t)old)) {
		/* A tracked mapping's pages moved to a new one. */
		mem_alloc_done(p, mem_pages(new_len), CBN_ALLOC_MMAP, CBN_AFN_MREMAP);
	}
	mem_tls.in_hook = 0;
	errno = e;
	return p;
}

/* The program's own sbrk/brk (glibc's malloc calls its internal __sbrk: not
 * seen).  Growth is sampled like an allocation; it is not tracked. */
MEM_API void *sbrk(intptr_t incr)
{
	void *p;
	int e;

	if (!mem_ready()) {
		errno = ENOMEM;
		return (void *)-1;
	}
	if (mem_tls.in_hook || incr <= 0)
		return mem_real.sbrk(incr);
	mem_tls.in_hook = 1;
	p = mem_real.sbrk(incr);
	e = errno;
	if (p != (void *)-1)
		mem_alloc_done(p, (size_t)incr, CBN_ALLOC_BRK, CBN_AFN_SBRK);
	mem_tls.in_hook = 0;
	errno = e;
	return p;
}

MEM_API int brk(void *addr)
{
	uintptr_t cur;
	int ret, e;

	if (!mem_ready()) {
		errno = ENOMEM;
		return -1;
	}
	if (mem_tls.in_hook)
		return mem_real.brk(addr);
	cur = (uintptr_t)syscall(SYS_brk, 0);
	mem_tls.in_hook = 1;
	ret = mem_real.brk(addr);
	e = errno;
	if (ret == 0 && (uintptr_t)addr > cur)
		mem_alloc_done((void *)cur, (uintptr_t)addr - cur, CBN_ALLOC_BRK, CBN_AFN_BRK);
	mem_tls.in_hook = 0;
	errno = e;
	return ret;
}
