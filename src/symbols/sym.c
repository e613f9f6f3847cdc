/*
 * sym.c — the symbolizer's public side (sym.h): module handles, finding the
 * ELF file and its debug info (build-id checked), and sym_resolve with its
 * (module, vaddr) cache of frame lists.  Not thread-safe: one sym_ctx per thread.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <gelf.h>

#include "sym_int.h"
#include "util.h"

int sym_want_debuginfod(void)
{
	const char *u = getenv("DEBUGINFOD_URLS");

	return u && *u;
}

/*
 * libdwfl's standard search, except that without DEBUGINFOD_URLS a module with
 * no local debug file is not handed on: elfutils 0.188 would then dlopen its
 * debuginfod client (libcurl, GnuTLS, Kerberos...) only to find no server set,
 * some 40 ms of every report.
 */
static int sym_find_debuginfo(Dwfl_Module *m, void **userdata, const char *modname,
			      GElf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct sym_module *mod = userdata ? *userdata : NULL;
	const unsigned char *bits = NULL;
	GElf_Addr at;
	int len, fd;

	if (mod && (fd = sym_cache_debugfile(mod->ctx, mod, debuginfo_file_name)) >= 0)
		return fd;
	if (mod && !sym_want_debuginfod()) {
		len = dwfl_module_build_id(m, &bits, &at);
		if (!sym_debug_candidates(mod->ctx, bits, len > 0 ? (size_t)len : 0, file_name,
					  debuglink_file, NULL, NULL)) {
			errno = ENOENT;
			return -1;
		}
	}
	fd = dwfl_standard_find_debuginfo(m, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (mod && fd >= 0)
		sym_cache_note_debugfile(mod, fd);
	return fd;
}

struct sym_ctx *sym_new(void)
{
	struct sym_ctx *ctx = calloc(1, sizeof(*ctx));
	const char *p;

	if (!ctx)
		return NULL;
	/* DEBUGINFOD_URLS set: elfutils asks those servers for debug info the
	 * machine lacks (by build-id).  A server that does not answer would stall
	 * for 90 s per file (elfutils' default): give up after 5 s unless the
	 * user set DEBUGINFOD_TIMEOUT.  CBN_DEBUGINFOD=0 turns it off. */
	p = getenv("CBN_DEBUGINFOD");
	if (p && strcmp(p, "0") == 0)
		unsetenv("DEBUGINFOD_URLS");
	else if (getenv("DEBUGINFOD_URLS"))
		setenv("DEBUGINFOD_TIMEOUT", "5", 0);
	/* Replaces libdwfl's default search path ":.debug:/usr/lib/debug". */
	p = getenv("CBN_DEBUGINFO_PATH");
	if (p && *p)
		ctx->debuginfo_path = strdup(p);
	ctx->cb.find_elf = dwfl_build_id_find_elf;
	ctx->cb.find_debuginfo = sym_find_debuginfo;
	ctx->cb.section_address = dwfl_offline_section_address;
	ctx->cb.debuginfo_path = &ctx->debuginfo_path;
	return ctx;
}

static void sym_module_close(struct sym_module *mod)
{
	if (mod->dwfl)
		dwfl_end(mod->dwfl);
	mod->dwfl = NULL;
	mod->dm = NULL;
	free(mod->syms);
	mod->syms = NULL;
	mod->nsyms = 0;
	mod->syms_built = 0;
	mod->dwarf_tried = 0;
	mod->has_dwarf = 0;
	free(mod->fdes);
	mod->fdes = NULL;
	mod->nfdes = 0;
	mod->fdes_built = 0;
	sym_dwarf_free(mod);
}

void sym_free(struct sym_ctx *ctx)
{
	if (!ctx)
		return;
	for (size_t i = 0; i < ctx->nmods; i++)
		sym_cache_save(ctx, ctx->mods[i]);
	for (size_t i = 0; i < ctx->nmods; i++) {
		struct sym_module *mod = ctx->mods[i];
		sym_module_close(mod);
		free(mod->path);
		free(mod->fallback_base);
		free(mod->realbase);
		free(mod->soname);
		free(mod->producer);
		free(mod);
	}
	free(ctx->mods);
	free(ctx->pool);
	free(ctx->fns);
	free(ctx->debuginfo_path);
	sym_util_free(ctx);
	free(ctx);
}

static uint64_t sym_module_key(const char *path, const uint8_t *bid, size_t len)
{
	static const unsigned char sep = 0xff;

	return util_fnv1a(bid, len, util_fnv1a(&sep, 1, util_fnv1a_str(path, UTIL_FNV_INIT)));
}

static int sym_module_same(const struct sym_module *m, const char *path, const uint8_t *bid,
			   size_t len)
{
	return strcmp(m->path, path) == 0 && m->build_id_len == len &&
	       (len == 0 || memcmp(m->build_id, bid, len) == 0);
}

/* Strips brackets ("[vdso]" -> "vdso") so fallback names read "[vdso+0x10]". */
static char *sym_fallback_base(const char *base)
{
	size_t len = strlen(base);

	if (len == 0)
		return strdup("unknown");
	if (len >= 2 && base[0] == '[' && base[len - 1] == ']')
		return strndup(base + 1, len - 2);
	return strdup(base);
}

/* A static handle for allocation failures, so sym_module_get never returns NULL. */
static struct sym_module sym_oom_module = {
	.idx = UINT32_MAX >> 1,
	.path = "",
	.base = "",
	.fallback_base = "unknown",
	.opened = 1,
	.syms_built = 1,
	.dwarf_tried = 1,
};

struct sym_module *sym_module_get(struct sym_ctx *ctx, const char *path,
				  const uint8_t *build_id, size_t build_id_len)
{
	struct sym_module *mod;
	uint64_t key, v;

	if (!path)
		path = "";
	if (!build_id || build_id_len > sizeof(mod->build_id))
		build_id_len = 0;
	key = sym_module_key(path, build_id, build_id_len);
	if (sym_map_get(&ctx->map, SYM_TAG_MOD, key, &v) &&
	    sym_module_same(ctx->mods[v], path, build_id, build_id_len))
		return ctx->mods[v];
	for (size_t i = 0; i < ctx->nmods; i++)
		if (sym_module_same(ctx->mods[i], path, build_id, build_id_len))
			return ctx->mods[i];

	if (ctx->nmods == ctx->capmods) {
		size_t ncap = ctx->capmods ? ctx->capmods * 2 : 64;
		struct sym_module **nm = util_reallocarray(ctx->mods, ncap, sizeof(*nm));
		if (!nm)
			return &sym_oom_module;
		ctx->mods = nm;
		ctx->capmods = ncap;
	}
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return &sym_oom_module;
	mod->path = strdup(path);
	if (!mod->path)
		goto fail;
	const char *slash = strrchr(mod->path, '/');
	mod->base = slash && slash[1] ? slash + 1 : mod->path;
	mod->fallback_base = sym_fallback_base(mod->base);
	if (!mod->fallback_base)
		goto fail;
	if (build_id_len)
		memcpy(mod->build_id, build_id, build_id_len);
	mod->build_id_len = build_id_len;
	mod->idx = (uint32_t)ctx->nmods;
	ctx->mods[ctx->nmods++] = mod;
	sym_map_put(&ctx->map, SYM_TAG_MOD, key, mod->idx);
	return mod;
fail:
	free(mod->path);
	free(mod);
	return &sym_oom_module;
}

static void sym_module_open(struct sym_ctx *ctx, struct sym_module *mod);

const char *sym_module_basename(const struct sym_module *mod)
{
	return mod->base;
}

const char *sym_module_filename(struct sym_ctx *ctx, struct sym_module *mod)
{
	if (!mod->opened)
		sym_module_open(ctx, mod);
	return mod->realbase ? mod->realbase : mod->base;
}

const char *sym_module_soname(struct sym_ctx *ctx, struct sym_module *mod)
{
	GElf_Addr bias;
	Elf *elf;
	Elf_Scn *scn = NULL;

	if (!mod->opened)
		sym_module_open(ctx, mod);
	if (mod->soname || !mod->dm)
		return mod->soname ? mod->soname : "";
	elf = dwfl_module_getelf(mod->dm, &bias);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 16); i++) {
			GElf_Dyn dyn;
			const char *n;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag != DT_SONAME)
				continue;
			n = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (n)
				mod->soname = strdup(n);
		}
	}
	if (!mod->soname)
		mod->soname = strdup("");
	return mod->soname ? mod->soname : "";
}

