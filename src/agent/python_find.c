/*
 * python_find.c — finding the CPython interpreter of this image and the layout
 * of what the agent reads in it (docs/agent.md section 17): at each module
 * scan, a module that exports _PyRuntime is the interpreter (libpython, or
 * the python executable with it linked in); Py_Version gives its version; the
 * offsets come from a built-in table (3.11, 3.12) or from _Py_DebugOffsets,
 * the block CPython 3.13 keeps at the start of _PyRuntime for out-of-process
 * tools.  The result is published once (python_info) and told in the header
 * (header.python).  Normal context only; the symbols are read from the
 * module's own dynamic symbol table in memory (no dlsym: a libpython a host
 * dlopened RTLD_LOCAL is not in the global scope).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "python.h"

_Atomic(const struct py_info *) python_info;

static int py_mode = 1;                 /* CBN_PYTHON: 0 off */
static int py_depth_set;                /* CBN_DEPTH given: it caps Python stacks too */
static int py_seen;                     /* an interpreter was looked at (first one wins) */
static struct py_info py_found;         /* what python_info points to */

void python_config(void)
{
	const char *q = getenv(CBN_ENV_PYTHON), *d = getenv(CBN_ENV_DEPTH);

	py_mode = !(q && q[0] == '0' && q[1] == '\0');
	py_depth_set = d && *d;
}

int python_depth(int depth)
{
	if (!atomic_load_explicit(&python_info, memory_order_acquire) || py_depth_set)
		return depth;
	return CBN_MAX_FRAMES;
}

/* --- the module's dynamic symbols ------------------------------------------ */

struct dynsyms {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint32_t *sysv_hash;
};

static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	/* glibc relocates these entries in place on x86-64; other loaders, and
	 * ld.so's own, leave them as link-time addresses. */
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static int dyn_open(const struct dl_phdr_info *info, struct dynsyms *d)
{
	const ElfW(Dyn) *dyn = NULL;
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			d->gnu_hash = (const uint32_t *)dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		case DT_HASH:
			d->sysv_hash = (const uint32_t *)dyn_ptr(info, dyn->d_un.d_ptr);
			break;
		}
	}
	return d->symtab && d->strtab && (d->gnu_hash || d->sysv_hash) ? 0 : -1;
}

static const ElfW(Sym) *dyn_match(const struct dynsyms *d, uint32_t i, const char *name)
{
	const ElfW(Sym) *s = &d->symtab[i];

	if (s->st_shndx == SHN_UNDEF || !s->st_value || strcmp(d->strtab + s->st_name, name))
		return NULL;
	return s;
}

/* The defined symbol name, through the GNU hash table (or the SysV one). */
static const ElfW(Sym) *dyn_lookup(const struct dynsyms *d, const char *name)
{
	const unsigned char *c;
	const ElfW(Sym) *s;

	if (d->gnu_hash) {
		uint32_t nbuckets = d->gnu_hash[0], symoffset = d->gnu_hash[1];
		uint32_t bloom = d->gnu_hash[2], h = 5381, i;
		const uint32_t *buckets =
			d->gnu_hash + 4 + bloom * (sizeof(ElfW(Addr)) / sizeof(uint32_t));
		const uint32_t *chain = buckets + nbuckets;

		for (c = (const unsigned char *)name; *c; c++)
			h = h * 33 + *c;
		if (!nbuckets)
			return NULL;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t hv = chain[i - symoffset];

			if ((hv | 1) == (h | 1) && (s = dyn_match(d, i, name)))
				return s;
			if (hv & 1)
				return NULL;
		}
	}
	{
		uint32_t nbucket = d->sysv_hash[0], h = 0, g, i;
		const uint32_t *bucket = d->sysv_hash + 2, *chain = bucket + nbucket;

		for (c = (const unsigned char *)name; *c; c++) {
			h = (h << 4) + *c;
			g = h & 0xf0000000u;
			if (g)
				h ^= g >> 24;
			h &= ~g;
		}
		if (!nbucket)
			return NULL;
		for (i = bucket[h % nbucket]; i; i = chain[i])
			if ((s = dyn_match(d, i, name)))
				return s;
	}
	return NULL;
}

