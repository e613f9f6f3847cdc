/*
 * unwind_copy.c — build-time tool: copies libunwind.so.8 to the agent's private
 * libcbn_unwd.so with its DT_SONAME renamed (same length), so that the agent's
 * libunwind is an instance of its own: the program's libunwind (linked, or
 * dlopened later by name) never shares its locks, caches or state with ours
 * (sampler-safety.md §2).  The agent names the copy in its DT_NEEDED, so the
 * loader maps it at start-up, before any code of the program runs and with
 * its own start-up allocator (a dlopen from the constructor would allocate
 * with the program's malloc).  Every symbol the copy defines becomes local
 * and hidden in its .dynsym: nothing outside resolves to it (the copy
 * defines _Unwind_RaiseException, backtrace and co., and is in the global
 * scope), its own references still bind to itself (the loader resolves a
 * local or hidden symbol in its own object), and the agent finds what it
 * calls by reading the table itself (elfsym.h).  Its PT_TLS header also becomes PT_NULL: the
 * loader then gives the copy no TLS module id, a slot of the dynamic thread
 * vector a program could count (dl_iterate_phdr's dlpi_tls_modid); its
 * 16 bytes of TLS (general dynamic, reached through __tls_get_addr with
 * module 0 now) are served from the agent's own TLS (unwind.c).  And the copy
 * no longer needs liblzma.so.5: its DT_NEEDED and version need name libc.so.6
 * instead (the XZ_5.0 version made weak) and its lzma_* imports become weak
 * undefined symbols.  libunwind calls them only to read an ELF file's
 * MiniDebugInfo (unw_get_proc_name's fallback), which the agent never does
 * and could not (its open() is refused: unwind.c); loading liblzma cost
 * every process about 120 us (bench/startup.sh).  Code is untouched.
 *
 *   unwind_copy SRC DST
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLD_SONAME "libunwind.so.8"
#define NEW_SONAME "libcbn_unwd.so" /* same length: no string table moves */

static void die(const char *what, const char *path)
{
	fprintf(stderr, "unwind_copy: %s: %s\n", path, what);
	exit(1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	unsigned char *buf;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		die(strerror(errno), path);
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		die("cannot size", path);
	buf = malloc((size_t)n ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read", path);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* File offset of virtual address va, from the PT_LOAD segments. */
static long va_to_off(const unsigned char *img, const Elf64_Ehdr *eh, uint64_t va)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	int i;

	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && va >= ph[i].p_vaddr &&
		    va < ph[i].p_vaddr + ph[i].p_filesz)
			return (long)(va - ph[i].p_vaddr + ph[i].p_offset);
	return -1;
}

#define LZMA_SONAME "liblzma.so.5"
#define LIBC_SONAME "libc.so.6"

/* The section of type type, or NULL. */
static Elf64_Shdr *section(unsigned char *img, size_t len, const Elf64_Ehdr *eh, uint32_t type)
{
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);
	int i;

	if (!eh->e_shoff || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		return NULL;
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type && sh[i].sh_offset + sh[i].sh_size <= len)
			return &sh[i];
	return NULL;
}

/* liblzma out of the copy's dependencies (see the top of the file).  A
 * library without it (another build of libunwind) is left as it is. */
