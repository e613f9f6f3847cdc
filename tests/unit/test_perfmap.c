/*
 * test_perfmap.c — perf maps (src/symbols/perfmap.c): lines as CPython,
 * node and oneDNN write them, junk and blank lines, duplicates, overlapping
 * entries (the one written last wins where they overlap, as in perf), the
 * lookup at range edges, reading a file cut at the size cap, and random
 * bytes, after which the table must still be sorted and disjoint.
 *
 * ctest-labels: fuzz
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "symbols/perfmap.h"

static const char *name_at(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_find(m, addr);

	return e ? e->name : NULL;
}

static void check_sorted(const struct perfmap *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		CHECK(m->v[i].start < m->v[i].end);
		if (i)
			CHECK(m->v[i - 1].end <= m->v[i].start);
	}
}

static void test_lines(void)
{
	static const char text[] =
		"7f0000001000 20 py::main:/tmp/x.py\n"
		"7f0000002000 0x10 jit_avx2_conv_fwd_kernel_f32\r\n"
		"0x7f0000003000 8 LazyCompile:~foo /app/a.js:1:10\n"
		"\n"
		"garbage line\n"
		"7f0000004000\n"
		"7f0000004000 10\n"
		"7f0000004000 0 zero_size\n"
		"ffffffffffffff00 200 wraps\n"
		"12345678901234567 10 too_long_hex\n"
		"7f0000005000\t40\t  tabbed name  \n"
		"7f0000006000 10 no_newline_at_end";
	struct perfmap m;

	REQUIRE(perfmap_parse(text, sizeof(text) - 1, &m) == 0);
	CHECK_EQ_INT(m.lines, 5);
	CHECK_EQ_INT(m.skipped, 6);
	CHECK_EQ_INT(m.n, 5);
	check_sorted(&m);
	CHECK_STR(name_at(&m, 0x7f0000001000), "py::main:/tmp/x.py");
	CHECK_STR(name_at(&m, 0x7f000000101f), "py::main:/tmp/x.py");
	CHECK(name_at(&m, 0x7f0000001020) == NULL);
	CHECK(name_at(&m, 0x7f0000000fff) == NULL);
	CHECK_STR(name_at(&m, 0x7f0000002008), "jit_avx2_conv_fwd_kernel_f32");
	CHECK_STR(name_at(&m, 0x7f0000003007), "LazyCompile:~foo /app/a.js:1:10");
	CHECK_STR(name_at(&m, 0x7f000000503f), "tabbed name");
	CHECK_STR(name_at(&m, 0x7f0000006000), "no_newline_at_end");
	CHECK(name_at(&m, 0) == NULL);
	CHECK(name_at(&m, UINT64_MAX) == NULL);
	perfmap_free(&m);
	/* empty input: an empty table */
	REQUIRE(perfmap_parse("", 0, &m) == 0);
	CHECK_EQ_INT(m.n, 0);
	CHECK(perfmap_find(&m, 0x1000) == NULL);
	perfmap_free(&m);
}

/* Overlaps: the entry written last wins where it overlaps an earlier one;
 * what it does not cover keeps the earlier name.  Duplicates merge. */
