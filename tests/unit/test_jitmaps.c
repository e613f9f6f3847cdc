/*
 * test_jitmaps.c — jitmaps_collect() (src/cli/jitmaps.c) on a session
 * written here: the process's /tmp/perf-PID.map copied into the session
 * with the jitdump file it mapped appended as more lines, a process without
 * either left alone, a perf map older than its process refused, a jitdump
 * file that is gone said in the notes.  The pid used is this test's own, so
 * that /tmp/perf-PID.map is a name no other program writes while it runs.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "cli/cli.h"

static char dir[] = "/tmp/cbn-test-jitmaps-XXXXXX";
static char map[64];

static uint64_t now_real_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Bytes of path (at most len - 1), NUL-terminated; -1 when it is missing. */
static long slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	REQUIRE(n >= 0);
	buf[n] = '\0';
	return (long)n;
}

static void put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f);
	fputs(text, f);
	REQUIRE(fclose(f) == 0);
}

static void put32(FILE *f, uint32_t v)
{
	REQUIRE(fwrite(&v, 4, 1, f) == 1);
}

static void put64(FILE *f, uint64_t v)
{
	REQUIRE(fwrite(&v, 8, 1, f) == 1);
}

/* A jitdump file (perf's jitdump-specification.txt) with one code load. */
static void put_jitdump(const char *path, uint64_t addr, uint64_t size, const char *name)
{
	FILE *f = fopen(path, "w");
	size_t nl = strlen(name) + 1;

	REQUIRE(f);
	put32(f, 0x4A695444);  /* magic */
	put32(f, 1);           /* version */
	put32(f, 40);          /* header size */
	put32(f, 62);          /* EM_X86_64 */
	put32(f, 0);
	put32(f, (uint32_t)getpid());
	put64(f, 1);           /* timestamp */
	put64(f, 0);           /* flags */
	put32(f, 0);           /* JIT_CODE_LOAD */
	put32(f, (uint32_t)(56 + nl + 4));
	put64(f, 2);
	put32(f, (uint32_t)getpid());
	put32(f, (uint32_t)getpid());
	put64(f, addr);        /* vma */
	put64(f, addr);        /* code_addr */
	put64(f, size);
	put64(f, 7);           /* code_index */
	REQUIRE(fwrite(name, 1, nl, f) == nl);
	put32(f, 0xc3c3c3c3);  /* code bytes */
	REQUIRE(fclose(f) == 0);
}

/* A session file of pid (start_real_ns as given) with one JIT region (jit set) and,
 * with dump set, a jitdump file it mapped. */
static void put_session_jit(uint32_t pid, uint64_t start_real_ns, int jit, const char *dump)
{
	struct synth s;
	char path[4200];

	synth_init(&s, pid, 1, 0, 0, "/usr/bin/prog");
	synth_hdr(&s)->start_real_ns = start_real_ns;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	if (jit)
		synth_jit_region(&s, 10, 0x7f0000001000, 0x2000, 0, NULL);
	if (dump)
		synth_jit_region(&s, 20, 0x7f0000009000, 0x1000, CBN_JIT_JITDUMP, dump);
	synth_exit(&s, 50, 0);
	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, pid);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);
}

/* A process with a region of code made at run time, and the jitdump file
 * it mapped (NULL: none). */
static void put_session(uint32_t pid, uint64_t start_real_ns, const char *dump)
{
	put_session_jit(pid, start_real_ns, 1, dump);
}

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4200];

	REQUIRE(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/* The map copied, its unended last line ended, the jitdump appended. */
static void test_copy_and_convert(void)
{
	char out[4200], dump[4200], notes[4200], buf[8192];
	uint32_t pid = (uint32_t)getpid();

	snprintf(dump, sizeof(dump), "%s/jit-%u.dump", dir, pid);
	snprintf(out, sizeof(out), "%s/perf-%u.map", dir, pid);
	snprintf(notes, sizeof(notes), "%s/%s", dir, CBN_NOTES_FILE);
	put_text(map, "7f0000001000 40 jit_avx2_conv_fwd\n7f0000001040 20 py::f:/tmp/a.py");
	put_jitdump(dump, 0x7f0000009000, 0x80, "jit_uni_pool");
	put_session(pid, now_real_ns(), dump);
	put_session(pid + 1000000, now_real_ns(), NULL); /* no map of its own */
	jitmaps_collect(dir, 0);
	REQUIRE(slurp(out, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, "7f0000001000 40 jit_avx2_conv_fwd\n"
		       "7f0000001040 20 py::f:/tmp/a.py\n"
		       "7f0000009000 80 jit_uni_pool\n");
	snprintf(out, sizeof(out), "%s/perf-%u.map", dir, pid + 1000000);
	CHECK(access(out, F_OK) != 0);
	CHECK(access(notes, F_OK) != 0); /* nothing to say */
	clean_dir();
}

/* A map older than the process (an earlier process with its pid left it)
 * is not used; a jitdump file that is gone is said. */
static void test_stale_and_missing(void)
{
	char out[4200], dump[4200], notes[4200], buf[8192];
	uint32_t pid = (uint32_t)getpid();
	struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};

	snprintf(dump, sizeof(dump), "%s/jit-gone.dump", dir);
	snprintf(out, sizeof(out), "%s/perf-%u.map", dir, pid);
	snprintf(notes, sizeof(notes), "%s/%s", dir, CBN_NOTES_FILE);
	put_text(map, "7f0000001000 40 stale\n");
	REQUIRE(utimensat(AT_FDCWD, map, old, 0) == 0);
	put_session(pid, now_real_ns(), dump);
	jitmaps_collect(dir, 0);
	REQUIRE(slurp(notes, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "is older than the process") != NULL);
	CHECK(strstr(buf, "jit-gone.dump cannot be read") != NULL);
	/* the output holds no stale line (it may exist, empty: the jitdump
	 * was to be converted into it) */
	if (slurp(out, buf, sizeof(buf)) >= 0)
		CHECK(strstr(buf, "stale") == NULL);
	clean_dir();
	/* a process that made no code at run time (a build's cc1 on a pid a
	 * JIT had): nothing to say of the old map */
	REQUIRE(utimensat(AT_FDCWD, map, old, 0) == 0);
	put_session_jit(pid, now_real_ns(), 0, NULL);
	jitmaps_collect(dir, 0);
	CHECK(access(notes, F_OK) != 0);
	CHECK(access(out, F_OK) != 0);
	clean_dir();
}

int main(void)
{
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(map, sizeof(map), "/tmp/perf-%u.map", (unsigned)getpid());
	test_copy_and_convert();
	test_stale_and_missing();
	unlink(map);
	rmdir(dir);
	return test_result();
}
