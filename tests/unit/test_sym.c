/*
 * test_sym.c — symbolizer against the fixtures of tests/symbols/: names,
 * declaration lines, statement lines, inline chains, shared libraries,
 * separate debug info (debuglink and build-id), stripped files, rebuilt
 * binaries, units .debug_aranges do not name, and C++ demangling.  Expected
 * lines come from MARK: comments.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "symbols/sym.h"
#include "symbols/sym_int.h"
#include "test_sym_fix.h"

static struct fix_run run_main;

/* Start of the function symbol covering vaddr in the unstripped file path:
 * what the unwind tables must give for the stripped copy. */
static uint64_t fix_func_start(const char *path, uint64_t vaddr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	uint64_t start = 0;

	REQUIRE(fd >= 0);
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	REQUIRE(e != NULL);
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;

			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    vaddr >= sym.st_value && vaddr < sym.st_value + sym.st_size)
				start = sym.st_value;
		}
	}
	elf_end(e);
	close(fd);
	REQUIRE(start != 0);
	return start;
}

static struct sym_ctx *ctx_with_path(const char *debuginfo_path)
{
	if (debuginfo_path)
		setenv("CBN_DEBUGINFO_PATH", debuginfo_path, 1);
	else
		unsetenv("CBN_DEBUGINFO_PATH");
	struct sym_ctx *ctx = sym_new();
	REQUIRE(ctx != NULL);
	return ctx;
}

static void dump(const char *what, const struct sym_frame *f, int n)
{
	for (int i = 0; i < n; i++)
		fprintf(stderr, "  %s #%d %s at %s:%u (decl %s:%u)%s\n", what, i, f[i].func,
			f[i].file, f[i].line, f[i].func_file, f[i].func_line,
			f[i].inlined ? " [inlined]" : "");
}

/* The program's own frames, resolved from module `path`: plain_fn and the
 * outer_fn <- mid_inl <- leaf_inl inline chain. */
