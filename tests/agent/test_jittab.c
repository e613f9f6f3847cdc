/*
 * test_jittab.c — unit test of src/agent/jittab.c: ranges remembered,
 * asked for and dropped; a file's range told apart; a dropped slot taken
 * again; and a reader racing a writer that drops a slot and takes it again
 * for another range, which must never see one range's start with the
 * other's length (a pc that neither covers reported as held).  That window
 * is two loads wide: the race is a smoke test (a table without the second
 * load of start passed it too, on this 2-core host), the pair's rule is
 * argued in jittab.c.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "testlib.h"
#include "jittab.h"

/* the slot holding the range that starts at start, -1: none */
static int slot_of(uint64_t start)
{
	int i, file;
	uint64_t s, l;

	for (i = 0; i < jittab_used(); i++)
		if (jittab_slot(i, &s, &l, &file) && s == start)
			return i;
	return -1;
}

static void test_basic(void)
{
	uint64_t s, l;
	int a, b, c, file;

	CHECK_EQ_INT(jittab_used(), 0);
	CHECK(!jittab_holds(0x10000));
	jittab_remember(0x10000, 0x1000, 0);
	jittab_remember(0x40000, 0x2000, 1);
	CHECK_EQ_INT(jittab_used(), 2);
	CHECK(jittab_holds(0x10000));
	CHECK(jittab_holds(0x10fff));
	CHECK(!jittab_holds(0x11000));
	CHECK(!jittab_holds(0xffff));
	CHECK(jittab_holds(0x41fff));
	CHECK(!jittab_holds(0x20000)); /* inside [lo, hi), in no range */
	a = slot_of(0x10000);
	b = slot_of(0x40000);
	REQUIRE(a >= 0 && b >= 0 && a != b);
	REQUIRE(jittab_slot(b, &s, &l, &file));
	CHECK(s == 0x40000 && l == 0x2000 && file == 1);
	REQUIRE(jittab_slot(a, &s, &l, &file));
	CHECK(l == 0x1000 && file == 0);

	jittab_drop(a, 0x20000); /* another range's start: kept */
	CHECK(jittab_holds(0x10800));
	jittab_drop(a, 0x10000);
	CHECK(!jittab_holds(0x10800));
	CHECK(!jittab_slot(a, &s, &l, &file));
	jittab_remember(0x30000, 0x100, 0);
	c = slot_of(0x30000);
	CHECK_EQ_INT(c, a); /* the first free slot */
	CHECK(jittab_holds(0x300ff));
	CHECK_EQ_INT(jittab_used(), 2);
	jittab_drop(b, 0x40000);
	jittab_drop(c, 0x30000);
	CHECK(slot_of(0x30000) < 0 && slot_of(0x40000) < 0);
}

/*
 * X = [0x100000, +0x1000) and Y = [0x900000, +0x100000) take the same slot
 * in turn; P = 0x105000 lies in neither, but in X's start with Y's length.
 */
#define X_START 0x100000ull
#define X_LEN 0x1000ull
#define Y_START 0x900000ull
#define Y_LEN 0x100000ull
#define P (X_START + 0x5000)

static _Atomic int stop;

static void *writer(void *arg)
{
	long *rounds = arg;

	while (!atomic_load(&stop)) {
		jittab_remember(X_START, X_LEN, 0);
		jittab_drop(0, X_START);
		jittab_remember(Y_START, Y_LEN, 1);
		jittab_drop(0, Y_START);
		++*rounds;
	}
	return NULL;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void test_race(void)
{
	pthread_t t;
	long rounds = 0, reads = 0, torn = 0, mixed = 0;
	double end = now() + 0.2;
	uint64_t s, l;
	int file;

	REQUIRE(pthread_create(&t, NULL, writer, &rounds) == 0);
	while (now() < end) {
		int k;

		for (k = 0; k < 1000; k++, reads++) {
			torn += jittab_holds(P);
			if (jittab_slot(0, &s, &l, &file) &&
			    !(s == X_START && l == X_LEN && !file) &&
			    !(s == Y_START && l == Y_LEN && file))
				mixed++;
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("%ld reads against %ld rounds of the writer: %ld held P, %ld slots mixed\n",
	       reads, rounds, torn, mixed);
	CHECK(rounds > 0);
	CHECK_EQ_INT(torn, 0);
	CHECK_EQ_INT(mixed, 0);
}

int main(void)
{
	test_basic();
	test_race();
	return test_result();
}
