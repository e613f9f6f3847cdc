/*
 * test_sym_oracle.c — sym_resolve against binutils addr2line as an oracle,
 * address by address over the fixtures' code (and a sample of libc when its
 * debug info is installed): innermost file:line, the inline chain's function
 * names and call-site lines.  The two DWARF readers differ on a few
 * addresses (line-table view numbers, prologue rows), hence the stated
 * agreement thresholds rather than exact equality.  Skips without addr2line.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbols/sym.h"
#include "test_sym_fix.h"

#define MAXF 16

struct oracle {
	uint64_t addr;
	int n;
	char func[MAXF][4096];
	char file[MAXF][4096];
	unsigned line[MAXF];
};

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Executable PT_LOAD range of path. */
static int text_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	size_t phnum;

	elf_version(EV_CURRENT);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	*lo = *hi = 0;
	if (elf && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X)) {
				*lo = ph.p_vaddr;
				*hi = ph.p_vaddr + ph.p_memsz;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return *hi > *lo ? 0 : -1;
}

/* Runs addr2line -a -f -i over addrs; fills out[]. */
static int run_addr2line(const char *path, const uint64_t *addrs, size_t n, struct oracle *out)
{
	char tmpl[] = "/tmp/cbn-a2l-XXXXXX", cmd[8192], line[4096];
	int fd = mkstemp(tmpl);
	FILE *in, *f;
	long k = -1;

	if (fd < 0)
		return -1;
	in = fdopen(fd, "w");
	for (size_t i = 0; i < n; i++)
		fprintf(in, "0x%" PRIx64 "\n", addrs[i]);
	fclose(in);
	snprintf(cmd, sizeof(cmd), "addr2line -a -C -f -i -e '%s' < %s", path, tmpl);
	f = popen(cmd, "r");
	if (!f) {
		unlink(tmpl);
		return -1;
	}
	int want_loc = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!want_loc && line[0] == '0' && line[1] == 'x') {
			if (++k >= (long)n)
				break;
			out[k].addr = strtoull(line, NULL, 16);
			out[k].n = 0;
			continue;
		}
		if (k < 0)
			continue;
		struct oracle *o = &out[k];
		if (!want_loc) {
			if (o->n < MAXF)
				snprintf(o->func[o->n], sizeof(o->func[0]), "%s", line);
			want_loc = 1;
		} else {
			if (o->n < MAXF) {
				char *colon = strrchr(line, ':');
				o->line[o->n] = 0;
				if (colon) {
					*colon = '\0';
					o->line[o->n] = (unsigned)strtoul(colon + 1, NULL, 10);
				}
				snprintf(o->file[o->n], sizeof(o->file[0]), "%s", line);
				o->n++;
			}
			want_loc = 0;
		}
	}
	pclose(f);
	unlink(tmpl);
	return k + 1 == (long)n ? 0 : -1;
}

/* addr2line names a C function by its linkage name when an asm label set
 * one (glibc's hidden aliases "__GI_x"); we name it as the source does. */
static int name_eq(const char *ours, const char *theirs)
{
	return strcmp(ours, theirs) == 0 ||
	       (strncmp(theirs, "__GI_", 5) == 0 && strcmp(ours, theirs + 5) == 0);
}

struct score {
	size_t total, line_ok, chain_ok, lined;
};

/* The outermost frame is named by the ELF symbol starting where DWARF's
 * function does, when they differ (glibc's __libc_read is "read", its
 * __libc_start_main_impl "__libc_start_main"): addr2line says DWARF's.
 * Accept ours when some FUNC symbol of that name (its version suffix
 * dropped) in path's .dynsym or .symtab covers addr. */
static int elf_symbol_covers(const char *path, const char *name, uint64_t addr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && !found && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    addr < sym.st_value || addr >= sym.st_value + sym.st_size)
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			found = n && strncmp(n, name, strlen(name)) == 0 &&
				(n[strlen(name)] == 0 || n[strlen(name)] == '@');
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* names: compare function names too (C only: for C++, addr2line names the
 * outer frame by its symbol, "[clone .isra.0]" suffixes and all). */