static void check_frames_of(struct sym_ctx *ctx, struct sym_module *mod,
			    const struct fix_run *run)
{
	const struct sym_frame *f;
	int n;

	n = sym_resolve(ctx, mod, fix_find(run, "plain")->vaddr, &f);
	dump("plain", f, n);
	CHECK_EQ_INT(n, 1);
	CHECK_STR(f[0].func, "plain_fn");
	CHECK_EQ_INT(f[0].line, fix_line("fix_main.c", "MARK:plain"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_main.c", "int plain_fn(int n)"));
	CHECK(fix_ends_with(f[0].file, "/fix_main.c"));
	CHECK(fix_ends_with(f[0].func_file, "/fix_main.c"));
	CHECK_EQ_INT(f[0].inlined, 0);

	n = sym_resolve(ctx, mod, fix_find(run, "inl")->vaddr, &f);
	dump("inl", f, n);
	REQUIRE(n == 3);
	CHECK_STR(f[0].func, "leaf_inl");
	CHECK_EQ_INT(f[0].line, fix_line("fix_main.c", "MARK:inl"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_main.c", "void leaf_inl(int x)"));
	CHECK_EQ_INT(f[0].inlined, 1);
	CHECK_STR(f[1].func, "mid_inl");
	CHECK_EQ_INT(f[1].line, fix_line("fix_main.c", "MARK:mid_call"));
	CHECK_EQ_INT(f[1].func_line, fix_line("fix_main.c", "void mid_inl(int x)"));
	CHECK(fix_ends_with(f[1].file, "/fix_main.c"));
	CHECK_EQ_INT(f[1].inlined, 1);
	CHECK_STR(f[2].func, "outer_fn");
	CHECK_EQ_INT(f[2].line, fix_line("fix_main.c", "MARK:outer_call"));
	CHECK_EQ_INT(f[2].func_line, fix_line("fix_main.c", "void outer_fn(int x)"));
	CHECK_EQ_INT(f[2].inlined, 0);
}

static void check_main_frames(struct sym_ctx *ctx, struct sym_module *mod)
{
	check_frames_of(ctx, mod, &run_main);
}

static void test_pie(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);
	const struct fix_mark *m = fix_find(&run_main, "plain");
	struct sym_module *mod =
		sym_module_get(ctx, m->path, run_main.build_id, run_main.build_id_len);

	CHECK(sym_module_get(ctx, m->path, run_main.build_id, run_main.build_id_len) == mod);
	CHECK(sym_module_get(ctx, m->path, NULL, 0) != mod);
	CHECK_STR(sym_module_basename(mod), "symfix_main");
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 0);
	check_main_frames(ctx, mod);

	/* Cached: same frames, same interned strings. */
	const struct sym_frame *a, *b;
	sym_resolve(ctx, mod, m->vaddr, &a);
	const char *fa = a[0].func, *fi = a[0].file;
	sym_resolve(ctx, mod, m->vaddr + 1, &b);
	sym_resolve(ctx, mod, m->vaddr, &b);
	CHECK(b[0].func == fa);
	CHECK(b[0].file == fi);
	sym_free(ctx);
}

static void test_shared_lib(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);
	const struct fix_mark *ms = fix_find(&run_main, "lib_static");
	const struct fix_mark *me = fix_find(&run_main, "lib_exported");
	struct sym_module *mod = sym_module_get(ctx, ms->path, NULL, 0);
	const struct sym_frame *f;
	int n;

	CHECK_STR(sym_module_basename(mod), "libsymfix.so");
	n = sym_resolve(ctx, mod, ms->vaddr, &f);
	dump("lib_static", f, n);
	CHECK_EQ_INT(n, 1);
	CHECK_STR(f[0].func, "lib_static_fn");
	CHECK_EQ_INT(f[0].line, fix_line("fix_lib.c", "MARK:lib_static"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_lib.c", "void lib_static_fn("));
	CHECK(fix_ends_with(f[0].file, "/fix_lib.c"));
	n = sym_resolve(ctx, mod, me->vaddr, &f);
	CHECK_STR(f[0].func, "lib_exported_fn");
	CHECK_EQ_INT(f[0].line, fix_line("fix_lib.c", "MARK:lib_exported"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_lib.c", "void lib_exported_fn("));

	/* Stripped copy: exported names from .dynsym; the rest grouped by the
	 * function's start from the unwind tables, "lib+0xSTART", nosym, with the
	 * pc itself as the frame's file. */
	struct sym_module *st = sym_module_get(ctx, fix_path("libsymfix_stripped.so"), NULL, 0);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, st), 0);
	n = sym_resolve(ctx, st, me->vaddr, &f);
	CHECK_EQ_INT(n, 1);
	CHECK_STR(f[0].func, "lib_exported_fn");
	CHECK_STR(f[0].file, "");
	CHECK_EQ_INT(f[0].line, 0);
	CHECK_EQ_INT(f[0].func_line, 0);
	n = sym_resolve(ctx, st, ms->vaddr, &f);
	char want[128];
	snprintf(want, sizeof(want), "libsymfix_stripped.so+0x%" PRIx64,
		 fix_func_start(fix_path("libsymfix.so"), ms->vaddr));
	CHECK_STR(f[0].func, want);
	CHECK_EQ_INT(f[0].nosym, 1);
	snprintf(want, sizeof(want), "libsymfix_stripped.so+0x%" PRIx64, ms->vaddr);
	CHECK_STR(f[0].file, want);
	sym_free(ctx);
}

/* A function written as labelled cases: a case's lines run from its label to
 * the next label, and the marked call inside the CALL case is among them. */
static void test_label_lines(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);
	const struct fix_mark *m = fix_find(&run_main, "lib_dispatch");
	struct sym_module *mod = sym_module_get(ctx, m->path, NULL, 0);
	uint32_t call = fix_line("fix_lib.c", "LABEL:call");
	uint32_t halt = fix_line("fix_lib.c", "LABEL:halt");
	uint32_t lo, hi, last;
	const struct sym_frame *f;
	const char *file;
	int n;

	CHECK_EQ_INT(sym_label_lines(ctx, mod, m->vaddr, "TARGET_CALL", &file, &lo, &hi, &last), 1);
	CHECK_EQ_INT(lo, call);
	CHECK_EQ_INT(hi, halt);
	CHECK(last > fix_line("fix_lib.c", "MARK:lib_dispatch") && last < hi);
	n = sym_resolve(ctx, mod, m->vaddr, &f);
	CHECK(n >= 1 && f[n - 1].line >= lo && f[n - 1].line < last);
	CHECK_STR(f[n - 1].file, file);
	CHECK_EQ_INT(sym_label_lines(ctx, mod, m->vaddr, "TARGET_ADD", &file, &lo, &hi, &last), 1);
	CHECK_EQ_INT(lo, fix_line("fix_lib.c", "LABEL:add"));
	CHECK_EQ_INT(hi, call);
	/* no such label; the last label (no next one); no DWARF */
	CHECK_EQ_INT(sym_label_lines(ctx, mod, m->vaddr, "TARGET_NONE", &file, &lo, &hi, &last), 0);
	CHECK_EQ_INT(sym_label_lines(ctx, mod, m->vaddr, "TARGET_HALT", &file, &lo, &hi, &last), 0);
	mod = sym_module_get(ctx, fix_path("libsymfix_stripped.so"), NULL, 0);
	CHECK_EQ_INT(sym_label_lines(ctx, mod, m->vaddr, "TARGET_CALL", &file, &lo, &hi, &last), 0);
	CHECK_STR(file, "");
	sym_free(ctx);
}

static void test_debuglink(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);
	struct sym_module *mod = sym_module_get(ctx, fix_path("symfix_split"), run_main.build_id,
						run_main.build_id_len);

	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 0);
	CHECK_EQ_INT(sym_module_exact(ctx, mod), 1);
	check_main_frames(ctx, mod);
	sym_free(ctx);
}

static void test_build_id_dir(void)
{
	struct sym_ctx *ctx = ctx_with_path(fix_path("debugroot"));
	struct sym_module *mod = sym_module_get(ctx, fix_path("symfix_bid"), run_main.build_id,
						run_main.build_id_len);

	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	check_main_frames(ctx, mod);
	sym_free(ctx);
}

static void test_stripped(void)
{
	struct sym_ctx *ctx = ctx_with_path("/nonexistent-cbn-debug");
	struct sym_module *mod = sym_module_get(ctx, fix_path("symfix_bid"), run_main.build_id,
						run_main.build_id_len);
	const struct fix_mark *m = fix_find(&run_main, "plain");
	const struct sym_frame *f;
	char want[128];

	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 0);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 0);
	int n = sym_resolve(ctx, mod, m->vaddr, &f);
	CHECK_EQ_INT(n, 1);
	uint64_t start = fix_func_start(fix_path("symfix_main"), m->vaddr);
	snprintf(want, sizeof(want), "symfix_bid+0x%" PRIx64, start);
	CHECK_STR(f[0].func, want);
	CHECK_EQ_INT(f[0].nosym, 1);
	snprintf(want, sizeof(want), "symfix_bid+0x%" PRIx64, m->vaddr);
	CHECK_STR(f[0].file, want);
	CHECK_EQ_INT(f[0].line, 0);

	/* Another pc of the same function groups with it; a pc of another
	 * function (outer_fn, into which the "inl" chain was inlined) does not. */
	const char *plain = f[0].func;
	n = sym_resolve(ctx, mod, start, &f);
	CHECK_STR(f[0].func, plain);
	const struct fix_mark *mi = fix_find(&run_main, "inl");
	n = sym_resolve(ctx, mod, mi->vaddr, &f);
	CHECK_EQ_INT(f[0].nosym, 1);
	snprintf(want, sizeof(want), "symfix_bid+0x%" PRIx64,
		 fix_func_start(fix_path("symfix_main"), mi->vaddr));
	CHECK_STR(f[0].func, want);
	CHECK(strcmp(f[0].func, plain) != 0);
	sym_free(ctx);
}

