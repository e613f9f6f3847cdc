/*
 * sym_int.h — internals shared by the symbolizer's files: the context and
 * module structures, the string arena, the hash map, the symbol table and the
 * DWARF scope walk.  Not part of the contract; only src/symbols/ includes it.
 */
#ifndef CBN_SYM_INT_H
#define CBN_SYM_INT_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "sym.h"
#include "../util/util.h"

/* Deepest inline chain we report; deeper chains keep their outermost frames. */
#define SYM_MAX_DEPTH 64

/* Open-addressing map from a (tag, key) pair to a 64-bit value.  tag 0 marks an
 * empty slot, so callers use tags >= 1. */
struct sym_map_ent {
	uint64_t tag;
	uint64_t key;
	uint64_t val;
};

struct sym_map {
	struct sym_map_ent *ent;
	size_t cap;              /* power of two, or 0 */
	size_t n;
};

int sym_map_get(const struct sym_map *m, uint64_t tag, uint64_t key, uint64_t *val);
int sym_map_put(struct sym_map *m, uint64_t tag, uint64_t key, uint64_t val);
void sym_map_free(struct sym_map *m);

/* Interned strings live in arena chunks owned by the context. */
struct sym_chunk {
	struct sym_chunk *next;
	size_t used, cap;
	char data[];
};

struct sym_strset {
	const char **slot;       /* interned strings, NULL = empty */
	uint32_t *hash;
	size_t cap, n;
};

/* One FDE's range: a function (or a part of one) in ELF vaddr. */
struct sym_fde {
	uint64_t lo, hi;
};

/* One function symbol of a module's ELF symbol table. */
struct sym_sym {
	uint64_t lo, hi;         /* [lo, hi) in ELF vaddr; hi == lo never (see build) */
	const char *raw;         /* name as in the ELF string table (owned by libelf) */
	const char *pretty;      /* demangled and interned, computed on first use */
	int exported;            /* a global or weak default-visibility name is at lo */
};

/* Subprogram ranges of one compile unit, sorted by lo. */
struct sym_cu_fn {
	uint64_t lo, hi;
	Dwarf_Die die;
};

struct sym_cu_index {
	struct sym_cu_fn *fn;
	size_t n;
};

/* Enclosing scope of each scope DIE of one CU, sorted by offset. */
struct sym_parent {
	uint64_t off, par;
};

struct sym_parents {
	struct sym_parent *ent;
	size_t n;
};

/* Name and declaration of a DWARF function DIE (cached per DIE). */
struct sym_fninfo {
	const char *name;        /* interned, NULL when the DIE names nothing */
	const char *decl_file;   /* interned, "" when unknown */
	uint32_t decl_line;
};

/* A CU's address range, as its DIE gives it (DWARF addresses). */
struct sym_cu_range {
	uint64_t lo, hi;
	Dwarf_Off off;           /* the CU DIE's offset */
};

struct sym_module {
	uint32_t idx;            /* position in ctx->mods; map tag base */
	char *path;
	const char *base;        /* basename of path (points into path) */
	char *fallback_base;     /* base with [] stripped, for "[base+0x..]" */
	uint8_t build_id[64];
	size_t build_id_len;

	int opened;              /* open attempted (lazily, on first use) */
	int changed;             /* file on disk differs from the run's build-id */
	int dwarf_tried;
	int has_dwarf;
	Dwfl *dwfl;              /* one Dwfl per module, NULL if no file */
	Dwfl_Module *dm;
	Dwarf_Addr elfbias;      /* module address = ELF vaddr + elfbias (0 in practice) */

	int syms_built;
	struct sym_sym *syms;    /* sorted by lo */
	size_t nsyms;

	char *realbase;            /* basename of the file's real path, or NULL */
	char *producer;            /* sym_module_producer's answer, NULL until asked */
	char *soname;              /* DT_SONAME, or NULL */
	int fdes_built;
	struct sym_fde *fdes;      /* function ranges from the unwind tables, by lo */
	size_t nfdes;

	/* the cache of resolved addresses (sym_cache.c) */
	int cache_state;           /* 0 not tried, 1 in use, -1 not for this module */
	int cache_valid;           /* a cache file was read */
	int cache_dirty;           /* something was resolved that the file lacks */
	int cache_dwarf_known, cache_has_dwarf;
	size_t cache_loaded;       /* addresses read from the file */
	uint64_t cache_variant;
	struct sym_ctx *ctx;       /* for libdwfl's find_debuginfo callback */
	int debug_compressed;      /* the debug file found has compressed DWARF */
	int debug_inflated;        /* ... and the cache's inflated copy of it was used */

	struct sym_parents *pars;  /* per-CU scope parents, for C++ names */
	size_t npars, cappars;
	struct sym_cu_index *cus;  /* CU indexes, referenced from ctx->map */
	const void *last_cu;       /* the CU of the previous lookup, and its index */
	size_t last_ix;
	size_t ncus, capcus;
	int cur_built;             /* CU ranges from the CU DIEs (sym_dwarf_cu) */
	struct sym_cu_range *cur;  /* by lo */
	size_t ncur;
};

