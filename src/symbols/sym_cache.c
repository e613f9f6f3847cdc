/*
 * sym_cache.c — resolved addresses kept between runs, per build-id, under
 * $XDG_CACHE_HOME/cbottleneck (default ~/.cache/cbottleneck), and the list of
 * local files libdwfl could take as a module's debug info.
 *
 * Reading the DWARF of a large library is most of a short run's report (glibc's
 * compressed debug sections alone take ~0.1 s to inflate).  The frames an
 * address resolves to depend only on the binary (its build-id) and on which
 * debug info is found for it, so a file per (build-id, debug-info state)
 * holds them: the next run with the same binary reads them back and opens no
 * DWARF for the addresses it already knows.
 *
 * The state folded into the file name ("variant"): the cache format, the name
 * the module's file has on disk (it appears in names of code without symbols),
 * whether a demangler is at hand, the debug-info search path, and for each local
 * candidate debug file its identity (path, inode, size, mtime); with debuginfod
 * the client cache's copy.  Installing a -dbg package therefore starts a new
 * entry instead of reusing names resolved without it.
 *
 * Safe against concurrent runs: a file is written whole under a temporary name
 * and renamed over the old one, so a reader sees the old or the new file.
 * Safe against damage: a file is used only if its magic, version, build-id,
 * variant, sizes, every index and a checksum of its body agree; any other
 * file is ignored and replaced at the next write.  Files not used for 30 days,
 * and the oldest beyond 256 MiB in all, are removed when one is written.
 *
 * CBN_SYMCACHE=0 turns the cache off; CBN_SYMCACHE_DIR names another directory.
 * CBN_SYMCACHE_INFLATE_MIN (bytes of compressed debug sections, default 1 MiB)
 * is the size from which a debug file is kept inflated; tests lower it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "sym_int.h"
#include "util.h"

#define CACHE_MAGIC "CBNSYMC"
/* 2: lines of the units .debug_aranges omits; 3: Fortran's names; 4: Rust's;
 * 5: source paths without "dir/../"; 6: assembler subprograms' files */
#define CACHE_VERSION 6u
#define CACHE_MAX_FILE (64u << 20)        /* larger files are neither read nor written */
#define CACHE_MAX_DIR (512ull << 20)      /* the directory is pruned to this */
#define CACHE_MAX_AGE (30 * 24 * 3600)    /* seconds since a file was last used */

/* Header flags. */
#define CF_DWARF_KNOWN 1u
#define CF_HAS_DWARF 2u
#define CF_PRODUCER 4u

struct cache_hdr {
	char magic[8];
	uint32_t version, hdr_size;
	uint8_t build_id[64];
	uint32_t build_id_len, flags;
	uint64_t variant;
	uint32_t nstrings, nentries;
	uint64_t strings_bytes, nframes;
	uint32_t producer;        /* string index, when CF_PRODUCER */
	uint32_t pad;
	uint64_t body_hash;       /* FNV-1a over everything after the header */
};

struct cache_entry {
	uint64_t vaddr;
	uint32_t first, n;        /* frames [first, first + n) */
};

struct cache_frame {
	uint32_t func, file, func_file; /* string indexes */
	uint32_t line, func_line;
	uint32_t flags;                 /* 1 inlined, 2 nosym */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	return util_fnv1a(p, n, h);
}

#define FNV0 UTIL_FNV_INIT

/* --- where debug info can come from --------------------------------------- */

static int cand_stat(const char *path, sym_cand_fn fn, void *arg)
{
	struct stat st;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (fn)
		fn(arg, path, &st);
	return 1;
}