/* Reports file (or fd, which libdwfl then owns) as the module's only Dwfl
 * module, at bias 0 so module addresses are ELF vaddrs. */
static int sym_report(struct sym_ctx *ctx, struct sym_module *mod, const char *file, int fd)
{
	Dwfl *d = dwfl_begin(&ctx->cb);

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(d);
	/* add_p_vaddr: the bias is then exactly our base (0), even for DSOs
	 * whose first PT_LOAD is not at 0. */
	Dwfl_Module *m = dwfl_report_elf(d, mod->base[0] ? mod->base : "unknown", file, fd, 0,
					 true);
	dwfl_report_end(d, NULL, NULL);
	if (!m) {
		dwfl_end(d);
		return -ENOEXEC;
	}
	Dwarf_Addr bias = 0;
	void **ud = NULL;
	if (!dwfl_module_getelf(m, &bias)) {
		dwfl_end(d);
		return -ENOEXEC;
	}
	/* sym_find_debuginfo's context */
	if (dwfl_module_info(m, &ud, NULL, NULL, NULL, NULL, NULL, NULL) && ud) {
		mod->ctx = ctx;
		*ud = mod;
	}
	mod->dwfl = d;
	mod->dm = m;
	mod->elfbias = bias;
	return 0;
}

/* 1 when the reported file carries the build-id recorded at run time (or no
 * build-id was recorded, so there is nothing to check). */