static uintptr_t dyn_addr(const struct dl_phdr_info *info, const struct dynsyms *d,
			  const char *name)
{
	const ElfW(Sym) *s = dyn_lookup(d, name);

	return s ? info->dlpi_addr + s->st_value : 0;
}

/* --- layouts ------------------------------------------------------------------ */

/* Printed with offsetof() against each version's internal headers
 * (Py_BUILD_CORE), x86-64; the same in 3.11.2 (Debian) and 3.11.7. */
static const struct py_layout py_311 = {
	.rt_tss = 592, .rt_finalizing = 24, .rt_interp_head = 40, .is_threads_head = 16,
	.ts_next = 8, .ts_native_tid = 160, .ts_datastack = 296, .ts_cframe = 56, .cf_current = 8,
	.fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69, .fr_size = 72,
	.fr_is_entry = 68, .owner_marker = 256, .instr_prev = 1,
	.ob_type = 8, .ob_size = 16, .co_consts = 24, .co_names = 32, .co_flags = 48,
	.co_firstlineno = 72, .co_filename = 112,
	.co_name = 120, .co_qualname = 128, .co_linetable = 136, .co_code = 184, .co_header = 184,
	.uni_length = 16, .uni_state = 32, .uni_ascii_size = 48, .uni_compact_size = 72,
	.bytes_size = 16, .bytes_sval = 32,
};

static const struct py_layout py_312 = {
	.rt_tss = 1544, .rt_finalizing = 24, .rt_interp_head = 40, .is_threads_head = 72,
	.ts_next = 8, .ts_native_tid = 144, .ts_datastack = 232, .ts_cframe = 56, .cf_current = 0,
	.fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70, .fr_size = 72,
	.fr_is_entry = -1, .owner_marker = 3, .instr_prev = 1,
	.ob_type = 8, .ob_size = 16, .co_consts = 24, .co_names = 32, .co_flags = 48,
	.co_firstlineno = 68, .co_filename = 112,
	.co_name = 120, .co_qualname = 128, .co_linetable = 136, .co_code = 192, .co_header = 192,
	.uni_length = 16, .uni_state = 32, .uni_ascii_size = 40, .uni_compact_size = 56,
	.bytes_size = 16, .bytes_sval = 32,
};

/* The 3.13 _Py_DebugOffsets fields used, by their place in that struct
 * (Include/internal/pycore_runtime.h of 3.13: stable across its patch
 * releases only). */
enum {
	DO_VERSION = 8, DO_FREE_THREADED = 16, DO_RT_FINALIZING = 32, DO_RT_INTERP_HEAD = 40,
	DO_IS_THREADS_HEAD = 72, DO_TS_NEXT = 168, DO_TS_CURRENT_FRAME = 184,
	DO_TS_NATIVE_TID = 200, DO_TS_DATASTACK = 208, DO_FR_PREVIOUS = 232,
	DO_FR_EXECUTABLE = 240, DO_FR_INSTR_PTR = 248, DO_FR_LOCALSPLUS = 256, DO_FR_OWNER = 264,
	DO_CO_FILENAME = 280, DO_CO_NAME = 288, DO_CO_QUALNAME = 296, DO_CO_LINETABLE = 304,
	DO_CO_FIRSTLINENO = 312, DO_CO_CODE = 344, DO_OB_TYPE = 360, DO_BYTES_SIZE = 520,
	DO_BYTES_SVAL = 528, DO_UNI_STATE = 544, DO_UNI_LENGTH = 552, DO_UNI_ASCII_SIZE = 560,
	DO_END = 584,
};

