/*
 * test_sym_cache.c — the cache of resolved addresses (src/symbols/sym_cache.c):
 * a second context reads back what the first resolved without opening DWARF;
 * damaged, truncated and foreign files are ignored and replaced; another
 * debug-info path is another entry; concurrent writers leave a valid file;
 * a compressed debug file is kept inflated and then used for new addresses.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols/sym.h"
#include "symbols/sym_int.h"
#include "test_sym_fix.h"

static struct fix_run run_main;
static char cache[4096];

static int count_files(const char *suffix, char *first, size_t len)
{
	DIR *d = opendir(cache);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name), sl = strlen(suffix);

		if (l > sl && strcmp(de->d_name + l - sl, suffix) == 0) {
			if (first && n == 0)
				snprintf(first, len, "%s/%s", cache, de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static void clear_cache(void)
{
	char cmd[8300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	REQUIRE(system(cmd) == 0);
}

static struct sym_ctx *open_ctx(const char *debugpath, const char *path,
				struct sym_module **mod)
{
	struct sym_ctx *ctx;

	if (debugpath)
		setenv("CBN_DEBUGINFO_PATH", debugpath, 1);
	else
		unsetenv("CBN_DEBUGINFO_PATH");
	ctx = sym_new();
	REQUIRE(ctx != NULL);
	*mod = sym_module_get(ctx, path, run_main.build_id, run_main.build_id_len);
	return ctx;
}

/* plain_fn and the leaf_inl <- mid_inl <- outer_fn chain, as test_sym checks. */
static void check_frames(struct sym_ctx *ctx, struct sym_module *mod)
{
	const struct sym_frame *f;
	int n;

	n = sym_resolve(ctx, mod, fix_find(&run_main, "plain")->vaddr, &f);
	CHECK_EQ_INT(n, 1);
	CHECK_STR(f[0].func, "plain_fn");
	CHECK_EQ_INT(f[0].line, fix_line("fix_main.c", "MARK:plain"));
	CHECK_EQ_INT(f[0].func_line, fix_line("fix_main.c", "int plain_fn(int n)"));
	CHECK(fix_ends_with(f[0].func_file, "/fix_main.c"));
	n = sym_resolve(ctx, mod, fix_find(&run_main, "inl")->vaddr, &f);
	REQUIRE(n == 3);
	CHECK_STR(f[0].func, "leaf_inl");
	CHECK_EQ_INT(f[0].inlined, 1);
	CHECK_EQ_INT(f[0].line, fix_line("fix_main.c", "MARK:inl"));
	CHECK_STR(f[1].func, "mid_inl");
	CHECK_EQ_INT(f[1].line, fix_line("fix_main.c", "MARK:mid_call"));
	CHECK_STR(f[2].func, "outer_fn");
	CHECK_EQ_INT(f[2].inlined, 0);
	CHECK_EQ_INT(f[2].line, fix_line("fix_main.c", "MARK:outer_call"));
}

static void test_roundtrip(void)
{
	struct sym_module *mod;
	struct sym_ctx *ctx;
	char producer[1024];

	clear_cache();
	ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	snprintf(producer, sizeof(producer), "%s", sym_module_producer(ctx, mod));
	CHECK(strstr(producer, "-O") != NULL);
	CHECK_EQ_INT(mod->cache_valid, 0);
	sym_free(ctx);
	CHECK_EQ_INT(count_files(".sym", NULL, 0), 1);

	/* Warm: the same answers, and no DWARF opened for them. */
	ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	CHECK_STR(sym_module_producer(ctx, mod), producer);
	CHECK_EQ_INT(mod->cache_valid, 1);
	CHECK(mod->cache_loaded >= 2);
	CHECK_EQ_INT(mod->dwarf_tried, 0);
	CHECK_EQ_INT(mod->cache_dirty, 0);
	sym_free(ctx);
}

/* Damage the cache file in several ways: each time the next context ignores
 * it, still answers right from DWARF, and writes a good file again. */
