/*
 * main.c — the cbottleneck command: dispatch to one command per file, as
 * perf's builtin-*.c: cmd_run.c (profile a program), cmd_report.c (report a
 * kept session), cmd_compare.c (compare two JSON reports), cmd_ctl.c (control
 * a running profiled process), cmd_dump.c (the stacks of a running process).
 */
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	/* Subcommands are words; a program of that name runs as ./report or
	 * with `cbottleneck -- report`. */
	if (argc >= 2 && strcmp(argv[1], "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "compare") == 0)
		return cmd_compare(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "ctl") == 0)
		return cmd_ctl(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	return cmd_run(argc, argv);
}