static int sym_build_id_matches(struct sym_module *mod)
{
	const unsigned char *bits;
	GElf_Addr at;
	int len;

	if (!mod->build_id_len)
		return 1;
	len = dwfl_module_build_id(mod->dm, &bits, &at);
	return len > 0 && (size_t)len == mod->build_id_len &&
	       memcmp(bits, mod->build_id, mod->build_id_len) == 0;
}

static int sym_regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Looks up <dir>/.build-id/xx/rest{,.debug} in every absolute directory of
 * the debuginfo path, and reports the first file whose build-id matches.  The
 * .debug file carries symbols, DWARF and program headers of the binary that
 * ran, which is all symbolization needs. */
static int sym_open_by_build_id(struct sym_ctx *ctx, struct sym_module *mod)
{
	const char *path = ctx->debuginfo_path ? ctx->debuginfo_path : "/usr/lib/debug";
	char hex[2 * sizeof(mod->build_id) + 1];
	char file[4096];

	for (size_t i = 0; i < mod->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", mod->build_id[i]);
	while (*path) {
		size_t len = strcspn(path, ":");
		const char *dir = path;
		path += len + (path[len] == ':');
		while (len && (*dir == '+' || *dir == '-')) {
			dir++;
			len--;
		}
		if (!len || *dir != '/' || len > 2048)
			continue;
		for (int dbg = 0; dbg < 2; dbg++) {
			snprintf(file, sizeof(file), "%.*s/.build-id/%.2s/%s%s", (int)len, dir, hex,
				 hex + 2, dbg ? ".debug" : "");
			if (!sym_regular_file(file) || sym_report(ctx, mod, file, -1) < 0)
				continue;
			if (sym_build_id_matches(mod))
				return 0;
			sym_module_close(mod);
		}
	}
	return -ENOENT;
}

static int sym_is_vdso(const char *base)
{
	return strcmp(base, "[vdso]") == 0 || strncmp(base, "linux-vdso.so", 13) == 0 ||
	       strncmp(base, "linux-gate.so", 13) == 0;
}

/* The target ran on this kernel (usually), so our own vdso is the same image:
 * copy it into a memfd and symbolize that when the build-ids agree. */
static int sym_open_vdso(struct sym_ctx *ctx, struct sym_module *mod)
{
	const unsigned char *img = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	size_t size;
	int fd;

	if (!img || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -ENOENT;
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	for (int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph =
			(const Elf64_Phdr *)(img + eh->e_phoff + (size_t)i * eh->e_phentsize);
		if (ph->p_offset + ph->p_filesz > size)
			size = ph->p_offset + ph->p_filesz;
	}
	if (size == 0 || size > (1u << 20))
		return -ENOENT;
	fd = memfd_create("cbn-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, img, size) != (ssize_t)size) {
		close(fd);
		return -EIO;
	}
	if (sym_report(ctx, mod, "[vdso]", fd) < 0)
		return -ENOEXEC;
	if (!sym_build_id_matches(mod)) {
		sym_module_close(mod);
		return -ESTALE;
	}
	return 0;
}

static void sym_module_open(struct sym_ctx *ctx, struct sym_module *mod)
{
	char *trimmed = NULL;
	const char *file = mod->path;

	mod->opened = 1;
	if (sym_is_vdso(mod->base)) {
		sym_open_vdso(ctx, mod);
		return;
	}
	if (!file[0] || file[0] == '[')
		return;
	/* /proc/PID/maps spells unlinked files "path (deleted)". */
	if (!sym_regular_file(file)) {
		size_t len = strlen(file);
		if (len > 10 && strcmp(file + len - 10, " (deleted)") == 0) {
			trimmed = strndup(file, len - 10);
			file = trimmed;
		}
	}
	if (file && sym_regular_file(file) && sym_report(ctx, mod, file, -1) == 0 &&
	    !sym_build_id_matches(mod))
		mod->changed = 1;
	if (file) {
		char *real = realpath(file, NULL);
		const char *b = real ? strrchr(real, '/') : NULL;

		if (b && b[1])
			mod->realbase = strdup(b + 1);
		free(real);
	}
	free(trimmed);
	if ((!mod->dm || mod->changed) && mod->build_id_len) {
		/* Keep the changed file when no copy of the original is found:
		 * most names are still right, and the report says it changed. */
		Dwfl *keep = mod->dwfl;
		Dwfl_Module *keepm = mod->dm;
		Dwarf_Addr keepb = mod->elfbias;
		mod->dwfl = NULL;
		mod->dm = NULL;
		if (sym_open_by_build_id(ctx, mod) == 0) {
			if (keep)
				dwfl_end(keep);
		} else {
			mod->dwfl = keep;
			mod->dm = keepm;
			mod->elfbias = keepb;
		}
	}
	sym_cache_load(ctx, mod);
}

static void sym_module_dwarf(struct sym_module *mod)
{
	Dwarf_Addr bias;
	Dwarf *dw;
	Dwarf_Off next;
	size_t hsize;

	mod->dwarf_tried = 1;
	if (!mod->dm)
		return;
	dw = dwfl_module_getdwarf(mod->dm, &bias);
	if (dw && dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) == 0)
		mod->has_dwarf = 1;
}

static void sym_module_ready(struct sym_ctx *ctx, struct sym_module *mod)
{
	if (!mod->opened)
		sym_module_open(ctx, mod);
	if (!mod->dwarf_tried)
		sym_module_dwarf(mod);
}

int sym_module_has_debuginfo(struct sym_ctx *ctx, struct sym_module *mod)
{
	if (!mod->opened)
		sym_module_open(ctx, mod);
	if (!mod->dwarf_tried && mod->cache_dwarf_known)
		return mod->cache_has_dwarf;
	sym_module_ready(ctx, mod);
	if (mod->cache_state == 1)
		mod->cache_dirty = 1;
	return mod->has_dwarf;
}

const char *sym_module_producer(struct sym_ctx *ctx, struct sym_module *mod)
{
	Dwarf_Off off = 0, next;
	Dwarf_Addr bias;
	size_t hsize;
	Dwarf *dw;

	if (!mod->opened)
		sym_module_open(ctx, mod);
	if (mod->producer)
		return mod->producer;
	sym_module_ready(ctx, mod);
	if (mod->cache_state == 1)
		mod->cache_dirty = 1;
	dw = mod->dm && mod->has_dwarf ? dwfl_module_getdwarf(mod->dm, &bias) : NULL;
	while (dw && !mod->producer && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Attribute a;
		const char *p;

		if (dwarf_offdie(dw, off + hsize, &cu) &&
		    dwarf_attr_integrate(&cu, DW_AT_producer, &a) && (p = dwarf_formstring(&a)) &&
		    strncmp(p, "GNU AS", 6) != 0 && *p)
			mod->producer = strdup(p);
		off = next;
	}
	if (!mod->producer && mod->dm) {
		GElf_Addr ebias;
		Elf *elf = dwfl_module_getelf(mod->dm, &ebias);
		Elf_Scn *scn = NULL;
		size_t shstr;

		while (elf && !mod->producer && elf_getshdrstrndx(elf, &shstr) == 0 &&
		       (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstr, sh.sh_name)) ||
			    strcmp(name, ".comment") || !(d = elf_getdata(scn, NULL)) || !d->d_size)
				continue;
			mod->producer = strndup(d->d_buf, strnlen(d->d_buf, d->d_size));
		}
	}
	if (!mod->producer)
		mod->producer = strdup("");
	return mod->producer ? mod->producer : "";
}

