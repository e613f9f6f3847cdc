/*
 * cmd_report.c — `cbottleneck report [OPTIONS] DIR`: read a kept session again,
 * analyse it and write the report, files and gate a run would have.  Exit
 * statuses: docs/cli.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "load.h"

int cli_report_dir(struct cli_opts *o, const char *dir)
{
	struct profile *p = NULL;
	struct analysis an = {0};
	char err[1024];
	struct stat st;
	int ret, lr, status;
	size_t i;

	ret = cli_outputs_preflight(o);
	if (ret)
		goto out;
	if (stat(dir, &st) < 0) {
		ret = cli_usage_error("report %s: %s", dir, strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = cli_usage_error("report %s: not a directory (give the -o DIR of a run)", dir);
		goto out;
	}
	lr = cli_load(dir, o, &p, err, sizeof(err));
	if (lr == PROF_LOAD_NOMEM) {
		ret = CLI_EXIT_NOMEM;
		goto out;
	}
	if (lr < 0) {
		fprintf(stderr, "cbottleneck: %s\n", err);
		ret = CLI_EXIT_NOINPUT;
		goto out;
	}
	if (lr == PROF_LOAD_PARTIAL)
		for (i = 0; i < p->nwarnings; i++)
			fprintf(stderr, "cbottleneck: warning: %s\n", p->warnings[i]);
	if ((ret = cli_analyse(p, o, &an)) != 0)
		goto out;
	if ((ret = cli_write_outputs(&an, o, o->json)) != 0) {
		ret = ret == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_REFUSED;
		goto out;
	}
	ret = lr == PROF_LOAD_PARTIAL ? 1 : 0;
	if (o->baseline) {
		status = cli_gate(o, &an, o->json ? o->json : dir);
		fprintf(stderr, "cbottleneck: exit status %d from the regression gate (%s)\n", status,
			cli_gate_word(status));
		ret = status;
	}
out:
	analysis_free(&an);
	prof_free(p);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct cli_opts o;
	int ret;

	ret = cli_parse_opts(argc, argv, CLI_MODE_REPORT, &o);
	if (ret >= 0)
		goto out;
	/* operands after "--" */
	for (; optind < argc; optind++) {
		if (o.noperands < 2)
			o.operand[o.noperands] = argv[optind];
		o.noperands++;
	}
	if (!o.noperands) {
		ret = cli_usage_error("report needs a session directory: cbottleneck report DIR");
		goto out;
	}
	if (o.noperands > 1) {
		ret = cli_usage_error("report takes one directory, got extra '%s'", o.operand[1]);
		goto out;
	}
	if (cli_args_only()) {
		ret = 0;
		goto out;
	}
	ret = cli_report_dir(&o, o.operand[0]);
out:
	cli_opts_free(&o);
	return ret;
}