int sym_debug_candidates(const struct sym_ctx *ctx, const uint8_t *bid, size_t bid_len,
			 const char *file_name, const char *link, sym_cand_fn fn, void *arg)
{
	const char *path = ctx->debuginfo_path ? ctx->debuginfo_path : ":.debug:/usr/lib/debug";
	char hex[2 * 64 + 1], bindir[PATH_MAX], buf[PATH_MAX * 2];
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	int found = 0;

	if (bid_len > 64)
		bid_len = 0;
	for (size_t i = 0; i < bid_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	bindir[0] = '\0';
	if (slash && (size_t)(slash - file_name) < sizeof(bindir))
		snprintf(bindir, sizeof(bindir), "%.*s", (int)(slash - file_name), file_name);
	while (*path) {
		size_t len = strcspn(path, ":");
		const char *dir = path;

		path += len + (path[len] == ':');
		while (len && (*dir == '+' || *dir == '-')) {
			dir++;
			len--;
		}
		if (len > 2048)
			continue;
		if (len && *dir == '/') {
			if (bid_len >= 2) {
				snprintf(buf, sizeof(buf), "%.*s/.build-id/%.2s/%s.debug", (int)len, dir,
					 hex, hex + 2);
				found += cand_stat(buf, fn, arg);
			}
			if (link && *link && file_name) {
				snprintf(buf, sizeof(buf), "%.*s%s/%s", (int)len, dir, bindir, link);
				found += cand_stat(buf, fn, arg);
			}
		} else if (link && *link && file_name) {
			if (len)
				snprintf(buf, sizeof(buf), "%s/%.*s/%s", bindir[0] ? bindir : ".", (int)len,
					 dir, link);
			else
				snprintf(buf, sizeof(buf), "%s/%s", bindir[0] ? bindir : ".", link);
			found += cand_stat(buf, fn, arg);
		}
	}
	return found;
}

/* --- the variant ---------------------------------------------------------- */

static void variant_add(void *arg, const char *path, const struct stat *st)
{
	uint64_t *h = arg;
	uint64_t v[4] = {(uint64_t)st->st_ino, (uint64_t)st->st_size,
			 (uint64_t)st->st_mtim.tv_sec, (uint64_t)st->st_mtim.tv_nsec};

	*h = fnv(*h, path, strlen(path) + 1);
	*h = fnv(*h, v, sizeof(v));
}

static int elf_has_section(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstr;

	if (elf_getshdrstrndx(elf, &shstr) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstr, sh.sh_name)) && strcmp(name, want) == 0)
			return 1;
	}
	return 0;
}

static const char *debuginfod_cache_dir(char *buf, size_t len)
{
	const char *p = getenv("DEBUGINFOD_CACHE_PATH");

	if (p && *p)
		return p;
	if ((p = getenv("XDG_CACHE_HOME")) && *p)
		snprintf(buf, len, "%s/debuginfod_client", p);
	else if ((p = getenv("HOME")) && *p)
		snprintf(buf, len, "%s/.cache/debuginfod_client", p);
	else
		return NULL;
	return buf;
}

/* 0 and *out set, or -1: the module's names may change with no local trace
 * (debuginfod may deliver later what it did not deliver now). */