int sym_module_changed(struct sym_ctx *ctx, struct sym_module *mod)
{
	if (!mod->opened)
		sym_module_open(ctx, mod);
	return mod->changed;
}

int sym_module_exact(struct sym_ctx *ctx, struct sym_module *mod)
{
	if (!mod->opened)
		sym_module_open(ctx, mod);
	return mod->dm && sym_build_id_matches(mod);
}

static const char *sym_fallback(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", mod->fallback_base, vaddr);

	if (n < 0)
		return "";
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	return sym_intern(ctx, buf, (size_t)n);
}

/* Code without a symbol: "file+0xSTART" for its function (nosym), and the
 * pc itself as its "file", so the hottest-lines table keeps each pc. */
static void sym_nosym_frame(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
			    struct sym_frame *f)
{
	const char *base = mod->realbase ? mod->realbase : mod->fallback_base;
	uint64_t start;
	char buf[512];
	int n;

	f->nosym = 0;
	if (!mod->dm || !sym_fde_find(mod, vaddr, &start))
		return;
	n = snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base, start);
	if (n > 0 && (size_t)n < sizeof(buf))
		f->func = sym_intern(ctx, buf, (size_t)n);
	n = snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base, vaddr);
	if (n > 0 && (size_t)n < sizeof(buf))
		f->file = sym_intern(ctx, buf, (size_t)n);
	f->line = 0;
	f->nosym = 1;
}

