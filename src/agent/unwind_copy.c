/*
 * unwind_copy.c — build-time tool: copies libunwind.so.8 to the agent's private
 * libcbn_unwind.so with its DT_SONAME renamed (same length), so that the agent's
 * libunwind is an instance of its own: the program's libunwind (linked, or
 * dlopened later by name) never shares its locks, caches or state with ours
 * (sampler-safety.md §2).  Its PT_TLS header also becomes PT_NULL: the
 * loader then gives the copy no TLS module id, a slot of the dynamic thread
 * vector a program could count (dl_iterate_phdr's dlpi_tls_modid); its
 * 16 bytes of TLS (general dynamic, reached through __tls_get_addr with
 * module 0 now) are served from the agent's own TLS (unwind.c).  Code is
 * untouched.
 *
 *   unwind_copy SRC DST
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLD_SONAME "libunwind.so.8"
#define NEW_SONAME "libcbnunwind.8" /* same length: no string table moves */

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
