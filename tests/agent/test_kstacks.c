/*
 * test_kstacks.c — unit test of src/agent/kstacks.c: the drain of a synthetic
 * perf ring (records that wrap around its end, PERF_RECORD_LOST, callchains
 * cut short or longer than kept, a torn record), the count of equal stacks,
 * the cap on bytes and stacks; and, where the kernel allows it, a real kernel
 * event over a burst of read(2) system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "kstacks.h"

#define RSIZE 1024u /* ring data bytes: small, so records wrap */

struct ring {
	unsigned char data[RSIZE];
	uint64_t head;
};

static void put(struct ring *r, const void *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		r->data[(r->head + i) % RSIZE] = ((const unsigned char *)p)[i];
	r->head += n;
}

/* A PERF_RECORD_SAMPLE with a callchain: the kernel marker, then pcs. */
static void sample(struct ring *r, const uint64_t *pc, unsigned n, int lie_nr)
{
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 0};
	uint64_t nr = n + 1 + (lie_nr ? 100 : 0), mark = (uint64_t)PERF_CONTEXT_KERNEL;

	h.size = (uint16_t)(sizeof(h) + 8 + (n + 1) * 8);
	put(r, &h, sizeof(h));
	put(r, &nr, 8);
	put(r, &mark, 8);
	put(r, pc, n * 8);
}

static void lost(struct ring *r, uint64_t count)
{
	struct perf_event_header h = {PERF_RECORD_LOST, 0, sizeof(h) + 16};
	uint64_t w[2] = {7, count};

	put(r, &h, sizeof(h));
	put(r, w, 16);
}

static const struct cbn_kstack *nth(const struct cbn_kstacks *ks, unsigned i)
{
	const unsigned char *p = (const unsigned char *)(ks + 1);

	while (i--) {
		const struct cbn_kstack *k = (const void *)p;
		p += sizeof(*k) + k->nframes * 8u;
	}
	return (const void *)p;
}

static void test_wrap_and_lost(void)
{
	static struct ring r;
	uint64_t a[3] = {0xffffffff81000010ull, 0xffffffff81000020ull, 0xffffffff81000030ull};
	uint64_t b[2] = {0xffffffff81000040ull, 0xffffffff81000050ull};
	uint64_t buf[512];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	size_t used;
	uint64_t tail;

	/* Start near the end of the ring so the records wrap around it. */
	r.head = 5 * RSIZE - 40;
	tail = r.head;
	sample(&r, a, 3, 0);
	sample(&r, b, 2, 0);
	lost(&r, 5);
	sample(&r, a, 3, 0);
	used = kstacks_parse(r.data, RSIZE, tail, r.head, out, sizeof(buf), &nlost);
	REQUIRE(used > 0);
	CHECK_EQ_INT(out->nstacks, 2);
	CHECK_EQ_INT(nlost, 5);
	CHECK_EQ_INT(nth(out, 0)->count, 2);
	CHECK_EQ_INT(nth(out, 0)->nframes, 3);
	CHECK(nth(out, 0)->pc[0] == a[0] && nth(out, 0)->pc[2] == a[2]);
	CHECK_EQ_INT(nth(out, 1)->count, 1);
	CHECK(nth(out, 1)->pc[1] == b[1]);
	CHECK_EQ_INT(used, sizeof(*out) + 2 * sizeof(struct cbn_kstack) + 5 * 8);
}

static void test_truncated(void)
{
	static struct ring r;
	uint64_t big[CBN_KSTACK_MAX_FRAMES + 10], one = 0xffffffff81000100ull;
	uint64_t buf[1024];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;
	size_t used;

	for (i = 0; i < CBN_KSTACK_MAX_FRAMES + 10; i++)
		big[i] = 0xffffffff82000000ull + i * 16;
	r.head = 0;
	sample(&r, big, CBN_KSTACK_MAX_FRAMES + 10, 0); /* longer than kept */
	sample(&r, &one, 1, 1);                         /* nr beyond its record */
	sample(&r, &one, 1, 0);
	used = kstacks_parse(r.data, RSIZE, 0, r.head, out, sizeof(buf), &nlost);
	REQUIRE(used > 0);
	CHECK_EQ_INT(out->nstacks, 2);
	CHECK_EQ_INT(nlost, 1);
	CHECK_EQ_INT(nth(out, 0)->nframes, CBN_KSTACK_MAX_FRAMES);
	CHECK(nth(out, 0)->flags & CBN_KSTACK_TRUNCATED);
	CHECK(nth(out, 0)->pc[0] == big[0]);
	CHECK(nth(out, 1)->pc[0] == one && !(nth(out, 1)->flags & CBN_KSTACK_TRUNCATED));

	/* A torn record (size past head) ends the parse, keeping what came before. */
	r.head = 0;
	sample(&r, &one, 1, 0);
	sample(&r, &one, 1, 0);
	nlost = 0;
	used = kstacks_parse(r.data, RSIZE, 0, r.head - 8, out, sizeof(buf), &nlost);
	CHECK(used > 0);
	CHECK_EQ_INT(nth(out, 0)->count, 1);
	/* A size-0 record (garbage) ends it too. */
	memset(r.data, 0, sizeof(r.data));
	nlost = 0;
	CHECK_EQ_INT(kstacks_parse(r.data, RSIZE, 0, 64, out, sizeof(buf), &nlost), 0);
	/* Not a power of two, or more than a ring's worth: nothing. */
	CHECK_EQ_INT(kstacks_parse(r.data, 1000, 0, 64, out, sizeof(buf), &nlost), 0);
	CHECK_EQ_INT(kstacks_parse(r.data, RSIZE, 0, RSIZE + 8, out, sizeof(buf), &nlost), 0);
}

