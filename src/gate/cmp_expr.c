/*
 * cmp_expr.c — parse gate expressions, METRIC:THRESHOLD, e.g.
 * 'func[heavy].self:+10%,>=5ms' or 'gpu.kernels:+0' (grammar in docs/ci.md).
 * Pure string work: no JSON, no I/O.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmp_internal.h"

#define CMP_EXAMPLE "e.g. 'func[heavy].self:+10%,>=5ms' or 'wall:+20ms'"

static int expr_error(char *err, size_t errlen, const char *text, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int expr_error(char *err, size_t errlen, const char *text, const char *fmt, ...)
{
	char why[512];   /* the longest, "unknown metric", lists them all */
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (err && errlen)
		snprintf(err, errlen, "bad gate expression '%s': %s", text, why);
	return -1;
}

struct unit_scale {
	const char *name;
	double scale;
};

static const struct unit_scale time_units[] = {
	{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {NULL, 0},
};

static const struct unit_scale byte_units[] = {
	{"B", 1},       {"kB", 1e3}, {"KB", 1e3}, {"KiB", 1024.0}, {"MB", 1e6},
	{"MiB", 1048576.0}, {"GB", 1e9}, {"GiB", 1073741824.0}, {NULL, 0},
};

static const char *unit_hint(enum cmp_unit u)
{
	switch (u) {
	case CMP_U_NS:
		return "a time: ns, us, ms or s (e.g. +20ms), or a percentage";
	case CMP_U_BYTES:
		return "bytes: B, kB, KiB, MB, MiB, GB or GiB, or a percentage";
	case CMP_U_COUNT:
		return "a plain count (e.g. +0 or +5), or a percentage";
	case CMP_U_RATIO:
		return "a plain number (e.g. -0.05), or a percentage";
	}
	return "a number";
}

/* Parse "NUMBER[UNIT]" at *pp for a metric of unit u; stops at ',' or the end.
 * Returns 0 with the amount in the metric's unit, *pct set if it was NUMBER%. */
static int parse_amount(const char **pp, enum cmp_unit u, int allow_pct, double *out, int *pct,
			const char *text, char *err, size_t errlen)
{
	const char *p = *pp, *end;
	char ustr[8];
	size_t ulen;
	double v;
	char *num_end;

	if (!isdigit((unsigned char)*p) && !(*p == '.' && isdigit((unsigned char)p[1])))
		return expr_error(err, errlen, text, "expected a number at '%s' (%s)", p,
				  CMP_EXAMPLE);
	errno = 0;
	v = strtod(p, &num_end);
	if (errno || !isfinite(v) || num_end == p)
		return expr_error(err, errlen, text, "'%s' is not a number", p);
	p = num_end;
	*pct = 0;
	if (*p == '%') {
		if (!allow_pct)
			return expr_error(err, errlen, text,
					  "the floor after ',>=' must be absolute (e.g. >=5ms), "
					  "not a percentage");
		*pct = 1;
		*out = v / 100.0;
		*pp = p + 1;
		return 0;
	}
	end = p;
	while (*end && *end != ',')
		end++;
	ulen = (size_t)(end - p);
	if (ulen == 0) {
		if (u == CMP_U_NS && v != 0)
			return expr_error(err, errlen, text, "'%.*s' needs a unit: %s",
					  (int)(end - *pp), *pp, unit_hint(u));
		*out = v;
		*pp = end;
		return 0;
	}
	if (ulen >= sizeof(ustr))
		return expr_error(err, errlen, text, "unknown unit '%.*s': expected %s", (int)ulen,
				  p, unit_hint(u));
	memcpy(ustr, p, ulen);
	ustr[ulen] = '\0';
	{
		const struct unit_scale *t = u == CMP_U_NS ? time_units
					     : u == CMP_U_BYTES ? byte_units : NULL;
		for (; t && t->name; t++) {
			if (strcmp(t->name, ustr) == 0) {
				*out = v * t->scale;
				*pp = end;
				return 0;
			}
		}
	}
	return expr_error(err, errlen, text, "unknown unit '%s' for this metric: expected %s",
			  ustr, unit_hint(u));
}

static int parse_threshold(const char *p, struct cmp_expr *e, char *err, size_t errlen)
{
	const char *text = e->text;
	struct cmp_threshold *th = &e->th;
	int pct;

	if (strlen(p) >= sizeof(e->th_text))
		return expr_error(err, errlen, text, "threshold '%s' is too long", p);
	snprintf(e->th_text, sizeof(e->th_text), "%s", p);
	if (!*p)
		return expr_error(err, errlen, text, "empty threshold after ':' (%s)",
				  CMP_EXAMPLE);
	th->dir = 1;
	if (*p == '+' || *p == '-') {
		th->dir = *p == '-' ? -1 : 1;
		p++;
	}
	if (parse_amount(&p, e->unit, 1, &th->value, &pct, text, err, errlen) < 0)
		return -1;
	th->relative = pct;
	if (!*p)
		return 0;
	/* *p == ',' here: parse_amount stops only there or at the end. */
	p++;
	if (!th->relative)
		return expr_error(err, errlen, text,
				  "a floor (',>=AMOUNT') only goes with a relative threshold, "
				  "e.g. '+10%%,>=5ms'");
	if (p[0] == '>' && p[1] == '=')
		p += 2;
	if (parse_amount(&p, e->unit, 0, &th->floor, &pct, text, err, errlen) < 0)
		return -1;
	if (*p)
		return expr_error(err, errlen, text, "unexpected '%s' after the floor", p);
	th->has_floor = 1;
	return 0;
}

struct field_name {
	const char *name;
	enum cmp_field field;
};

static int parse_field(const char *name, size_t len, enum cmp_metric m, struct cmp_expr *e,
		       char *err, size_t errlen)
{
	static const struct field_name func_f[] = {
		{"self", CMP_F_SELF}, {"total", CMP_F_TOTAL}, {"calls", CMP_F_CALLS}, {0}};
	static const struct field_name line_f[] = {{"self", CMP_F_SELF}, {0}};
	static const struct field_name kern_f[] = {
		{"total", CMP_F_TOTAL}, {"calls", CMP_F_CALLS}, {"avg", CMP_F_AVG}, {0}};
	static const struct field_name api_f[] = {
		{"calls", CMP_F_CALLS}, {"total", CMP_F_TOTAL}, {"avg", CMP_F_AVG}, {0}};
	static const struct field_name mgpu_f[] = {{"peak", CMP_F_PEAK}, {0}};
	static const struct field_name msite_f[] = {
		{"bytes", CMP_F_BYTES}, {"allocs", CMP_F_ALLOCS}, {0}};
	static const struct field_name lock_f[] = {{"wait", CMP_F_WAIT}, {0}};
	static const struct field_name op_f[] = {
		{"cuda", CMP_F_CUDA}, {"self_cuda", CMP_F_SELF_CUDA}, {"cpu", CMP_F_CPU},
		{"self_cpu", CMP_F_SELF_CPU}, {"launches", CMP_F_LAUNCHES}, {0}};
	const struct field_name *f = m == CMP_M_FUNC ? func_f
				     : m == CMP_M_LINE ? line_f
				     : m == CMP_M_KERNEL ? kern_f
				     : m == CMP_M_MEM_GPU ? mgpu_f
				     : m == CMP_M_MEM_SITE ? msite_f
				     : m == CMP_M_LOCK ? lock_f
				     : m == CMP_M_OP ? op_f : api_f;
	const struct field_name *i;
	char list[96] = "";

	for (i = f; i->name; i++) {
		if (strlen(i->name) == len && strncmp(i->name, name, len) == 0) {
			e->field = i->field;
			e->unit = i->field == CMP_F_CALLS || i->field == CMP_F_ALLOCS ||
					  i->field == CMP_F_LAUNCHES ? CMP_U_COUNT
				  : i->field == CMP_F_PEAK || i->field == CMP_F_BYTES ? CMP_U_BYTES
				  : CMP_U_NS;
			return 0;
		}
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s.%s",
			 i == f ? "" : ", ", i->name);
	}
	return expr_error(err, errlen, e->text, "unknown field '.%.*s': expected %s", (int)len,
			  name, list);
}

