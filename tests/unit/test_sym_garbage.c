/*
 * test_sym_garbage.c — the symbolizer on modules that are not what they
 * claim: missing files, pseudo-modules, directories, devices, a FIFO, text,
 * truncated and byte-corrupted ELF files.  Every one must still yield a
 * handle and "[name+0xVADDR]"-style frames, never a crash or a hang.  Also
 * the launcher's own vdso, which stands in for the target's.
 *
 * ctest-labels: fuzz
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols/sym.h"
#include "test_sym_fix.h"

static void resolve_some(struct sym_ctx *ctx, struct sym_module *mod, const char *name)
{
	static const uint64_t addrs[] = {0, 1, 0x10, 0x1000, 0x1189, 0x141c, 0x3fff,
					 0x400000, UINT64_MAX, UINT64_MAX - 1};
	char want[256];

	(void)sym_module_has_debuginfo(ctx, mod);
	(void)sym_module_changed(ctx, mod);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		const struct sym_frame *f = NULL;
		int n = sym_resolve(ctx, mod, addrs[i], &f);
		CHECK(n >= 1 && f != NULL);
		if (n < 1 || !f)
			continue;
		for (int k = 0; k < n; k++)
			CHECK(f[k].func && f[k].file && f[k].func_file);
		if (name) {
			snprintf(want, sizeof(want), "[%s+0x%" PRIx64 "]", name, addrs[i]);
			CHECK_STR(f[0].func, want);
		}
	}
}

static int write_file(const char *path, const unsigned char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	size_t w = fwrite(buf, 1, len, f);
	fclose(f);
	return w == len ? 0 : -1;
}

static unsigned char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	REQUIRE(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	REQUIRE(n > 0);
	buf = malloc((size_t)n);
	REQUIRE(buf != NULL);
	REQUIRE(fread(buf, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void test_pseudo(void)
{
	struct sym_ctx *ctx = sym_new();
	static const uint8_t bid[4] = {1, 2, 3, 4};

	resolve_some(ctx, sym_module_get(ctx, "/nonexistent/libgone.so", NULL, 0), "libgone.so");
	resolve_some(ctx, sym_module_get(ctx, "/nonexistent/libgone.so", bid, 4), "libgone.so");
	resolve_some(ctx, sym_module_get(ctx, "[anon]", NULL, 0), "anon");
	resolve_some(ctx, sym_module_get(ctx, "", NULL, 0), "unknown");
	resolve_some(ctx, sym_module_get(ctx, NULL, NULL, 0), "unknown");
	/* A vdso from another kernel: its build-id is not ours. */
	resolve_some(ctx, sym_module_get(ctx, "linux-vdso.so.1", bid, 4), "linux-vdso.so.1");
	CHECK_STR(sym_module_basename(sym_module_get(ctx, "[vdso]", bid, 4)), "[vdso]");
	resolve_some(ctx, sym_module_get(ctx, "[vdso]", bid, 4), "vdso");
	CHECK_EQ_INT(sym_module_has_debuginfo(ctx, sym_module_get(ctx, "[anon]", NULL, 0)), 0);
	CHECK_EQ_INT(sym_module_changed(ctx, sym_module_get(ctx, "[anon]", NULL, 0)), 0);
	sym_free(ctx);
}

static void test_special_files(const char *tmp)
{
	struct sym_ctx *ctx = sym_new();
	char p[8192];

	resolve_some(ctx, sym_module_get(ctx, "/", NULL, 0), NULL);
	resolve_some(ctx, sym_module_get(ctx, "/tmp", NULL, 0), "tmp");
	resolve_some(ctx, sym_module_get(ctx, "/dev/zero", NULL, 0), "zero");
	resolve_some(ctx, sym_module_get(ctx, "/dev/null", NULL, 0), "null");
	resolve_some(ctx, sym_module_get(ctx, "/proc/self/mem", NULL, 0), "mem");
	snprintf(p, sizeof(p), "%s/fifo", tmp);
	REQUIRE(mkfifo(p, 0600) == 0);
	resolve_some(ctx, sym_module_get(ctx, p, NULL, 0), "fifo"); /* must not block */
	snprintf(p, sizeof(p), "%s/fix_main.c", fix_src);
	resolve_some(ctx, sym_module_get(ctx, p, NULL, 0), "fix_main.c");
	snprintf(p, sizeof(p), "%s/empty", tmp);
	REQUIRE(write_file(p, (const unsigned char *)"", 0) == 0);
	resolve_some(ctx, sym_module_get(ctx, p, NULL, 0), "empty");
	sym_free(ctx);
}

