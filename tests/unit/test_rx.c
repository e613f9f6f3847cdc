/*
 * test_rx.c — the --step matcher (src/format/cbn_rx.h), which the agent runs
 * inside the program instead of glibc's allocating regexec: glibc's regexec
 * is the oracle on a table of patterns and names and on random ones, the
 * unsupported forms are refused with a sentence, and patterns that make a
 * backtracking matcher explode answer on long names.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "format/cbn_rx.h"

static struct cbn_rx rx;

/* Ours against glibc's on pattern and s; both must accept the pattern. */
static void same(const char *pattern, const char *s)
{
	regex_t re;
	char why[128];
	int ours, theirs;

	REQUIRE(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0);
	if (cbn_rx_compile(&rx, pattern, why, sizeof(why)) != 0) {
		fprintf(stderr, "refused '%s': %s\n", pattern, why);
		CHECK(0);
		regfree(&re);
		return;
	}
	ours = cbn_rx_search(&rx, s);
	theirs = regexec(&re, s, 0, NULL, 0) == 0;
	if (ours != theirs)
		fprintf(stderr, "'%s' on '%s': ours %d, glibc %d\n", pattern, s, ours, theirs);
	CHECK(ours == theirs);
	regfree(&re);
}

static void test_table(void)
{
	static const char *const pats[] = {
		"step", "^step$", "^train_step", "step$", "ProfilerStep#[0-9]+", "^(fwd|bwd)$",
		"a.c", "a\\.c", "[[:digit:]]{2,3}", "x{2}", "x{2,}", "(ab)+c", "(ab)*c", "colou?r",
		"[^a-z]", "[]a]", "[a-]", "[[:alpha:]_][[:alnum:]_]*", "^$", "", "a|b|c", "(a|)b",
		"\\(x\\)", "\\w+", "\\s", "[[:space:]]", "[[:upper:]][[:lower:]]+", "^.*$",
		"(a*)*b", "((a|b)*c){2}", "[[:xdigit:]]{4}", "a{0,1}b", "a{1,1}", "[.]", "\\^",
		"[*+?]", "$x", "x^",
	};
	static const char *const names[] = {
		"", "step", "train_step", "my_step_3", "ProfilerStep#12", "ProfilerStep#",
		"fwd", "bwd", "fwdbwd", "abc", "a.c", "axc", "12", "1234", "x", "xx", "xxx",
		"ababc", "c", "color", "colour", "colouur", "A", "]", "-", "Step_1", "_id9",
		"aaab", "abcabc", "abcbac", "beef", "(x)", "hello world", "tab\there", "*",
		"^", "x^", "$x", "b",
	};
	size_t i, j;

	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		for (j = 0; j < sizeof(names) / sizeof(names[0]); j++)
			same(pats[i], names[j]);
}

/* Random patterns over a small alphabet, random names: ours == glibc's
 * wherever glibc accepts the pattern (and ours must accept it too). */
static void test_random(void)
{
	static const char *const parts[] = {"a", "b", ".", "*", "+", "?", "|", "(", ")", "[ab]",
					    "[^a]", "^", "$", "{1,2}", "{2}", "\\.", "c"};
	char pat[40], s[24];
	unsigned seed = 12345;
	int n, k, tried = 0;
	regex_t re;

	for (n = 0; n < 20000; n++) {
		size_t len = 0;
		int parts_n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 8;

		pat[0] = 0;
		for (k = 0; k < parts_n; k++) {
			const char *p = parts[((seed = seed * 1103515245u + 12345u) >> 16) %
					      (sizeof(parts) / sizeof(parts[0]))];
			if (len + strlen(p) + 1 > sizeof(pat))
				break;
			strcpy(pat + len, p);
			len += strlen(p);
		}
		/* GNU-only forms where glibc differs from POSIX (a leading repeat
		 * is an error to POSIX, a literal to us) are skipped with glibc's
		 * own refusals. */
		if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) != 0)
			continue;
		regfree(&re);
		if (strchr("*+?{", pat[0]) || strstr(pat, "(*") || strstr(pat, "|*") ||
		    strstr(pat, "(+") || strstr(pat, "|+") || strstr(pat, "(?") || strstr(pat, "|?") ||
		    strstr(pat, "({") || strstr(pat, "|{") || strstr(pat, "^*") || strstr(pat, "^+") ||
		    strstr(pat, "^?") || strstr(pat, "^{") || strstr(pat, "$*") || strstr(pat, "$+") ||
		    strstr(pat, "$?") || strstr(pat, "${"))
			continue;
		for (k = 0; k < 6; k++) {
			int sl = (int)((seed = seed * 1103515245u + 12345u) >> 16) % 10, c;

			for (c = 0; c < sl; c++)
				s[c] = "abc."[((seed = seed * 1103515245u + 12345u) >> 16) % 4];
			s[sl] = 0;
			same(pat, s);
		}
		tried++;
	}
	CHECK(tried > 1000);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"(", "(a", "[a", "[[:alpha:]", "[[:nope:]]", "\\1", "(a)\\1", "[[=a=]]",
		"[[.a.]]", "a{3,1}", "a{256}", "a{1,300}", "a\\", "[z-a]", "a{2,x}",
	};
	char why[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		CHECK(cbn_rx_compile(&rx, bad[i], why, sizeof(why)) < 0);
		CHECK(why[0] != 0);
		CHECK(!cbn_rx_search(&rx, "a"));
	}
	/* too large once expanded: 255 copies of a 4-instruction group, twice */
	CHECK(cbn_rx_compile(&rx, "((ab|cd){255}){255}", why, sizeof(why)) < 0);
	CHECK(strstr(why, "too large") != NULL);
}

/* Backtracking's worst cases, answered in one pass over the name. */
static void test_linear(void)
{
	char s[20001];

	memset(s, 'a', sizeof(s) - 1);
	s[sizeof(s) - 1] = 0;
	REQUIRE(cbn_rx_compile(&rx, "(a*)*b", NULL, 0) == 0);
	CHECK(!cbn_rx_search(&rx, s));
	REQUIRE(cbn_rx_compile(&rx, "(a|aa)+$", NULL, 0) == 0);
	CHECK(cbn_rx_search(&rx, s));
	REQUIRE(cbn_rx_compile(&rx, "(x+x+)+y", NULL, 0) == 0);
	CHECK(!cbn_rx_search(&rx, s));
	REQUIRE(cbn_rx_compile(&rx, "a{255}", NULL, 0) == 0);
	CHECK(cbn_rx_search(&rx, s));
	CHECK(!cbn_rx_search(&rx, "aaa"));
	CHECK(!cbn_rx_search(NULL, "a"));
	CHECK(!cbn_rx_search(&rx, NULL));
}

int main(void)
{
	test_table();
	test_random();
	test_refused();
	test_linear();
	return test_result();
}
