/*
 * jitdump.h — the code a JIT described in a jitdump file (perf's format,
 * tools/perf/Documentation/jitdump-specification.txt: CPython 3.12+
 * -X perf_jit, oneDNN's ONEDNN_JIT_PROFILE=2, V8 --perf-prof), read as
 * (address, size, name) triples: one per JIT_CODE_LOAD, and one at the new
 * address for each JIT_CODE_MOVE of code loaded before.  The code bytes,
 * debug and unwinding records are skipped.  Launcher side only.
 */
#ifndef CBN_JITDUMP_H
#define CBN_JITDUMP_H

#include <stddef.h>
#include <stdint.h>

/* Names longer than this are cut (a C++ template's can be). */
#define JITDUMP_NAME_MAX 4096

struct jitdump_stats {
	uint64_t records;        /* records walked */
	uint64_t loads, moves;   /* JIT_CODE_LOAD and JIT_CODE_MOVE delivered */
	int damaged;             /* truncated or corrupt: what came before was delivered */
	char why[160];           /* the first problem, "" when none */
};

/* One piece of code: [addr, addr + size) named name (NUL-terminated, valid
 * during the call).  Return non-zero to stop the walk. */
typedef int (*jitdump_cb)(void *ctx, uint64_t addr, uint64_t size, const char *name);

/* Walk the jitdump file open on fd from its start.  Returns 0 (st->damaged
 * when it ended early: st->why says where), -EINVAL when it is no jitdump
 * file (st->why says why), -ENOMEM, or what cb returned. */
int jitdump_read_fd(int fd, jitdump_cb cb, void *ctx, struct jitdump_stats *st);

#endif