static void drop_lzma(unsigned char *img, size_t len, const Elf64_Ehdr *eh, const Elf64_Dyn *dyn,
		      size_t ndyn, const char *strtab, uint64_t strsz)
{
	Elf64_Dyn *d = (Elf64_Dyn *)dyn;
	Elf64_Shdr *vn_sh = section(img, len, eh, SHT_GNU_verneed),
		   *vs_sh = section(img, len, eh, SHT_GNU_versym),
		   *sym_sh = section(img, len, eh, SHT_DYNSYM);
	uint64_t lzma = (uint64_t)-1, libc = (uint64_t)-1, off;
	Elf64_Vernaux *glibc = NULL;
	uint16_t weak_idx[16];
	int nweak = 0, k;
	size_t i;

	for (i = 0; i < ndyn && d[i].d_tag != DT_NULL; i++) {
		if (d[i].d_tag != DT_NEEDED || d[i].d_un.d_val >= strsz)
			continue;
		if (!strcmp(strtab + d[i].d_un.d_val, LZMA_SONAME))
			lzma = i;
		else if (!strcmp(strtab + d[i].d_un.d_val, LIBC_SONAME))
			libc = d[i].d_un.d_val;
	}
	if (lzma == (uint64_t)-1)
		return;
	if (libc == (uint64_t)-1 || !vn_sh || !vs_sh || !sym_sh)
		die("liblzma needed but libc.so.6 or the version sections not found", "copy");
	d[lzma].d_un.d_val = libc;
	/* A version libc defines, for liblzma's version need to name. */
	for (off = vn_sh->sh_offset; off + sizeof(Elf64_Verneed) <= vn_sh->sh_offset + vn_sh->sh_size;) {
		Elf64_Verneed *vn = (Elf64_Verneed *)(img + off);
		uint64_t aoff = off + vn->vn_aux;

		if (vn->vn_file < strsz && !strcmp(strtab + vn->vn_file, LIBC_SONAME))
			for (k = 0; k < vn->vn_cnt && aoff + sizeof(Elf64_Vernaux) <= len; k++) {
				Elf64_Vernaux *a = (Elf64_Vernaux *)(img + aoff);

				if (a->vna_name < strsz && !glibc) {
					glibc = a;
					break;
				}
				if (!a->vna_next)
					break;
				aoff += a->vna_next;
			}
		if (!vn->vn_next)
			break;
		off += vn->vn_next;
	}
	if (!glibc)
		die("no version of libc.so.6 is needed", "copy");
	/*
	 * Its version need: libc's file and a version libc has, weak.  Naming
	 * XZ_5.0 (weak) was enough for dlopen, but the loader checks the
	 * versions of the objects it maps at start-up verbosely and would print
	 * "weak version `XZ_5.0' not found" on the program's stderr.  The lzma
	 * symbols stay weak undefined: they resolve to nothing, without error.
	 */
	for (off = vn_sh->sh_offset; off + sizeof(Elf64_Verneed) <= vn_sh->sh_offset + vn_sh->sh_size;) {
		Elf64_Verneed *vn = (Elf64_Verneed *)(img + off);
		uint64_t aoff = off + vn->vn_aux;

		if (vn->vn_file < strsz && !strcmp(strtab + vn->vn_file, LZMA_SONAME)) {
			vn->vn_file = (Elf64_Word)libc;
			for (k = 0; k < vn->vn_cnt && aoff + sizeof(Elf64_Vernaux) <= len; k++) {
				Elf64_Vernaux *a = (Elf64_Vernaux *)(img + aoff);

				a->vna_flags |= VER_FLG_WEAK;
				a->vna_name = glibc->vna_name;
				a->vna_hash = glibc->vna_hash;
				if (nweak < 16)
					weak_idx[nweak++] = a->vna_other;
				if (!a->vna_next)
					break;
				aoff += a->vna_next;
			}
		}
		if (!vn->vn_next)
			break;
		off += vn->vn_next;
	}
	/* Its symbols: weak, so that they resolve to nothing without error. */
	for (i = 0; i < sym_sh->sh_size / sizeof(Elf64_Sym); i++) {
		Elf64_Sym *sy = (Elf64_Sym *)(img + sym_sh->sh_offset) + i;
		uint16_t v;

		if (vs_sh->sh_offset + (i + 1) * sizeof(uint16_t) > len || sy->st_shndx != SHN_UNDEF)
			continue;
		v = ((uint16_t *)(img + vs_sh->sh_offset))[i] & 0x7fff;
		for (k = 0; k < nweak; k++)
			if (v == weak_idx[k])
				sy->st_info = ELF64_ST_INFO(STB_WEAK, ELF64_ST_TYPE(sy->st_info));
	}
}