static int cache_variant(struct sym_ctx *ctx, struct sym_module *mod, uint64_t *out)
{
	uint64_t h = FNV0;
	uint32_t ver = CACHE_VERSION;
	const char *base = mod->realbase ? mod->realbase : mod->fallback_base;
	GElf_Addr bias;
	GElf_Word crc = 0;
	Elf *elf = dwfl_module_getelf(mod->dm, &bias);
	const char *link;
	int demangle = sym_demangle_available();

	if (!elf)
		return -1;
	h = fnv(h, &ver, sizeof(ver));
	h = fnv(h, base, strlen(base) + 1);
	h = fnv(h, &demangle, sizeof(demangle));
	h = fnv(h, ctx->debuginfo_path ? ctx->debuginfo_path : "", 1 + strlen(ctx->debuginfo_path ? ctx->debuginfo_path : ""));
	if (elf_has_section(elf, ".debug_info")) {
		h = fnv(h, "embedded", 9);
		*out = h;
		return 0;
	}
	link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (!sym_debug_candidates(ctx, mod->build_id, mod->build_id_len, mod->path, link,
				  variant_add, &h) &&
	    sym_want_debuginfod()) {
		char buf[PATH_MAX], file[PATH_MAX + 256], hex[129];
		const char *dir = debuginfod_cache_dir(buf, sizeof(buf));

		for (size_t i = 0; i < mod->build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
		if (!dir)
			return -1;
		snprintf(file, sizeof(file), "%s/%s/debuginfo", dir, hex);
		if (!cand_stat(file, variant_add, &h))
			return -1;
	}
	*out = h;
	return 0;
}

/* --- the directory ----------------------------------------------------------- */

int sym_cache_dir(char *buf, size_t len)
{
	const char *p = getenv("CBN_SYMCACHE");

	if (p && strcmp(p, "0") == 0)
		return -1;
	if ((p = getenv("CBN_SYMCACHE_DIR")) && *p)
		snprintf(buf, len, "%s", p);
	else if ((p = getenv("XDG_CACHE_HOME")) && *p == '/')
		snprintf(buf, len, "%s/cbottleneck", p);
	else if ((p = getenv("HOME")) && *p == '/')
		snprintf(buf, len, "%s/.cache/cbottleneck", p);
	else
		return -1;
	return 0;
}

int sym_mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, dir, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static void cache_file(const struct sym_module *mod, const char *dir, char *buf, size_t len)
{
	char hex[129];

	for (size_t i = 0; i < mod->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	snprintf(buf, len, "%s/%s-%016" PRIx64 ".sym", dir, hex, mod->cache_variant);
}

/* --- reading ----------------------------------------------------------------- */

static const char *str_at(const char *const *strs, uint32_t n, uint32_t i, int *bad)
{
	if (i >= n) {
		*bad = 1;
		return "";
	}
	return strs[i];
}

static int cache_parse(struct sym_ctx *ctx, struct sym_module *mod, const unsigned char *buf,
		       size_t size)
{
	struct cache_hdr h;
	const char **strs = NULL;
	const struct cache_entry *ent;
	const struct cache_frame *fr;
	const char *blob;
	size_t need;
	int bad = 0;

	if (size < sizeof(h))
		return -1;
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, CACHE_MAGIC, 8) != 0 || h.version != CACHE_VERSION ||
	    h.hdr_size != sizeof(h) || h.build_id_len != mod->build_id_len ||
	    memcmp(h.build_id, mod->build_id, mod->build_id_len) != 0 ||
	    h.variant != mod->cache_variant)
		return -1;
	if (h.nstrings > CACHE_MAX_FILE || h.nentries > CACHE_MAX_FILE ||
	    h.strings_bytes > CACHE_MAX_FILE || h.nframes > CACHE_MAX_FILE)
		return -1;
	need = sizeof(h) + h.strings_bytes + (size_t)h.nentries * sizeof(*ent) +
	       (size_t)h.nframes * sizeof(*fr);
	if (need != size || fnv(FNV0, buf + sizeof(h), size - sizeof(h)) != h.body_hash)
		return -1;
	blob = (const char *)buf + sizeof(h);
	if (h.strings_bytes && blob[h.strings_bytes - 1] != '\0')
		return -1;
	ent = (const void *)(buf + sizeof(h) + h.strings_bytes);
	fr = (const void *)((const unsigned char *)ent + (size_t)h.nentries * sizeof(*ent));
	if (h.strings_bytes % 8 || (h.nstrings && !(strs = util_reallocarray(NULL, h.nstrings, sizeof(*strs)))))
		return -1;
	{
		size_t off = 0;

		for (uint32_t i = 0; i < h.nstrings; i++) {
			if (off >= h.strings_bytes) {
				free(strs);
				return -1;
			}
			strs[i] = sym_intern_str(ctx, blob + off);
			off += strlen(blob + off) + 1;
		}
	}
	/* Validate everything before anything enters the context. */
	for (uint32_t i = 0; i < h.nentries && !bad; i++)
		if (ent[i].n == 0 || ent[i].n > SYM_MAX_DEPTH || ent[i].first > h.nframes ||
		    ent[i].n > h.nframes - ent[i].first)
			bad = 1;
	for (uint64_t i = 0; i < h.nframes && !bad; i++)
		if (fr[i].func >= h.nstrings || fr[i].file >= h.nstrings ||
		    fr[i].func_file >= h.nstrings || fr[i].flags > 3)
			bad = 1;
	if ((h.flags & CF_PRODUCER) && h.producer >= h.nstrings)
		bad = 1;
	if (bad) {
		free(strs);
		return -1;
	}
	for (uint32_t i = 0; i < h.nentries; i++) {
		struct sym_frame *out;
		uint64_t old;

		if (sym_map_get(&ctx->map, SYM_TAG_PC | mod->idx, ent[i].vaddr, &old))
			continue;
		out = sym_pool_reserve(ctx, ent[i].n);
		if (!out)
			break;
		for (uint32_t k = 0; k < ent[i].n; k++) {
			const struct cache_frame *c = &fr[ent[i].first + k];

			out[k].func = str_at(strs, h.nstrings, c->func, &bad);
			out[k].file = str_at(strs, h.nstrings, c->file, &bad);
			out[k].func_file = str_at(strs, h.nstrings, c->func_file, &bad);
			out[k].line = c->line;
			out[k].func_line = c->func_line;
			out[k].inlined = c->flags & 1;
			out[k].nosym = (c->flags >> 1) & 1;
		}
		if (sym_map_put(&ctx->map, SYM_TAG_PC | mod->idx, ent[i].vaddr,
				(uint64_t)ctx->npool << 8 | ent[i].n) != 0)
			break;
		ctx->npool += ent[i].n;
		mod->cache_loaded++;
	}
	if (h.flags & CF_DWARF_KNOWN) {
		mod->cache_dwarf_known = 1;
		mod->cache_has_dwarf = (h.flags & CF_HAS_DWARF) != 0;
	}
	if ((h.flags & CF_PRODUCER) && !mod->producer)
		mod->producer = strdup(strs[h.producer]);
	free(strs);
	return 0;
}

