/*
 * sym_fde.c — function boundaries from the call-frame information every
 * x86-64 and aarch64 object carries for unwinding, for code whose symbols
 * were stripped: each FDE covers one function (or one part of it), so pcs
 * without a symbol still group by function.  Read from .eh_frame_hdr's
 * sorted table (each entry checked against its FDE, which also gives the
 * range), else from .debug_frame; built once per module, searched by bisection.
 */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_int.h"

struct sym_fde_buf {
	struct sym_fde *v;
	size_t n, cap;
};

static int fde_push(struct sym_fde_buf *b, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return 0;
	if (b->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		struct sym_fde *nv = util_reallocarray(b->v, ncap, sizeof(*nv));

		if (!nv)
			return -1;
		b->v = nv;
		b->cap = ncap;
	}
	b->v[b->n].lo = lo;
	b->v[b->n].hi = hi;
	b->n++;
	return 0;
}

static int32_t rd_s32(const unsigned char *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint32_t rd_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t rd_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static Elf_Scn *fde_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return sh->sh_type == SHT_NOBITS ? NULL : scn;
	}
	return NULL;
}

/*
 * .eh_frame_hdr: version 1, then the encodings of eh_frame_ptr, fde_count and
 * the table; GCC and both linkers write fde_count as udata4 and the table as
 * datarel|sdata4 pairs (initial location, FDE address) relative to the header.
 * Each FDE is read to confirm its pc_begin (pcrel|sdata4, the encoding every
 * x86-64 compiler uses) and take its pc_range; entries that do not match are
 * skipped.
 */
static void fde_from_eh(Elf *elf, struct sym_fde_buf *b)
{
	GElf_Shdr hsh, fsh;
	Elf_Scn *hs = fde_section(elf, ".eh_frame_hdr", &hsh), *fs;
	Elf_Data *hd, *fd;
	const unsigned char *h, *f;
	uint32_t count, i;

	fs = fde_section(elf, ".eh_frame", &fsh);
	if (!hs || !fs)
		return;
	hd = elf_getdata(hs, NULL);
	fd = elf_getdata(fs, NULL);
	if (!hd || !fd || hd->d_size < 12 || !hd->d_buf || !fd->d_buf)
		return;
	h = hd->d_buf;
	f = fd->d_buf;
	if (h[0] != 1 || h[2] != 0x03 || h[3] != 0x3b)
		return;
	count = rd_u32(h + 8);
	if ((uint64_t)count * 8 > hd->d_size - 12)
		return;
	for (i = 0; i < count; i++) {
		uint64_t lo = hsh.sh_addr + (int64_t)rd_s32(h + 12 + 8 * (size_t)i);
		uint64_t fde = hsh.sh_addr + (int64_t)rd_s32(h + 16 + 8 * (size_t)i);
		uint64_t off = fde - fsh.sh_addr, begin;
		const unsigned char *p;

		if (fde < fsh.sh_addr || off + 16 > fd->d_size)
			continue;
		p = f + off;
		if (rd_u32(p) == 0 || rd_u32(p) == 0xffffffffu || rd_u32(p + 4) == 0)
			continue; /* terminator, 64-bit length, or a CIE */
		begin = fde + 8 + (int64_t)rd_s32(p + 8);
		if (begin != lo)
			continue; /* not pcrel|sdata4: leave it to the fallback */
		if (fde_push(b, lo, lo + (uint64_t)rd_u32(p + 12)) < 0)
			return;
	}
}

/* .debug_frame (64-bit ELF): FDEs carry absolute 8-byte initial locations and
 * ranges; an FDE's CIE pointer is not 0xffffffff (which marks a CIE). */
static void fde_from_debug_frame(Elf *elf, struct sym_fde_buf *b)
{
	GElf_Shdr sh;
	Elf_Scn *s = fde_section(elf, ".debug_frame", &sh);
	Elf_Data *d;
	const unsigned char *p;
	uint64_t off = 0;

	if (!s || !(d = elf_getdata(s, NULL)) || !d->d_buf)
		return;
	p = d->d_buf;
	while (off + 4 <= d->d_size) {
		uint32_t len = rd_u32(p + off);

		if (len == 0 || len == 0xffffffffu || off + 4 + len > d->d_size)
			break;
		if (len >= 20 && rd_u32(p + off + 4) != 0xffffffffu) {
			uint64_t lo = rd_u64(p + off + 8);

			if (fde_push(b, lo, lo + rd_u64(p + off + 16)) < 0)
				return;
		}
		off += 4 + (uint64_t)len;
	}
}

static int fde_cmp(const void *a, const void *b)
{
	const struct sym_fde *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

void sym_fde_build(struct sym_module *mod)
{
	struct sym_fde_buf b = {NULL, 0, 0};
	GElf_Addr bias = 0;
	Elf *elf;

	mod->fdes_built = 1;
	if (!mod->dm)
		return;
	elf = dwfl_module_getelf(mod->dm, &bias);
	if (!elf || gelf_getclass(elf) != ELFCLASS64)
		return;
	fde_from_eh(elf, &b);
	if (!b.n)
		fde_from_debug_frame(elf, &b);
	if (!b.n) {
		free(b.v);
		return;
	}
	qsort(b.v, b.n, sizeof(*b.v), fde_cmp);
	mod->fdes = b.v;
	mod->nfdes = b.n;
}

/* The FDE whose range holds vaddr (ELF address), innermost start: 1 and
 * *start, or 0. */
int sym_fde_find(struct sym_module *mod, uint64_t vaddr, uint64_t *start)
{
	size_t lo = 0, hi;

	if (!mod->fdes_built)
		sym_fde_build(mod);
	hi = mod->nfdes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mod->fdes[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= mod->fdes[lo - 1].hi)
		return 0;
	*start = mod->fdes[lo - 1].lo;
	return 1;
}