static void test_overlaps(void)
{
	static const char text[] =
		"1000 1000 old_big\n"        /* [0x1000, 0x2000) */
		"1400 200 new_mid\n"         /* [0x1400, 0x1600): over old_big */
		"1500 800 newer_tail\n"      /* [0x1500, 0x1d00): over both */
		"3000 100 dup\n"
		"3000 100 dup\n"
		"3100 100 dup\n"             /* adjacent, same name: one range */
		"4000 100 first\n"
		"4000 100 second\n";         /* same range rewritten: second */
	struct perfmap m;

	REQUIRE(perfmap_parse(text, sizeof(text) - 1, &m) == 0);
	check_sorted(&m);
	CHECK_STR(name_at(&m, 0x1000), "old_big");
	CHECK_STR(name_at(&m, 0x13ff), "old_big");
	CHECK_STR(name_at(&m, 0x1400), "new_mid");
	CHECK_STR(name_at(&m, 0x14ff), "new_mid");
	CHECK_STR(name_at(&m, 0x1500), "newer_tail");
	CHECK_STR(name_at(&m, 0x1cff), "newer_tail");
	CHECK_STR(name_at(&m, 0x1d00), "old_big");
	CHECK_STR(name_at(&m, 0x1fff), "old_big");
	CHECK(name_at(&m, 0x2000) == NULL);
	CHECK_STR(name_at(&m, 0x31ff), "dup");
	CHECK_STR(name_at(&m, 0x4050), "second");
	/* old_big, new_mid, newer_tail, old_big, dup (merged), second */
	CHECK_EQ_INT(m.n, 6);
	perfmap_free(&m);
}

static void test_read(void)
{
	char path[] = "/tmp/cbn-test-perfmap-XXXXXX";
	int fd = mkstemp(path);
	struct perfmap m;
	FILE *f;
	int i;

	REQUIRE(fd >= 0);
	f = fdopen(fd, "w");
	REQUIRE(f);
	for (i = 0; i < 100; i++)
		fprintf(f, "%x 10 fn_%02d\n", 0x10000 + i * 0x10, i); /* 15 bytes a line */
	fclose(f);
	REQUIRE(perfmap_read(path, 1 << 20, &m) == 0);
	CHECK_EQ_INT(m.lines, 100);
	CHECK_STR(name_at(&m, 0x10000 + 99 * 0x10), "fn_99");
	perfmap_free(&m);
	/* cut at 100 bytes: whole lines only (the 7th line would end at byte 105) */
	REQUIRE(perfmap_read(path, 100, &m) == 0);
	CHECK_EQ_INT(m.lines, 6);
	CHECK_EQ_INT(m.skipped, 0);
	CHECK_STR(name_at(&m, 0x10050), "fn_05");
	CHECK(name_at(&m, 0x10060) == NULL);
	perfmap_free(&m);
	unlink(path);
	CHECK_EQ_INT(perfmap_read(path, 1 << 20, &m), -ENOENT);
	CHECK_EQ_INT(m.n, 0);
	/* not a regular file: never opened for reading as one (a FIFO would hang) */
	REQUIRE(mkfifo(path, 0600) == 0);
	CHECK_EQ_INT(perfmap_read(path, 1 << 20, &m), -EINVAL);
	unlink(path);
	CHECK(perfmap_read("/tmp", 1 << 20, &m) < 0);
}

/* Random bytes and random mixes of good and bad lines: no crash, and the
 * table sorted and disjoint with every lookup consistent. */
static void test_random(void)
{
	unsigned seed = 12345;
	char buf[4096];
	int it;

	for (it = 0; it < 2000; it++) {
		struct perfmap m;
		size_t len = 0, i;

		while (len < sizeof(buf) - 64) {
			unsigned r = (unsigned)rand_r(&seed);

			if (it % 2 == 0) {
				buf[len++] = (char)(r & 0xff);
				if (len > (size_t)(r % 4000) + 1)
					break;
				continue;
			}
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%x %x n%u%s\n",
						(r % 64) * 16, (r >> 8) % 48, r % 7,
						(r & 0x100) ? " x" : "");
			if ((r >> 12) % 40 == 0)
				break;
		}
		REQUIRE(perfmap_parse(buf, len, &m) == 0);
		check_sorted(&m);
		for (i = 0; i < 1100; i += 7) {
			const struct perfmap_entry *e = perfmap_find(&m, i);

			if (e)
				CHECK(e->start <= i && i < e->end);
		}
		perfmap_free(&m);
	}
}

int main(void)
{
	test_lines();
	test_overlaps();
	test_read();
	test_random();
	return test_result();
}
