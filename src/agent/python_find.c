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

#include "env.h"
#include "floor.h"
#include "python_find.h"
#include "python_table.h"

_Atomic(const struct py_info *) python_info;

/* SIGNAL-SAFE: cbn_pyread.h's read function in this process (agent_vmread:
 * reads that fail instead of faulting). */
int python_read(void *ctx, void *dst, uintptr_t src, size_t n)
{
	(void)ctx;
	return agent_vmread(dst, src, n);
}

static int py_mode = 1;                 /* CBN_PYTHON: 0 off */
static int py_depth_set;                /* CBN_DEPTH given: it caps Python stacks too */
static int py_seen;                     /* an interpreter was looked at (first one wins) */
static struct py_info py_found;         /* what python_info points to */

void python_config(void)
{
	const char *q = agent_getenv(CBN_ENV_PYTHON), *d = agent_getenv(CBN_ENV_DEPTH);

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
	h->python.runtime = py_found.t.runtime;
	h->python_code_type = py_found.t.code_type;
	h->python_unicode_type = py_found.t.unicode_type;
	h->python_bytes_type = py_found.t.bytes_type;
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
	py_found.t.runtime = runtime;
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
	py_found.t.code_type = dyn_addr(info, &d, "PyCode_Type");
	py_found.t.unicode_type = dyn_addr(info, &d, "PyUnicode_Type");
	py_found.t.bytes_type = dyn_addr(info, &d, "PyBytes_Type");
	if (!py_found.t.code_type || !py_found.t.unicode_type || !py_found.t.bytes_type) {
		py_header(CBN_PY_REFUSED, version, "PyCode_Type, PyUnicode_Type or PyBytes_Type "
			  "is not exported");
		return;
	}
	if (cbn_py_layout_of(runtime, version, python_read, NULL, &py_found.t.L, why, sizeof(why)) <
	    0) {
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