struct gpu_name {
	const char *name;
	enum cmp_gpu gpu;
	enum cmp_unit unit;
};

static const struct gpu_name gpu_names[] = {
	{"kernels", CMP_GPU_KERNELS, CMP_U_COUNT},
	{"kernel_time", CMP_GPU_KERNEL_TIME, CMP_U_NS},
	{"memcpy_bytes", CMP_GPU_MEMCPY_BYTES, CMP_U_BYTES},
	{"memcpy_time", CMP_GPU_MEMCPY_TIME, CMP_U_NS},
	{"memcpys", CMP_GPU_MEMCPYS, CMP_U_COUNT},
	{"api_calls", CMP_GPU_API_CALLS, CMP_U_COUNT},
	{"sync_time", CMP_GPU_SYNC_TIME, CMP_U_NS},
	{"busy", CMP_GPU_BUSY, CMP_U_NS},
	{"utilization", CMP_GPU_UTILIZATION, CMP_U_RATIO},
	{NULL, 0, 0},
};

/* Scalars: "wall", "cpu", "samples", "gpu.NAME".  len excludes the ':'. */
static int parse_scalar(const char *s, size_t len, struct cmp_expr *e, char *err, size_t errlen)
{
	const struct gpu_name *g;

	if (len == 4 && strncmp(s, "wall", 4) == 0) {
		e->metric = CMP_M_WALL;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 3 && strncmp(s, "cpu", 3) == 0) {
		e->metric = CMP_M_CPU;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 7 && strncmp(s, "samples", 7) == 0) {
		e->metric = CMP_M_SAMPLES;
		e->unit = CMP_U_COUNT;
		return 0;
	}
	if (len == 8 && strncmp(s, "mem.peak", 8) == 0) {
		e->metric = CMP_M_MEM_PEAK;
		e->unit = CMP_U_BYTES;
		return 0;
	}
	if (len == 10 && strncmp(s, "mem.leaked", 10) == 0) {
		e->metric = CMP_M_MEM_LEAKED;
		e->unit = CMP_U_BYTES;
		return 0;
	}
	if (len == 11 && strncmp(s, "step.median", 11) == 0) {
		e->metric = CMP_M_STEP_MEDIAN;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 8 && strncmp(s, "step.p90", 8) == 0) {
		e->metric = CMP_M_STEP_P90;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 10 && strncmp(s, "step.count", 10) == 0) {
		e->metric = CMP_M_STEP_COUNT;
		e->unit = CMP_U_COUNT;
		return 0;
	}
	if (len == 10 && strncmp(s, "wait.total", 10) == 0) {
		e->metric = CMP_M_WAIT_TOTAL;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 14 && strncmp(s, "cpu.efficiency", 14) == 0) {
		e->metric = CMP_M_CPU_EFFICIENCY;
		e->unit = CMP_U_RATIO;
		return 0;
	}
	if (len == 13 && strncmp(s, "rank.max.wall", 13) == 0) {
		e->metric = CMP_M_RANK_MAX_WALL;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 8 && strncmp(s, "mpi.time", 8) == 0) {
		e->metric = CMP_M_MPI_TIME;
		e->unit = CMP_U_NS;
		return 0;
	}
	if (len == 9 && strncmp(s, "imbalance", 9) == 0) {
		e->metric = CMP_M_IMBALANCE;
		e->unit = CMP_U_RATIO;
		return 0;
	}
	if (len > 5 && strncmp(s, "wait.", 5) == 0)
		return expr_error(err, errlen, e->text,
				  "unknown waiting metric '%.*s': expected wait.total, "
				  "cpu.efficiency or lock[SITE].wait", (int)len, s);
	if (len > 5 && strncmp(s, "step.", 5) == 0)
		return expr_error(err, errlen, e->text,
				  "unknown step metric '%.*s': expected step.median, step.p90 or "
				  "step.count", (int)len, s);
	if (len > 4 && strncmp(s, "mem.", 4) == 0)
		return expr_error(err, errlen, e->text,
				  "unknown memory metric '%.*s': expected mem.peak, mem.leaked, "
				  "mem.gpu[N].peak or mem.site[PATTERN].bytes|allocs", (int)len, s);
	if (len > 4 && strncmp(s, "gpu.", 4) == 0) {
		for (g = gpu_names; g->name; g++) {
			if (strlen(g->name) == len - 4 && strncmp(g->name, s + 4, len - 4) == 0) {
				e->metric = CMP_M_GPU;
				e->gpu = g->gpu;
				e->unit = g->unit;
				return 0;
			}
		}
		return expr_error(err, errlen, e->text,
				  "unknown GPU metric '%.*s': expected gpu.kernels, "
				  "gpu.kernel_time, gpu.memcpy_bytes, gpu.memcpy_time, gpu.memcpys, "
				  "gpu.api_calls, gpu.sync_time, gpu.busy or gpu.utilization",
				  (int)len, s);
	}
	return expr_error(err, errlen, e->text,
			  "unknown metric '%.*s': expected wall, cpu, samples, "
			  "func[PATTERN].self|total|calls, line[FILE:LINE].self, "
			  "kernel[PATTERN].total|calls|avg, api[PATTERN].calls|total|avg, "
			  "op[NAME].FIELD, gpu.*, "
			  "mem.*, step.*, wait.total, cpu.efficiency, lock[SITE].wait, "
			  "rank.max.wall, mpi.time or imbalance", (int)len, s);
}

