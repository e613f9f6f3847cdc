/*
 * test_share.c — a sample's stack written as what changed since its base
 * (src/format/cbn_share.h): on random stacks that share part of their native
 * frames and part of their Python words with a base, packing by the plan and
 * expanding again gives the stack back word for word, and the plan writes
 * whole what has moved away from its base.
 */
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "format/cbn_share.h"

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return test_xorshift(&rnd_state);
}

static uint64_t native_word(void)
{
	return 0x400000 + rnd() % 64; /* few values: chance equalities too */
}

static uint64_t python_word(void)
{
	return CBN_PYW_MAKE((uint32_t)(rnd() % 4), (uint32_t)(rnd() % 8), (uint32_t)(rnd() % 8));
}

/* A stack of nn native words and np Python words. */
static int make(uint64_t *pc, int nn, int np)
{
	int i;

	for (i = 0; i < nn; i++)
		pc[i] = native_word();
	for (i = 0; i < np; i++)
		pc[nn + i] = python_word();
	return nn + np;
}

static void test_roundtrip(void)
{
	int round, shared = 0, whole = 0;

	for (round = 0; round < 20000; round++) {
		uint64_t base[CBN_MAX_FRAMES], cur[CBN_MAX_FRAMES], packed[CBN_MAX_FRAMES];
		uint64_t out[CBN_MAX_FRAMES];
		int bnn = (int)(rnd() % 40), bnp = (int)(rnd() % 90), bn, nn, np, n, kn, kp, own;
		int keep_n, keep_p, i;

		bn = make(base, bnn, bnp);
		/* cur: new leaf words, then the base's outer words of each part */
		keep_n = bnn ? (int)(rnd() % (bnn + 1)) : 0;
		keep_p = bnp ? (int)(rnd() % (bnp + 1)) : 0;
		nn = (int)(rnd() % 6) + keep_n;
		np = (int)(rnd() % 6) + keep_p;
		if (nn + np > CBN_MAX_FRAMES)
			continue;
		n = make(cur, nn - keep_n, 0);
		memcpy(cur + n, base + bnn - keep_n, (size_t)keep_n * 8);
		n += keep_n;
		for (i = 0; i < np - keep_p; i++)
			cur[n++] = python_word();
		memcpy(cur + n, base + bnn + bnp - keep_p, (size_t)keep_p * 8);
		n += keep_p;
		REQUIRE(cbn_share_native(cur, n) == nn);
		REQUIRE(cbn_share_native(base, bn) == bnn);

		if (!cbn_share_plan(base, bn, bnn, cur, n, nn, &kn, &kp)) {
			whole++;
			/* whole: little in common, or too much of it left */
			CHECK(kn + kp < 4 || (n - kn - kp > 8 && n - kn - kp > n / 4));
			continue;
		}
		shared++;
		CHECK(kn >= keep_n && kp >= keep_p);
		CHECK(kn <= bnn && kp <= bnp);
		memcpy(packed, cur, (size_t)n * 8);
		own = cbn_share_pack(packed, n, nn, kn, kp);
		CHECK_EQ_INT(own, n - kn - kp);
		CHECK_EQ_INT(cbn_share_expand(packed, own, base, bn, bnn, kn, kp, out), n);
		if (memcmp(out, cur, (size_t)n * 8) != 0) {
			CHECK(0);
			break;
		}
	}
	/* both kinds met */
	CHECK(shared > 1000);
	CHECK(whole > 1000);
}

/* The plan on stacks chosen by hand. */
static void test_plan(void)
{
	uint64_t p1 = CBN_PYW_MAKE(0, 1, 1), p2 = CBN_PYW_MAKE(0, 2, 1), p3 = CBN_PYW_MAKE(0, 3, 1);
	uint64_t base[8] = {1, 2, 3, 4, 5, p1, p2, p3};
	uint64_t same[8] = {9, 2, 3, 4, 5, p1, p2, p3};
	uint64_t other[8] = {9, 8, 7, 6, 5, p3, p2, p1};
	uint64_t nopy[5] = {9, 2, 3, 4, 5};
	int kn, kp;

	CHECK(cbn_share_plan(base, 8, 5, same, 8, 5, &kn, &kp));
	CHECK_EQ_INT(kn, 4);
	CHECK_EQ_INT(kp, 3);
	/* one native word in common: written whole */
	CHECK(!cbn_share_plan(base, 8, 5, other, 8, 5, &kn, &kp));
	CHECK_EQ_INT(kn, 1);
	CHECK_EQ_INT(kp, 0);
	/* no Python words: the native part alone */
	CHECK(cbn_share_plan(base, 8, 5, nopy, 5, 5, &kn, &kp));
	CHECK_EQ_INT(kn, 4);
	CHECK_EQ_INT(kp, 0);
	CHECK_EQ_INT(cbn_share_native(nopy, 5), 5);
	CHECK_EQ_INT(cbn_share_native(base + 5, 3), 0);
}

int main(void)
{
	test_plan();
	test_roundtrip();
	return test_result();
}