static int do_u32(const unsigned char *d, int at, uint32_t *out)
{
	uint64_t v;

	memcpy(&v, d + at, 8);
	if (v > 65536)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* 3.13: the layout from _Py_DebugOffsets, checked (cookie, version, not
 * free-threaded), with what it does not hold from the headers. */
static int py_layout_313(uintptr_t runtime, uint32_t version, struct py_layout *L, char *why,
			 size_t len)
{
	const unsigned char *d = (const unsigned char *)runtime;
	uint64_t v, ft;
	int bad = 0;

	if (memcmp(d, "xdebugpy", 8) != 0) {
		snprintf(why, len, "no _Py_DebugOffsets at _PyRuntime");
		return -1;
	}
	memcpy(&v, d + DO_VERSION, 8);
	memcpy(&ft, d + DO_FREE_THREADED, 8);
	if (v != version) {
		snprintf(why, len, "_Py_DebugOffsets says version 0x%llx, Py_Version 0x%x",
			 (unsigned long long)v, version);
		return -1;
	}
	if (ft) {
		snprintf(why, len, "a free-threaded build (not read yet)");
		return -1;
	}
	memset(L, 0, sizeof(*L));
	bad |= do_u32(d, DO_RT_FINALIZING, &L->rt_finalizing);
	bad |= do_u32(d, DO_RT_INTERP_HEAD, &L->rt_interp_head);
	bad |= do_u32(d, DO_IS_THREADS_HEAD, &L->is_threads_head);
	bad |= do_u32(d, DO_TS_NEXT, &L->ts_next);
	bad |= do_u32(d, DO_TS_CURRENT_FRAME, &L->cf_current);
	bad |= do_u32(d, DO_TS_NATIVE_TID, &L->ts_native_tid);
	bad |= do_u32(d, DO_TS_DATASTACK, &L->ts_datastack);
	bad |= do_u32(d, DO_FR_PREVIOUS, &L->fr_previous);
	bad |= do_u32(d, DO_FR_EXECUTABLE, &L->fr_code);
	bad |= do_u32(d, DO_FR_INSTR_PTR, &L->fr_instr);
	bad |= do_u32(d, DO_FR_LOCALSPLUS, &L->fr_size);
	bad |= do_u32(d, DO_FR_OWNER, &L->fr_owner);
	bad |= do_u32(d, DO_CO_FILENAME, &L->co_filename);
	bad |= do_u32(d, DO_CO_NAME, &L->co_name);
	bad |= do_u32(d, DO_CO_QUALNAME, &L->co_qualname);
	bad |= do_u32(d, DO_CO_LINETABLE, &L->co_linetable);
	bad |= do_u32(d, DO_CO_FIRSTLINENO, &L->co_firstlineno);
	bad |= do_u32(d, DO_CO_CODE, &L->co_code);
	bad |= do_u32(d, DO_OB_TYPE, &L->ob_type);
	bad |= do_u32(d, DO_BYTES_SIZE, &L->bytes_size);
	bad |= do_u32(d, DO_BYTES_SVAL, &L->bytes_sval);
	bad |= do_u32(d, DO_UNI_STATE, &L->uni_state);
	bad |= do_u32(d, DO_UNI_LENGTH, &L->uni_length);
	bad |= do_u32(d, DO_UNI_ASCII_SIZE, &L->uni_ascii_size);
	if (bad || L->co_code < 64 || L->co_code > 1024 || L->fr_size < L->fr_owner + 1) {
		snprintf(why, len, "_Py_DebugOffsets holds offsets out of range");
		return -1;
	}
	/* Not in _Py_DebugOffsets; from 3.13.0's headers. */
	L->rt_tss = 2160;          /* _PyRuntime.autoTSSkey */
	L->ts_cframe = -1;         /* tstate->current_frame directly */
	L->fr_is_entry = -1;
	L->owner_marker = 3;       /* FRAME_OWNED_BY_CSTACK */
	L->instr_prev = 0;         /* instr_ptr: the instruction executing */
	L->ob_size = 16;
	L->co_consts = 24;
	L->co_names = 32;
	L->co_flags = 48;
	L->co_header = L->co_code;
	L->uni_compact_size = L->uni_ascii_size + 16; /* utf8_length, utf8 */
	return 0;
}

/* The layout of version (PY_VERSION_HEX), or -1 with why. */
static int py_layout_of(uintptr_t runtime, uint32_t version, struct py_layout *L, char *why,
			size_t len)
{
	uint32_t major = version >> 24, minor = (version >> 16) & 0xff, micro = (version >> 8) & 0xff;

	if (major == 3 && minor == 11) {
		*L = py_311;
	} else if (major == 3 && minor == 12) {
		*L = py_312;
	} else if (major == 3 && minor == 13) {
		if (py_layout_313(runtime, version, L, why, len) < 0)
			return -1;
	} else {
		snprintf(why, len, "CPython %u.%u.%u is not understood (this cbottleneck reads "
			 "3.11 to 3.13)", major, minor, micro);
		return -1;
	}
	L->version = version;
	return 0;
}

/* --- publishing ------------------------------------------------------------ */

static uint32_t py_state, py_version;   /* what the header says (a fork child's too) */
static char py_why[120];

/* header.python from what was found (again in a fork child's new file). */
void python_header_write(void)
{
	struct cbn_file_header *h = agent.w.hdr;

	if (!h || !py_seen)
		return;
	h->python.version = py_version;
	h->python.module_base = py_found.module_base;
	h->python.runtime = py_found.runtime;
	snprintf(h->python.reason, sizeof(h->python.reason), "%s", py_why);
	h->python.reason_len = (uint32_t)strlen(h->python.reason);
	if (py_state == CBN_PY_ON && !py_depth_set)
		h->max_depth = CBN_MAX_FRAMES; /* python_depth */
	atomic_store(&h->python.state, py_state);
}

static void py_header(uint32_t state, uint32_t version, const char *why)
{
	py_state = state;
	py_version = version;
	snprintf(py_why, sizeof(py_why), "%s", why ? why : "");
	python_header_write();
}

/*
 * One module of a scan.  The first module that exports _PyRuntime is this
 * image's interpreter (the executable comes first, and with it libpython
 * linked in, a libpython of an extension that links it is never the one
 * running); a second one is not read.
 */
void python_module(const struct dl_phdr_info *info, const char *path)
{
	struct dynsyms d;
	uintptr_t runtime, vers;
	uint32_t version = 0;
	char why[120];

	(void)path;
	if (py_seen || dyn_open(info, &d) < 0)
		return;
	runtime = dyn_addr(info, &d, "_PyRuntime");
	if (!runtime)
		return;
	py_seen = 1;
	py_found.runtime = runtime;
	py_found.module_base = info->dlpi_addr;
	vers = dyn_addr(info, &d, "Py_Version");
	if (!vers) {
		py_header(CBN_PY_REFUSED, 0, "CPython before 3.11 is not understood (this "
			  "cbottleneck reads 3.11 to 3.13)");
		return;
	}
	memcpy(&version, (const void *)vers, sizeof(version)); /* unsigned long, little-endian */
	if (!py_mode) {
		py_header(CBN_PY_OFF, version, "--python off");
		return;
	}
	py_found.code_type = dyn_addr(info, &d, "PyCode_Type");
	py_found.unicode_type = dyn_addr(info, &d, "PyUnicode_Type");
	py_found.bytes_type = dyn_addr(info, &d, "PyBytes_Type");
	if (!py_found.code_type || !py_found.unicode_type || !py_found.bytes_type) {
		py_header(CBN_PY_REFUSED, version, "PyCode_Type, PyUnicode_Type or PyBytes_Type "
			  "is not exported");
		return;
	}
	if (py_layout_of(runtime, version, &py_found.L, why, sizeof(why)) < 0) {
		py_header(CBN_PY_REFUSED, version, why);
		return;
	}
	if (python_table_init() < 0) {
		py_header(CBN_PY_REFUSED, version, "no memory for the code-object table");
		return;
	}
	py_header(CBN_PY_ON, version, NULL);
	atomic_store_explicit(&python_info, &py_found, memory_order_release);
}