static void compare(const char *path, const uint64_t *addrs, size_t n, struct score *sc,
		    int names, int verbose)
{
	struct oracle *o = calloc(n, sizeof(*o));
	struct sym_ctx *ctx = sym_new();
	struct sym_module *mod = sym_module_get(ctx, path, NULL, 0);

	REQUIRE(o && ctx);
	REQUIRE(run_addr2line(path, addrs, n, o) == 0);
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f;
		int k = sym_resolve(ctx, mod, addrs[i], &f);
		struct oracle *e = &o[i];
		if (!e->n || e->line[0] == 0 || strcmp(e->func[0], "??") == 0)
			continue; /* addr2line knows nothing here either */
		sc->total++;
		sc->lined += f[0].line != 0;
		int line_ok = f[0].line == e->line[0] &&
			      strcmp(base_of(f[0].file), base_of(e->file[0])) == 0;
		int chain_ok = k == e->n;
		for (int j = 0; chain_ok && j < k; j++)
			chain_ok = (!names || name_eq(f[j].func, e->func[j]) ||
				    (j == k - 1 && elf_symbol_covers(path, f[j].func, addrs[i]))) &&
				   (j == 0 || f[j].line == e->line[j]);
		sc->line_ok += line_ok;
		sc->chain_ok += chain_ok;
		if (verbose && (!line_ok || !chain_ok)) {
			fprintf(stderr, "  0x%" PRIx64 ": ours", addrs[i]);
			for (int j = 0; j < k; j++)
				fprintf(stderr, " %s@%s:%u", f[j].func, base_of(f[j].file), f[j].line);
			fprintf(stderr, " | addr2line");
			for (int j = 0; j < e->n; j++)
				fprintf(stderr, " %s@%s:%u", e->func[j], base_of(e->file[j]), e->line[j]);
			fprintf(stderr, "\n");
		}
	}
	sym_free(ctx);
	free(o);
}

static void check_module(const char *path, size_t max, int names, double min_line,
			 double min_chain)
{
	uint64_t lo, hi;
	struct score sc = {0};

	if (text_range(path, &lo, &hi) != 0) {
		fprintf(stderr, "note: %s has no code segment, not checked\n", path);
		return;
	}
	uint64_t step = (hi - lo) / max ? (hi - lo) / max : 1;
	size_t n = 0;
	uint64_t *addrs = malloc(max * sizeof(*addrs));
	REQUIRE(addrs != NULL);
	for (uint64_t a = lo; a < hi && n < max; a += step)
		addrs[n++] = a;
	compare(path, addrs, n, &sc, names, getenv("CBN_TEST_VERBOSE") != NULL);
	double pl = sc.total ? (double)sc.line_ok / sc.total : 0;
	double pc = sc.total ? (double)sc.chain_ok / sc.total : 0;
	printf("%s: %zu addresses known to addr2line, line agrees %.1f%%, inline chain agrees "
	       "%.1f%%\n",
	       base_of(path), sc.total, 100 * pl, 100 * pc);
	CHECK(sc.total > 0);
	CHECK(pl >= min_line);
	CHECK(pc >= min_chain);
	free(addrs);
}

int main(void)
{
	fix_init();
	if (system("addr2line --version >/dev/null 2>&1") != 0) {
		fprintf(stderr, "skip: binutils addr2line not installed (the oracle)\n");
		return TEST_SKIP;
	}
	check_module(fix_path("symfix_main"), 100000, 1, 0.95, 0.90);
	check_module(fix_path("libsymfix.so"), 100000, 1, 0.95, 0.90);
	if (access(fix_path("symfix_cpp"), R_OK) == 0)
		check_module(fix_path("symfix_cpp"), 100000, 0, 0.95, 0.90);
	/* A real library with inlines everywhere, when its debug info is
	 * installed (libc6-dbg). */
	const char *libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct sym_ctx *ctx = sym_new();
	int dbg = access(libc, R_OK) == 0 &&
		  sym_module_has_debuginfo(ctx, sym_module_get(ctx, libc, NULL, 0));
	sym_free(ctx);
	if (dbg)
		check_module(libc, 3000, 1, 0.90, 0.85);
	else
		fprintf(stderr, "note: no libc debug info (libc6-dbg), libc not compared\n");
	/* By hand: CBN_ORACLE_EXTRA=/path/lib.so compares one more module
	 * (lines and chain shape only). */
	if (getenv("CBN_ORACLE_EXTRA"))
		check_module(getenv("CBN_ORACLE_EXTRA"), 3000, 0, 0.90, 0.85);
	return test_result();
}
