/*
 * test_export_folded.c — export_folded(): parse the lines back and check
 * root-first order, merging of stacks that differ only in pcs, counts that
 * sum to the total weight, escaping of ';' and whitespace, truncated stacks
 * under "[truncated]", and gzip output.
 */
#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

struct fline {
	char stack[512];
	long count;
};

/* Parse "a;b;c N" lines; returns the number of lines, -1 on a malformed one. */
static int parse(const char *text, struct fline *out, int max)
{
	int n = 0;

	while (*text) {
		const char *nl = strchr(text, '\n'), *sp;
		char *end;

		if (!nl || n == max)
			return -1;
		for (sp = nl; sp > text && sp[-1] != ' '; sp--)
			;
		if (sp == text || (size_t)(sp - 1 - text) >= sizeof(out[n].stack))
			return -1;
		memcpy(out[n].stack, text, (size_t)(sp - 1 - text));
		out[n].stack[sp - 1 - text] = '\0';
		out[n].count = strtol(sp, &end, 10);
		if (end != nl || out[n].count <= 0)
			return -1;
		n++;
		text = nl + 1;
	}
	return n;
}

static long count_of(const struct fline *l, int n, const char *stack)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(l[i].stack, stack))
			return l[i].count;
	return -1;
}

int main(void)
{
	struct profile p;
	struct fline lines[32];
	char *dir = ex_tmpdir(), path[256], err[256];
	uint32_t t, f_main, f_work, f_leaf, f_odd, f_empty, s1, s1b, s2, s3, s4;
	long total = 0, sum = 0;
	char *text;
	int n;

	ex_init(&p, "./app");
	ex_process(&p, 10, 0, "/bin/app");
	t = ex_thread(&p, 10, 0, "app");
	f_main = ex_func(&p, "main", "a.c", 1, "app");
	f_work = ex_func(&p, "work", "a.c", 9, "app");
	f_leaf = ex_func(&p, "leaf", "a.c", 20, "app");
	f_odd = ex_func(&p, "ns::op;x (int, char)\tz\n", "a.cc", 30, "app");
	f_empty = ex_func(&p, "", "", 0, "");
	s1 = ex_stack(&p, 3, (uint32_t[]){f_main, f_work, f_leaf});
	s1b = ex_stack(&p, 3, (uint32_t[]){f_main, f_work, f_leaf});
	p.frames[p.stacks[s1b].first].addr += 8; /* same functions, other pc */
	s2 = ex_stack(&p, 2, (uint32_t[]){f_main, f_work});
	s3 = ex_stack(&p, 2, (uint32_t[]){f_main, f_odd});
	s4 = ex_stack(&p, 2, (uint32_t[]){f_main, f_empty});
	for (int k = 0; k < 30; k++)
		ex_sample(&p, t, EX_T0 + (uint64_t)k * EX_MS, k % 2 ? s1 : s1b, 1);
	for (int k = 0; k < 10; k++)
		ex_sample(&p, t, EX_T0 + (uint64_t)(40 + k) * EX_MS, s2, 3);
	ex_sample(&p, t, EX_T0 + 60 * EX_MS, s3, 2);
	ex_sample(&p, t, EX_T0 + 61 * EX_MS, s4, 1);
	ex_sample(&p, t, EX_T0 + 62 * EX_MS, 999, 4); /* stack index out of range */
	ex_sample(&p, t, EX_T0 + 63 * EX_MS, s2, 5);  /* cut at max depth: main is not its root */
	p.samples[p.nsamples - 1].flags = CBN_SAMPLE_TRUNCATED;
	for (size_t i = 0; i < p.nsamples; i++)
		total += p.samples[i].weight;

	snprintf(path, sizeof(path), "%s/out.folded", dir);
	CHECK_EQ_INT(export_folded(analysed(&p), path, err, sizeof(err)), 0);
	text = ex_slurp(path, NULL);
	REQUIRE(text != NULL);
	n = parse(text, lines, 32);
	CHECK_EQ_INT(n, 6);
	for (int i = 0; i < n; i++) {
		sum += lines[i].count;
		for (int j = 0; j < i; j++)
			CHECK(strcmp(lines[i].stack, lines[j].stack) != 0); /* merged */
		CHECK(strpbrk(lines[i].stack, " \t\n") == NULL);
	}
	CHECK_EQ_INT(sum, total);
	CHECK_EQ_INT(count_of(lines, n, "main;work;leaf"), 30);
	CHECK_EQ_INT(count_of(lines, n, "main;work"), 30);
	CHECK_EQ_INT(count_of(lines, n, "main;ns::op_x_(int,_char)_z_"), 2);
	CHECK_EQ_INT(count_of(lines, n, "main;[unknown]"), 1);
	CHECK_EQ_INT(count_of(lines, n, "[no-stack]"), 4);
	CHECK_EQ_INT(count_of(lines, n, "[truncated];main;work"), 5);
	free(text);

#ifdef EX_HAVE_ZLIB
	/* .gz: the same lines, compressed */
	snprintf(path, sizeof(path), "%s/out.folded.gz", dir);
	CHECK_EQ_INT(export_folded(analysed(&p), path, err, sizeof(err)), 0);
	{
		FILE *f = fopen(path, "rb");
		unsigned char m[2] = {0, 0};

		REQUIRE(f != NULL);
		CHECK(fread(m, 1, 2, f) == 2 && m[0] == 0x1f && m[1] == 0x8b);
		fclose(f);
	}
	text = ex_slurp(path, NULL);
	REQUIRE(text != NULL);
	CHECK_EQ_INT(parse(text, lines, 32), 6);
	CHECK_EQ_INT(count_of(lines, n, "main;work;leaf"), 30);
	free(text);
#endif

	/* no samples: an empty file, not an error */
	{
		struct profile e;
		size_t len = 1;

		ex_init(&e, "true");
		snprintf(path, sizeof(path), "%s/empty.folded", dir);
		CHECK_EQ_INT(export_folded(analysed(&e), path, err, sizeof(err)), 0);
		text = ex_slurp(path, &len);
		CHECK(text && len == 0);
		free(text);
	}
	CHECK(export_folded(analysed(&p), "/nonexistent-dir/x.folded", err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent-dir/x.folded") != NULL);

	pb_profile_free(&p);
	ex_rmdir(dir);
	return test_result();
}
