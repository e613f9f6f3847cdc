/*
 * test_debuginfo.c — the "no debug info" line (analysis/cpu/cpu_debuginfo.c)
 * and the package lookup under it (symbols/sym_pkg.c): modules are weighed
 * by the samples whose leaf is in them; the ones holding at least 1 % are
 * named with the Debian -dbgsym package that has their debug info (dpkg's
 * file lists, a usrmerge path matching the list's /lib one), or as "build it
 * with -g" when no package installed them; the rest is one count; no line at
 * all when no sample lies in such a module.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "test_cpu_builder.h"
#include "cpu.h"
#include "symbols/sym.h"

static char dir[] = "/tmp/cbn-test-dpkg-XXXXXX";

static void fake_dpkg(void)
{
	char path[256];
	FILE *f;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/libfoo1:amd64.list", dir);
	REQUIRE((f = fopen(path, "w")) != NULL);
	fprintf(f, "/.\n/lib\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libfoo.so.1.2\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/other.list", dir);
	REQUIRE((f = fopen(path, "w")) != NULL);
	fprintf(f, "/usr/bin/other\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/other.md5sums", dir);
	REQUIRE((f = fopen(path, "w")) != NULL);
	fprintf(f, "0123 /usr/lib/x86_64-linux-gnu/libbar.so\n"); /* not a list */
	fclose(f);
	setenv("CBN_DPKG_INFO_DIR", dir, 1);
}

static void test_packages(void)
{
	const char *paths[] = {"/usr/lib/x86_64-linux-gnu/libfoo.so.1.2", "/bin/other",
			       "/usr/lib/x86_64-linux-gnu/libbar.so", "libnopath.so", NULL};
	char *pkgs[5];
	size_t i;

	CHECK_EQ_INT(sym_packages_of(paths, 5, pkgs), 0);
	CHECK(pkgs[0] && !strcmp(pkgs[0], "libfoo1"));   /* /usr/lib = /lib (usrmerge) */
	CHECK(pkgs[1] && !strcmp(pkgs[1], "other"));     /* /bin = /usr/bin */
	CHECK(pkgs[2] == NULL && pkgs[3] == NULL && pkgs[4] == NULL);
	for (i = 0; i < 5; i++)
		free(pkgs[i]);
}

static void test_line(void)
{
	struct prof_hitmod hm[3] = {
		{.file = "libfoo.so.1.2", .path = "/usr/lib/x86_64-linux-gnu/libfoo.so.1.2"},
		{.file = "libbar.so", .path = "/opt/bar/libbar.so"},
		{.file = "libtiny.so", .path = "/opt/tiny/libtiny.so"},
	};
	struct cpu_profile *c = NULL;
	struct pb b;
	uint32_t f[4], pr, th;
	char *line = NULL;

	pb_init(&b, 1000000, "./dbg");
	f[0] = pb_func(&b, "main", "m.c", 1, "dbg");
	f[1] = pb_func(&b, "foo_work", "", 0, "libfoo.so.1.2");
	f[2] = pb_func(&b, "bar_work", "", 0, "libbar.so");
	f[3] = pb_func(&b, "tiny", "", 0, "libtiny.so");
	pr = pb_process(&b, 1, 0, "dbg", "./dbg", 1000000);
	th = pb_thread(&b, 1, pr, "");
	pb_samples(&b, th, pb_stack(&b, 1, &f[0]), 200, 1, 0);
	pb_samples(&b, th, pb_stack(&b, 1, &f[1]), 600, 1, 0);   /* 60 % */
	pb_samples(&b, th, pb_stack(&b, 1, &f[2]), 195, 1, 0);   /* 19.5 % */
	pb_samples(&b, th, pb_stack(&b, 1, &f[3]), 5, 1, 0);     /* 0.5 % */
	pb_nodebug(&b, "libfoo.so.1.2");
	pb_nodebug(&b, "libbar.so");
	pb_nodebug(&b, "libtiny.so");
	pb_nodebug(&b, "libunused.so");
	b.p.hitmods = hm;
	b.p.nhitmods = 3;
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	CHECK_EQ_INT(cpu_debuginfo_line(&b.p, c, &line), 0);
	REQUIRE(line != NULL);
	CHECK(strstr(line, "no debug info where 80.0% of the samples are") == line);
	CHECK(strstr(line, "install libfoo1-dbgsym (libfoo.so.1.2, 60.0%)") != NULL);
	CHECK(strstr(line, "libbar.so (19.5%: no package has it; build it with -g)") != NULL);
	CHECK(strstr(line, "2 more modules without debug info hold 0.5% of the samples") != NULL);
	CHECK(strstr(line, "libunused") == NULL && strstr(line, "libtiny") == NULL);
	free(line);
	cpu_free(c);

	/* no sample in a module without debug info: no line */
	b.p.nnodebug_modules = 1;
	b.p.nodebug_modules[0] = "libunused.so";
	REQUIRE(cpu_aggregate(&b.p, &c) == 0);
	CHECK_EQ_INT(cpu_debuginfo_line(&b.p, c, &line), 0);
	CHECK(line == NULL);
	cpu_free(c);
	b.p.hitmods = NULL;
	b.p.nhitmods = 0;
	pb_free(&b);
}

int main(void)
{
	char cmd[64];

	fake_dpkg();
	test_packages();
	test_line();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "note: could not remove %s\n", dir);
	return test_result();
}
