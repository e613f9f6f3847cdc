/*
 * sym_dwarf.c — DWARF side of the symbolizer: per-CU indexes of subprogram
 * ranges, the inline scope walk from a subprogram down to the innermost
 * inlined_subroutine holding a pc, and function names/declarations per DIE.
 * We walk DIEs ourselves: dwarf_getscopes finds no inlines in LTO CUs
 * (elfutils 0.188, see docs/symbols.md), and a linear scan of a CU's children
 * per pc is too slow for big CUs, hence the sorted index.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_int.h"

/* Tags whose children may hold subprogram definitions with code. */
static int sym_dwarf_container(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_namespace:
	case DW_TAG_module:
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
		return 1;
	default:
		return 0;
	}
}

static int sym_cu_fn_add(struct sym_cu_index *ix, size_t *cap, uint64_t lo, uint64_t hi,
			 Dwarf_Die *die)
{
	if (ix->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct sym_cu_fn *nf = util_reallocarray(ix->fn, ncap, sizeof(*nf));
		if (!nf)
			return -12;
		ix->fn = nf;
		*cap = ncap;
	}
	ix->fn[ix->n].lo = lo;
	ix->fn[ix->n].hi = hi;
	ix->fn[ix->n].die = *die;
	ix->n++;
	return 0;
}

