/*
 * symbench.c — symbolizer throughput, run by hand:
 *   symbench MODULE [N]   resolves N (default 100000) distinct addresses spread
 * over MODULE's executable segments, cold then cached, and prints the rates.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "symbols/sym.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t lo = 0, hi = 0;
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 100000;

	if (argc < 2) {
		fprintf(stderr, "usage: symbench MODULE [N]\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	int fd = open(argv[1], O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t phnum = 0;
	if (!elf || elf_getphdrnum(elf, &phnum) != 0) {
		fprintf(stderr, "symbench: %s is not a readable ELF file\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			lo = ph.p_vaddr;
			hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	elf_end(elf);
	close(fd);
	if (hi <= lo || !n) {
		fprintf(stderr, "symbench: no executable segment\n");
		return 1;
	}
	uint64_t step = (hi - lo) / n ? (hi - lo) / n : 1;

	double t0 = now();
	struct sym_ctx *ctx = sym_new();
	struct sym_module *mod = sym_module_get(ctx, argv[1], NULL, 0);
	int dbg = sym_module_has_debuginfo(ctx, mod);
	double t1 = now();
	size_t frames = 0, named = 0, lines = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f;
		int k = sym_resolve(ctx, mod, lo + (i * step) % (hi - lo), &f);
		frames += k;
		named += f[0].func[0] != '[';
		lines += f[0].line != 0;
	}
	double t2 = now();
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f;
		sym_resolve(ctx, mod, lo + (i * step) % (hi - lo), &f);
	}
	double t3 = now();
	printf("%s: debuginfo %d, open %.1f ms, %zu addresses cold %.3f s (%.0f/s), cached %.3f s;"
	       " %.2f frames/addr, %.1f%% named, %.1f%% with a line\n",
	       argv[1], dbg, (t1 - t0) * 1e3, n, t2 - t1, n / (t2 - t1), t3 - t2,
	       (double)frames / n, 100.0 * named / n, 100.0 * lines / n);
	sym_free(ctx);
	return 0;
}
