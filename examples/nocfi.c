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
 * run holds them in these shares.  With --perf-map the program writes
 * /tmp/perf-PID.map naming its three JIT functions, as a JIT would for perf.
 *
 *   nocfi [SECONDS] [--perf-map]      (default 2 s of CPU)
 */
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

static leaf_fn jit_leaf, jit_fp;
static calls_fn jit_calls;

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

/* Each caller spins its kernel for about ns of CPU, in rounds sized from
 * the last round's speed. */
#define SLICE(call)                                                                    \
	do {                                                                           \
		uint64_t t0_ = burn_cpu_now(), t_;                                     \
		uint64_t n_ = *iters;                                                  \
		call;                                                                  \
		t_ = burn_cpu_now() - t0_;                                             \
		if (t_ > 0)                                                            \
			*iters = (uint64_t)((double)n_ * (double)ns / (double)t_) + 1; \
	} while (0)

__attribute__((noinline)) static void run_jit_leaf(uint64_t ns, uint64_t *iters)
{
	SLICE(jit_leaf(n_));
}

__attribute__((noinline)) static void run_jit_fp(uint64_t ns, uint64_t *iters)
{
	SLICE(jit_fp(n_));
}

__attribute__((noinline)) static void run_jit_calls(uint64_t ns, uint64_t *iters)
{
	SLICE(jit_calls(n_, jit_callback));
}

__attribute__((noinline)) static void run_asm(uint64_t ns, uint64_t *iters)
{
	SLICE(asm_spin(n_));
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
	if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	jit_leaf = (leaf_fn)(void *)m;
	jit_fp = (leaf_fn)(void *)(m + 256);
	jit_calls = (calls_fn)(void *)(m + 512);
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
	fclose(f);
}

int main(int argc, char **argv)
{
	double seconds = 2.0;
	int perf_map = 0;
	uint64_t total, end, it[4] = {1000, 1000, 10, 1000};
	unsigned char *m;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--perf-map"))
			perf_map = 1;
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
	total = (uint64_t)(seconds * 1e9);
	end = burn_cpu_now() + total;
	while (burn_cpu_now() < end) {
		run_jit_leaf(700000, &it[0]);
		run_jit_fp(300000, &it[1]);
		run_jit_calls(500000, &it[2]);
		run_asm(500000, &it[3]);
	}
	printf("nocfi: done\n");
	return 0;
}
