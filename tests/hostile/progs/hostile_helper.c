/*
 * hostile_helper.c — the suite's exec target: "echo WORDS..." prints them,
 * "burn SECONDS TAG" burns CPU then prints TAG, "exit N" exits N, "views TAG"
 * prints its fd, thread and signal views.  Not a test by itself.
 */
#include "hostile.h"

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "echo")) {
		for (int i = 2; i < argc; i++)
			printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
		fflush(stdout);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "burn")) {
		burn_cpu_deep(atof(argv[2]), 8);
		say("helper %s: burned\n", argv[3]);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return atoi(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "views")) {
		print_views(argv[2]);
		return 0;
	}
	fprintf(stderr, "usage: hostile_helper echo WORDS | burn S TAG | exit N | views TAG\n");
	return 2;
}
