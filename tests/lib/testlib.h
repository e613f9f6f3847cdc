/*
 * testlib.h — the few macros every unit test uses.  CHECK records a failure and
 * goes on; REQUIRE stops the test.  A test's main returns test_result().
 * Exit 77 (TEST_SKIP) tells ctest the test was skipped; say why on stderr first.
 */
#ifndef CBN_TESTLIB_H
#define CBN_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77

/* SANITIZED: 1 in an AddressSanitizer build (GCC's macro, clang's feature),
 * whose shadow memory and own malloc some tests cannot live with. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static int test_failures;
static int test_checks;

#define CHECK(cond)                                                                      \
	do {                                                                             \
		test_checks++;                                                           \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                  \
			test_failures++;                                                 \
		}                                                                        \
	} while (0)

#define REQUIRE(cond)                                                                    \
	do {                                                                             \
		test_checks++;                                                           \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__,          \
				__LINE__, #cond);                                        \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                               \
	do {                                                                             \
		long long a_ = (long long)(a), b_ = (long long)(b);                      \
		test_checks++;                                                           \
		if (a_ != b_) {                                                          \
			fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, #a, a_, #b, b_);                     \
			test_failures++;                                                 \
		}                                                                        \
	} while (0)

#define CHECK_STR(a, b)                                                                  \
	do {                                                                             \
		const char *a_ = (a), *b_ = (b);                                         \
		test_checks++;                                                           \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                 \
			fprintf(stderr, "%s:%d: CHECK_STR failed: \"%s\" != \"%s\"\n",   \
				__FILE__, __LINE__, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			test_failures++;                                                 \
		}                                                                        \
	} while (0)

/* A xorshift64 step of *state (never 0): repeatable pseudo-random numbers
 * for the generated cases of a test. */
static inline uint64_t test_xorshift(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static inline int test_result(void)
{
	printf("%d checks, %d failed\n", test_checks, test_failures);
	return test_failures ? 1 : 0;
}

#endif
