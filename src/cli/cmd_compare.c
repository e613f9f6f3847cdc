/*
 * cmd_compare.c — `cbottleneck compare [OPTIONS] BASE.json NEW.json`: the
 * command-line front of gate/compare.c.  Exit statuses: CMP_* (compare.h).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "html.h"

static void cmp_usage(FILE *f)
{
	fputs("usage: cbottleneck compare [--fail EXPR]... [--warn EXPR]... [--markdown FILE]\n"
	      "                           [--bench-json FILE] [--html FILE] [-q]\n"
	      "                           BASE.json NEW.json\n"
	      "\n"
	      "Compare two reports written by 'cbottleneck --json FILE'.\n"
	      "  --fail EXPR        exit 1 when EXPR fires (repeatable)\n"
	      "  --warn EXPR        report WARN when EXPR fires; never fails (repeatable)\n"
	      "  --markdown FILE    append a Markdown summary ($GITHUB_STEP_SUMMARY; - = stdout)\n"
	      "  --bench-json FILE  write github-action-benchmark customSmallerIsBetter JSON\n"
	      "  --html FILE        a page with the gate's table, the differences per function\n"
	      "                     and NEW's views (docs/html.md)\n"
	      "  -q, --quiet        the table and the summary only: no header or legends\n"
	      "EXPR is METRIC:THRESHOLD, e.g. 'func[heavy].self:+10%,>=5ms', 'wall:+20ms',\n"
	      "'cpu:+5%', 'kernel[gemm*].avg:+10%', 'api[cudaMemcpy*].calls:+0', 'gpu.kernels:+0'.\n"
	      "Without --fail/--warn: wall, cpu and the hottest functions, warning at +10%.\n"
	      "Exit: 0 pass, 1 regression, 2 usage or unreadable report, 3 could not measure.\n"
	      "See docs/ci.md.\n",
	      f);
}

static int cmp_push(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return CMP_NOMEM;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/*
 * compare with --html FILE: the table is printed as without it, and the same
 * text goes into the page with the exit status.  A page that cannot be
 * written is a usage error (2), like an unreadable report.
 */
static int compare_html(const char *base, const char *cur, const struct cmp_opts *o,
			const char *path)
{
	char *buf = NULL, err[512];
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int st;

	if (!mem)
		return CMP_NOMEM;
	st = cmp_run(base, cur, o, mem);
	if (fclose(mem) != 0) {
		free(buf);
		return CMP_NOMEM;
	}
	fwrite(buf, 1, len, stdout);
	fflush(stdout);
	if (st != CMP_USAGE && st != CMP_NOMEM &&
	    report_html_compare(base, cur, buf, st, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "cbottleneck compare: --html %s: %s\n", path, err);
		st = CMP_USAGE;
	}
	free(buf);
	return st;
}

int cmd_compare(int argc, char **argv)
{
	enum { OPT_FAIL = 256, OPT_WARN, OPT_MARKDOWN, OPT_BENCH, OPT_HTML };
	static const struct option longopts[] = {
		{"fail", required_argument, NULL, OPT_FAIL},
		{"warn", required_argument, NULL, OPT_WARN},
		{"markdown", required_argument, NULL, OPT_MARKDOWN},
		{"bench-json", required_argument, NULL, OPT_BENCH},
		{"html", required_argument, NULL, OPT_HTML},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cmp_opts o;
	const char *html = NULL;
	char err[512];
	int c, ret = CMP_USAGE;

	memset(&o, 0, sizeof(o));
	optind = 0;      /* GNU: full re-initialisation, main() may have used getopt */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FAIL:
		case OPT_WARN:
			if (cmp_expr_check(optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "cbottleneck compare: %s (--%s)\n", err,
					c == OPT_FAIL ? "fail" : "warn");
				goto out;
			}
			if ((c == OPT_FAIL ? cmp_push(&o.fail, &o.nfail, optarg)
					   : cmp_push(&o.warn, &o.nwarn, optarg)) < 0) {
				ret = CMP_NOMEM;
				goto out;
			}
			break;
		case OPT_MARKDOWN:
			o.markdown = optarg;
			break;
		case OPT_BENCH:
			o.bench_json = optarg;
			break;
		case OPT_HTML:
			html = optarg;
			break;
		case 'q':
			o.quiet = 1;
			break;
		case 'h':
			cmp_usage(stdout);
			ret = CMP_PASS;
			goto out;
		case ':':
			fprintf(stderr, "cbottleneck compare: %s needs an argument; see "
				"'cbottleneck compare --help'\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "cbottleneck compare: unknown option '%s'; see "
				"'cbottleneck compare --help'\n", argv[optind - 1]);
			goto out;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "cbottleneck compare: expected BASE.json NEW.json, got %d "
			"file%s; see 'cbottleneck compare --help'\n", argc - optind,
			argc - optind == 1 ? "" : "s");
		goto out;
	}
	if (cli_args_only()) {
		ret = CMP_PASS;
		goto out;
	}
	ret = html ? compare_html(argv[optind], argv[optind + 1], &o, html)
		   : cmp_run(argv[optind], argv[optind + 1], &o, stdout);
out:
	free(o.fail);
	free(o.warn);
	if (ret == CMP_NOMEM) {
		fputs("cbottleneck compare: out of memory\n", stderr);
		ret = CMP_USAGE;
	}
	return ret;
}
