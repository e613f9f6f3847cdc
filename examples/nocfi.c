/*
 * nocfi.c — code without unwind information, as JIT compilers and hand-written
 * assembly make it (docs/symbols.md, "Code without unwind information").
 * Machine code is generated at run time into an anonymous mapping (written,
 * then made executable, as xbyak and LuaJIT do), and an assembly function
 * carries no CFI (nocfi_asm.S).  Each part spins under a C caller of its own, for
 * a known share of the thread's CPU:
 *
 *   run_jit_leaf  -> JIT leaf that saves two registers and moves rsp, no
 *                    frame pointer (oneDNN's kernels look like this)   35 %
 *   run_jit_fp    -> JIT leaf with a frame pointer (push rbp; mov rbp, rsp) 15 %
 *   run_jit_calls -> JIT code that calls back into C (jit_callback)       25 %
 *   run_asm       -> asm_spin, assembly without .cfi directives           25 %
 *
 * The parts take turns in slices of about 2 ms of CPU, so any stretch of the
 * run holds them in these shares; the last line says the shares the thread's
 * own clock measured.  With --perf-map the program writes
 * /tmp/perf-PID.map naming its JIT functions, as a JIT would for perf.
 *
 * Two other runs spin in one part only:
 *
 *   chain: run_jit_chain -> JIT code with a frame pointer calling the frame-
 *          pointer leaf above, as V8's and the JVM's code calls more of it
 *   remap: run_remap -> remap_spin, called through a second mapping of this
 *          program's own file (V8 maps its builtins so), outside every module
 *
 *   nocfi [SECONDS] [--perf-map] [chain|remap]     (default 2 s of CPU)
 */
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "burn.h"

void asm_spin(uint64_t n);               /* nocfi_asm.S */

typedef void (*leaf_fn)(uint64_t n);
typedef void (*calls_fn)(uint64_t n, void (*fn)(void));

/* x86-64 machine code; every function takes its count in rdi. */
static const unsigned char code_leaf[] = {
	0x53,                               /* push rbx */
	0x41, 0x54,                         /* push r12 */
	0x48, 0x83, 0xec, 0x18,             /* sub rsp, 24 */
	0x48, 0xff, 0xcf,                   /* 1: dec rdi */
	0x75, 0xfb,                         /* jnz 1b */
	0x48, 0x83, 0xc4, 0x18,             /* add rsp, 24 */
	0x41, 0x5c,                         /* pop r12 */
	0x5b,                               /* pop rbx */
	0xc3,                               /* ret */
};
static const unsigned char code_fp[] = {
	0x55,                               /* push rbp */
	0x48, 0x89, 0xe5,                   /* mov rbp, rsp */
	0x53,                               /* push rbx */
	0x48, 0x83, 0xec, 0x08,             /* sub rsp, 8 */
	0x48, 0xff, 0xcf,                   /* 1: dec rdi */
	0x75, 0xfb,                         /* jnz 1b */
	0x48, 0x83, 0xc4, 0x08,             /* add rsp, 8 */
	0x5b,                               /* pop rbx */
	0x5d,                               /* pop rbp */
	0xc3,                               /* ret */
};
/* rdi: how many calls, rsi: the function to call. */
static const unsigned char code_calls[] = {
	0x53,                               /* push rbx */
	0x41, 0x54,                         /* push r12 */
	0x48, 0x83, 0xec, 0x08,             /* sub rsp, 8 (rsp 16-aligned for the call) */
	0x48, 0x89, 0xfb,                   /* mov rbx, rdi */
	0x49, 0x89, 0xf4,                   /* mov r12, rsi */
	0x41, 0xff, 0xd4,                   /* 1: call r12 */
	0x48, 0xff, 0xcb,                   /* dec rbx */
	0x75, 0xf8,                         /* jnz 1b */
	0x48, 0x83, 0xc4, 0x08,             /* add rsp, 8 */
	0x41, 0x5c,                         /* pop r12 */
	0x5b,                               /* pop rbx */
	0xc3,                               /* ret */
};

/* rdi: the count, passed on; rsi: the function to call (the fp leaf). */
static const unsigned char code_chain[] = {
	0x55,                               /* push rbp */
	0x48, 0x89, 0xe5,                   /* mov rbp, rsp */
	0xff, 0xd6,                         /* call rsi */
	0x5d,                               /* pop rbp */
	0xc3,                               /* ret */
};

static leaf_fn jit_leaf, jit_fp, remapped;
static calls_fn jit_calls;
static void (*jit_chain)(uint64_t n, leaf_fn inner);