static void test_damage(void)
{
	static const char *how[] = {"flip", "truncate", "garbage", "empty", "header"};
	char file[8300];

	for (size_t k = 0; k < sizeof(how) / sizeof(how[0]); k++) {
		struct sym_module *mod;
		struct sym_ctx *ctx;
		struct stat st;
		int fd;

		REQUIRE(count_files(".sym", file, sizeof(file)) == 1);
		REQUIRE(stat(file, &st) == 0);
		fd = open(file, O_RDWR);
		REQUIRE(fd >= 0);
		if (!strcmp(how[k], "flip")) {
			unsigned char c;
			off_t at = st.st_size - 7;
			REQUIRE(pread(fd, &c, 1, at) == 1);
			c ^= 0x40;
			REQUIRE(pwrite(fd, &c, 1, at) == 1);
		} else if (!strcmp(how[k], "truncate")) {
			REQUIRE(ftruncate(fd, st.st_size / 2) == 0);
		} else if (!strcmp(how[k], "garbage")) {
			for (off_t i = 0; i < st.st_size; i++) {
				unsigned char c = (unsigned char)(i * 131 + 7);
				REQUIRE(pwrite(fd, &c, 1, i) == 1);
			}
		} else if (!strcmp(how[k], "empty")) {
			REQUIRE(ftruncate(fd, 0) == 0);
		} else {
			/* a valid-looking header whose counts point past the end */
			unsigned char big[4] = {0xff, 0xff, 0xff, 0x7f};
			REQUIRE(pwrite(fd, big, 4, 96) == 4);
		}
		close(fd);
		ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
		check_frames(ctx, mod);
		CHECK_EQ_INT(mod->cache_valid, 0);
		CHECK_EQ_INT(mod->dwarf_tried, 1);
		sym_free(ctx);
		ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
		check_frames(ctx, mod);
		if (!mod->cache_valid)
			fprintf(stderr, "after %s: cache not rewritten\n", how[k]);
		CHECK_EQ_INT(mod->cache_valid, 1);
		CHECK_EQ_INT(mod->dwarf_tried, 0);
		sym_free(ctx);
	}
}

/* Where the debug info comes from is part of the key: the stripped copy
 * without its debug directory gets its own entry, with names from the unwind
 * tables, and does not take the entry made with debug info. */
