/*
 * test_compare_expr.c — gate expressions of `cbottleneck compare`: what parses,
 * into what, and that every malformed one is refused with a message.
 */
#include <math.h>

#include "testlib.h"
#include "gate/cmp_internal.h"

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

static void good(const char *text, struct cmp_expr *e)
{
	char err[512] = "";
	int rc = cmp_expr_parse(text, CMP_LEVEL_FAIL, e, err, sizeof(err));

	if (rc != 0)
		fprintf(stderr, "unexpectedly refused '%s': %s\n", text, err);
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(cmp_expr_check(text, err, sizeof(err)), 0);
}

static void bad(const char *text, const char *must_say)
{
	struct cmp_expr e;
	char err[512] = "";
	int rc = cmp_expr_parse(text, CMP_LEVEL_WARN, &e, err, sizeof(err));

	if (rc == 0)
		fprintf(stderr, "unexpectedly accepted '%s'\n", text);
	CHECK_EQ_INT(rc, -1);
	/* one line, naming the expression */
	CHECK(strchr(err, '\n') == NULL);
	CHECK(strstr(err, text) != NULL);
	if (must_say && !strstr(err, must_say)) {
		fprintf(stderr, "message for '%s' lacks '%s': %s\n", text, must_say, err);
		CHECK(0);
	}
	err[0] = '\0';
	CHECK_EQ_INT(cmp_expr_check(text, err, sizeof(err)), -1);
	CHECK(err[0] != '\0');
}

static void test_scalars(void)
{
	struct cmp_expr e;

	good("wall:+10%", &e);
	CHECK_EQ_INT(e.metric, CMP_M_WALL);
	CHECK_EQ_INT(e.unit, CMP_U_NS);
	CHECK_EQ_INT(e.th.dir, 1);
	CHECK_EQ_INT(e.th.relative, 1);
	CHECK(near(e.th.value, 0.10));
	CHECK_EQ_INT(e.th.has_floor, 0);
	CHECK_STR(e.th_text, "+10%");

	good("wall:+20ms", &e);
	CHECK_EQ_INT(e.th.relative, 0);
	CHECK(near(e.th.value, 20e6));
	good("wall:1.5s", &e); /* no sign: an increase */
	CHECK_EQ_INT(e.th.dir, 1);
	CHECK(near(e.th.value, 1.5e9));
	good("cpu:+250us", &e);
	CHECK_EQ_INT(e.metric, CMP_M_CPU);
	CHECK(near(e.th.value, 250e3));
	good("cpu:-5%", &e);
	CHECK_EQ_INT(e.th.dir, -1);
	CHECK(near(e.th.value, 0.05));
	good("cpu:+0", &e); /* zero needs no unit */
	CHECK(near(e.th.value, 0));
	good("samples:+100", &e);
	CHECK_EQ_INT(e.metric, CMP_M_SAMPLES);
	CHECK_EQ_INT(e.unit, CMP_U_COUNT);
	CHECK(near(e.th.value, 100));
	good("wall:+.5s", &e);
	CHECK(near(e.th.value, 0.5e9));
}

static void test_floors(void)
{
	struct cmp_expr e;

	good("func[heavy].self:+10%,>=5ms", &e);
	CHECK_EQ_INT(e.metric, CMP_M_FUNC);
	CHECK_EQ_INT(e.field, CMP_F_SELF);
	CHECK_STR(e.pattern, "heavy");
	CHECK_EQ_INT(e.th.relative, 1);
	CHECK(near(e.th.value, 0.10));
	CHECK_EQ_INT(e.th.has_floor, 1);
	CHECK(near(e.th.floor, 5e6));
	CHECK_STR(e.th_text, "+10%,>=5ms");
	good("func[heavy].self:+10%,5ms", &e); /* '>=' may be left out */
	CHECK(near(e.th.floor, 5e6));
	good("gpu.memcpy_bytes:+5%,>=1MiB", &e);
	CHECK_EQ_INT(e.unit, CMP_U_BYTES);
	CHECK(near(e.th.floor, 1048576.0));
	good("kernel[gemm*].calls:+10%,>=3", &e);
	CHECK(near(e.th.floor, 3));
}

static void test_patterns(void)
{
	struct cmp_expr e;

	good("func[ns::foo<int>(int, char const*)].total:+10%", &e);
	CHECK_STR(e.pattern, "ns::foo<int>(int, char const*)");
	CHECK_EQ_INT(e.field, CMP_F_TOTAL);
	good("func[work[0-9]].self:+1%", &e); /* glob class inside the brackets */
	CHECK_STR(e.pattern, "work[0-9]");
	good("func[operator\\[\\]].self:+1%", &e); /* escaped brackets */
	CHECK_STR(e.pattern, "operator\\[\\]");
	good("line[split.c:42].self:+20%", &e);
	CHECK_EQ_INT(e.metric, CMP_M_LINE);
	CHECK_STR(e.pattern, "split.c");
	CHECK_EQ_INT(e.line, 42);
	good("line[C:/src/a.c:7].self:+20%", &e); /* the last ':' separates the line */
	CHECK_STR(e.pattern, "C:/src/a.c");
	CHECK_EQ_INT(e.line, 7);
	good("kernel[gemm*].avg:+10%", &e);
	CHECK_EQ_INT(e.metric, CMP_M_KERNEL);
	CHECK_EQ_INT(e.field, CMP_F_AVG);
	CHECK_EQ_INT(e.unit, CMP_U_NS);
	good("kernel[gemm*].calls:+0", &e);
	CHECK_EQ_INT(e.unit, CMP_U_COUNT);
	good("kernel[*].total:+5%", &e);
	good("api[cudaMemcpy*].calls:+0", &e);
	CHECK_EQ_INT(e.metric, CMP_M_API);
	CHECK_EQ_INT(e.field, CMP_F_CALLS);
	good("api[cudaDeviceSynchronize].total:+1ms", &e);
	CHECK_EQ_INT(e.field, CMP_F_TOTAL);
}

