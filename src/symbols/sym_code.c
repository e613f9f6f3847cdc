/*
 * sym_code.c — a module's machine code around an address, read from the ELF
 * file the symbolizer already opened for it (the loader's spin-loop test
 * looks for PAUSE there).  Only the file that ran: a changed file or a
 * debug-only copy (its .text is NOBITS) gives no bytes.
 */
#include <gelf.h>
#include <string.h>

#include "sym_int.h"

size_t sym_code_bytes(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		      uint64_t before, uint64_t after, const unsigned char **bytes, uint64_t *start)
{
	Dwarf_Addr bias = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	uint64_t fn;

	*bytes = NULL;
	*start = 0;
	/* opens the module if need be; the bytes of a changed file are not
	 * the ones that ran */
	if (sym_module_changed(ctx, mod) || !mod->dm)
		return 0;
	elf = dwfl_module_getelf(mod->dm, &bias);
	if (!elf)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		uint64_t lo, hi;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return 0;
		/* [vaddr - before, vaddr + after) inside the section, and not
		 * before the function's start where the unwind tables know it:
		 * the previous function's tail is no evidence */
		lo = vaddr - sh.sh_addr > before ? vaddr - before : sh.sh_addr;
		if (sym_fde_find(mod, vaddr, &fn) && fn > lo && fn <= vaddr)
			lo = fn;
		hi = sh.sh_addr + sh.sh_size - vaddr > after ? vaddr + after
							     : sh.sh_addr + sh.sh_size;
		*bytes = (const unsigned char *)d->d_buf + (lo - sh.sh_addr);
		*start = lo;
		return (size_t)(hi - lo);
	}
	return 0;
}