static void test_variant(void)
{
	struct sym_module *mod;
	struct sym_ctx *ctx;
	const struct sym_frame *f;

	clear_cache();
	ctx = open_ctx(fix_path("debugroot"), fix_path("symfix_bid"), &mod);
	check_frames(ctx, mod);
	sym_free(ctx);
	ctx = open_ctx("/nonexistent-cbn-debug", fix_path("symfix_bid"), &mod);
	CHECK_EQ_INT(mod->cache_valid, 0);
	CHECK_EQ_INT(sym_resolve(ctx, mod, fix_find(&run_main, "plain")->vaddr, &f), 1);
	CHECK_EQ_INT(f[0].nosym, 1);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 0);
	sym_free(ctx);
	CHECK_EQ_INT(count_files(".sym", NULL, 0), 2);
	ctx = open_ctx("/nonexistent-cbn-debug", fix_path("symfix_bid"), &mod);
	CHECK_EQ_INT(sym_resolve(ctx, mod, fix_find(&run_main, "plain")->vaddr, &f), 1);
	CHECK_EQ_INT(f[0].nosym, 1);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 0);
	CHECK_EQ_INT(mod->cache_valid, 1);
	sym_free(ctx);
	ctx = open_ctx(fix_path("debugroot"), fix_path("symfix_bid"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(mod->cache_valid, 1);
	sym_free(ctx);
}

/* Writers racing: every file left behind is whole. */
static void test_concurrent(void)
{
	pid_t kids[6];
	struct sym_module *mod;
	struct sym_ctx *ctx;

	clear_cache();
	for (int i = 0; i < 6; i++) {
		kids[i] = fork();
		REQUIRE(kids[i] >= 0);
		if (kids[i] == 0) {
			test_failures = 0; /* the child's own */
			for (int r = 0; r < 15; r++) {
				ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
				check_frames(ctx, mod);
				mod->cache_dirty = 1; /* write even when nothing is new */
				sym_free(ctx);
			}
			_exit(test_result());
		}
	}
	for (int i = 0; i < 6; i++) {
		int st;
		REQUIRE(waitpid(kids[i], &st, 0) == kids[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	CHECK_EQ_INT(count_files(".sym", NULL, 0), 1);
	CHECK_EQ_INT(count_files(".tmp", NULL, 0), 0);
	ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(mod->cache_valid, 1);
	CHECK_EQ_INT(mod->dwarf_tried, 0);
	sym_free(ctx);
}

/* A compressed separate debug file is kept inflated; a later context with an
 * address the cache lacks reads the inflated copy, with the same answers. */
static void test_inflated(void)
{
	char dir[4096], sub[4200], src[8300], dst[8400], cmd[24000], hex[129];
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	struct sym_module *mod;
	struct sym_ctx *ctx;

	snprintf(dir, sizeof(dir), "%s/cbn-test-symcache-dbg-%d", tmp, (int)getpid());
	for (size_t i = 0; i < run_main.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", run_main.build_id[i]);
	snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", dir, hex);
	snprintf(src, sizeof(src), "%s/.build-id/%.2s/%s.debug", fix_path("debugroot"), hex, hex + 2);
	snprintf(dst, sizeof(dst), "%s/%s.debug", sub, hex + 2);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s' && objcopy --compress-debug-sections=zlib '%s' '%s' 2>/dev/null", sub,
		 src, dst);
	if (system(cmd) != 0) {
		fprintf(stderr, "skip inflated: objcopy cannot compress debug sections here\n");
		return;
	}
	clear_cache();
	setenv("CBN_SYMCACHE_INFLATE_MIN", "1", 1);
	ctx = open_ctx(dir, fix_path("symfix_bid"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(mod->debug_compressed, 1);
	CHECK_EQ_INT(mod->debug_inflated, 0);
	sym_free(ctx);
	CHECK_EQ_INT(count_files(".debug", NULL, 0), 1);
	/* Forget the addresses, keep the inflated copy. */
	REQUIRE(count_files(".sym", src, sizeof(src)) == 1);
	REQUIRE(unlink(src) == 0);
	ctx = open_ctx(dir, fix_path("symfix_bid"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(mod->debug_inflated, 1);
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, mod), 1);
	sym_free(ctx);
	/* A damaged copy is thrown away, not trusted. */
	REQUIRE(count_files(".sym", src, sizeof(src)) == 1);
	REQUIRE(unlink(src) == 0);
	REQUIRE(count_files(".debug", src, sizeof(src)) == 1);
	REQUIRE(truncate(src, 4096) == 0);
	ctx = open_ctx(dir, fix_path("symfix_bid"), &mod);
	check_frames(ctx, mod);
	CHECK_EQ_INT(mod->debug_inflated, 0);
	sym_free(ctx);
	unsetenv("CBN_SYMCACHE_INFLATE_MIN");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	REQUIRE(system(cmd) == 0);
}

/* CBN_SYMCACHE=0: nothing is read or written. */
static void test_off(void)
{
	struct sym_module *mod;
	struct sym_ctx *ctx;

	clear_cache();
	setenv("CBN_SYMCACHE", "0", 1);
	ctx = open_ctx(NULL, fix_path("symfix_main"), &mod);
	check_frames(ctx, mod);
	sym_free(ctx);
	unsetenv("CBN_SYMCACHE");
	CHECK_EQ_INT(count_files(".sym", NULL, 0), 0);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	fix_init();
	REQUIRE(fix_exec("symfix_main", &run_main) == 0);
	REQUIRE(run_main.build_id_len > 0);
	snprintf(cache, sizeof(cache), "%s/cbn-test-symcache-%d", tmp, (int)getpid());
	setenv("CBN_SYMCACHE_DIR", cache, 1);
	unsetenv("CBN_SYMCACHE");
	unsetenv("DEBUGINFOD_URLS");
	test_roundtrip();
	test_damage();
	test_variant();
	test_concurrent();
	test_inflated();
	test_off();
	clear_cache();
	return test_result();
}
