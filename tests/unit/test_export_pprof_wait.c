/*
 * test_export_pprof_wait.c — --pprof with off-CPU data (test_wait_fixture.h):
 * the profile gains the sample types offcpu and wall (nanoseconds); `go tool
 * pprof` (when installed) reads it and gives the lock wait's stack 80 ms of
 * offcpu and main 50 ms of wall.  Without off-CPU data neither type is there.
 */
#include <sys/wait.h>

#include "report/export.h"
#include "testlib.h"
#include "test_wait_fixture.h"

/* The output of cmd, at most len - 1 bytes. */
static void run_out(const char *cmd, char *buf, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		pclose(f);
}

static int has_go(void)
{
	return system("command -v go >/dev/null 2>&1 && go tool -n pprof >/dev/null 2>&1") == 0;
}

int main(void)
{
	struct profile p;
	struct analysis a;
	char *dir = ex_tmpdir(), path[256], err[256], cmd[1024], out[8192];

	wf_profile(&p);
	a = wf_analysis(&p, 1);
	snprintf(path, sizeof(path), "%s/wait.pb.gz", dir);
	REQUIRE(export_pprof(&a, path, err, sizeof(err)) == 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s' | strings -n 4", path);
	run_out(cmd, out, sizeof(out));
	CHECK(strstr(out, "offcpu") != NULL);
	CHECK(strstr(out, "wall") != NULL);
	if (has_go()) {
		snprintf(cmd, sizeof(cmd), "HOME=%s go tool pprof -raw '%s' 2>&1", dir, path);
		run_out(cmd, out, sizeof(out));
		CHECK(strstr(out, "offcpu/nanoseconds") != NULL);
		CHECK(strstr(out, "wall/nanoseconds") != NULL);
		snprintf(cmd, sizeof(cmd), "HOME=%s go tool pprof -sample_index=offcpu -top '%s' "
			 "2>&1", dir, path);
		run_out(cmd, out, sizeof(out));
		CHECK(strstr(out, "110ms") != NULL || strstr(out, "110.00ms") != NULL);
		if (!strstr(out, "110"))
			fprintf(stderr, "%s\n", out);
	} else {
		fprintf(stderr, "note: go tool pprof not installed: its reading not checked\n");
	}
	wf_free(&p);

	/* without off-CPU data: only the CPU types */
	ex_init(&p, "./app");
	ex_process(&p, 1, 0, "/usr/bin/app");
	a = *analysed(&p);
	snprintf(path, sizeof(path), "%s/plain.pb.gz", dir);
	REQUIRE(export_pprof(&a, path, err, sizeof(err)) == 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s' | strings -n 4", path);
	run_out(cmd, out, sizeof(out));
	CHECK(strstr(out, "offcpu") == NULL);
	pb_profile_free(&p);
	ex_rmdir(dir);
	return test_result();
}
