/*
 * sym.h — address to function, file:line and inline chain, with libdw/libdwfl.
 * Launcher side only.  Not thread-safe: one sym_ctx per thread.
 * Every string returned is owned by the sym_ctx and lives until sym_free().
 */
#ifndef CBN_SYM_H
#define CBN_SYM_H

#include <stddef.h>
#include <stdint.h>

struct sym_ctx;
struct sym_module;

/* One frame of a resolved address.  An address inside inlined code yields
 * several frames: the innermost (inlined) function first, its caller last. */
struct sym_frame {
	const char *func;        /* demangled function name; for code without a symbol,
	                          * "libfoo.so.1.2+0x1a00" (the function's start from the
	                          * unwind tables, nosym set), or "[libfoo.so+0x1a2b]" */
	const char *file;        /* source file of this frame's line, "" if unknown */
	uint32_t line;           /* line executing in this frame, 0 if unknown */
	const char *func_file;   /* file where the function is defined, "" if unknown */
	uint32_t func_line;      /* function's first line (DW_AT_decl_line), 0 if unknown */
	int inlined;             /* 1: this frame was inlined into the next one */
	int nosym;               /* 1: no symbol covers the pc; func names the function's
	                          * start and file the pc ("libfoo.so.1.2+0x1a2b") */
};

struct sym_ctx *sym_new(void);
void sym_free(struct sym_ctx *ctx);

/* The module at path with the build-id recorded at run time (may be NULL/0).
 * The same (path, build-id) returns the same handle.  Never NULL: a module that
 * cannot be opened still gets a handle and resolves to "[name+0xoff]". */
struct sym_module *sym_module_get(struct sym_ctx *ctx, const char *path,
				  const uint8_t *build_id, size_t build_id_len);

/* Resolve vaddr, an address in the module's own ELF address space (runtime pc
 * minus load bias; for a return address the caller passes pc - 1 - bias).
 * Sets *frames to an array owned by ctx, valid until the next sym_resolve call,
 * and returns the number of frames (>= 1), innermost first. */
int sym_resolve(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		const struct sym_frame **frames);

/* The source lines of one case of a function written as labels (CPython's
 * evaluation loop: TARGET_<opcode>, one per instruction's code): the lines
 * [*lo, *hi) of file *file (as sym_resolve's frames name files) from the
 * label named label, in the function holding vaddr (ELF vaddr, as for
 * sym_resolve), to the next label of that file, and *last, the last of them
 * with code (the case's closing jump to the next instruction's).  1, or 0
 * when the module has no DWARF or the function no such label. */
int sym_label_lines(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		    const char *label, const char **file, uint32_t *lo, uint32_t *hi,
		    uint32_t *last);
/* 1 when the function symbol covering vaddr (ELF vaddr, as for sym_resolve)
 * is exported: global or weak with default visibility, i.e. it can stand in
 * for another library's function (an interposer). */
int sym_is_exported(struct sym_module *mod, uint64_t vaddr);

const char *sym_module_basename(const struct sym_module *mod);
/* The module's file as found on disk (symlinks resolved), e.g. "libbz2.so.1.0.4"
 * for a run that recorded libbz2.so.1.0; its DT_SONAME, "" when none. */
const char *sym_module_filename(struct sym_ctx *ctx, struct sym_module *mod);
const char *sym_module_soname(struct sym_ctx *ctx, struct sym_module *mod);
/* The compiler and flags the module was built with: the DW_AT_producer of its
 * first compile unit that names one (e.g. "GNU C17 12.2.0 -mtune=generic
 * -O2 -g"), else its .comment ("GCC: (Debian 12.2.0-14) 12.2.0"), else "". */
const char *sym_module_producer(struct sym_ctx *ctx, struct sym_module *mod);

/* 1 when DWARF (embedded or separate) was found for the module. */
int sym_module_has_debuginfo(struct sym_ctx *ctx, struct sym_module *mod);
/* 1 when the file on disk no longer matches the build-id recorded at run time. */
int sym_module_changed(struct sym_ctx *ctx, struct sym_module *mod);
/* 1 when the symbols come from a file whose build-id matches the run's (or no
 * build-id was recorded): after a change, the original's debug file was found
 * under <debug dir>/.build-id/, so names and lines are still right. */
int sym_module_exact(struct sym_ctx *ctx, struct sym_module *mod);

/* The module's code bytes in [vaddr - before, vaddr + after) (ELF vaddrs, as
 * for sym_resolve), cut to the executable section holding vaddr and to the
 * start of vaddr's function where the unwind tables give it.  Sets *bytes
 * (owned by ctx, valid until sym_free) and *start, the vaddr of (*bytes)[0];
 * returns how many there are, 0 when none can be had (no file, a changed or
 * debug-only file, vaddr outside the code). */
size_t sym_code_bytes(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		      uint64_t before, uint64_t after, const unsigned char **bytes, uint64_t *start);

/* Demangle a C++/Itanium name, or a Rust one in rustc's legacy mangling
 * (its hash dropped, its escapes decoded); returns name itself when it is
 * not mangled.  The result is owned by ctx. */
const char *sym_demangle(struct sym_ctx *ctx, const char *name);

/* sym_pkg.c: the Debian package that installed each of paths[0..n) (dpkg's
 * file lists; CBN_DPKG_INFO_DIR overrides /var/lib/dpkg/info), malloc'd into
 * pkgs[i], NULL when none did (not a Debian system, a file built locally).
 * 0, or -ENOMEM. */
int sym_packages_of(const char *const *paths, size_t n, char **pkgs);

#endif