/* Every defined symbol local and hidden (see the top of the file). */
static int hide_definitions(unsigned char *img, size_t len, const Elf64_Ehdr *eh)
{
	Elf64_Shdr *sym_sh = section(img, len, eh, SHT_DYNSYM);
	size_t i, n = 0;

	if (!sym_sh)
		die("no .dynsym section", "copy");
	for (i = 1; i < sym_sh->sh_size / sizeof(Elf64_Sym); i++) {
		Elf64_Sym *sy = (Elf64_Sym *)(img + sym_sh->sh_offset) + i;
		unsigned bind = ELF64_ST_BIND(sy->st_info);

		if (sy->st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK))
			continue;
		sy->st_info = ELF64_ST_INFO(STB_LOCAL, ELF64_ST_TYPE(sy->st_info));
		sy->st_other = (unsigned char)((sy->st_other & ~3u) | STV_HIDDEN);
		n++;
	}
	return (int)n;
}

int main(int argc, char **argv)
{
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	uint64_t strtab = 0, strsz = 0, soname = (uint64_t)-1;
	size_t len, ndyn = 0, i;
	unsigned char *img;
	long stroff;
	char *s;
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: unwind_copy SRC DST\n");
		return 2;
	}
	img = slurp(argv[1], &len);
	eh = (const Elf64_Ehdr *)img;
	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(*ph) > len)
		die("not a 64-bit ELF file", argv[1]);
	ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_DYNAMIC && ph[i].p_offset + ph[i].p_filesz <= len) {
			dyn = (const Elf64_Dyn *)(img + ph[i].p_offset);
			ndyn = ph[i].p_filesz / sizeof(*dyn);
		}
	}
	if (!dyn)
		die("no dynamic section", argv[1]);
	for (i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_STRTAB)
			strtab = dyn[i].d_un.d_ptr;
		else if (dyn[i].d_tag == DT_STRSZ)
			strsz = dyn[i].d_un.d_val;
		else if (dyn[i].d_tag == DT_SONAME)
			soname = dyn[i].d_un.d_val;
	}
	stroff = va_to_off(img, eh, strtab);
	if (stroff < 0 || soname >= strsz || (uint64_t)stroff + strsz > len)
		die("no DT_SONAME in the dynamic string table", argv[1]);
	s = (char *)img + stroff + soname;
	if (soname + sizeof(OLD_SONAME) > strsz || strcmp(s, OLD_SONAME) != 0)
		die("DT_SONAME is not " OLD_SONAME, argv[1]);
	/* The string must be the SONAME's alone: no other dynamic entry (e.g. a
	 * DT_NEEDED sharing its tail) may point into it. */
	for (i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
		if ((dyn[i].d_tag == DT_NEEDED || dyn[i].d_tag == DT_RPATH ||
		     dyn[i].d_tag == DT_RUNPATH) &&
		    dyn[i].d_un.d_val > soname && dyn[i].d_un.d_val < soname + sizeof(OLD_SONAME))
			die("DT_SONAME string is shared", argv[1]);
	memcpy(s, NEW_SONAME, sizeof(NEW_SONAME));
	drop_lzma(img, len, eh, dyn, ndyn, (const char *)img + stroff, strsz);
	if (hide_definitions(img, len, eh) == 0)
		die("defines no symbol", argv[1]);
	for (i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_TLS) {
			if (ph[i].p_filesz != 0)
				die("PT_TLS has an initialisation image", argv[1]);
			((Elf64_Phdr *)ph)[i].p_type = PT_NULL;
		}

	out = fopen(argv[2], "wb");
	if (!out || fwrite(img, 1, len, out) != len || fclose(out) != 0)
		die(strerror(errno), argv[2]);
	free(img);
	return 0;
}