/* MiniDebugInfo: a stripped binary whose .gnu_debugdata holds an
 * xz-compressed symbol table of its static functions: names, no lines. */
static void test_minidebuginfo(void)
{
	struct sym_ctx *ctx = ctx_with_path("/nonexistent-cbn-debug");
	struct sym_module *mod;
	const struct fix_mark *m = fix_find(&run_main, "plain");
	const struct sym_frame *f;

	if (access(fix_path("symfix_mini"), R_OK) != 0) {
		fprintf(stderr, "  (no symfix_mini: nm or xz missing at build time)\n");
		sym_free(ctx);
		return;
	}
	mod = sym_module_get(ctx, fix_path("symfix_mini"), run_main.build_id, run_main.build_id_len);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 0);
	CHECK_EQ_INT(sym_resolve(ctx, mod, m->vaddr, &f), 1);
	CHECK_STR(f[0].func, "plain_fn");
	CHECK_EQ_INT(f[0].nosym, 0);
	CHECK_EQ_INT(f[0].line, 0);
	sym_free(ctx);
}

/* The binary was rebuilt after the run: the file at the path has another
 * build-id.  With the original's debug file reachable by build-id, frames
 * are those of the binary that ran; without it, the module says it changed. */
static void test_changed(void)
{
	struct sym_ctx *ctx = ctx_with_path(fix_path("debugroot"));
	struct sym_module *mod = sym_module_get(ctx, fix_path("symfix_changed"),
						run_main.build_id, run_main.build_id_len);

	CHECK_EQ_INT(sym_module_changed(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_exact(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	check_main_frames(ctx, mod);
	sym_free(ctx);

	ctx = ctx_with_path("/nonexistent-cbn-debug");
	mod = sym_module_get(ctx, fix_path("symfix_changed"), run_main.build_id,
			     run_main.build_id_len);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_exact(ctx, mod), 0);
	const struct sym_frame *f;
	CHECK(sym_resolve(ctx, mod, fix_find(&run_main, "plain")->vaddr, &f) >= 1);
	CHECK(f[0].func && f[0].func[0]);
	/* The file now at the path, asked for with no build-id: nothing to check. */
	struct sym_module *nb = sym_module_get(ctx, fix_path("symfix_changed"), NULL, 0);
	CHECK_EQ_INT(sym_module_changed(ctx, nb), 0);
	/* Deleted file, debug info still there by build-id. */
	sym_free(ctx);
	ctx = ctx_with_path(fix_path("debugroot"));
	mod = sym_module_get(ctx, "/nonexistent/dir/symfix_main", run_main.build_id,
			     run_main.build_id_len);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 0);
	CHECK_EQ_INT(sym_module_exact(ctx, mod), 1);
	check_main_frames(ctx, mod);
	sym_free(ctx);
}

/* Link-time optimisation: the inlines sit in one <artificial> CU. */
static void test_lto(void)
{
	struct fix_run r;

	if (access(fix_path("symfix_lto"), X_OK) != 0) {
		fprintf(stderr, "note: no LTO fixture (compiler without LTO)\n");
		return;
	}
	REQUIRE(fix_exec("symfix_lto", &r) == 0);
	struct sym_ctx *ctx = ctx_with_path(NULL);
	struct sym_module *mod =
		sym_module_get(ctx, fix_find(&r, "plain")->path, r.build_id, r.build_id_len);
	check_frames_of(ctx, mod, &r);
	sym_free(ctx);
}

/* Units .debug_aranges do not name: clang's (no aranges at all) and a cgo
 * program's Go part (aranges for a unit before it only), found by the
 * units' own ranges, lines and inlines included. */
static void test_no_aranges(void)
{
	static const char *const fixtures[] = {"symfix_noaranges", "symfix_partaranges"};

	/* symfix_noaranges has symfix_main's build-id: no cached answers */
	setenv("CBN_SYMCACHE", "0", 1);
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct fix_run r;

		REQUIRE(fix_exec(fixtures[i], &r) == 0);
		struct sym_ctx *ctx = ctx_with_path(NULL);
		struct sym_module *mod = sym_module_get(ctx, fix_find(&r, "plain")->path,
							r.build_id, r.build_id_len);
		fprintf(stderr, "%s:\n", fixtures[i]);
		CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
		check_frames_of(ctx, mod, &r);
		sym_free(ctx);
	}
	unsetenv("CBN_SYMCACHE");
}

