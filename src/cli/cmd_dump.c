/*
 * cmd_dump.c — `cbottleneck dump PID`: every thread's current stack, read
 * from outside without stopping the process (src/attach/attach_dump.c).
 * Exit statuses (docs/attach.md): 0 printed, 2 usage, 3 no such process (or
 * it ended while read), 125 refused (not ours to read: the line says which
 * setting) or failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach.h"
#include "cli.h"

#define DUMP_EXIT_NOPROC 3

static const char dump_usage_text[] =
	"usage: cbottleneck dump PID\n"
	"Print the stack of every thread of the running process PID once (native and\n"
	"CPython 3.11-3.13 frames), without stopping it or running anything in it\n"
	"(docs/attach.md).  Exit status: 0\n"
	"printed, 2 usage, 3 no such process (or it exited meanwhile), 125 refused\n"
	"(another user's process, ptrace_scope, perf_event_paranoid) or failed.\n";

int cmd_dump(int argc, char **argv)
{
	char why[256], *end;
	long pid;
	int ret;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(dump_usage_text, stdout);
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "cbottleneck: dump: %s; see cbottleneck dump --help\n",
			argc < 2 ? "no PID" : "one PID only");
		return CLI_EXIT_USAGE;
	}
	errno = 0;
	pid = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "cbottleneck: dump: '%s' is not a process id; see cbottleneck dump --help\n",
			argv[1]);
		return CLI_EXIT_USAGE;
	}
	if (cli_args_only())
		return 0;
	ret = attach_dump((pid_t)pid, stdout, why, sizeof(why));
	if (ret == 0)
		return fflush(stdout) == 0 ? 0 : CLI_EXIT_REFUSED;
	fprintf(stderr, "cbottleneck: dump: %s\n", why);
	if (ret == -ESRCH)
		return DUMP_EXIT_NOPROC;
	return ret == -ENOMEM ? CLI_EXIT_NOMEM : CLI_EXIT_REFUSED;
}
