/*
 * elfsym.h — symbol lookup in a loaded object's dynamic table, by the agent
 * itself.  dlsym allocates with the program's malloc whenever a name is not
 * found (the error message and dlerror's per-thread record), and cannot see
 * the private libunwind's symbols at all (unwind_copy.c makes them local):
 * this reads the object's GNU (or SysV) hash table directly, without
 * allocation, lock or error state.  Header-only: the agent, the MPI
 * wrappers and the allocation hooks are separate libraries.
 *
 * A symbol of type STT_GNU_IFUNC is resolved by calling its resolver, as the
 * loader does on x86-64 (no argument): not from a signal handler.
 */
#ifndef CBN_ELFSYM_H
#define CBN_ELFSYM_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

struct elfsym_obj {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
	const uint16_t *versym;
	const ElfW(Verdef) *verdef;
	const ElfW(Verneed) *verneed;
};

/* Dynamic-section pointers: glibc relocates some in place (the usual case),
 * the vDSO's are not. */
static inline uintptr_t elfsym_dptr(const struct link_map *lm, ElfW(Addr) p)
{
	return p < lm->l_addr ? lm->l_addr + p : p;
}

/* 0, or -1 when lm has no symbol table. */
static inline int elfsym_open(const struct link_map *lm, struct elfsym_obj *o)
{
	const ElfW(Dyn) *d;

	memset(o, 0, sizeof(*o));
	o->base = lm->l_addr;
	for (d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		uintptr_t p = elfsym_dptr(lm, d->d_un.d_ptr);

		switch (d->d_tag) {
		case DT_SYMTAB: o->symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: o->strtab = (const char *)p; break;
		case DT_GNU_HASH: o->gnu_hash = (const uint32_t *)p; break;
		case DT_HASH: o->sysv_hash = (const uint32_t *)p; break;
		case DT_VERSYM: o->versym = (const uint16_t *)p; break;
		case DT_VERDEF: o->verdef = (const ElfW(Verdef) *)p; break;
		case DT_VERNEED: o->verneed = (const ElfW(Verneed) *)p; break;
		}
	}
	return o->symtab && o->strtab && (o->gnu_hash || o->sysv_hash) ? 0 : -1;
}

/* The name of version index ndx among o's definitions, or NULL. */
static inline const char *elfsym_verdef_name(const struct elfsym_obj *o, unsigned ndx)
{
	const ElfW(Verdef) *vd = o->verdef;

	while (vd) {
		if (vd->vd_ndx == ndx) {
			const ElfW(Verdaux) *a = (const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);

			return o->strtab + a->vda_name;
		}
		if (!vd->vd_next)
			break;
		vd = (const ElfW(Verdef) *)((const char *)vd + vd->vd_next);
	}
	return NULL;
}

