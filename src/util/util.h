/*
 * util.h — the launcher's building blocks, one owner each: hashing, checked
 * sizes and growable arrays, a hash index, string interning in an arena, and
 * how sizes and times are written.  libc only, like every header it
 * includes.  Library code: nothing here exits or prints; a failed allocation
 * is reported to the caller (-ENOMEM or NULL), and only the CLI decides what
 * to do about it.  Not for the agent (it allocates nothing).
 */
#ifndef CBN_UTIL_H
#define CBN_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* --- hashing --------------------------------------------------------------- */

#define UTIL_FNV_INIT 1469598103934665603ull

/* FNV-1a over n bytes, continuing from h (UTIL_FNV_INIT to start). */
uint64_t util_fnv1a(const void *p, size_t n, uint64_t h);
/* FNV-1a over a NUL-terminated string (without the NUL). */
uint64_t util_fnv1a_str(const char *s, uint64_t h);
/* 32-bit FNV-1a of a string (for colours and other small stable picks). */
uint32_t util_fnv1a32_str(const char *s);
/* A 64-bit finalizer (splitmix64): spreads every input bit over the result. */
uint64_t util_mix64(uint64_t x);
/* A fast hash of n bytes for hash indexes (not FNV: 8 bytes per step). */
uint64_t util_hash_bytes(const void *p, size_t n, uint64_t seed);
/* Two independent 64-bit hashes of n 64-bit words in one pass: together a
 * 128-bit key, for when comparing the words themselves costs too much. */
void util_hash_words2(const uint64_t *w, size_t n, uint64_t seed, uint64_t out[2]);

/* --- sizes and arrays ------------------------------------------------------- */

/* *out = a * b; 0, or -EOVERFLOW when it does not fit in size_t. */
int util_mul(size_t a, size_t b, size_t *out);
/* realloc of n * esz bytes with the multiplication checked; NULL (and *p
 * untouched) on overflow or when memory is short. */
void *util_reallocarray(void *p, size_t n, size_t esz);
/* Make *arr (elements of esz bytes, capacity *cap) hold at least n + 1
 * elements, doubling; 0, or -ENOMEM with *arr and *cap unchanged. */
int util_grow(void **arr, size_t *cap, size_t n, size_t esz);

/* --- hash index: 64-bit hash -> uint32 value, equality decided by the caller */

struct util_map_slot {
	uint64_t hash;
	uint32_t val;            /* UINT32_MAX: empty */
};

struct util_map {
	struct util_map_slot *slot; /* hash and value side by side: one cache miss a probe */
	size_t cap, n;
};

typedef int (*util_eq_fn)(const void *ctx, uint32_t val);

/* The value stored under h for which eq(ctx, value) holds, or UINT32_MAX. */
uint32_t util_map_find(const struct util_map *m, uint64_t h, util_eq_fn eq, const void *ctx);
/* Adds (h, val); 0, or -ENOMEM with the map unchanged. */
int util_map_put(struct util_map *m, uint64_t h, uint32_t val);
void util_map_free(struct util_map *m);

/* --- strings: an arena that owns them, and interning ----------------------- */

struct util_arena_block {
	struct util_arena_block *next;
	size_t used, cap;
	char data[];
};

struct util_arena {
	struct util_arena_block *head;
};

/* A NUL-terminated copy of s[0..n) owned by the arena, or NULL. */
char *util_arena_strndup(struct util_arena *a, const char *s, size_t n);
void util_arena_free(struct util_arena *a);

struct util_strings {
	struct util_map map;
	const char **s;
	size_t n, cap;
};

/* The one copy of s (NULL is ""), allocated in a; NULL when memory is short. */
const char *util_intern(struct util_arena *a, struct util_strings *t, const char *s);
void util_strings_free(struct util_strings *t);

/* --- intervals: the one union of stretches of time ----------------------------- */

/* [s, e), in ns. */
struct util_ival {
	uint64_t s, e;
};

/* Sorts v[0 .. n) by start and merges, in place, the intervals that overlap
 * or touch (the next starts at or before the end so far): returns m, and
 * v[0 .. m) are the union's disjoint intervals in order; *len, when not NULL,
 * is their total length.  Intervals with e < s are the caller's to avoid. */
size_t util_ival_union(struct util_ival *v, size_t n, uint64_t *len);

/* --- small helpers ---------------------------------------------------------- */

/* What follows path's last '/' (all of it without one); "" for NULL. */
const char *util_base_name(const char *path);
/* qsort's comparison of uint64_t, ascending. */
int util_u64_cmp(const void *a, const void *b);

/* --- units: the one home of how sizes and times are written ------------------
 *
 * Bytes are 1024-based everywhere, with IEC names (docs/reading-the-report.md,
 * "Units"): text, JSON labels and the HTML page.  Every time carries its
 * unit.  Locale-independent as long as nobody calls setlocale().  Each
 * returns buf. */

/* The ways a size is written; util_fmt_size() writes both. */
enum util_size {
	/* the report: "512 B", "1.50 KiB", "3.20 MiB", "1.02 GiB", "2.00 TiB" */
	UTIL_SIZE_REPORT,
	/* the regression gate's columns, signed, GiB at the most: "512 B",
	 * "-1.5 KiB", "3.2 MiB", "2048.00 GiB" */
	UTIL_SIZE_GATE,
};

/* bytes in style: the unit is the largest whose 1 it reaches, |bytes| as it
 * is; two decimals, one for the gate's KiB and MiB. */
char *util_fmt_size(char *buf, size_t len, double bytes, enum util_size style);
/* util_fmt_size(UTIL_SIZE_REPORT): every size the report writes. */
char *util_fmt_bytes(char *buf, size_t len, double bytes);
/* "812.00 MiB/s", "11.52 GiB/s": bytes per second, 1024-based */
char *util_fmt_rate(char *buf, size_t len, double bytes_per_s);

/* The ways a duration is written; util_fmt_ns() writes every one of them. */
enum util_dur {
	/* tables, as torch's _format_time: "1.234s", "12.345ms", "123.456us" */
	UTIL_DUR_TABLE,
	/* prose, for findings and evidence: "1.234 s", "12.345 ms", "123.456 us",
	 * "850 ns" */
	UTIL_DUR_PROSE,
	/* the regression gate's columns, signed: "1.234 s", "-12.3 ms",
	 * "123.5 us", "850 ns" */
	UTIL_DUR_GATE,
};

/* ns nanoseconds in style.  TABLE and PROSE take three decimals and choose
 * the unit on the value as printed (999.9996 ms reads "1.000 s"); GATE takes
 * one below a second and chooses on |ns| as it is. */
char *util_fmt_ns(char *buf, size_t len, double ns, enum util_dur style);
/* util_fmt_ns(UTIL_DUR_TABLE): the text tables' and the HTML's times. */
char *util_fmt_time(char *buf, size_t len, double ns);
/* util_fmt_ns(UTIL_DUR_PROSE): findings, evidence, verdicts. */
char *util_fmt_dur(char *buf, size_t len, double ns);

/* --- small files -------------------------------------------------------- */

/* A small file (a /proc entry) into buf[len], NUL-terminated, in one read:
 * its length, or -errno. */
int util_read_small(const char *path, char *buf, size_t len);

#endif