/* -gsplit-dwarf: DIEs live in a .dwo next to the object file, reached from
 * the skeleton unit (and elfutils 0.188's dwarf_decl_file asserts on them). */
static void test_split_dwarf(void)
{
	struct fix_run r;

	if (access(fix_path("symfix_splitdwarf"), X_OK) != 0) {
		fprintf(stderr, "note: no -gsplit-dwarf fixture\n");
		return;
	}
	REQUIRE(fix_exec("symfix_splitdwarf", &r) == 0);
	struct sym_ctx *ctx = ctx_with_path(NULL);
	struct sym_module *mod =
		sym_module_get(ctx, fix_find(&r, "plain")->path, r.build_id, r.build_id_len);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	check_frames_of(ctx, mod, &r);
	sym_free(ctx);
}

/* Source paths with "dir/../" and "./" read as one file's name. */
static void test_paths(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);

	CHECK_STR(sym_intern_path(ctx, "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../include/"
				       "c++/12/bits/stl_algo.h"),
		  "/usr/include/c++/12/bits/stl_algo.h");
	CHECK_STR(sym_intern_path(ctx, "/src/./a/./b.c"), "/src/a/b.c");
	CHECK_STR(sym_intern_path(ctx, "a/../b.c"), "b.c");
	CHECK_STR(sym_intern_path(ctx, "../../x/../y.c"), "../../y.c");
	CHECK_STR(sym_intern_path(ctx, "/../a/../../b.c"), "/../../b.c");
	CHECK_STR(sym_intern_path(ctx, "/a//b/../c.c"), "/a/c.c");
	CHECK_STR(sym_intern_path(ctx, "./main.c"), "./main.c");
	CHECK_STR(sym_intern_path(ctx, "/plain/path.c"), "/plain/path.c");
	CHECK_STR(sym_intern_path(ctx, ""), "");
	CHECK(sym_intern_path(ctx, "/x/../y.c") == sym_intern_path(ctx, "/y.c"));
	sym_free(ctx);
}