/* The version an import (symbol index i of o) asks for, or NULL. */
static inline const char *elfsym_import_version(const struct elfsym_obj *o, size_t i)
{
	const ElfW(Verneed) *vn = o->verneed;
	unsigned ndx;

	if (!o->versym || !vn)
		return NULL;
	ndx = o->versym[i] & 0x7fff;
	if (ndx < 2)
		return NULL;
	for (;;) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
		unsigned k;

		for (k = 0; k < vn->vn_cnt; k++) {
			if (a->vna_other == ndx)
				return o->strtab + a->vna_name;
			if (!a->vna_next)
				break;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			return NULL;
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
}

/* Does symbol i answer name (already compared) at version (NULL: the
 * default one)?  Local symbols only when with_local. */
static inline int elfsym_ok(const struct elfsym_obj *o, size_t i, const char *version,
			    int with_local)
{
	const ElfW(Sym) *s = &o->symtab[i];
	unsigned bind = ELF64_ST_BIND(s->st_info), type = ELF64_ST_TYPE(s->st_info);
	const char *vname;

	if (s->st_shndx == SHN_UNDEF || (s->st_value == 0 && type != STT_TLS))
		return 0;
	if (type != STT_FUNC && type != STT_OBJECT && type != STT_GNU_IFUNC && type != STT_NOTYPE)
		return 0;
	if (bind == STB_LOCAL ? !with_local : bind != STB_GLOBAL && bind != STB_WEAK)
		return 0;
	if (!o->versym || !o->verdef)
		return 1;
	if (!version)
		return !(o->versym[i] & 0x8000);
	vname = elfsym_verdef_name(o, o->versym[i] & 0x7fff);
	return vname && strcmp(vname, version) == 0;
}

static inline const ElfW(Sym) *elfsym_find(const struct elfsym_obj *o, const char *name,
					   const char *version, int with_local)
{
	const unsigned char *c;

	if (o->gnu_hash) {
		const uint32_t *h = o->gnu_hash;
		uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], shift = h[3];
		const ElfW(Addr) *bloom = (const ElfW(Addr) *)(h + 4);
		const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t hash = 5381, i;
		ElfW(Addr) word, mask;

		for (c = (const unsigned char *)name; *c; c++)
			hash = hash * 33 + *c;
		if (!nbuckets || !bloom_size)
			return NULL;
		word = bloom[(hash / (8 * sizeof(ElfW(Addr)))) % bloom_size];
		mask = ((ElfW(Addr))1 << (hash % (8 * sizeof(ElfW(Addr))))) |
		       ((ElfW(Addr))1 << ((hash >> shift) % (8 * sizeof(ElfW(Addr)))));
		if ((word & mask) != mask)
			return NULL;
		i = buckets[hash % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t h2 = chain[i - symoffset];

			if ((h2 | 1) == (hash | 1) && strcmp(name, o->strtab + o->symtab[i].st_name) == 0 &&
			    elfsym_ok(o, i, version, with_local))
				return &o->symtab[i];
			if (h2 & 1)
				return NULL;
		}
	} else {
		const uint32_t *h = o->sysv_hash;
		uint32_t nbucket = h[0], hash = 0, g, i;
		const uint32_t *bucket = h + 2, *chain = bucket + nbucket;

		for (c = (const unsigned char *)name; *c; c++) {
			hash = (hash << 4) + *c;
			g = hash & 0xf0000000;
			if (g)
				hash ^= g >> 24;
			hash &= ~g;
		}
		if (!nbucket)
			return NULL;
		for (i = bucket[hash % nbucket]; i; i = chain[i])
			if (strcmp(name, o->strtab + o->symtab[i].st_name) == 0 &&
			    elfsym_ok(o, i, version, with_local))
				return &o->symtab[i];
	}
	return NULL;
}

/* The address of name in o, or NULL (an IFUNC's resolver is called). */
static inline void *elfsym_addr(const struct elfsym_obj *o, const char *name, const char *version,
				int with_local)
{
	const ElfW(Sym) *s = elfsym_find(o, name, version, with_local);
	uintptr_t a;

	if (!s)
		return NULL;
	a = o->base + s->st_value;
	if (ELF64_ST_TYPE(s->st_info) == STT_GNU_IFUNC)
		a = ((uintptr_t(*)(void))a)();
	return (void *)a;
}

/* The loaded object whose file name ends in "/" base (or is base), or NULL;
 * from any map of the list (the caller's own, from dladdr1). */
static inline struct link_map *elfsym_map_named(struct link_map *any, const char *base)
{
	size_t bl = strlen(base);
	struct link_map *lm = any;

	while (lm && lm->l_prev)
		lm = lm->l_prev;
	for (; lm; lm = lm->l_next) {
		size_t nl = lm->l_name ? strlen(lm->l_name) : 0;

		if (nl >= bl && strcmp(lm->l_name + nl - bl, base) == 0 &&
		    (nl == bl || lm->l_name[nl - bl - 1] == '/'))
			return lm;
	}
	return NULL;
}

/* The first definition of name (default version) in the global list after
 * the object after (NULL: from the start), as dlsym(RTLD_NEXT) would find it
 * for a caller in after, but without dlsym's allocations on a miss. */
static inline void *elfsym_global(struct link_map *any, struct link_map *after, const char *name)
{
	struct link_map *lm = any;
	struct elfsym_obj o;
	void *p;

	while (lm && lm->l_prev)
		lm = lm->l_prev;
	if (after)
		lm = after->l_next;
	for (; lm; lm = lm->l_next)
		if (elfsym_open(lm, &o) == 0 && (p = elfsym_addr(&o, name, NULL, 0)))
			return p;
	return NULL;
}

#endif
