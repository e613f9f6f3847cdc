/*
 * test_jitdump.c — jitdump files (src/symbols/jitdump.c), written here by
 * the specification (tools/perf/Documentation/jitdump-specification.txt):
 * code loads with their code bytes, a move, debug and unwinding records
 * skipped, the other byte order; then the same file cut at every length and
 * with random damage: what came before the damage is delivered, once, and
 * the walk says why it stopped, never crashes.
 *
 * ctest-labels: fuzz
 */
#include <byteswap.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "symbols/jitdump.h"

struct jd_buf {
	unsigned char b[16384];
	size_t n;
	int swap;
};

static void put32(struct jd_buf *j, uint32_t v)
{
	if (j->swap)
		v = bswap_32(v);
	memcpy(j->b + j->n, &v, 4);
	j->n += 4;
}

static void put64(struct jd_buf *j, uint64_t v)
{
	if (j->swap)
		v = bswap_64(v);
	memcpy(j->b + j->n, &v, 8);
	j->n += 8;
}

static void jd_header(struct jd_buf *j, int swap)
{
	memset(j, 0, sizeof(*j));
	j->swap = swap;
	put32(j, 0x4A695444);   /* magic */
	put32(j, 1);            /* version */
	put32(j, 40);           /* header size */
	put32(j, 62);           /* EM_X86_64 */
	put32(j, 0);
	put32(j, 4242);         /* pid */
	put64(j, 123456789);    /* timestamp */
	put64(j, 0);            /* flags */
}

static void jd_load(struct jd_buf *j, uint64_t addr, uint64_t size, uint64_t index,
		    const char *name)
{
	size_t nl = strlen(name) + 1;
	uint64_t k;

	put32(j, 0);            /* JIT_CODE_LOAD */
	put32(j, (uint32_t)(56 + nl + size));
	put64(j, 1000);
	put32(j, 4242);
	put32(j, 4243);
	put64(j, addr);         /* vma */
	put64(j, addr);         /* code_addr */
	put64(j, size);
	put64(j, index);
	memcpy(j->b + j->n, name, nl);
	j->n += nl;
	for (k = 0; k < size; k++)
		j->b[j->n++] = 0xc3; /* the code: ret, ret, ... */
}

static void jd_move(struct jd_buf *j, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	put32(j, 1);            /* JIT_CODE_MOVE */
	put32(j, 64);
	put64(j, 2000);
	put32(j, 4242);
	put32(j, 4243);
	put64(j, to);
	put64(j, from);
	put64(j, to);
	put64(j, size);
	put64(j, index);
}

static void jd_other(struct jd_buf *j, uint32_t id, uint32_t body)
{
	uint32_t i;

	put32(j, id);
	put32(j, 16 + body);
	put64(j, 3000);
	for (i = 0; i < body; i++)
		j->b[j->n++] = 0xee;
}

struct got {
	uint64_t addr[16], size[16];
	char name[16][64];
	int n;
};

static int got_cb(void *ctx, uint64_t addr, uint64_t size, const char *name)
{
	struct got *g = ctx;

	if (g->n < 16) {
		g->addr[g->n] = addr;
		g->size[g->n] = size;
		snprintf(g->name[g->n], sizeof(g->name[0]), "%s", name);
	}
	g->n++;
	return 0;
}