void sym_cache_load(struct sym_ctx *ctx, struct sym_module *mod)
{
	char dir[PATH_MAX], file[PATH_MAX + 256];
	unsigned char *buf;
	struct stat st;
	ssize_t n;
	int fd;

	mod->cache_state = -1;
	if (!mod->dm || mod->changed || mod->build_id_len < 4 || sym_cache_dir(dir, sizeof(dir)) != 0 ||
	    cache_variant(ctx, mod, &mod->cache_variant) != 0)
		return;
	mod->cache_state = 1;
	cache_file(mod, dir, file, sizeof(file));
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > CACHE_MAX_FILE ||
	    st.st_size < (off_t)sizeof(struct cache_hdr) || !(buf = malloc((size_t)st.st_size))) {
		close(fd);
		return;
	}
	n = read(fd, buf, (size_t)st.st_size);
	if (n == st.st_size && cache_parse(ctx, mod, buf, (size_t)n) == 0) {
		/* Used: its mtime orders the pruning. */
		futimens(fd, NULL);
		mod->cache_valid = 1;
	}
	free(buf);
	close(fd);
}

/* --- inflated debug files -----------------------------------------------------
 *
 * Distributions compress DWARF (SHF_COMPRESSED); libdw inflates every debug
 * section of a file before it can answer anything, ~80 ms for glibc's, in every
 * report that meets an address the cache lacks.  The cache keeps an inflated
 * copy of such a file (same build-id, same variant), which libdw then reads
 * lazily straight from the page cache.
 */

#define INFLATE_MIN (1u << 20)  /* compressed debug sections smaller than this are not worth it */

static void debugfile_name(const struct sym_module *mod, const char *dir, char *buf, size_t len)
{
	char hex[129];

	for (size_t i = 0; i < mod->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	snprintf(buf, len, "%s/%s-%016" PRIx64 ".debug", dir, hex, mod->cache_variant);
}

static int build_id_is(Elf *elf, const struct sym_module *mod)
{
	const void *bid = NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bid) : -1;

	return n > 0 && (size_t)n == mod->build_id_len && memcmp(bid, mod->build_id, (size_t)n) == 0;
}

int sym_cache_debugfile(struct sym_ctx *ctx, struct sym_module *mod, char **name)
{
	char dir[PATH_MAX], file[PATH_MAX + 256];
	Elf *elf;
	int fd, ok;

	(void)ctx;
	if (mod->cache_state != 1 || sym_cache_dir(dir, sizeof(dir)) != 0)
		return -1;
	debugfile_name(mod, dir, file, sizeof(file));
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	ok = build_id_is(elf, mod);
	if (elf)
		elf_end(elf);
	if (!ok) {
		close(fd);
		unlink(file);
		return -1;
	}
	futimens(fd, NULL);
	if (name)
		*name = strdup(file);
	mod->debug_inflated = 1;
	return fd;
}

void sym_cache_note_debugfile(struct sym_module *mod, int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	uint64_t zbytes = 0;
	const char *min = getenv("CBN_SYMCACHE_INFLATE_MIN"); /* bytes; for tests */

	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			zbytes += sh.sh_size;
	}
	if (elf)
		elf_end(elf);
	mod->debug_compressed = zbytes > 0 && zbytes >= (min && *min ? strtoull(min, NULL, 10) : INFLATE_MIN);
}

/* Writes elf (libdw's, whose debug sections it already inflated in memory)
 * to fd with every section uncompressed.  Program headers are copied as they
 * are: libdwfl reads only their addresses from a debug file. */