/* The C side of run_jit_calls: a little work for each call from JIT code. */
__attribute__((noinline)) static void jit_callback(void)
{
	uint64_t x = burn_sink;

	for (int i = 0; i < 4000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	burn_sink = x;
}

/* CPU each part spent, ns, as the thread's own clock measured it. */
static uint64_t spent[4];

/* Each caller spins its kernel for ns of CPU: in rounds of about an eighth
 * of that, each sized from the last one's speed, until its clock says ns
 * went by.  The deadline, not the sizing, sets the part's share: a round
 * mis-sized (a page fault, a sample's handler) moves it by a round at most,
 * and the part's clock time is kept in spent[k]. */
#define SLICE(k, call)                                                                 \
	do {                                                                           \
		uint64_t s_ = burn_cpu_now(), end_ = s_ + ns, t0_, t_;                 \
		do {                                                                   \
			uint64_t n_ = *iters;                                          \
			t0_ = burn_cpu_now();                                          \
			call;                                                          \
			t_ = burn_cpu_now() - t0_;                                     \
			if (t_ > 0)                                                    \
				*iters = (uint64_t)((double)n_ * (double)(ns / 8) /    \
						    (double)t_) + 1;                   \
		} while (t0_ + t_ < end_);                                             \
		spent[k] += t0_ + t_ - s_;                                             \
	} while (0)

__attribute__((noinline)) static void run_jit_leaf(uint64_t ns, uint64_t *iters)
{
	SLICE(0, jit_leaf(n_));
}

__attribute__((noinline)) static void run_jit_fp(uint64_t ns, uint64_t *iters)
{
	SLICE(1, jit_fp(n_));
}

__attribute__((noinline)) static void run_jit_calls(uint64_t ns, uint64_t *iters)
{
	SLICE(2, jit_calls(n_, jit_callback));
}

__attribute__((noinline)) static void run_asm(uint64_t ns, uint64_t *iters)
{
	SLICE(3, asm_spin(n_));
}

__attribute__((noinline)) static void run_jit_chain(uint64_t ns, uint64_t *iters)
{
	SLICE(1, jit_chain(n_, jit_fp));
}

__attribute__((noinline)) static void run_remap(uint64_t ns, uint64_t *iters)
{
	SLICE(0, remapped(n_));
}

/* Called only through its second mapping (remap_build): no call, no data,
 * nothing that depends on where it runs. */
__attribute__((noinline, aligned(64), optimize("no-omit-frame-pointer"))) void
remap_spin(uint64_t n)
{
	while (n--)
		__asm__ volatile("");
}

static int remap_phdr(struct dl_phdr_info *info, size_t size, void *out)
{
	uint64_t vaddr = (uint64_t)(uintptr_t)remap_spin - info->dlpi_addr;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz) {
			*(uint64_t *)out = vaddr - ph->p_vaddr + ph->p_offset;
			return 1;
		}
	}
	return 0;
}

/* remap_spin's page of this program's file mapped again, executable, by
 * the program itself: its second address is in no module. */
static int remap_build(void)
{
	uint64_t off = 0, page;
	unsigned char *m;
	int fd;

	if (!dl_iterate_phdr(remap_phdr, &off) || !off)
		return -1;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return -1;
	page = off & ~(uint64_t)4095;
	m = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)page);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	remapped = (leaf_fn)(void *)(m + (off - page));
	return 0;
}

/* The three functions in one anonymous mapping, made executable once
 * written (never writable and executable at once). */
static unsigned char *jit_build(void)
{
	size_t len = 4096;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0xcc, len);
	memcpy(m, code_leaf, sizeof(code_leaf));
	memcpy(m + 256, code_fp, sizeof(code_fp));
	memcpy(m + 512, code_calls, sizeof(code_calls));
	memcpy(m + 768, code_chain, sizeof(code_chain));
	if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	jit_leaf = (leaf_fn)(void *)m;
	jit_fp = (leaf_fn)(void *)(m + 256);
	jit_calls = (calls_fn)(void *)(m + 512);
	*(void **)&jit_chain = m + 768;
	return m;
}

/* /tmp/perf-PID.map: "START SIZE name", hex, one line per function. */
static void jit_perf_map(const unsigned char *m)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "%lx %zx jit_kernel_leaf\n", (unsigned long)(uintptr_t)m, sizeof(code_leaf));
	fprintf(f, "%lx %zx jit_kernel_fp\n", (unsigned long)(uintptr_t)(m + 256), sizeof(code_fp));
	fprintf(f, "%lx %zx jit_kernel_calls\n", (unsigned long)(uintptr_t)(m + 512),
		sizeof(code_calls));
	fprintf(f, "%lx %zx jit_kernel_chain\n", (unsigned long)(uintptr_t)(m + 768),
		sizeof(code_chain));
	fclose(f);
}

int main(int argc, char **argv)
{
	double seconds = 2.0;
	int perf_map = 0;
	uint64_t total, end, it[4] = {1000, 1000, 10, 1000};
	unsigned char *m;
	const char *only = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--perf-map"))
			perf_map = 1;
		else if (!strcmp(argv[i], "chain") || !strcmp(argv[i], "remap"))
			only = argv[i];
		else
			seconds = atof(argv[i]);
	}
	if (seconds <= 0)
		seconds = 2.0;
	m = jit_build();
	if (!m) {
		fprintf(stderr, "nocfi: cannot make executable memory\n");
		return 1;
	}
	if (perf_map)
		jit_perf_map(m);
	if (only && !strcmp(only, "remap") && remap_build() < 0) {
		fprintf(stderr, "nocfi: cannot map its own code a second time\n");
		return 1;
	}
	total = (uint64_t)(seconds * 1e9);
	end = burn_cpu_now() + total;
	while (only && burn_cpu_now() < end) {
		if (!strcmp(only, "chain"))
			run_jit_chain(1000000, &it[1]);
		else
			run_remap(1000000, &it[0]);
	}
	while (!only && burn_cpu_now() < end) {
		run_jit_leaf(700000, &it[0]);
		run_jit_fp(300000, &it[1]);
		run_jit_calls(500000, &it[2]);
		run_asm(500000, &it[3]);
	}
	if (only) {
		printf("nocfi: done\n");
		return 0;
	}
	total = spent[0] + spent[1] + spent[2] + spent[3];
	printf("nocfi: done; of its parts' CPU: run_jit_leaf %.1f %%, run_jit_fp %.1f %%, "
	       "run_jit_calls %.1f %%, run_asm %.1f %%\n",
	       100.0 * (double)spent[0] / (double)total, 100.0 * (double)spent[1] / (double)total,
	       100.0 * (double)spent[2] / (double)total, 100.0 * (double)spent[3] / (double)total);
	return 0;
}