struct sym_ctx {
	struct sym_module **mods;
	size_t nmods, capmods;

	struct sym_map map;      /* pc cache, CU indexes, DIE info; see sym.c tags */
	struct sym_strset strs;
	struct sym_chunk *chunks;

	struct sym_frame *pool;  /* resolved frames, referenced by the pc cache */
	size_t npool, cappool;

	struct sym_fninfo *fns;
	size_t nfns, capfns;

	char *debuginfo_path;    /* for Dwfl_Callbacks; NULL = libdwfl's default */
	Dwfl_Callbacks cb;
};

/* Map tags: the low 32 bits are the module index, the high bits the kind. */
#define SYM_TAG_PC (1ull << 32)
#define SYM_TAG_CU (2ull << 32)
#define SYM_TAG_FN (3ull << 32)
#define SYM_TAG_MOD (4ull << 32)
#define SYM_TAG_PAR (5ull << 32)
#define SYM_TAG_STR (6ull << 32)

void sym_util_free(struct sym_ctx *ctx);
struct sym_frame *sym_pool_reserve(struct sym_ctx *ctx, size_t n);

/* Debug-info search (sym_cache.c): calls fn for each existing local file that
 * libdwfl's standard search (build-id under the absolute directories of the
 * debuginfo path, then the .gnu_debuglink name next to the file, in its
 * relative directories and under the absolute ones) could take; returns how
 * many there are.  fn may be NULL. */
struct stat;
typedef void (*sym_cand_fn)(void *arg, const char *path, const struct stat *st);
int sym_debug_candidates(const struct sym_ctx *ctx, const uint8_t *bid, size_t bid_len,
			 const char *file_name, const char *link, sym_cand_fn fn, void *arg);
/* 1 when elfutils' debuginfod client is to be used (DEBUGINFOD_URLS set). */
int sym_want_debuginfod(void);
/* The cache of resolved addresses (sym_cache.c): load after the module's ELF
 * is open; save writes what was resolved when anything was new. */
void sym_cache_load(struct sym_ctx *ctx, struct sym_module *mod);
void sym_cache_save(struct sym_ctx *ctx, struct sym_module *mod);
/* The cache directory (CBN_SYMCACHE, CBN_SYMCACHE_DIR, XDG_CACHE_HOME, HOME):
 * 0, or -1 when caching is off or there is nowhere to cache. */
int sym_cache_dir(char *buf, size_t len);
int sym_mkdir_p(const char *dir);
/* libdwfl's find_debuginfo step for mod (see sym_find_debuginfo): the cache's
 * inflated copy of its compressed debug file when there is one (an fd, and
 * *name set), else -1. */
int sym_cache_debugfile(struct sym_ctx *ctx, struct sym_module *mod, char **name);
/* Notes whether fd, a debug file libdwfl is about to read, has compressed
 * DWARF worth keeping inflated in the cache. */
void sym_cache_note_debugfile(struct sym_module *mod, int fd);
int sym_demangle_available(void);
const char *sym_intern(struct sym_ctx *ctx, const char *s, size_t len);
const char *sym_intern_str(struct sym_ctx *ctx, const char *s);
/* A source path interned with "dir/../" and "./" taken out lexically. */
const char *sym_intern_path(struct sym_ctx *ctx, const char *s);

/* Symbol table (sym_table.c). */
void sym_table_build(struct sym_module *mod);
const struct sym_sym *sym_table_find(struct sym_module *mod, uint64_t vaddr);

/* Unwind tables (sym_fde.c). */
void sym_fde_build(struct sym_module *mod);
int sym_fde_find(struct sym_module *mod, uint64_t vaddr, uint64_t *start);

/* DWARF (sym_dwarf.c): fills scopes outermost first (scopes[0] is the
 * subprogram, then inlined_subroutine DIEs); returns their number, 0 when
 * the address is in no known function. */
int sym_dwarf_scopes(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		     Dwarf_Die *scopes, int max);
/* The CU holding a module address into *cu, with the bias from module to
 * DWARF addresses: 0, or -1 when no CU holds it. */
int sym_dwarf_cu(struct sym_module *mod, uint64_t vaddr, Dwarf_Die *cu, Dwarf_Addr *bias);
/* The source line of a module address: its file (libdw's string, NULL
 * when none) and line. */
const char *sym_dwarf_line(struct sym_module *mod, uint64_t vaddr, int *line);
const struct sym_fninfo *sym_dwarf_fninfo(struct sym_ctx *ctx, struct sym_module *mod,
					  Dwarf_Die *die);
/* A DIE of a Fortran unit: named by DWARF, qualified by its module. */
int sym_dwarf_is_fortran(Dwarf_Die *die);
/* DW_AT_call_file/DW_AT_call_line of an inlined_subroutine DIE. */
void sym_dwarf_callsite(struct sym_ctx *ctx, Dwarf_Die *die, const char **file,
			uint32_t *line);
/* sym_label_lines' DWARF side: file is libdw's string. */
int sym_dwarf_label_lines(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
			  const char *label, const char **file, uint32_t *lo, uint32_t *hi,
			  uint32_t *last);
void sym_dwarf_free(struct sym_module *mod);

#endif
