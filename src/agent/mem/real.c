/*
 * real.c — the allocator the hooks stand in front of: its functions looked up
 * at the first call (dlsym(RTLD_NEXT)), what kind it is (libc's, another
 * preloaded one, one the program defines), and the bootstrap arena that
 * serves the allocations made while dlsym runs.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "mem.h"

struct mem_real mem_real;
_Atomic int mem_resolved;
int mem_usable_ok;
uint32_t mem_flags;
char mem_refused[124];

/* --- bootstrap arena ------------------------------------------------------ */

/*
 * dlsym allocates (its error buffer) before we know the real malloc: those
 * calls, and any other thread's while one resolves, are served from here.
 * Never freed; free/realloc/malloc_usable_size recognise its blocks.
 */
char mem_arena[MEM_ARENA_SIZE] __attribute__((aligned(64)));
static _Atomic size_t mem_arena_used;

void *mem_arena_alloc(size_t size, size_t align)
{
	size_t need, off, start;

	if (align < 16)
		align = 16;
	if (size > MEM_ARENA_SIZE || align > MEM_ARENA_SIZE / 4)
		return NULL;
	need = ((size + 15) & ~(size_t)15) + 16 + align;
	off = atomic_fetch_add(&mem_arena_used, need);
	if (off + need > MEM_ARENA_SIZE) {
		errno = ENOMEM;
		return NULL;
	}
	/* The block starts aligned after room for its 16-byte size header. */
	start = ((uintptr_t)mem_arena + off + 16 + align - 1) & ~(uintptr_t)(align - 1);
	((size_t *)start)[-1] = size;
	return (void *)start;
}

size_t mem_arena_size(const void *p)
{
	return ((const size_t *)p)[-1];
}

/* --- resolution ----------------------------------------------------------- */

static int mem_same_object(void *a, void *b)
{
	Dl_info ia, ib;

	return a && b && dladdr(a, &ia) && dladdr(b, &ib) && ia.dli_fbase == ib.dli_fbase;
}

const char *mem_object_name(const void *f)
{
	Dl_info i;
	const char *base;

	if (!f || !dladdr(f, &i) || !i.dli_fname)
		return NULL;
	base = strrchr(i.dli_fname, '/');
	return base ? base + 1 : i.dli_fname;
}

static int mem_from_libc(void *f)
{
	const char *base = mem_object_name(f);

	return base && (strncmp(base, "libc.so", 7) == 0 || strncmp(base, "libc-", 5) == 0);
}


/*
 * 1 when the program defines malloc itself, so that its own calls bypass the
 * hooks: the global lookup finds a malloc that is not ours.  A non-PIE
 * executable that takes malloc's address (Debian's /usr/bin/python3) has an
 * undefined "malloc" whose value is its PLT entry, the canonical address of
 * the function, which the lookup returns: a reference (SHN_UNDEF), not a
 * definition, whose calls still reach the hooks through the PLT.
 */
static int mem_malloc_defined_elsewhere(void)
{
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	const ElfW(Sym) *sym = NULL;
	Dl_info di;

	if (!m || m == (void *)mem_malloc_self)
		return 0;
	/* dladdr names the UND entry too: the symbol table entry tells */
	if (!dladdr1(m, &di, (void **)&sym, RTLD_DL_SYMENT) || !sym)
		return 1;
	return sym->st_shndx != SHN_UNDEF;
}

static void mem_resolve(void)
{
	struct mem_real r;
	void *usable;

	memset(&r, 0, sizeof(r));
	r.malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
	r.calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
	r.realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
	r.free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
	r.posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	r.aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	r.memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
	r.valloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "valloc");
	r.pvalloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "pvalloc");
	r.mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	r.munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
	r.mremap = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
	r.sbrk = (void *(*)(intptr_t))dlsym(RTLD_NEXT, "sbrk");
	r.brk = (int (*)(void *))dlsym(RTLD_NEXT, "brk");
	usable = dlsym(RTLD_NEXT, "malloc_usable_size");
	r.usable_next = (size_t (*)(void *))usable;
	/* A glibc malloc_usable_size on a jemalloc block would read garbage:
	 * only the allocator's own. */
	if (mem_same_object(usable, (void *)r.malloc)) {
		r.usable = (size_t (*)(void *))usable;
		mem_usable_ok = 1;
	}
	/* An allocator that lacks one of the aligned functions: glibc's would
	 * hand out blocks the other allocator's free cannot take back. */
	if (r.memalign && !mem_same_object((void *)r.memalign, (void *)r.malloc))
		r.memalign = NULL;
	if (r.aligned_alloc && !mem_same_object((void *)r.aligned_alloc, (void *)r.malloc))
		r.aligned_alloc = NULL;
	if (r.posix_memalign && !mem_same_object((void *)r.posix_memalign, (void *)r.malloc))
		r.posix_memalign = NULL;
	if (r.valloc && !mem_same_object((void *)r.valloc, (void *)r.malloc))
		r.valloc = NULL;
	if (r.pvalloc && !mem_same_object((void *)r.pvalloc, (void *)r.malloc))
		r.pvalloc = NULL;
	if (r.malloc && !mem_from_libc((void *)r.malloc))
		mem_flags |= CBN_MEMF_FOREIGN;
	if (mem_malloc_defined_elsewhere())
		mem_flags |= CBN_MEMF_REPLACED;
	memcpy(&mem_real, &r, sizeof(r));
}

int mem_ready_slow(void)
{
	int v = atomic_load_explicit(&mem_resolved, memory_order_acquire);

	if (v == 2)
		return 1;
	if (v == 0 && atomic_compare_exchange_strong(&mem_resolved, &v, 1)) {
		int e = errno;

		mem_tls.in_hook++;
		mem_resolve();
		mem_tls.in_hook--;
		errno = e;
		if (!mem_real.malloc || !mem_real.free || !mem_real.realloc || !mem_real.calloc) {
			/* Nothing to forward to: the arena serves until it is empty. */
			snprintf(mem_refused, sizeof(mem_refused),
				 "no malloc after libcbottleneck_mem.so in the search order");
			return 0;
		}
		atomic_store_explicit(&mem_resolved, 2, memory_order_release);
		return 1;
	}
	return 0;
}
