/*
 * test_load_nomem.c — the loader when memory runs short: a big synthetic
 * session (every stack distinct, so nothing is shared) loaded by children
 * whose address space is capped (RLIMIT_AS) a little above what they use.
 * Each must return a load status, never crash, and a tight cap must give
 * PROF_LOAD_NOMEM.  Then the same for `cbottleneck report` (when
 * CBN_BUILD_DIR has it): a one-line "out of memory" and exit 125.  Skipped
 * under AddressSanitizer, whose shadow memory needs terabytes of address space.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "load.h"

#define SAMPLES 200000
#define FRAMES 32

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return test_xorshift(&rng);
}

/* Bytes of address space this process has mapped now. */
static size_t mapped_now(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* Load dir in a child capped at its current size + headroom.  Returns the
 * child's wait status; its exit code is 10 + the load status. */
static int load_capped(const char *dir, size_t headroom)
{
	pid_t pid = fork();
	int st = 0;

	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit rl;
		struct profile *p = NULL;
		char err[512];
		int ret;

		rl.rlim_cur = rl.rlim_max = mapped_now() + headroom;
		if (setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(99);
		ret = prof_load(dir, &p, err, sizeof(err));
		if (ret == PROF_LOAD_NOMEM && (p != NULL || !strstr(err, "out of memory")))
			_exit(98);
		prof_free(p);
		_exit(10 + ret);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return st;
}

/* `cbottleneck report dir` capped at limit bytes; its wait status, and its
 * stderr's first line in msg. */
static int report_capped(const char *cbn, const char *dir, size_t limit, char *msg, size_t len)
{
	char errpath[300];
	int st = 0, fd;
	ssize_t n;
	pid_t pid;

	snprintf(errpath, sizeof(errpath), "%s/stderr", dir);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {limit, limit};
		int out = open("/dev/null", O_WRONLY), err = open(errpath, O_WRONLY | O_CREAT |
								   O_TRUNC, 0600);

		if (out < 0 || err < 0 || setrlimit(RLIMIT_AS, &rl) < 0)
			_exit(99);
		dup2(out, 1);
		dup2(err, 2);
		execl(cbn, cbn, "report", "-q", dir, (char *)NULL);
		_exit(98);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	msg[0] = '\0';
	fd = open(errpath, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, msg, len - 1);
		msg[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	unlink(errpath);
	return st;
}

int main(void)
{
	static const size_t headroom_mib[] = {16, 32, 48, 56, 64, 72, 80, 88, 96, 112, 128, 256};
	char dir[] = "/tmp/cbn-test-load-nomem-XXXXXX", path[256];
	uint64_t pcs[FRAMES];
	struct synth s;
	size_t i;
	int nomem = 0;

	if (SANITIZED) {
		fprintf(stderr, "skip: RLIMIT_AS cannot cap an AddressSanitizer build\n");
		return TEST_SKIP;
	}
	synth_init(&s, 4343, 1, 0, 0, "/nonexistent/prog");
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 4343);
	for (i = 0; i < SAMPLES; i++) {
		for (int f = 0; f < FRAMES; f++)
			pcs[f] = 0x400000 + (rnd() & 0xffffff);
		synth_sample(&s, 1000 + i, 1, pcs, FRAMES, 0);
	}
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/4343.0.cbp", dir);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);

	for (i = 0; i < sizeof(headroom_mib) / sizeof(headroom_mib[0]); i++) {
		int st = load_capped(dir, headroom_mib[i] << 20);

		if (WIFSIGNALED(st)) {
			fprintf(stderr, "the loader died of signal %d with %zu MiB to spare\n",
				WTERMSIG(st), headroom_mib[i]);
			CHECK(0);
			continue;
		}
		REQUIRE(WIFEXITED(st));
		CHECK(WEXITSTATUS(st) != 98);   /* NOMEM with a profile, or no message */
		REQUIRE(WEXITSTATUS(st) != 99); /* setrlimit refused */
		printf("%4zu MiB to spare: load status %d\n", headroom_mib[i],
		       WEXITSTATUS(st) - 10);
		nomem += WEXITSTATUS(st) == 10 + PROF_LOAD_NOMEM;
	}
	CHECK(nomem > 0);

	/* The CLI: other load failures keep their status (66: the file could not
	 * be read at all), out of memory is one line and 125, nothing crashes. */
	if (getenv("CBN_BUILD_DIR")) {
		char cbn[512], msg[1024];
		int cli_nomem = 0;

		snprintf(cbn, sizeof(cbn), "%s/cbottleneck", getenv("CBN_BUILD_DIR"));
		for (i = 40; i <= 120 && access(cbn, X_OK) == 0; i += 10) {
			int st = report_capped(cbn, dir, i << 20, msg, sizeof(msg));

			CHECK(WIFEXITED(st));
			if (!WIFEXITED(st))
				continue;
			printf("cbottleneck report capped at %3zu MiB: exit %d\n", i,
			       WEXITSTATUS(st));
			CHECK(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 66 ||
			      WEXITSTATUS(st) == 125);
			if (WEXITSTATUS(st) == 125) {
				CHECK(strncmp(msg, "cbottleneck: out of memory", 26) == 0);
				CHECK(strchr(msg, '\n') == msg + strlen(msg) - 1);
				cli_nomem++;
			}
		}
		CHECK(cli_nomem > 0);
	}
	unlink(path);
	rmdir(dir);
	return test_result();
}
