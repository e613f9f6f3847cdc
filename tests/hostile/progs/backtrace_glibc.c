/*
 * backtrace_glibc.c — four threads take glibc backtrace()s at the bottom of a
 * small call chain and write them with backtrace_symbols_fd() to files, 100
 * times each, burning CPU between.  The program keeps only its own function
 * names (built with -rdynamic; addresses vary between runs) in bt_N.txt.
 * Must hold: every backtrace shows the same chain, as without the profiler.
 */
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>

#include "hostile.h"

#define THREADS 4
#define ROUNDS 100

void *bt_worker(void *arg);
int bt_level_a(int fd);
int bt_level_b(int fd);
int bt_level_c(int fd);
int bt_leaf(int fd);

__attribute__((noinline)) int bt_leaf(int fd)
{
	void *pcs[64];
	int n;

	burn_cpu(0.0008);
	n = backtrace(pcs, 64);
	backtrace_symbols_fd(pcs, n, fd);
	return write(fd, "--\n", 3) == 3 ? n : -1;
}

__attribute__((noinline)) int bt_level_c(int fd)
{
	volatile int keep = fd;

	return bt_leaf(fd) + keep - fd;
}

__attribute__((noinline)) int bt_level_b(int fd)
{
	volatile int keep = fd;

	return bt_level_c(fd) + keep - fd;
}

__attribute__((noinline)) int bt_level_a(int fd)
{
	volatile int keep = fd;

	return bt_level_b(fd) + keep - fd;
}

/* Reduce raw backtrace_symbols_fd output to "name<name<..." per backtrace,
 * keeping only this program's bt_* names; write them to out. */
static void summarize(const char *raw, FILE *out, int *count, int *same)
{
	char line[1024], names[1024] = "", first[1024] = "";
	FILE *f = fopen(raw, "r");

	*count = *same = 0;
	if (!f)
		die("fopen %s", raw);
	while (fgets(line, sizeof(line), f)) {
		char *open = strchr(line, '('), *end;

		if (!strcmp(line, "--\n")) {
			fprintf(out, "%s\n", names);
			if (!*count)
				snprintf(first, sizeof(first), "%s", names);
			*same += !strcmp(first, names);
			(*count)++;
			names[0] = 0;
			continue;
		}
		if (!open || strncmp(open + 1, "bt_", 3))
			continue;
		end = strpbrk(open + 1, "+)");
		if (!end)
			continue;
		*end = 0;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
		         names[0] ? "<" : "", open + 1);
	}
	fclose(f);
}

void *bt_worker(void *arg)
{
	int idx = (int)(intptr_t)arg, fd;
	char raw[64];

	snprintf(raw, sizeof(raw), "bt_raw_%d.txt", idx);
	fd = open(raw, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open %s", raw);
	for (int i = 0; i < ROUNDS; i++)
		if (bt_level_a(fd) < 0)
			die("write");
	close(fd);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	void *warm[4];

	print_views("start");
	backtrace(warm, 4); /* loads libgcc_s before the threads start */
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, bt_worker, (void *)(intptr_t)i))
			die("pthread_create");
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++) {
		char raw[64], sum[64];
		int count, same;
		FILE *out;

		snprintf(raw, sizeof(raw), "bt_raw_%d.txt", i);
		snprintf(sum, sizeof(sum), "bt_%d.txt", i);
		out = fopen(sum, "w");
		if (!out)
			die("fopen %s", sum);
		summarize(raw, out, &count, &same);
		fclose(out);
		unlink(raw);
		say("thread %d: backtraces=%d same_chain=%d\n", i, count, same);
	}
	{
		FILE *f = fopen("bt_0.txt", "r");
		char first[1024] = "";

		if (f && fgets(first, sizeof(first), f))
			say("chain: %s", first);
		if (f)
			fclose(f);
	}
	print_views("end");
	return 0;
}
