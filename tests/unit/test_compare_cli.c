/*
 * test_compare_cli.c — the option parsing of `cbottleneck compare`
 * (cmd_compare, linked from the cli library), and its exit statuses.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "testlib.h"
#include "cli/cli.h"
#include "gate/compare.h"

static char dir[] = "/tmp/cbn-test-compare-cli-XXXXXX";

static void put(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", dir, name);
	f = fopen(path, "w");
	REQUIRE(f);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
}

/* cmd_compare on a NULL-terminated list, with stdout and stderr silenced. */
static int cli(const char *first, ...)
{
	char *argv[32];
	int argc = 0, rc, out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
	va_list ap;
	const char *a;

	REQUIRE(out >= 0 && err >= 0 && null >= 0);
	argv[argc++] = (char *)"compare";
	va_start(ap, first);
	for (a = first; a && argc < 31; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	fflush(stderr);
	dup2(null, 1);
	dup2(null, 2);
	rc = cmd_compare(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	close(null);
	return rc;
}

/* A report with one function; wall = cpu = heavy's self time. */
#define REPORT_FMT                                                                         \
	"{\"schema_version\":1,\"run\":{\"command\":[\"./split\"],"                         \
	"\"wall_ns\":%d000000,\"cpu_ns\":%d000000,\"period_ns\":1000000,"                     \
	"\"samples\":%d,\"weight\":%d},\"functions\":[{\"name\":\"heavy\","                \
	"\"self_ns\":%d000000,\"total_ns\":%d000000,\"self_samples\":%d,"                    \
	"\"total_samples\":%d}]}"

int main(void)
{
	char base[300], slow[300], md[300], bj[300], cmd[400];
	char text[600];

	REQUIRE(mkdtemp(dir));
	snprintf(text, sizeof(text), REPORT_FMT, 300, 300, 300, 300, 300, 300, 300, 300);
	put("base.json", text, base, sizeof(base));
	snprintf(text, sizeof(text), REPORT_FMT, 600, 600, 600, 600, 600, 600, 600, 600);
	put("slow.json", text, slow, sizeof(slow));
	snprintf(md, sizeof(md), "%s/s.md", dir);
	snprintf(bj, sizeof(bj), "%s/b.json", dir);

	CHECK_EQ_INT(cli("--help", NULL), CMP_PASS);
	CHECK_EQ_INT(cli(NULL), CMP_USAGE);
	CHECK_EQ_INT(cli(base, NULL), CMP_USAGE);
	CHECK_EQ_INT(cli(base, slow, base, NULL), CMP_USAGE);
	CHECK_EQ_INT(cli("--bogus", base, slow, NULL), CMP_USAGE);
	CHECK_EQ_INT(cli("-x", base, slow, NULL), CMP_USAGE);
	CHECK_EQ_INT(cli(base, slow, "--fail", NULL), CMP_USAGE);
	CHECK_EQ_INT(cli("--fail", "wall:+10", base, slow, NULL), CMP_USAGE);
	CHECK_EQ_INT(cli("--warn", "nonsense", base, slow, NULL), CMP_USAGE);

	CHECK_EQ_INT(cli(base, base, NULL), CMP_PASS);
	CHECK_EQ_INT(cli(base, slow, NULL), CMP_PASS); /* the default report never fails */
	CHECK_EQ_INT(cli("--fail", "func[heavy].self:+25%", base, base, NULL), CMP_PASS);
	CHECK_EQ_INT(cli("--fail", "func[heavy].self:+25%", base, slow, NULL), CMP_REGRESSION);
	/* options may follow the files; = form; -q */
	CHECK_EQ_INT(cli(base, slow, "-q", "--fail=func[heavy].self:+25%", NULL),
		     CMP_REGRESSION);
	CHECK_EQ_INT(cli("--warn", "func[heavy].self:+25%", "--fail", "wall:+200%", base, slow,
			 NULL),
		     CMP_PASS);
	CHECK_EQ_INT(cli("--fail", "gpu.kernels:+0", base, slow, NULL), CMP_UNMEASURABLE);
	CHECK_EQ_INT(cli("--fail", "wall:+10%", "--markdown", md, "--bench-json", bj, base, slow,
			 NULL),
		     CMP_REGRESSION);
	CHECK(access(md, R_OK) == 0);
	CHECK(access(bj, R_OK) == 0);
	/* a second call after a failed one parses afresh (getopt state reset) */
	CHECK_EQ_INT(cli("--fail", "wall:+10%", base, base, NULL), CMP_PASS);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return test_result();
}
