/*
 * sort_tmpdir.c full|term|prof — runs coreutils sort (a real program that
 * catches SIGPROF, SIGTERM and others to remove its temp files) on a generated
 * 20 MB file with a 1 MiB buffer and a private TMPDIR.  full: it must finish
 * with the right output; term/prof: the program sends sort SIGTERM/SIGPROF as
 * soon as its first temp file exists, and sort must clean up and die of that
 * signal.  Must hold: status, output and an empty TMPDIR, as without the
 * profiler.
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "hostile.h"

#define LINES 1000000

extern char **environ;

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int find_sort(char *out, size_t sz)
{
	static const char *dirs[] = {"/usr/bin", "/bin", "/usr/local/bin"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(out, sz, "%s/sort", dirs[i]);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	char sortbin[64], cwd[PATH_MAX], tmp[PATH_MAX + 16], line[64];
	char *args[] = {"sort", "-S", "1M", "-o", "sorted.txt", "input.txt", NULL};
	const char *mode = argc > 1 ? argv[1] : "full";
	uint64_t x = 88172645463325252ull, sum = 0;
	int st, sig = 0;
	pid_t pid;
	FILE *f;

	if (find_sort(sortbin, sizeof(sortbin)))
		skip("coreutils sort not found");
	if (!strcmp(mode, "term"))
		sig = SIGTERM;
	else if (!strcmp(mode, "prof"))
		sig = SIGPROF;
	else if (strcmp(mode, "full"))
		die("mode must be full, term or prof");
	print_views("start");
	f = fopen("input.txt", "w");
	if (!f)
		die("fopen input.txt");
	for (int i = 0; i < LINES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		fprintf(f, "%019llu\n", (unsigned long long)(x % 10000000000000000000ull));
	}
	fclose(f);
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd");
	snprintf(tmp, sizeof(tmp), "%s/sorttmp", cwd);
	if (mkdir(tmp, 0700) < 0)
		die("mkdir");
	setenv("TMPDIR", tmp, 1);
	setenv("LC_ALL", "C", 1);
	if ((errno = posix_spawn(&pid, sortbin, NULL, NULL, args, environ)))
		die("posix_spawn");
	if (sig) {
		/* As soon as sort has a temp file, it is mid-sort: signal it. */
		int n = 0;

		for (int i = 0; i < 20000 && (n = dir_entries(tmp)) == 0; i++)
			usleep(500);
		if (n > 0)
			kill(pid, sig);
		say("signalled sort after its first temp file: %s\n", n > 0 ? "yes" : "no");
	}
	if (waitpid(pid, &st, 0) != pid)
		die("waitpid");
	if (WIFSIGNALED(st))
		say("sort: killed by %s\n", sig_name(WTERMSIG(st)));
	else
		say("sort: exited %d\n", WEXITSTATUS(st));
	say("TMPDIR entries left: %d\n", dir_entries(tmp));
	if (!sig) {
		char prev[64] = "";
		long lines = 0, unsorted = 0;

		f = fopen("sorted.txt", "r");
		if (!f)
			die("fopen sorted.txt");
		while (fgets(line, sizeof(line), f)) {
			unsorted += strcmp(prev, line) > 0;
			snprintf(prev, sizeof(prev), "%s", line);
			sum = fnv1a(line, strlen(line), sum);
			lines++;
		}
		fclose(f);
		say("sorted.txt: lines=%ld out_of_order=%ld sum=%016llx\n", lines, unsorted,
		    (unsigned long long)sum);
	} else {
		say("sorted.txt exists: %s\n", access("sorted.txt", F_OK) == 0 ? "yes" : "no");
	}
	/* The 20 MB files are summarized above; do not leave them for the file
	 * comparison. */
	unlink("input.txt");
	unlink("sorted.txt");
	print_views("end");
	return 0;
}