/* A symbol's name as shown: demangled, without the symbol-version suffix
 * a full symbol table carries (__libc_start_main@@GLIBC_2.34). */
static const char *sym_pretty(struct sym_ctx *ctx, struct sym_sym *s)
{
	const char *at;

	if (s->pretty)
		return s->pretty;
	at = strchr(s->raw, '@');
	s->pretty = sym_demangle(ctx, at && at > s->raw ? sym_intern(ctx, s->raw, (size_t)(at - s->raw))
						      : s->raw);
	return s->pretty;
}

static const char *sym_symbol_name(struct sym_ctx *ctx, struct sym_module *mod, uint64_t addr)
{
	struct sym_sym *s = (struct sym_sym *)sym_table_find(mod, addr);

	return s ? sym_pretty(ctx, s) : NULL;
}

struct sym_frame *sym_pool_reserve(struct sym_ctx *ctx, size_t n)
{
	if (ctx->npool + n > ctx->cappool) {
		size_t ncap = ctx->cappool ? ctx->cappool * 2 : 4096;
		while (ncap < ctx->npool + n)
			ncap *= 2;
		struct sym_frame *np = util_reallocarray(ctx->pool, ncap, sizeof(*np));
		if (!np)
			return NULL;
		ctx->pool = np;
		ctx->cappool = ncap;
	}
	return &ctx->pool[ctx->npool];
}

/*
 * The name users search for: where DWARF names a C function differently from
 * the ELF symbol that starts at the same address (glibc's __libc_start_main_impl
 * for __libc_start_main, __libc_read for read), the ELF symbol's.  C++ keeps
 * its DWARF name (already demangled and qualified), and so does Fortran, whose
 * symbols are the compiler's (__work_MOD_fib for work::fib, foo_ for foo): its
 * inlined copies, named by DWARF, must read as the same function.
 */
static const char *sym_prefer_elf(struct sym_ctx *ctx, struct sym_module *mod, uint64_t addr,
				  Dwarf_Die *sub, const char *dwarf_name)
{
	struct sym_sym *s;
	Dwarf_Addr low;

	if (!dwarf_name || !mod->dm || sym_dwarf_is_fortran(sub))
		return dwarf_name;
	s = (struct sym_sym *)sym_table_find(mod, addr);
	/* ...and not a compiler clone's (plain_fn.isra.0): the DWARF name is the
	 * function as written. */
	if (!s || !s->raw || !strncmp(s->raw, "_Z", 2) || strchr(dwarf_name, ':') ||
	    strcspn(s->raw, ".") < strcspn(s->raw, "@") ||
	    dwarf_lowpc(sub, &low) != 0 || low + mod->elfbias != s->lo)
		return dwarf_name;
	return sym_pretty(ctx, s);
}

/* Fills out (innermost first) from scopes (outermost first).  The innermost
 * frame executes the pc's own line; each outer frame executes the call site
 * of the frame inside it. */