static void test_caps(void)
{
	static struct ring r;
	uint64_t buf[1024], pc[4];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;
	size_t used;

	/* Fewer bytes than the stacks need: those that do not fit are lost. */
	r.head = 0;
	nlost = 0;
	for (i = 0; i < 10; i++) {
		pc[0] = 0xffffffff81000000ull + i;
		sample(&r, pc, 1, 0);
	}
	/* cap for 3 one-frame stacks only */
	used = kstacks_parse(r.data, RSIZE, 0, r.head, out,
			     sizeof(*out) + 3 * (sizeof(struct cbn_kstack) + 8), &nlost);
	CHECK_EQ_INT(out->nstacks, 3);
	CHECK_EQ_INT(nlost, 7);
	CHECK_EQ_INT(used, sizeof(*out) + 3 * (sizeof(struct cbn_kstack) + 8));
}

static void test_distinct_cap(void)
{
	static unsigned char data[8192];
	uint64_t head = 0, buf[2048];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t nlost = 0;
	unsigned i;

	for (i = 0; i < CBN_KSTACK_MAX_STACKS + 3; i++) {
		struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, sizeof(h) + 24};
		uint64_t w[3] = {2, (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000000ull + i};

		memcpy(data + head, &h, sizeof(h));
		memcpy(data + head + sizeof(h), w, 24);
		head += h.size;
	}
	kstacks_parse(data, sizeof(data), 0, head, out, sizeof(buf), &nlost);
	CHECK_EQ_INT(out->nstacks, CBN_KSTACK_MAX_STACKS);
	CHECK_EQ_INT(nlost, 3);
}

/* A real kernel event, where allowed: read(2) of /dev/zero shows kernel pcs. */
static void test_real(void)
{
	struct kstacks_ring kr = {NULL, 0, 0};
	uint64_t buf[1024];
	struct cbn_kstacks *out = (void *)buf;
	uint32_t kept = 0, nlost = 0;
	static char big[1 << 20];
	int ret = kstacks_open(&kr, 100000), fd, i, round;

	if (ret) {
		fprintf(stderr, "test_kstacks: real kernel event skipped: perf_event_open: %s\n",
			strerror(-ret));
		return;
	}
	fd = open("/dev/zero", O_RDONLY);
	REQUIRE(fd >= 0);
	/* A loaded machine may give the reads little CPU: read until the
	 * kernel has sampled some (at most 20 rounds). */
	for (round = 0; round < 20 && kept == 0; round++) {
		for (i = 0; i < 400; i++)
			CHECK(read(fd, big, sizeof(big)) == (ssize_t)sizeof(big));
		kstacks_drain(&kr, NULL, out, sizeof(buf), &kept, &nlost);
	}
	close(fd);
	fprintf(stderr, "test_kstacks: real event: %u kernel samples kept, %u lost, %u stacks\n",
		kept, nlost, out->nstacks);
	CHECK(kept > 0);
	if (kept)
		CHECK(nth(out, 0)->pc[0] >= 0xff00000000000000ull);
	/* Drained: a second drain finds only the kernel time since (a few
	 * system calls). */
	kstacks_drain(&kr, NULL, out, sizeof(buf), &kept, &nlost);
	CHECK(kept < 50);
	kstacks_close(&kr);
	CHECK(kr.base == NULL);
}

int main(void)
{
	test_wrap_and_lost();
	test_truncated();
	test_caps();
	test_distinct_cap();
	test_real();
	return test_result();
}