/* Index of the ']' closing the '[' at s[0], honouring nested glob classes and
 * backslash escapes; -1 when unclosed. */
static long bracket_end(const char *s)
{
	int depth = 0;
	long i;

	for (i = 0; s[i]; i++) {
		if (s[i] == '\\' && s[i + 1]) {
			i++;
		} else if (s[i] == '[') {
			depth++;
		} else if (s[i] == ']') {
			if (--depth == 0)
				return i;
		}
	}
	return -1;
}

static int parse_line_pattern(struct cmp_expr *e, char *err, size_t errlen)
{
	char *colon = strrchr(e->pattern, ':');
	char *end;

	if (!colon || colon == e->pattern || !isdigit((unsigned char)colon[1]))
		return expr_error(err, errlen, e->text,
				  "line[...] needs FILE:LINE, e.g. 'line[split.c:42].self:+20%%'");
	errno = 0;
	e->line = strtoul(colon + 1, &end, 10);
	if (errno || *end || e->line == 0)
		return expr_error(err, errlen, e->text, "'%s' is not a line number", colon + 1);
	*colon = '\0';
	return 0;
}

/* mem.gpu[N]: N is a CUDA device number. */
static int parse_device(struct cmp_expr *e, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	e->device = strtoul(e->pattern, &end, 10);
	if (errno || *end || !isdigit((unsigned char)e->pattern[0]))
		return expr_error(err, errlen, e->text,
				  "mem.gpu[...] needs a device number, e.g. 'mem.gpu[0].peak:+10%%'");
	return 0;
}