static void test_gpu(void)
{
	struct cmp_expr e;

	good("gpu.kernels:+0", &e);
	CHECK_EQ_INT(e.metric, CMP_M_GPU);
	CHECK_EQ_INT(e.gpu, CMP_GPU_KERNELS);
	CHECK_EQ_INT(e.unit, CMP_U_COUNT);
	good("gpu.kernel_time:+5%", &e);
	CHECK_EQ_INT(e.gpu, CMP_GPU_KERNEL_TIME);
	good("gpu.memcpy_bytes:+1GB", &e);
	CHECK(near(e.th.value, 1e9));
	good("gpu.utilization:-5%", &e);
	CHECK_EQ_INT(e.unit, CMP_U_RATIO);
	CHECK_EQ_INT(e.th.dir, -1);
	good("gpu.utilization:-0.1", &e);
	CHECK(near(e.th.value, 0.1));
	good("gpu.sync_time:+2ms", &e);
	good("gpu.api_calls:+0", &e);
	good("gpu.busy:+10%", &e);
	good("gpu.memcpys:+0", &e);
	good("gpu.memcpy_time:+10%", &e);
}

static void test_bad(void)
{
	struct cmp_expr e;
	char err[256];

	bad("", "METRIC:THRESHOLD");
	bad("wall", "THRESHOLD");
	bad("wall:", "empty threshold");
	bad("wall:+20", "needs a unit");
	bad("wall:+20xs", "unknown unit");
	bad("wall:+abc", "expected a number");
	bad("wall:++1%", "expected a number");
	bad("wall:+inf", "expected a number");
	bad("wall:+1e999s", "not a number");
	bad("walls:+1%", "unknown metric");
	bad("Wall:+1%", "unknown metric");
	bad("wall +1%", NULL);
	bad("func[heavy.self:+1%", "unclosed");
	bad("func[].self:+1%", "empty pattern");
	bad("func[heavy]:+1%", ".FIELD");
	bad("func[heavy].avg:+1%", "unknown field");
	bad("func[heavy].self", "THRESHOLD");
	bad("func[heavy].self+1%", "THRESHOLD");
	bad("fun[heavy].self:+1%", "not a metric");
	bad("line[split.c].self:+1%", "FILE:LINE");
	bad("line[split.c:0].self:+1%", "line number");
	bad("line[split.c:4x].self:+1%", "line number");
	bad("line[split.c:4].total:+1%", "unknown field");
	bad("kernel[k].self:+1%", "unknown field");
	bad("api[a].instances:+1%", "unknown field");
	bad("gpu.nope:+0", "unknown GPU metric");
	bad("wall:+10ms,>=5ms", "relative");
	bad("wall:+10%,>=5%", "absolute");
	bad("wall:+10%,>=5", "needs a unit");
	bad("wall:+10%,>=5ms junk", "unknown unit");
	bad("wall:+10%,>=5ms,", "unexpected");
	bad("samples:+1ms", "unknown unit");
	bad("kernel[x].calls:+1ms", "unknown unit");
	bad("gpu.memcpy_bytes:+1ms", "unknown unit");
	bad("gpu.utilization:+1s", "unknown unit");

	/* level is recorded; a NULL expression is refused, not dereferenced */
	CHECK_EQ_INT(cmp_expr_parse("wall:+1%", CMP_LEVEL_WARN, &e, err, sizeof(err)), 0);
	CHECK_EQ_INT(e.level, CMP_LEVEL_WARN);
	CHECK_EQ_INT(cmp_expr_check(NULL, err, sizeof(err)), -1);
	/* a pattern too long for the buffer is refused */
	{
		static char big[CMP_PATTERN_MAX + 64];

		memcpy(big, "func[", 5);
		memset(big + 5, 'a', CMP_PATTERN_MAX + 10);
		strcpy(big + 5 + CMP_PATTERN_MAX + 10, "].self:+1%");
		CHECK_EQ_INT(cmp_expr_parse(big, CMP_LEVEL_FAIL, &e, err, sizeof(err)), -1);
	}
}

int main(void)
{
	test_scalars();
	test_floors();
	test_patterns();
	test_gpu();
	test_bad();
	return test_result();
}
