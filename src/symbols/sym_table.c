/*
 * sym_table.c — a module's function symbols as one sorted array, built once
 * from dwfl_module_getsym_info and searched by bisection.  We never call
 * dwfl_module_addrinfo per address: it scans every symbol on each call.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_int.h"

struct sym_cand {
	uint64_t lo, size, secend;
	const char *name;
	int rank;                /* higher wins among aliases at the same address */
	int exported;            /* global or weak, default visibility */
};

static int sym_rank(const GElf_Sym *s, const char *name)
{
	int r = 0;

	if (s->st_size)
		r += 1000;
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		r += 300;
		break;
	case STB_WEAK:
		r += 200;
		break;
	default:
		r += 100;
		break;
	}
	/* __libc_foo, __foo, __GI___foo vs foo: the name without leading
	 * underscores is the one users write and search for, whatever its
	 * binding (glibc's read is weak, __read global, __GI___read local). */
	for (const char *p = name; *p == '_' && r > 0; p++)
		r -= 60;
	if (!strncmp(name, "__GI_", 5))
		r -= 300;
	return r;
}

static int sym_cand_cmp(const void *a, const void *b)
{
	const struct sym_cand *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* End of the section holding a symbol, in module addresses; UINT64_MAX when
 * unknown.  Bounds zero-sized symbols so they do not swallow what follows. */
static uint64_t sym_section_end(Elf *elf, GElf_Word shndx, Dwarf_Addr bias)
{
	GElf_Shdr shdr;
	Elf_Scn *scn;

	if (!elf || shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_ALLOC))
		return UINT64_MAX;
	return shdr.sh_addr + bias + shdr.sh_size;
}

void sym_table_build(struct sym_module *mod)
{
	struct sym_cand *c = NULL;
	size_t n = 0, cap = 0;

	mod->syms_built = 1;
	if (!mod->dm)
		return;
	int total = dwfl_module_getsymtab(mod->dm);
	for (int i = 1; i < total; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr bias = 0;
		const char *name =
			dwfl_module_getsym_info(mod->dm, i, &s, &addr, &shndx, &elf, &bias);
		if (!name || !*name)
			continue;
		int type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (shndx == SHN_UNDEF || addr == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct sym_cand *nc = util_reallocarray(c, ncap, sizeof(*c));
			if (!nc)
				break;
			c = nc;
			cap = ncap;
		}
		c[n].lo = addr;
		c[n].size = s.st_size;
		c[n].secend = s.st_size ? UINT64_MAX : sym_section_end(elf, shndx, bias);
		c[n].name = name;
		c[n].rank = sym_rank(&s, name);
		c[n].exported = GELF_ST_BIND(s.st_info) != STB_LOCAL &&
				GELF_ST_VISIBILITY(s.st_other) == STV_DEFAULT;
		n++;
	}
	if (!n) {
		free(c);
		return;
	}
	qsort(c, n, sizeof(*c), sym_cand_cmp);

	struct sym_sym *out = calloc(n, sizeof(*out));
	if (!out) {
		free(c);
		return;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && c[i].lo == c[i - 1].lo) {
			/* an alias ranked lower: exported if any name is */
			out[m - 1].exported |= c[i].exported;
			continue;
		}
		uint64_t hi;
		if (c[i].size) {
			hi = c[i].lo + c[i].size;
		} else {
			/* Zero-sized (hand-written asm): reaches to the next
			 * symbol, but not past its section. */
			size_t j = i + 1;
			while (j < n && c[j].lo == c[i].lo)
				j++;
			hi = j < n ? c[j].lo : UINT64_MAX;
			if (c[i].secend < hi)
				hi = c[i].secend;
			if (hi == UINT64_MAX)
				hi = c[i].lo + 4096;
		}
		if (hi <= c[i].lo)
			hi = c[i].lo + 1;
		out[m].lo = c[i].lo;
		out[m].hi = hi;
		out[m].raw = c[i].name;
		out[m].exported = c[i].exported;
		m++;
	}
	free(c);
	mod->syms = out;
	mod->nsyms = m;
}

/* The symbol whose [lo, hi) holds vaddr, the innermost one when symbols nest
 * (a sized local label inside a function). */
const struct sym_sym *sym_table_find(struct sym_module *mod, uint64_t vaddr)
{
	if (!mod->syms_built)
		sym_table_build(mod);
	size_t lo = 0, hi = mod->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mod->syms[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo = first symbol above vaddr; look back a few for a container. */
	for (size_t k = 0; k < 16 && lo > 0; k++, lo--) {
		const struct sym_sym *s = &mod->syms[lo - 1];
		if (vaddr < s->hi)
			return s;
	}
	return NULL;
}

int sym_is_exported(struct sym_module *mod, uint64_t vaddr)
{
	const struct sym_sym *s = sym_table_find(mod, vaddr);

	return s && s->exported;
}