static int sym_frames_from_scopes(struct sym_ctx *ctx, struct sym_module *mod, uint64_t addr,
				  uint64_t vaddr, Dwarf_Die *scopes, int ns, const char *pfile,
				  uint32_t pline, struct sym_frame *out)
{
	for (int j = ns - 1, k = 0; j >= 0; j--, k++) {
		const struct sym_fninfo *fi = sym_dwarf_fninfo(ctx, mod, &scopes[j]);
		struct sym_frame *f = &out[k];
		f->func = fi ? fi->name : NULL;
		f->nosym = 0;
		if (j == 0)
			f->func = sym_prefer_elf(ctx, mod, addr, &scopes[0], f->func);
		if (!f->func && j == 0)
			f->func = sym_symbol_name(ctx, mod, addr);
		if (!f->func)
			f->func = sym_fallback(ctx, mod, vaddr);
		f->func_file = fi ? fi->decl_file : "";
		f->func_line = fi ? fi->decl_line : 0;
		if (j == ns - 1) {
			f->file = pfile;
			f->line = pline;
		} else {
			sym_dwarf_callsite(ctx, &scopes[j + 1], &f->file, &f->line);
		}
		f->inlined = j > 0;
	}
	return ns;
}

/* Interns a string libdw owns and keeps for the module's lifetime (line-table
 * file names): keyed by its address, so each is hashed only once. */
static const char *sym_intern_ptr(struct sym_ctx *ctx, struct sym_module *mod, const char *s)
{
	uint64_t v;

	if (sym_map_get(&ctx->map, SYM_TAG_STR | mod->idx, (uintptr_t)s, &v))
		return (const char *)(uintptr_t)v;
	const char *r = sym_intern_path(ctx, s);
	sym_map_put(&ctx->map, SYM_TAG_STR | mod->idx, (uintptr_t)s, (uintptr_t)r);
	return r;
}

int sym_label_lines(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		    const char *label, const char **file, uint32_t *lo, uint32_t *hi,
		    uint32_t *last)
{
	const char *f;

	*file = "";
	*lo = *hi = *last = 0;
	if (!mod->opened)
		sym_module_open(ctx, mod);
	sym_module_ready(ctx, mod);
	if (!mod->dm || !mod->has_dwarf ||
	    !sym_dwarf_label_lines(ctx, mod, vaddr + mod->elfbias, label, &f, lo, hi, last))
		return 0;
	*file = sym_intern_ptr(ctx, mod, f);
	return 1;
}

int sym_resolve(struct sym_ctx *ctx, struct sym_module *mod, uint64_t vaddr,
		const struct sym_frame **frames)
{
	static struct sym_frame oom = {"[unknown]", "", 0, "", 0, 0, 0};
	Dwarf_Die scopes[SYM_MAX_DEPTH];
	const char *pfile = "";
	uint32_t pline = 0;
	uint64_t v, addr;
	int ns = 0;

	if (!mod->opened)
		sym_module_open(ctx, mod); /* which reads the module's cache file */
	if (sym_map_get(&ctx->map, SYM_TAG_PC | mod->idx, vaddr, &v)) {
		*frames = &ctx->pool[v >> 8];
		return (int)(v & 0xff);
	}
	sym_module_ready(ctx, mod);
	addr = vaddr + mod->elfbias;
	if (mod->dm && mod->has_dwarf) {
		int line = 0;
		const char *f = sym_dwarf_line(mod, addr, &line);
		if (f) {
			pfile = sym_intern_ptr(ctx, mod, f);
			pline = line > 0 ? (uint32_t)line : 0;
		}
		ns = sym_dwarf_scopes(ctx, mod, addr, scopes, SYM_MAX_DEPTH);
	}
	struct sym_frame *out = sym_pool_reserve(ctx, ns ? (size_t)ns : 1);
	if (!out) {
		oom.func = "[unknown]";
		*frames = &oom;
		return 1;
	}
	if (ns) {
		sym_frames_from_scopes(ctx, mod, addr, vaddr, scopes, ns, pfile, pline, out);
	} else {
		const char *name = mod->dm ? sym_symbol_name(ctx, mod, addr) : NULL;
		out->func = name ? name : sym_fallback(ctx, mod, vaddr);
		out->file = pfile;
		out->line = pline;
		out->func_file = "";
		out->func_line = 0;
		out->inlined = 0;
		out->nosym = 0;
		if (!name && !pline)
			sym_nosym_frame(ctx, mod, vaddr, out);
		ns = 1;
	}
	uint64_t first = ctx->npool;
	ctx->npool += (size_t)ns;
	if (mod->cache_state == 1)
		mod->cache_dirty = 1;
	sym_map_put(&ctx->map, SYM_TAG_PC | mod->idx, vaddr, first << 8 | (uint64_t)ns);
	*frames = &ctx->pool[first];
	return ns;
}
