/*
 * ksym.h — kernel addresses to function names: a table read from
 * /proc/kallsyms (on the machine that recorded, at the end of the run) or from
 * the session's kernel-symbols file (written then, read by every later report).
 * Launcher side only; a table is immutable once read.
 */
#ifndef CBN_KSYM_H
#define CBN_KSYM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ksym {
	uint64_t start, end;     /* [start, end) */
	const char *name;        /* owned by the table */
};

struct ksym_table {
	struct ksym *v;          /* sorted by start, non-overlapping */
	size_t n, cap;
	char *names;             /* all names, NUL-separated */
	size_t names_len, names_cap;
	int hidden;              /* kallsyms showed only zero addresses (kptr_restrict) */
};

/* Read the text symbols of a kallsyms-format stream ("ADDR T name [module]"):
 * each ends where the next one starts.  Returns 0, or -ENOMEM. */
int ksym_read_kallsyms(FILE *f, struct ksym_table *t);

/* Read a session's kernel-symbols file ("START END NAME", hex, '#' comments).
 * Lines that do not parse are skipped.  Returns 0, -ENOMEM, or -errno when
 * the file cannot be opened. */
int ksym_read_file(const char *path, struct ksym_table *t);

/* This machine's kernel text symbols: from the per-boot cache in the symbol
 * cache directory (kallsyms-KEY.bin, KEY from the boot id, the kernel release
 * and version and /proc/modules), else from /proc/kallsyms, then cached —
 * reading and sorting /proc/kallsyms costs ~80 ms here, the cache ~2 ms.
 * Returns 0, -ENOMEM, or -errno when /proc/kallsyms cannot be read. */
int ksym_read_kernel(struct ksym_table *t);

/* The symbol covering pc, or NULL. */
const struct ksym *ksym_find(const struct ksym_table *t, uint64_t pc);

/* Write to path the symbols of t that cover one of pcs[0..n) (or pc-1: return
 * addresses), with a first comment line note.  Returns the number of symbols
 * written, or -errno. */
int ksym_write_file(const struct ksym_table *t, const uint64_t *pcs, size_t n, const char *path,
		    const char *note);

void ksym_free(struct ksym_table *t);

#endif