static int stop_cb(void *ctx, uint64_t addr, uint64_t size, const char *name)
{
	(void)addr;
	(void)size;
	(void)name;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

/* Parse bytes [0, n) of j as a file. */
static int parse(const struct jd_buf *j, size_t n, struct got *g, struct jitdump_stats *st)
{
	char path[] = "/tmp/cbn-test-jitdump-XXXXXX";
	int fd = mkstemp(path), ret;

	REQUIRE(fd >= 0);
	unlink(path);
	REQUIRE(write(fd, j->b, n) == (ssize_t)n);
	memset(g, 0, sizeof(*g));
	ret = jitdump_read_fd(fd, got_cb, g, st);
	close(fd);
	return ret;
}

/* Loads (with code), an unwinding record, a move, debug info, a load of a
 * name with a newline, CLOSE, then bytes after CLOSE that are never read. */
static void jd_sample(struct jd_buf *j, int swap)
{
	jd_header(j, swap);
	jd_load(j, 0x7f0000001000, 0x40, 1, "jit_avx2_conv_fwd");
	jd_other(j, 4, 40);     /* JIT_CODE_UNWINDING_INFO */
	jd_load(j, 0x7f0000002000, 0x20, 2, "py::f:/tmp/a.py");
	jd_move(j, 0x7f0000002000, 0x7f0000009000, 0x20, 2);
	jd_other(j, 2, 24);     /* JIT_CODE_DEBUG_INFO */
	jd_other(j, 77, 8);     /* a type from a newer writer: skipped */
	jd_load(j, 0x7f0000003000, 0x10, 3, "two\nlines");
	jd_other(j, 3, 0);      /* JIT_CODE_CLOSE */
	jd_load(j, 0x7f0000004000, 0x10, 4, "after_close");
}

static void test_valid(void)
{
	struct jitdump_stats st;
	struct jd_buf j;
	struct got g;
	int swap, calls = 0;

	for (swap = 0; swap < 2; swap++) {
		jd_sample(&j, swap);
		CHECK_EQ_INT(parse(&j, j.n, &g, &st), 0);
		CHECK_EQ_INT(st.damaged, 0);
		CHECK_STR(st.why, "");
		CHECK_EQ_INT(st.loads, 3);
		CHECK_EQ_INT(st.moves, 1);
		if (g.n != 4)
			fprintf(stderr, "g.n %d loads %d moves %d\n", g.n, (int)st.loads, (int)st.moves);
		REQUIRE(g.n == 4);
		CHECK_EQ_INT(g.addr[0], 0x7f0000001000);
		CHECK_EQ_INT(g.size[0], 0x40);
		CHECK_STR(g.name[0], "jit_avx2_conv_fwd");
		CHECK_STR(g.name[1], "py::f:/tmp/a.py");
		CHECK_EQ_INT(g.addr[2], 0x7f0000009000); /* the move: its load's name */
		CHECK_EQ_INT(g.size[2], 0x20);
		CHECK_STR(g.name[2], "py::f:/tmp/a.py");
		CHECK_STR(g.name[3], "two\nlines");
	}
	/* the callback stops the walk: its value comes back */
	jd_sample(&j, 0);
	{
		char path[] = "/tmp/cbn-test-jitdump-XXXXXX";
		int fd = mkstemp(path);

		REQUIRE(fd >= 0);
		unlink(path);
		REQUIRE(write(fd, j.b, j.n) == (ssize_t)j.n);
		CHECK_EQ_INT(jitdump_read_fd(fd, stop_cb, &calls, &st), 7);
		CHECK_EQ_INT(calls, 2);
		close(fd);
	}
}

static void test_not_jitdump(void)
{
	struct jitdump_stats st;
	struct jd_buf j;
	struct got g;

	jd_sample(&j, 0);
	CHECK_EQ_INT(parse(&j, 20, &g, &st), -EINVAL);
	CHECK(strstr(st.why, "shorter") != NULL);
	j.b[0] ^= 0xff;
	CHECK_EQ_INT(parse(&j, j.n, &g, &st), -EINVAL);
	CHECK(strstr(st.why, "not a jitdump") != NULL);
	CHECK_EQ_INT(g.n, 0);
	jd_sample(&j, 0);
	j.b[8] = 8; /* header size below the header's */
	CHECK_EQ_INT(parse(&j, j.n, &g, &st), -EINVAL);
	CHECK_EQ_INT(parse(&j, 0, &g, &st), -EINVAL);
}

/* Cut at every length: never more than the whole file gives, a cut inside
 * a record is said, and a load whose name is in reach is delivered even when
 * its code bytes are cut off. */
static void test_truncated(void)
{
	struct jitdump_stats st;
	struct jd_buf j;
	struct got g;
	size_t n, first_load_end = 40 + 56 + 18 + 0x40;

	jd_sample(&j, 0);
	for (n = 40; n < j.n; n++) {
		int ret = parse(&j, n, &g, &st);

		CHECK_EQ_INT(ret, 0);
		CHECK(g.n <= 4);
		CHECK_EQ_INT(g.n, st.loads + st.moves); /* each one read, delivered */
		if (n == 40 || n == first_load_end)
			CHECK_EQ_INT(st.damaged, 0); /* at a record's boundary */
		if (n > 40 && n < 40 + 56 + 18)
			CHECK_EQ_INT(g.n, 0);   /* the first name not whole yet */
		if (n >= 40 + 56 + 18 && n < first_load_end) {
			CHECK_EQ_INT(g.n, 1);   /* name read, code cut: kept */
			CHECK_EQ_INT(st.damaged, 1);
			CHECK(strstr(st.why, "truncated") != NULL);
		}
	}
}

/* Random damage: flipped bytes and record sizes set to odd values. */
static void test_random(void)
{
	struct jitdump_stats st;
	struct jd_buf j, d;
	struct got g;
	unsigned seed = 4711;
	int it;

	jd_sample(&j, 0);
	for (it = 0; it < 1500; it++) {
		int k, flips = 1 + (int)(rand_r(&seed) % 6);
		int ret;

		d = j;
		for (k = 0; k < flips; k++) {
			size_t at = 40 + (size_t)rand_r(&seed) % (j.n - 40);
			unsigned r = (unsigned)rand_r(&seed);

			if (r & 1)
				d.b[at] = (unsigned char)(r >> 8);
			else
				memset(d.b + at, (r & 2) ? 0xff : 0, at + 4 <= j.n ? 4 : 1);
		}
		ret = parse(&d, j.n, &g, &st);
		CHECK(ret == 0);
		CHECK(st.damaged || st.why[0] == '\0');
	}
}

int main(void)
{
	test_valid();
	test_not_jitdump();
	test_truncated();
	test_random();
	return test_result();
}