static int write_inflated(Elf *src, int fd)
{
	GElf_Ehdr eh;
	size_t phnum = 0;
	Elf_Scn *s = NULL;
	Elf *o;
	int ret = -1;

	if (!gelf_getehdr(src, &eh) || elf_getphdrnum(src, &phnum) != 0)
		return -1;
	o = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!o)
		return -1;
	if (!gelf_newehdr(o, gelf_getclass(src)))
		goto out;
	if (phnum) {
		if (!gelf_newphdr(o, phnum))
			goto out;
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(src, (int)i, &ph) || !gelf_update_phdr(o, (int)i, &ph))
				goto out;
		}
	}
	while ((s = elf_nextscn(src, s)) != NULL) {
		GElf_Shdr sh;
		Elf_Scn *os;
		Elf_Data *d = NULL;

		if (!gelf_getshdr(s, &sh))
			goto out;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(s, 0, 0) < 0 || !gelf_getshdr(s, &sh)))
			goto out;
		if (!(os = elf_newscn(o)))
			goto out;
		while ((d = elf_getdata(s, d)) != NULL) {
			Elf_Data *od = elf_newdata(os);

			if (!od)
				goto out;
			*od = *d;
		}
		if (!gelf_update_shdr(os, &sh))
			goto out;
	}
	if (!gelf_update_ehdr(o, &eh) || elf_update(o, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	elf_end(o);
	return ret;
}

static void save_inflated(struct sym_module *mod, const char *dir)
{
	char file[PATH_MAX + 256], tmp[PATH_MAX + 300];
	Dwarf_Addr bias;
	Dwarf *dw;
	Elf *elf;
	int fd;

	if (!mod->debug_compressed || mod->debug_inflated || !mod->has_dwarf || !mod->dm ||
	    !(dw = dwfl_module_getdwarf(mod->dm, &bias)) || !(elf = dwarf_getelf(dw)) ||
	    !build_id_is(elf, mod))
		return;
	debugfile_name(mod, dir, file, sizeof(file));
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", file);
	fd = mkstemp(tmp);
	if (fd < 0)
		return;
	/* No fsync: a copy cut short by a crash has lost its section headers
	 * (written last), so sym_cache_debugfile's check refuses it. */
	if (write_inflated(elf, fd) != 0) {
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) != 0 || rename(tmp, file) != 0)
		unlink(tmp);
}

/* --- writing ----------------------------------------------------------------- */

struct wbuf {
	unsigned char *p;
	size_t n, cap;
	int oom;
};

static void wput(struct wbuf *w, const void *d, size_t n)
{
	if (w->oom)
		return;
	if (w->n + n > w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 65536;
		unsigned char *np;

		while (ncap < w->n + n)
			ncap *= 2;
		if (!(np = realloc(w->p, ncap))) {
			w->oom = 1;
			return;
		}
		w->p = np;
		w->cap = ncap;
	}
	memcpy(w->p + w->n, d, n);
	w->n += n;
}

struct strtab {
	struct sym_map idx;       /* string pointer -> index */
	struct wbuf blob;
	uint32_t n;
};

static uint32_t str_index(struct strtab *t, const char *s)
{
	uint64_t v;

	if (!s)
		s = "";
	if (sym_map_get(&t->idx, 1, (uintptr_t)s, &v))
		return (uint32_t)v;
	wput(&t->blob, s, strlen(s) + 1);
	if (sym_map_put(&t->idx, 1, (uintptr_t)s, t->n) != 0)
		t->blob.oom = 1;
	return t->n++;
}