static void test_cpp(void)
{
	struct sym_ctx *ctx = ctx_with_path(NULL);
	struct fix_run r;

	CHECK_STR(sym_demangle(ctx, "main"), "main");
	CHECK_STR(sym_demangle(ctx, "_Zgarbage!"), "_Zgarbage!");
	CHECK_STR(sym_demangle(ctx, ""), "");
	if (access(fix_path("symfix_cpp"), X_OK) != 0) {
		fprintf(stderr, "note: no C++ fixture (no C++ compiler at configure time)\n");
		sym_free(ctx);
		return;
	}
	CHECK_STR(sym_demangle(ctx, "_ZN5fixns5Klass6methodEi"), "fixns::Klass::method(int)");
	/* Rust's legacy mangling: the hash dropped, the escapes decoded */
	CHECK_STR(sym_demangle(ctx, "_ZN1r3fib17h68f661e397fcaed4E"), "r::fib");
	CHECK_STR(sym_demangle(ctx, "_ZN9hashbrown11rustc_entry62_$LT$impl$u20$hashbrown..map.."
				    "HashMap$LT$K$C$V$C$S$C$A$GT$$GT$11rustc_entry"
				    "17h0123456789abcdefE"),
		  "hashbrown::rustc_entry::<impl hashbrown::map::HashMap<K,V,S,A>>::rustc_entry");
	CHECK_STR(sym_demangle(ctx, "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$"
				    "17h00000000000000ffE"),
		  "std::rt::lang_start::{{closure}}");
	CHECK_STR(sym_demangle(ctx, "_ZN4core3ptr13drop_in_place17h0000000000000000E"),
		  "core::ptr::drop_in_place");
	CHECK_STR(sym_demangle(ctx, "_ZN5alloc3vec16Vec$LT$T$C$A$GT$4push17h0123456789abcdefE"
				    ".llvm.12345"),
		  "alloc::vec::Vec<T,A>::push [clone .llvm.12345]");
	/* not Rust's: no hash, or an escape it does not know */
	CHECK_STR(sym_demangle(ctx, "_ZN1a5h1234Ev"), "a::h1234()");
	CHECK_STR(sym_demangle(ctx, "_ZN1a9$ZZ$b$u1$17h0123456789abcdefE"), "a::$ZZ$b$u1$");
	REQUIRE(fix_exec("symfix_cpp", &r) == 0);
	const struct fix_mark *m = fix_find(&r, "method");
	struct sym_module *mod = sym_module_get(ctx, m->path, NULL, 0);
	const struct sym_frame *f;
	int n = sym_resolve(ctx, mod, m->vaddr, &f);
	dump("method", f, n);
	CHECK_EQ_INT(n, 1);
	CHECK_STR(f[0].func, "fixns::Klass::method(int)");
	CHECK_EQ_INT(f[0].line, fix_line("fix_cpp.cc", "MARK:method"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_cpp.cc", "int Klass::method(int x)"));
	n = sym_resolve(ctx, mod, fix_find(&r, "twice")->vaddr, &f);
	dump("twice", f, n);
	CHECK(strstr(f[0].func, "fixns::twice<long>(long)") != NULL);
	CHECK_EQ_INT(f[0].line, fix_line("fix_cpp.cc", "MARK:twice"));
	/* A lambda inlined into a template over its (unnamed) type: DWARF has
	 * no linkage name for either, so names are qualified by scope. */
	n = sym_resolve(ctx, mod, fix_find(&r, "lambda")->vaddr, &f);
	dump("lambda", f, n);
	REQUIRE(n == 2);
	CHECK_STR(f[0].func, "main::{lambda}::operator()");
	CHECK_EQ_INT(f[0].line, fix_line("fix_cpp.cc", "MARK:lambda"));
	CHECK_EQ_INT(f[0].inlined, 1);
	CHECK(strncmp(f[1].func, "fixns::apply<", 13) == 0);
	CHECK_EQ_INT(f[1].line, fix_line("fix_cpp.cc", "MARK:apply_call"));
	CHECK_EQ_INT(f[1].inlined, 0);
	sym_free(ctx);
}

/* A function written in assembly: the assembler's subprogram names no file
 * or line of its own, so both come from its entry's row of the line table
 * (the row cProfile's filename:lineno would name). */
static void test_asm(void)
{
	const struct sym_frame *f;
	struct fix_run r;

	setenv("CBN_SYMCACHE", "0", 1); /* the symbolizer's answer, not a cached one */
	REQUIRE(fix_exec("symfix_asm", &r) == 0);
	struct sym_ctx *ctx = ctx_with_path(NULL);
	const struct fix_mark *m = fix_find(&r, "asm");
	struct sym_module *mod = sym_module_get(ctx, m->path, r.build_id, r.build_id_len);
	int n = sym_resolve(ctx, mod, m->vaddr, &f);

	REQUIRE(n >= 1);
	fprintf(stderr, "asm: %s %s:%u (declared %s:%u)\n", f[0].func, f[0].file, f[0].line,
		f[0].func_file, f[0].func_line);
	CHECK_STR(f[0].func, "fix_asm_fn");
	CHECK(fix_ends_with(f[0].file, "fix_asm.S"));
	CHECK_EQ_INT(f[0].line, fix_line("fix_asm.S", "MARK:asm_call"));
	CHECK(fix_ends_with(f[0].func_file, "fix_asm.S"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_asm.S", "MARK:asm_entry"));
	sym_free(ctx);
	unsetenv("CBN_SYMCACHE");
}

int main(void)
{
	fix_init();
	REQUIRE(fix_exec("symfix_main", &run_main) == 0);
	REQUIRE(run_main.build_id_len > 0);
	test_pie();
	test_shared_lib();
	test_label_lines();
	test_debuglink();
	test_build_id_dir();
	test_stripped();
	test_minidebuginfo();
	test_changed();
	test_split_dwarf();
	test_lto();
	test_no_aranges();
	test_paths();
	test_cpp();
	test_asm();
	return test_result();
}