static void sym_cu_collect(struct sym_cu_index *ix, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;

	/* Depth bound: corrupt or hostile DWARF must not overflow the stack. */
	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				if (hi > lo && sym_cu_fn_add(ix, cap, lo, hi, &child) < 0)
					return;
			}
		}
		if (sym_dwarf_container(tag) && dwarf_haschildren(&child) > 0)
			sym_cu_collect(ix, cap, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int sym_cu_fn_cmp(const void *a, const void *b)
{
	const struct sym_cu_fn *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* wider first, so that the later (narrower, nested) entry wins ties */
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	return 0;
}

/* key: offset of the CU (of its skeleton for split units) in the module's
 * .debug_info, so split units never collide with ordinary ones. */
static struct sym_cu_index *sym_cu_index_get(struct sym_ctx *ctx, struct sym_module *mod,
					     Dwarf_Die *cudie, uint64_t key)
{
	uint64_t v;

	if (sym_map_get(&ctx->map, SYM_TAG_CU | mod->idx, key, &v))
		return &mod->cus[v];
	if (mod->ncus == mod->capcus) {
		size_t ncap = mod->capcus ? mod->capcus * 2 : 16;
		struct sym_cu_index *nc = util_reallocarray(mod->cus, ncap, sizeof(*nc));
		if (!nc)
			return NULL;
		mod->cus = nc;
		mod->capcus = ncap;
	}
	struct sym_cu_index *ix = &mod->cus[mod->ncus];
	size_t cap = 0;
	memset(ix, 0, sizeof(*ix));
	sym_cu_collect(ix, &cap, cudie, 0);
	if (ix->n)
		qsort(ix->fn, ix->n, sizeof(*ix->fn), sym_cu_fn_cmp);
	if (sym_map_put(&ctx->map, SYM_TAG_CU | mod->idx, key, mod->ncus) < 0) {
		free(ix->fn);
		return NULL;
	}
	mod->ncus++;
	return ix;
}

/* The narrowest subprogram range holding pc. */
static Dwarf_Die *sym_cu_index_find(struct sym_cu_index *ix, uint64_t pc)
{
	size_t lo = 0, hi = ix->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->fn[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct sym_cu_fn *best = NULL;
	for (size_t k = 0; k < 32 && lo > 0; k++, lo--) {
		struct sym_cu_fn *f = &ix->fn[lo - 1];
		if (pc < f->hi && (!best || f->hi - f->lo < best->hi - best->lo))
			best = f;
	}
	return best ? &best->die : NULL;
}

static int sym_die_has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Descend from parent into the block or inlined_subroutine child holding pc,
 * appending inlined_subroutine DIEs to scopes.  Blocks with no pc attributes
 * at all are searched too (their children may carry ranges). */
static int sym_walk(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *scopes, int n, int max,
		    int depth)
{
	Dwarf_Die child;

	if (depth > 128 || dwarf_child(parent, &child) != 0)
		return n;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, pc) == 1) {
			if (tag == DW_TAG_inlined_subroutine) {
				if (n < max)
					scopes[n++] = child;
			}
			return sym_walk(&child, pc, scopes, n, max, depth + 1);
		}
		if (tag == DW_TAG_lexical_block && !sym_die_has_pc_attrs(&child)) {
			int m = sym_walk(&child, pc, scopes, n, max, depth + 1);
			if (m != n)
				return m;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return n;
}

/* A skeleton unit (-gsplit-dwarf) holds no DIEs of interest: use its split
 * unit when libdw found the .dwo. */
static void sym_split_unit(Dwarf_Die *cudie)
{
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die sub;

	if (dwarf_tag(cudie) != DW_TAG_skeleton_unit)
		return;
	if (dwarf_cu_info(cudie->cu, &version, &unit_type, NULL, &sub, NULL, NULL, NULL) == 0 &&
	    dwarf_tag(&sub) == DW_TAG_compile_unit)
		*cudie = sub;
}

static int sym_cu_range_cmp(const void *a, const void *b)
{
	const struct sym_cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every CU's ranges, from its DIE (DW_AT_low_pc/high_pc or DW_AT_ranges),
 * sorted; left empty when memory runs out. */
static void sym_cu_ranges(struct sym_module *mod, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	mod->cur_built = 1;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die cu;
		ptrdiff_t it = 0;

		while (dwarf_offdie(dw, off + hsize, &cu) &&
		       (it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
			if (hi <= lo)
				continue;
			if (mod->ncur == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct sym_cu_range *n =
					util_reallocarray(mod->cur, ncap, sizeof(*n));
				if (!n) {
					free(mod->cur);
					mod->cur = NULL;
					mod->ncur = 0;
					return;
				}
				mod->cur = n;
				cap = ncap;
			}
			mod->cur[mod->ncur++] = (struct sym_cu_range){lo, hi, off + hsize};
		}
		off = next;
	}
	if (mod->ncur)
		qsort(mod->cur, mod->ncur, sizeof(*mod->cur), sym_cu_range_cmp);
}

/*
 * libdwfl finds a CU by .debug_aranges only (elfutils 0.188), and not every
 * producer writes them: clang does not unless asked (-gdwarf-aranges), and
 * Go's linker writes them for a cgo program's C part alone.  In such a Go
 * program libdwfl even named a C unit whose two ranges lie on both sides
 * of the Go code ("gcc_mmap.c:37" for main.fib).  Its CU is used only when
 * the CU's own ranges hold the address; else the CUs' ranges, read once a
 * module, are searched.
 */
int sym_dwarf_cu(struct sym_module *mod, uint64_t vaddr, Dwarf_Die *cu, Dwarf_Addr *bias)
{
	Dwarf_Die *d = dwfl_module_addrdie(mod->dm, vaddr, bias);
	size_t lo = 0, hi, k;
	Dwarf *dw;

	if (d && dwarf_haspc(d, vaddr - *bias) > 0) {
		*cu = *d;
		return 0;
	}
	dw = dwfl_module_getdwarf(mod->dm, bias);
	if (!dw)
		return -1;
	if (!mod->cur_built)
		sym_cu_ranges(mod, dw);
	uint64_t pc = vaddr - *bias;
	for (hi = mod->ncur; lo < hi;) { /* the last range starting at or before pc */
		size_t mid = lo + (hi - lo) / 2;
		if (mod->cur[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = 0; lo > 0 && k < 8; k++, lo--) /* and a few before it, which may nest */
		if (pc < mod->cur[lo - 1].hi)
			return dwarf_offdie(dw, mod->cur[lo - 1].off, cu) ? 0 : -1;
	return -1;
}

const char *sym_dwarf_line(struct sym_module *mod, uint64_t vaddr, int *line)
{
	Dwarf_Addr bias;
	Dwarf_Line *dl;
	Dwarf_Die cu;

	*line = 0;
	if (sym_dwarf_cu(mod, vaddr, &cu, &bias) < 0)
		return NULL;
	dl = dwarf_getsrc_die(&cu, vaddr - bias);
	if (!dl || dwarf_lineno(dl, line) != 0)
		return NULL;
	return dwarf_linesrc(dl, NULL, NULL);
}

int sym_dwarf_scopes(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		     Dwarf_Die *scopes, int max)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die cudie;

	if (max < 1 || sym_dwarf_cu(mod, vaddr, &cudie, &bias) < 0)
		return 0;
	uint64_t pc = vaddr - bias;
	struct sym_cu_index *ix;
	if (mod->last_cu == cudie.addr && mod->ncus) {
		/* pcs come in address order often enough to skip the map */
		ix = &mod->cus[mod->last_ix];
	} else {
		const void *addr = cudie.addr;
		uint64_t key = dwarf_dieoffset(&cudie);
		sym_split_unit(&cudie);
		ix = sym_cu_index_get(ctx, mod, &cudie, key);
		if (!ix)
			return 0;
		mod->last_cu = addr;
		mod->last_ix = (size_t)(ix - mod->cus);
	}
	Dwarf_Die *fn = sym_cu_index_find(ix, pc);
	if (!fn)
		return 0;
	scopes[0] = *fn;
	return sym_walk(fn, pc, scopes, 1, max, 0);
}

static const char *sym_attr_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

/* dwarf_decl_file without its assertion: elfutils 0.188 aborts in
 * dwarf_decl_file (cu->files unset) for DIEs of split (-gsplit-dwarf) units.
 * Same lookup, through dwarf_getsrcfiles of the attribute's own CU. */
static const char *sym_decl_file(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t n;

	if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &a), &idx) != 0)
		return NULL;
	if (!dwarf_cu_die(a.cu, &cu, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	if (dwarf_getsrcfiles(&cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* The source language of die's unit, -1 when unknown. */
static int sym_lang(Dwarf_Die *die)
{
	Dwarf_Die cu;

	return dwarf_diecu(die, &cu, NULL, NULL) ? dwarf_srclang(&cu) : -1;
}

static int sym_cu_is_cxx(Dwarf_Die *die)
{
	int l = sym_lang(die);

	return l == DW_LANG_C_plus_plus || l == DW_LANG_C_plus_plus_03 ||
	       l == DW_LANG_C_plus_plus_11 || l == DW_LANG_C_plus_plus_14;
}

int sym_dwarf_is_fortran(Dwarf_Die *die)
{
	int l = sym_lang(die);

	return l == DW_LANG_Fortran77 || l == DW_LANG_Fortran90 || l == DW_LANG_Fortran95 ||
	       l == DW_LANG_Fortran03 || l == DW_LANG_Fortran08;
}

/* The declaration a definition refers to, following DW_AT_abstract_origin and
 * DW_AT_specification to the end: that DIE sits inside its class/namespace. */
static void sym_decl_die(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die next;

	*out = *die;
	for (int i = 0; i < 8; i++) {
		if (dwarf_formref_die(dwarf_attr(out, DW_AT_abstract_origin, &a), &next) ||
		    dwarf_formref_die(dwarf_attr(out, DW_AT_specification, &a), &next))
			*out = next;
		else
			break;
	}
}

static int sym_scope_tag(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_module || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block;
}

static int sym_par_add(struct sym_parents *p, size_t *cap, uint64_t off, uint64_t par)
{
	if (p->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 256;
		struct sym_parent *np = util_reallocarray(p->ent, ncap, sizeof(*np));
		if (!np)
			return -12;
		p->ent = np;
		*cap = ncap;
	}
	p->ent[p->n].off = off;
	p->ent[p->n].par = par;
	p->n++;
	return 0;
}

/* Records the enclosing scope of every scope DIE.  A preorder walk meets
 * DIEs in increasing offset order, so the array comes out sorted. */
static void sym_par_collect(struct sym_parents *p, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die child;
	uint64_t poff = dwarf_dieoffset(parent);

	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return;
	do {
		if (!sym_scope_tag(dwarf_tag(&child)))
			continue;
		if (sym_par_add(p, cap, dwarf_dieoffset(&child), poff) < 0)
			return;
		if (dwarf_haschildren(&child) > 0)
			sym_par_collect(p, cap, &child, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The parent table of die's CU, built on first use (one walk per CU). */
static struct sym_parents *sym_parents_get(struct sym_ctx *ctx, struct sym_module *mod,
					   Dwarf_Die *die)
{
	Dwarf_Die cu;
	uint64_t key = (uintptr_t)die->cu, v;

	if (sym_map_get(&ctx->map, SYM_TAG_PAR | mod->idx, key, &v))
		return &mod->pars[v];
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return NULL;
	if (mod->npars == mod->cappars) {
		size_t ncap = mod->cappars ? mod->cappars * 2 : 16;
		struct sym_parents *np = util_reallocarray(mod->pars, ncap, sizeof(*np));
		if (!np)
			return NULL;
		mod->pars = np;
		mod->cappars = ncap;
	}
	struct sym_parents *p = &mod->pars[mod->npars];
	size_t cap = 0;
	memset(p, 0, sizeof(*p));
	sym_par_collect(p, &cap, &cu, 0);
	if (sym_map_put(&ctx->map, SYM_TAG_PAR | mod->idx, key, mod->npars) < 0) {
		free(p->ent);
		return NULL;
	}
	mod->npars++;
	return p;
}

static int sym_parent_of(const struct sym_parents *p, uint64_t off, uint64_t *par)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->ent[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->n || p->ent[lo].off != off)
		return 0;
	*par = p->ent[lo].par;
	return 1;
}

/* "ns::Klass::name" for a C++ function DWARF gives no linkage name for
 * (lambdas, templates over local types, anonymous namespaces, main): the
 * namespaces, classes and functions enclosing its declaration.  libdw has no
 * parent links and dwarf_getscopes_die rewalks the CU per call, so each CU's
 * scope parents are tabled once. */
static const char *sym_qualify(struct sym_ctx *ctx, struct sym_module *mod, Dwarf_Die *die,
			       const char *plain, uint32_t *decl_line, const char **decl_file)
{
	const char *parts[32];
	int nparts = 0;
	Dwarf_Die decl, cur;
	char buf[1024];
	size_t len = 0;
	uint64_t off, par;

	sym_decl_die(die, &decl);
	struct sym_parents *p = sym_parents_get(ctx, mod, &decl);
	Dwarf *dw = dwarf_cu_getdwarf(decl.cu);
	if (!p || !dw)
		return sym_intern_str(ctx, plain);
	off = dwarf_dieoffset(&decl);
	while (nparts < 32 && sym_parent_of(p, off, &par) && dwarf_offdie(dw, par, &cur)) {
		const char *part = NULL;
		switch (dwarf_tag(&cur)) {
		case DW_TAG_namespace:
			part = dwarf_diename(&cur);
			if (!part)
				part = "(anonymous namespace)";
			break;
		case DW_TAG_module: /* Fortran's, as gdb writes it: work::fib */
			part = dwarf_diename(&cur);
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			part = dwarf_diename(&cur);
			if (!part)
				part = "{lambda}";
			if (!*decl_line) {
				/* operator() of a lambda has no declaration of
				 * its own; its closure type does. */
				int l = 0;
				const char *f = sym_decl_file(&cur);
				if (dwarf_decl_line(&cur, &l) == 0 && l > 0 && f) {
					*decl_line = (uint32_t)l;
					*decl_file = sym_intern_path(ctx, f);
				}
			}
			break;
		case DW_TAG_subprogram:
			part = sym_attr_string(&cur, DW_AT_name);
			break;
		default:
			break;
		}
		if (part)
			parts[nparts++] = part;
		off = par;
	}
	for (int i = nparts - 1; i >= 0; i--)
		if (len + strlen(parts[i]) + 3 < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s::", parts[i]);
	if (len + strlen(plain) + 1 > sizeof(buf))
		return sym_intern_str(ctx, plain);
	len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s", plain);
	return sym_intern(ctx, buf, len);
}

/* A subprogram's line where it has no DW_AT_decl_line (Go's linker writes
 * none): its entry's row of the line table, when in its declaring file.
 * Without DW_AT_decl_file either (the assembler's own subprograms: a .S
 * file's functions, OCaml's), the entry row's file as well (*file set). */
static int sym_entry_line(Dwarf_Die *die, const char **file)
{
	Dwarf_Addr pc;
	Dwarf_Die cu;
	Dwarf_Line *l;
	const char *src;
	int line = 0;

	if (dwarf_tag(die) != DW_TAG_subprogram || dwarf_lowpc(die, &pc) != 0 ||
	    !dwarf_diecu(die, &cu, NULL, NULL) || !(l = dwarf_getsrc_die(&cu, pc)) ||
	    !(src = dwarf_linesrc(l, NULL, NULL)) || (*file && strcmp(src, *file) != 0) ||
	    dwarf_lineno(l, &line) != 0 || line <= 0)
		return 0;
	if (!*file)
		*file = src;
	return line;
}

/* Name and declaration of a subprogram or inlined_subroutine DIE, cached per
 * DIE.  C++: the demangled linkage name ("ns::Klass::method(int)"), else the
 * DWARF name qualified by its scopes; C: the plain DW_AT_name.  All follow
 * DW_AT_abstract_origin and DW_AT_specification. */
const struct sym_fninfo *sym_dwarf_fninfo(struct sym_ctx *ctx, struct sym_module *mod,
					  Dwarf_Die *die)
{
	uint64_t key = dwarf_dieoffset(die), v;

	if (sym_map_get(&ctx->map, SYM_TAG_FN | mod->idx, key, &v))
		return &ctx->fns[v];
	if (ctx->nfns == ctx->capfns) {
		size_t ncap = ctx->capfns ? ctx->capfns * 2 : 256;
		struct sym_fninfo *nf = util_reallocarray(ctx->fns, ncap, sizeof(*nf));
		if (!nf)
			return NULL;
		ctx->fns = nf;
		ctx->capfns = ncap;
	}
	struct sym_fninfo *fi = &ctx->fns[ctx->nfns];
	const char *df = sym_decl_file(die);
	int line = 0;
	if (dwarf_decl_line(die, &line) != 0 || line < 0)
		line = sym_entry_line(die, &df);
	fi->decl_file = sym_intern_path(ctx, df ? df : "");
	fi->decl_line = (uint32_t)line;

	const char *link = sym_attr_string(die, DW_AT_linkage_name);
	if (!link)
		link = sym_attr_string(die, DW_AT_MIPS_linkage_name);
	const char *plain = sym_attr_string(die, DW_AT_name);
	/* C gets a linkage name too when an asm label renames the symbol
	 * (glibc's "__GI___clock_gettime" for __clock_gettime): only a mangled
	 * C++ name beats the source name. */
	if (link && plain && (link[0] != '_' || link[1] != 'Z'))
		link = NULL;
	if (link && (sym_demangle_available() || !plain))
		fi->name = sym_demangle(ctx, link);
	else if (link)
		fi->name = sym_intern_str(ctx, link);
	else if (plain && (sym_cu_is_cxx(die) || sym_dwarf_is_fortran(die)))
		fi->name = sym_qualify(ctx, mod, die, plain, &fi->decl_line, &fi->decl_file);
	else
		fi->name = plain ? sym_intern_str(ctx, plain) : NULL;
	if (sym_map_put(&ctx->map, SYM_TAG_FN | mod->idx, key, ctx->nfns) < 0)
		return fi; /* uncached but valid until the next call */
	ctx->nfns++;
	return fi;
}

void sym_dwarf_callsite(struct sym_ctx *ctx, Dwarf_Die *die, const char **file, uint32_t *line)
{
	Dwarf_Attribute a;
	Dwarf_Word w;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;

	*file = "";
	*line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0 && w <= UINT32_MAX)
		*line = (uint32_t)w;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) != 0)
		return;
	if (!dwarf_diecu(die, &cudie, NULL, NULL))
		return;
	if (dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0 || w >= nfiles)
		return;
	const char *f = dwarf_filesrc(files, w, NULL, NULL);
	if (f)
		*file = sym_intern_path(ctx, f);
}

/* The labels of a function's body, lexical blocks included: the line of
 * the one named want (*lo, its file *file) and the least line after it of
 * another label of that file (*hi, 0 while none). */
static void sym_labels_walk(Dwarf_Die *parent, const char *want, const char **file,
			    uint32_t *lo, uint32_t *hi, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Word line;
		Dwarf_Attribute a;
		const char *name, *f;

		if (tag == DW_TAG_lexical_block) {
			sym_labels_walk(&child, want, file, lo, hi, depth + 1);
			continue;
		}
		if (tag != DW_TAG_label || !(name = dwarf_diename(&child)) ||
		    dwarf_formudata(dwarf_attr(&child, DW_AT_decl_line, &a), &line) != 0 ||
		    !(f = sym_decl_file(&child)))
			continue;
		if (!*file) {
			if (!strcmp(name, want)) {
				*file = f;
				*lo = (uint32_t)line;
			}
		} else if (!strcmp(f, *file) && line > *lo && (!*hi || line < *hi)) {
			*hi = (uint32_t)line;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

int sym_dwarf_label_lines(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
			  const char *label, const char **file, uint32_t *lo, uint32_t *hi,
			  uint32_t *last)
{
	Dwarf_Addr bias;
	Dwarf_Lines *lines;
	Dwarf_Die fn, cu;
	size_t n, i;

	*file = NULL;
	*lo = *hi = *last = 0;
	if (sym_dwarf_scopes(ctx, mod, vaddr, &fn, 1) < 1)
		return 0;
	sym_labels_walk(&fn, label, file, lo, hi, 0);  /* finds the label */
	if (*file)
		sym_labels_walk(&fn, label, file, lo, hi, 0);  /* the next one */
	if (!*file || *hi <= *lo || sym_dwarf_cu(mod, vaddr, &cu, &bias) < 0 ||
	    dwarf_getsrclines(&cu, &lines, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		const char *f;
		int line;

		if (l && dwarf_lineno(l, &line) == 0 && line >= (int)*lo && line < (int)*hi &&
		    line > (int)*last && (f = dwarf_linesrc(l, NULL, NULL)) && !strcmp(f, *file))
			*last = (uint32_t)line;
	}
	return *last > 0;
}

void sym_dwarf_free(struct sym_module *mod)
{
	for (size_t i = 0; i < mod->npars; i++)
		free(mod->pars[i].ent);
	free(mod->pars);
	mod->pars = NULL;
	mod->npars = mod->cappars = 0;
	for (size_t i = 0; i < mod->ncus; i++)
		free(mod->cus[i].fn);
	free(mod->cus);
	mod->cus = NULL;
	mod->last_cu = NULL;
	mod->ncus = mod->capcus = 0;
	free(mod->cur);
	mod->cur = NULL;
	mod->ncur = 0;
	mod->cur_built = 0;
}
