/*
 * test_export_wall.c — --sample-type wall and offcpu on the waiting fixture
 * (test_wait_fixture.h): the folded stacks give on-CPU samples in ns (weight
 * x period) and each off-CPU stretch under its stack with a "[off-CPU: KIND]"
 * leaf; offcpu leaves the on-CPU stacks out; the flame graph draws the
 * off-CPU frames blue and the on-CPU ones warm; both refuse a run without
 * off-CPU data, saying --off-cpu; the names parse.
 */
#include "report/export.h"
#include "testlib.h"
#include "test_wait_fixture.h"

static long count_of(const char *text, const char *stack)
{
	size_t n = strlen(stack);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, stack, n) && l[n] == ' ')
			return strtol(l + n + 1, NULL, 10);
	return -1;
}

/* The fill of the <g> whose title starts with name, "" when none. */
static const char *fill_of(const char *svg, const char *name, char *buf, size_t len)
{
	char needle[256];
	const char *t, *f;

	snprintf(needle, sizeof(needle), "<title>%s (", name);
	buf[0] = '\0';
	if (!(t = strstr(svg, needle)) || !(f = strstr(t, "fill=\"")))
		return buf;
	f += 6;
	snprintf(buf, len, "%.*s", (int)strcspn(f, "\""), f);
	return buf;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	char *dir = ex_tmpdir(), path[256], err[256], fill[64];
	enum export_sample t;
	char *text;
	unsigned r, g, b;

	CHECK(export_sample_parse("wall", &t) == 0 && t == EXPORT_WALL);
	CHECK(export_sample_parse("offcpu", &t) == 0 && t == EXPORT_OFFCPU);
	CHECK_STR(export_sample_name(EXPORT_OFFCPU), "offcpu");

	wf_profile(&p);
	a = wf_analysis(&p, 1);
	snprintf(path, sizeof(path), "%s/wall.folded", dir);
	REQUIRE(export_folded_as(&a, path, EXPORT_WALL, err, sizeof(err)) == 0);
	text = ex_slurp(path, NULL);
	REQUIRE(text != NULL);
	/* 50 samples of 1 ms on main */
	CHECK_EQ_INT(count_of(text, "main"), 50 * EX_MS);
	/* two 40 ms lock waits on one stack, one 30 ms read */
	CHECK_EQ_INT(count_of(text, "worker;pthread_mutex_lock;[off-CPU: futex]"), 80 * EX_MS);
	CHECK_EQ_INT(count_of(text, "worker;load_item;read;[off-CPU: io]"), 30 * EX_MS);
	free(text);

	snprintf(path, sizeof(path), "%s/off.folded", dir);
	REQUIRE(export_folded_as(&a, path, EXPORT_OFFCPU, err, sizeof(err)) == 0);
	text = ex_slurp(path, NULL);
	REQUIRE(text != NULL);
	CHECK_EQ_INT(count_of(text, "main"), -1);
	CHECK_EQ_INT(count_of(text, "worker;pthread_mutex_lock;[off-CPU: futex]"), 80 * EX_MS);
	free(text);

	snprintf(path, sizeof(path), "%s/wall.svg", dir);
	REQUIRE(export_flamegraph_as(&a, path, EXPORT_WALL, err, sizeof(err)) == 0);
	text = ex_slurp(path, NULL);
	REQUIRE(text != NULL);
	CHECK(strstr(text, "ns on and off CPU") != NULL);
	REQUIRE(sscanf(fill_of(text, "[off-CPU: futex]", fill, sizeof(fill)), "rgb(%u,%u,%u)",
		       &r, &g, &b) == 3);
	CHECK(b >= 200 && r < 100);
	REQUIRE(sscanf(fill_of(text, "worker", fill, sizeof(fill)), "rgb(%u,%u,%u)", &r, &g,
		       &b) == 3);
	CHECK(b >= 200);
	REQUIRE(sscanf(fill_of(text, "main", fill, sizeof(fill)), "rgb(%u,%u,%u)", &r, &g,
		       &b) == 3);
	CHECK(r >= 205 && b < 56);
	free(text);

	/* no off-CPU data: refused, naming the option */
	wf_free(&p);
	ex_init(&p, "./app");
	ex_process(&p, 1, 0, "/usr/bin/app");
	a = *analysed(&p);
	snprintf(path, sizeof(path), "%s/none.folded", dir);
	CHECK(export_folded_as(&a, path, EXPORT_WALL, err, sizeof(err)) < 0);
	CHECK(strstr(err, "--off-cpu") != NULL);
	snprintf(path, sizeof(path), "%s/none.svg", dir);
	CHECK(export_flamegraph_as(&a, path, EXPORT_OFFCPU, err, sizeof(err)) < 0);
	CHECK(strstr(err, "--off-cpu") != NULL);
	pb_profile_free(&p);
	ex_rmdir(dir);
	return test_result();
}