/* Truncations and seeded byte corruption of a real fixture.  The file
 * header, program and section headers and the DWARF are all hit. */
static void test_corrupt(const char *tmp)
{
	size_t len;
	unsigned char *orig = read_file(fix_path("symfix_main"), &len);
	unsigned char *buf = malloc(len);
	char p[4096];
	static const size_t cuts[] = {4, 16, 63, 64, 200, 1000, 4096, 8192};

	REQUIRE(buf != NULL);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		if (cuts[i] >= len)
			continue;
		snprintf(p, sizeof(p), "%s/trunc%zu", tmp, i);
		REQUIRE(write_file(p, orig, cuts[i]) == 0);
		snprintf(p + strlen(p), 8, "%s", "");
		struct sym_ctx *ctx = sym_new();
		resolve_some(ctx, sym_module_get(ctx, p, NULL, 0), NULL);
		sym_free(ctx);
	}
	/* CBN_FUZZ_ROUNDS=N runs a longer campaign by hand. */
	const char *env = getenv("CBN_FUZZ_ROUNDS");
	int rounds = env ? atoi(env) : 60;
	unsigned seed = getenv("CBN_FUZZ_SEED") ? (unsigned)atoi(getenv("CBN_FUZZ_SEED")) : 12345;
	srand(seed);
	for (int round = 0; round < rounds; round++) {
		memcpy(buf, orig, len);
		int flips = 1 + rand() % 64;
		for (int k = 0; k < flips; k++) {
			size_t at;
			/* half the flips in the headers, half anywhere */
			if (k % 2 == 0)
				at = (size_t)rand() % (len < 4096 ? len : 4096);
			else
				at = (size_t)rand() % len;
			buf[at] = (unsigned char)rand();
		}
		if (round % 3 == 0) {
			/* keep the ELF header valid so libelf goes deeper */
			memcpy(buf, orig, 64);
		}
		snprintf(p, sizeof(p), "%s/corrupt%d", tmp, round);
		REQUIRE(write_file(p, buf, len) == 0);
		struct sym_ctx *ctx = sym_new();
		struct sym_module *mod = sym_module_get(ctx, p, NULL, 0);
		resolve_some(ctx, mod, NULL);
		for (uint64_t a = 0x1000; a < 0x1600; a += 7) {
			const struct sym_frame *f;
			CHECK(sym_resolve(ctx, mod, a, &f) >= 1);
		}
		sym_free(ctx);
		unlink(p);
	}
	free(buf);
	free(orig);
}

/* Corrupted separate debug info, found by build-id for an intact stripped
 * binary: DWARF and .symtab readers take the hits. */
