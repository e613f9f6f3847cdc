/*
 * test_ksym.c — kernel symbol tables (src/symbols/ksym.c): parsing kallsyms
 * text (types kept and skipped, aliases, hidden addresses, garbage lines), the
 * session's kernel-symbols file written and read back, and the per-boot cache
 * of this machine's table: written on the first read, the same table read
 * from it, a damaged cache file ignored (the table read from /proc again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "testlib.h"
#include "symbols/ksym.h"

static void test_parse(void)
{
	static const char text[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 T startup_64\n"          /* alias: the first name wins */
		"ffffffff81000100 t helper\n"
		"ffffffff81000200 D some_data\n"           /* not text: skipped */
		"garbage line\n"
		"ffffffff81000300 W weak_fn\n"
		"ffffffffc0000000 t mod_fn\t[somemod]\n";
	struct ksym_table t;
	const struct ksym *k;
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	REQUIRE(f);
	CHECK_EQ_INT(ksym_read_kallsyms(f, &t), 0);
	fclose(f);
	CHECK(!t.hidden);
	CHECK_EQ_INT((int)t.n, 4);
	k = ksym_find(&t, 0xffffffff81000050);
	CHECK(k && strcmp(k->name, "_stext") == 0);
	k = ksym_find(&t, 0xffffffff81000250); /* data is not a symbol: helper runs on */
	CHECK(k && strcmp(k->name, "helper") == 0);
	k = ksym_find(&t, 0xffffffffc0000010);
	CHECK(k && strcmp(k->name, "mod_fn") == 0);
	CHECK(ksym_find(&t, 0x1000) == NULL);
	ksym_free(&t);

	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t helper\n";
	f = fmemopen((void *)hidden, sizeof(hidden) - 1, "r");
	REQUIRE(f);
	CHECK_EQ_INT(ksym_read_kallsyms(f, &t), 0);
	fclose(f);
	CHECK(t.hidden);
	CHECK_EQ_INT((int)t.n, 0);
	ksym_free(&t);
}

static void test_session_file(const char *dir)
{
	static const char text[] = "ffffffff81000000 T a_fn\nffffffff81000100 T b_fn\n"
				   "ffffffff81000200 T c_fn\n";
	uint64_t pcs[] = {0xffffffff81000010, 0xffffffff81000201};
	struct ksym_table t, r;
	char path[4200];
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

	REQUIRE(f);
	REQUIRE(ksym_read_kallsyms(f, &t) == 0);
	fclose(f);
	snprintf(path, sizeof(path), "%s/kernel-symbols", dir);
	CHECK_EQ_INT(ksym_write_file(&t, pcs, 2, path, "test"), 2); /* a_fn, c_fn */
	CHECK_EQ_INT(ksym_read_file(path, &r), 0);
	CHECK_EQ_INT((int)r.n, 2);
	CHECK(ksym_find(&r, 0xffffffff81000010) && strcmp(ksym_find(&r, 0xffffffff81000010)->name, "a_fn") == 0);
	CHECK(ksym_find(&r, 0xffffffff81000150) == NULL); /* b_fn was not needed */
	ksym_free(&r);
	ksym_free(&t);
}

static int cache_file(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strncmp(de->d_name, "kallsyms-", 9) == 0 && strstr(de->d_name, ".bin") &&
		    !strstr(de->d_name, ".tmp.")) {
			snprintf(out, len, "%s/%s", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static int same_table(const struct ksym_table *a, const struct ksym_table *b)
{
	size_t i;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->v[i].start != b->v[i].start || a->v[i].end != b->v[i].end ||
		    strcmp(a->v[i].name, b->v[i].name) != 0)
			return 0;
	return 1;
}

static void test_boot_cache(const char *dir)
{
	struct ksym_table a, b, c;
	char path[4200];
	FILE *f;

	setenv("CBN_SYMCACHE_DIR", dir, 1);
	unsetenv("CBN_SYMCACHE");
	if (ksym_read_kernel(&a) != 0 || a.hidden || a.n == 0) {
		printf("test_ksym: /proc/kallsyms unreadable or hidden here; boot cache not tested\n");
		ksym_free(&a);
		return;
	}
	CHECK_EQ_INT(cache_file(dir, path, sizeof(path)), 1);
	CHECK_EQ_INT(ksym_read_kernel(&b), 0);     /* from the cache */
	CHECK(same_table(&a, &b));
	/* Damage: cut the cache in half; the table comes from /proc again. */
	REQUIRE(truncate(path, 100) == 0);
	CHECK_EQ_INT(ksym_read_kernel(&c), 0);
	CHECK(same_table(&a, &c));
	ksym_free(&c);
	/* Damage: a name offset out of range (the last entry's). */
	f = fopen(path, "r+b");
	REQUIRE(f);
	REQUIRE(fseek(f, 32 + (long)(a.n - 1) * 24 + 16, SEEK_SET) == 0);
	{
		uint64_t bad = ~0ull;
		fwrite(&bad, sizeof(bad), 1, f);
	}
	fclose(f);
	CHECK_EQ_INT(ksym_read_kernel(&c), 0);
	CHECK(same_table(&a, &c));
	ksym_free(&c);
	/* Caching off: nothing written. */
	unlink(path);
	setenv("CBN_SYMCACHE", "0", 1);
	CHECK_EQ_INT(ksym_read_kernel(&c), 0);
	CHECK_EQ_INT(cache_file(dir, path, sizeof(path)), 0);
	ksym_free(&c);
	ksym_free(&b);
	ksym_free(&a);
}

int main(void)
{
	char dir[] = "/tmp/cbn-test-ksym.XXXXXX";
	char cmd[64];

	REQUIRE(mkdtemp(dir));
	test_parse();
	test_session_file(dir);
	test_boot_cache(dir);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_ksym: cannot remove %s\n", dir);
	return test_result();
}