static void prune(const char *dir, const char *keep)
{
	struct old {
		time_t mtime;
		off_t size;
		char name[256];
	} *v = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;
	time_t now = time(NULL);
	struct dirent *de;
	DIR *d = opendir(dir);
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len >= sizeof(v->name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (len < 6 ||
		    (strcmp(de->d_name + len - 4, ".sym") && strcmp(de->d_name + len - 6, ".debug") &&
		     !strstr(de->d_name, ".tmp.")) ||
		    lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		/* temporary files of writers that died, an hour on */
		if (strstr(de->d_name, ".tmp.")) {
			if (now - st.st_mtime > 3600)
				unlink(path);
			continue;
		}
		if (now - st.st_mtime > CACHE_MAX_AGE && strcmp(path, keep) != 0) {
			unlink(path);
			continue;
		}
		if (n == cap) {
			struct old *nv = util_reallocarray(v, (cap = cap ? cap * 2 : 64), sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n].mtime = st.st_mtime;
		v[n].size = st.st_size;
		memcpy(v[n].name, de->d_name, len + 1);
		total += (unsigned long long)st.st_size;
		n++;
	}
	closedir(d);
	while (total > CACHE_MAX_DIR && n) {
		size_t oldest = 0;

		for (size_t i = 1; i < n; i++)
			if (v[i].mtime < v[oldest].mtime)
				oldest = i;
		snprintf(path, sizeof(path), "%s/%s", dir, v[oldest].name);
		if (strcmp(path, keep) != 0)
			unlink(path);
		total -= (unsigned long long)v[oldest].size;
		v[oldest] = v[--n];
	}
	free(v);
}

void sym_cache_save(struct sym_ctx *ctx, struct sym_module *mod)
{
	struct strtab st = {{0}, {0}, 0};
	struct wbuf ents = {0}, frames = {0};
	struct cache_hdr h;
	char dir[PATH_MAX], file[PATH_MAX + 256], tmp[PATH_MAX + 300];
	uint64_t tag = SYM_TAG_PC | mod->idx, nfr = 0;
	uint32_t nent = 0;
	static const char zero[8];
	int fd;

	if (mod->cache_state != 1 || sym_cache_dir(dir, sizeof(dir)) != 0)
		return;
	if (mod->debug_compressed && !mod->debug_inflated && sym_mkdir_p(dir) == 0) {
		save_inflated(mod, dir);
		prune(dir, "");
	}
	if (!mod->cache_dirty)
		return;
	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < ctx->map.cap; i++) {
		const struct sym_map_ent *e = &ctx->map.ent[i];
		struct cache_entry ce;

		if (e->tag != tag)
			continue;
		ce.vaddr = e->key;
		ce.first = (uint32_t)nfr;
		ce.n = (uint32_t)(e->val & 0xff);
		for (uint32_t k = 0; k < ce.n; k++) {
			const struct sym_frame *f = &ctx->pool[(e->val >> 8) + k];
			struct cache_frame cf = {str_index(&st, f->func), str_index(&st, f->file),
						 str_index(&st, f->func_file), f->line, f->func_line,
						 (uint32_t)(f->inlined ? 1 : 0) |
							 (uint32_t)(f->nosym ? 2 : 0)};
			wput(&frames, &cf, sizeof(cf));
		}
		wput(&ents, &ce, sizeof(ce));
		nfr += ce.n;
		nent++;
	}
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.version = CACHE_VERSION;
	h.hdr_size = sizeof(h);
	memcpy(h.build_id, mod->build_id, mod->build_id_len);
	h.build_id_len = (uint32_t)mod->build_id_len;
	h.variant = mod->cache_variant;
	if (mod->dwarf_tried) {
		h.flags |= CF_DWARF_KNOWN | (mod->has_dwarf ? CF_HAS_DWARF : 0);
	} else if (mod->cache_dwarf_known) {
		h.flags |= CF_DWARF_KNOWN | (mod->cache_has_dwarf ? CF_HAS_DWARF : 0);
	}
	if (mod->producer) {
		h.flags |= CF_PRODUCER;
		h.producer = str_index(&st, mod->producer);
	}
	wput(&st.blob, zero, (8 - st.blob.n % 8) % 8);
	h.nstrings = st.n;
	h.strings_bytes = st.blob.n;
	h.nentries = nent;
	h.nframes = nfr;
	if (st.blob.oom || ents.oom || frames.oom ||
	    sizeof(h) + st.blob.n + ents.n + frames.n > CACHE_MAX_FILE)
		goto out;
	h.body_hash = fnv(fnv(fnv(FNV0, st.blob.p, st.blob.n), ents.p, ents.n), frames.p, frames.n);
	if (sym_mkdir_p(dir) != 0)
		goto out;
	cache_file(mod, dir, file, sizeof(file));
	snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", file);
	fd = mkstemp(tmp);
	if (fd < 0)
		goto out;
	{
		FILE *f = fdopen(fd, "w");
		int ok;

		if (!f) {
			close(fd);
			unlink(tmp);
			goto out;
		}
		fwrite(&h, sizeof(h), 1, f);
		if (st.blob.n)
			fwrite(st.blob.p, 1, st.blob.n, f);
		if (ents.n)
			fwrite(ents.p, 1, ents.n, f);
		if (frames.n)
			fwrite(frames.p, 1, frames.n, f);
		ok = !ferror(f);
		ok = fclose(f) == 0 && ok;
		if (!ok || rename(tmp, file) != 0)
			unlink(tmp);
	}
	prune(dir, file);
out:
	sym_map_free(&st.idx);
	free(st.blob.p);
	free(ents.p);
	free(frames.p);
}