/* mem.site[FILE:LINE]: a pattern ending in ':DIGITS' names a source line;
 * anything else is a function-name glob. */
static void site_line(struct cmp_expr *e)
{
	char *colon = strrchr(e->pattern, ':'), *end;
	unsigned long line;

	if (!colon || colon == e->pattern || !isdigit((unsigned char)colon[1]))
		return;
	line = strtoul(colon + 1, &end, 10);
	if (*end || line == 0)
		return;
	e->line = line;
}

int cmp_expr_parse(const char *text, enum cmp_level level, struct cmp_expr *e, char *err,
		   size_t errlen)
{
	const char *p = text, *colon;
	size_t n;

	memset(e, 0, sizeof(*e));
	e->text = text;
	e->level = level;
	while (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
		p++;
	n = (size_t)(p - text);
	if (*p == '[') {
		long close = bracket_end(p);
		const char *dot;

		if (n == 4 && strncmp(text, "func", 4) == 0)
			e->metric = CMP_M_FUNC;
		else if (n == 4 && strncmp(text, "line", 4) == 0)
			e->metric = CMP_M_LINE;
		else if (n == 6 && strncmp(text, "kernel", 6) == 0)
			e->metric = CMP_M_KERNEL;
		else if (n == 3 && strncmp(text, "api", 3) == 0)
			e->metric = CMP_M_API;
		else if (n == 7 && strncmp(text, "mem.gpu", 7) == 0)
			e->metric = CMP_M_MEM_GPU;
		else if (n == 8 && strncmp(text, "mem.site", 8) == 0)
			e->metric = CMP_M_MEM_SITE;
		else if (n == 4 && strncmp(text, "lock", 4) == 0)
			e->metric = CMP_M_LOCK;
		else if (n == 2 && strncmp(text, "op", 2) == 0)
			e->metric = CMP_M_OP;
		else
			return expr_error(err, errlen, text,
					  "'%.*s[' is not a metric: expected func[...], line[...], "
					  "kernel[...], api[...], op[...], mem.gpu[...], mem.site[...] "
					  "or lock[...]",
					  (int)n, text);
		if (close < 0)
			return expr_error(err, errlen, text, "unclosed '[' (%s)", CMP_EXAMPLE);
		if (close == 1)
			return expr_error(err, errlen, text, "empty pattern in '[]'");
		if ((size_t)close - 1 >= sizeof(e->pattern))
			return expr_error(err, errlen, text, "pattern is longer than %d bytes",
					  CMP_PATTERN_MAX - 1);
		memcpy(e->pattern, p + 1, (size_t)close - 1);
		e->pattern[close - 1] = '\0';
		if (e->metric == CMP_M_LINE && parse_line_pattern(e, err, errlen) < 0)
			return -1;
		if (e->metric == CMP_M_MEM_GPU && parse_device(e, err, errlen) < 0)
			return -1;
		if (e->metric == CMP_M_MEM_SITE)
			site_line(e);
		p += close + 1;
		if (*p != '.')
			return expr_error(err, errlen, text,
					  "expected '.FIELD' after ']' (e.g. '%.*s[...].%s')",
					  (int)n, text,
					  e->metric == CMP_M_API ? "calls"
					  : e->metric == CMP_M_KERNEL ? "total"
					  : e->metric == CMP_M_MEM_GPU ? "peak"
					  : e->metric == CMP_M_MEM_SITE ? "bytes"
					  : e->metric == CMP_M_LOCK ? "wait"
					  : e->metric == CMP_M_OP ? "cuda" : "self");
		dot = ++p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		if (parse_field(dot, (size_t)(p - dot), e->metric, e, err, errlen) < 0)
			return -1;
		if (*p != ':')
			return expr_error(err, errlen, text, "expected ':THRESHOLD' after the metric "
					  "(%s)", CMP_EXAMPLE);
		return parse_threshold(p + 1, e, err, errlen);
	}
	colon = *p == ':' ? p : NULL;
	if (!colon) {
		if (n == 0)
			return expr_error(err, errlen, text, "expected METRIC:THRESHOLD (%s)",
					  CMP_EXAMPLE);
		if (*p == '\0')
			return expr_error(err, errlen, text, "missing ':THRESHOLD' (%s)",
					  CMP_EXAMPLE);
		return expr_error(err, errlen, text, "unexpected '%c' in the metric name (%s)",
				  *p, CMP_EXAMPLE);
	}
	if (parse_scalar(text, n, e, err, errlen) < 0)
		return -1;
	return parse_threshold(colon + 1, e, err, errlen);
}

int cmp_expr_check(const char *expr, char *err, size_t errlen)
{
	struct cmp_expr e;

	if (!expr)
		return expr_error(err, errlen, "", "no expression given");
	return cmp_expr_parse(expr, CMP_LEVEL_FAIL, &e, err, errlen);
}