static void test_corrupt_debug(const char *tmp)
{
	struct fix_run r;
	size_t len;
	char hex[129] = "", dir[8192], file[8400];

	REQUIRE(fix_exec("symfix_main", &r) == 0 && r.build_id_len > 1);
	for (size_t i = 0; i < r.build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", r.build_id[i]);
	snprintf(dir, sizeof(dir), "%s/dbg/.build-id/%.2s", tmp, hex);
	char cmd[8400];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	REQUIRE(system(cmd) == 0);
	snprintf(file, sizeof(file), "%s/%s.debug", dir, hex + 2);
	snprintf(dir, sizeof(dir), "%s/dbg", tmp);

	unsigned char *orig = read_file(fix_path("symfix_split.debug"), &len);
	unsigned char *buf = malloc(len);
	REQUIRE(buf != NULL);
	const char *env = getenv("CBN_FUZZ_ROUNDS");
	int rounds = env ? atoi(env) : 40;
	for (int round = 0; round < rounds; round++) {
		memcpy(buf, orig, len);
		int flips = 1 + rand() % 32;
		for (int k = 0; k < flips; k++)
			buf[(size_t)rand() % len] = (unsigned char)rand();
		REQUIRE(write_file(file, buf, len) == 0);
		setenv("CBN_DEBUGINFO_PATH", dir, 1);
		struct sym_ctx *ctx = sym_new();
		unsetenv("CBN_DEBUGINFO_PATH");
		struct sym_module *mod =
			sym_module_get(ctx, fix_path("symfix_bid"), r.build_id, r.build_id_len);
		for (int i = 0; i < r.nmarks; i++) {
			const struct sym_frame *f;
			CHECK(sym_resolve(ctx, mod, r.marks[i].vaddr, &f) >= 1);
		}
		for (uint64_t a = 0x1000; a < 0x1600; a += 5) {
			const struct sym_frame *f;
			CHECK(sym_resolve(ctx, mod, a, &f) >= 1);
		}
		sym_free(ctx);
	}
	free(buf);
	free(orig);
}

struct vdso_find {
	uint64_t base;
	uint8_t bid[64];
	size_t bid_len;
	int found;
};

static int vdso_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct vdso_find *v = arg;

	(void)size;
	if (!info->dlpi_name || strncmp(info->dlpi_name, "linux-vdso", 10) != 0)
		return 0;
	v->base = info->dlpi_addr;
	v->found = 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *desc = p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_descsz <= sizeof(v->bid)) {
				memcpy(v->bid, desc, nh->n_descsz);
				v->bid_len = nh->n_descsz;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static int count_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) != -1;
	return n;
}

/* vaddr of name in our own vdso's .dynsym, 0 if none: the test's oracle. */
static uint64_t vdso_sym(const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	uint64_t found = 0;

	if (!eh)
		return 0;
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	Elf *elf = elf_memory((char *)eh, size);
	Elf_Scn *scn = NULL;
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    strcmp(n, name) == 0)
				found = s.st_value;
		}
	}
	elf_end(elf);
	return found;
}

/* The launcher's vdso is the target's when both ran on this kernel. */
static void test_vdso(void)
{
	struct vdso_find v = {0};
	uint64_t fn;

	elf_version(EV_CURRENT);
	dl_iterate_phdr(vdso_cb, &v);
	fn = vdso_sym("__vdso_clock_gettime");
	if (!v.found || !fn) {
		fprintf(stderr, "note: no vdso clock_gettime to check against\n");
		return;
	}
	int fds = count_fds();
	struct sym_ctx *ctx = sym_new();
	struct sym_module *mod = sym_module_get(ctx, "linux-vdso.so.1", v.bid, v.bid_len);
	const struct sym_frame *f;
	int n = sym_resolve(ctx, mod, fn + 4, &f);
	CHECK_EQ_INT(n, 1);
	fprintf(stderr, "vdso: %s\n", f[0].func);
	CHECK(strstr(f[0].func, "clock_gettime") != NULL);
	CHECK_EQ_INT(sym_module_changed(ctx, mod), 0);
	sym_free(ctx);
	CHECK_EQ_INT(count_fds(), fds); /* the vdso copy's memfd is closed */
}

int main(void)
{
	char tmp[] = "/tmp/cbn-symtest-XXXXXX";
	char cmd[256];

	fix_init();
	REQUIRE(mkdtemp(tmp) != NULL);
	test_pseudo();
	test_special_files(tmp);
	test_corrupt(tmp);
	test_corrupt_debug(tmp);
	test_vdso();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "note: could not remove %s\n", tmp);
	return test_result();
}
