/*
 * attach_python.c — the CPython 3.11-3.13 interpreter of a process we did
 * not start, read from outside as the agent reads it from inside (docs/
 * agent.md section 17, cbn_pyread.h): the module that exports _PyRuntime
 * (libpython, or the python executable with it linked in; its symbols from
 * libdwfl), Py_Version, the type objects; then each thread's frame chain and
 * each code object's names and line table with process_vm_readv.  Reads
 * never stop the process: a running thread's chain may be torn, and a read
 * that fails ends it.  The list of thread states is read once and kept
 * (attach_py_frames says when it is read again).
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach.h"
#include "cbn_time.h"
#include "load.h"
#include "util.h"

#define PY_THREADS_MAX 4096            /* thread states kept, as cbn_py_frames_of walks */

struct py_syms {
	uintptr_t runtime, version, code, unicode, bytes;
	uint64_t bias;
};

static int py_read(void *ctx, void *dst, uintptr_t src, size_t n)
{
	const struct attach_py *py = ctx;
	struct iovec local = {dst, n}, remote = {(void *)src, n};

	return process_vm_readv(py->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The interpreter's symbols in a module named like python. */
static int py_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		     void *arg)
{
	static const char *const want[] = {"_PyRuntime", "Py_Version", "PyCode_Type",
					   "PyUnicode_Type", "PyBytes_Type"};
	struct py_syms *s = arg;
	uintptr_t *slot[] = {&s->runtime, &s->version, &s->code, &s->unicode, &s->bytes};
	const char *base = name ? strrchr(name, '/') : NULL;
	int n, i, k;

	(void)userdata;
	(void)start;
	if (s->runtime || !base || !strstr(base, "python"))
		return DWARF_CB_OK;
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *sn = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		for (k = 0; sn && k < 5; k++)
			if (!*slot[k] && sym.st_shndx != SHN_UNDEF && strcmp(sn, want[k]) == 0)
				*slot[k] = (uintptr_t)addr;
	}
	if (!s->runtime)
		return DWARF_CB_OK;
	if (!dwfl_module_getelf(mod, &s->bias))
		s->bias = 0;
	return DWARF_CB_ABORT;
}

static char *py_debuginfo_path;
static const Dwfl_Callbacks py_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &py_debuginfo_path,
};

int attach_py_find(pid_t pid, struct attach_py *py, char *why, size_t len)
{
	struct py_syms s = {0};
	Dwfl *d = dwfl_begin(&py_callbacks);

	memset(py, 0, sizeof(*py));
	py->pid = pid;
	if (!d)
		return 0;
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) == 0 && dwfl_report_end(d, NULL, NULL) == 0)
		dwfl_getmodules(d, py_module, &s, 0);
	dwfl_end(d);
	if (!s.runtime)
		return 0; /* not a Python process */
	if (!s.version || py_read(py, &py->version, s.version, sizeof(py->version)) < 0) {
		snprintf(why, len, "CPython before 3.11 is not understood (this cbottleneck reads "
			 "3.11 to 3.13)");
		return -1;
	}
	if (!s.code || !s.unicode || !s.bytes) {
		snprintf(why, len, "PyCode_Type, PyUnicode_Type or PyBytes_Type is not exported");
		return -1;
	}
	py->module_base = s.bias;
	py->t.runtime = s.runtime;
	py->t.code_type = s.code;
	py->t.unicode_type = s.unicode;
	py->t.bytes_type = s.bytes;
	if (cbn_py_layout_of(s.runtime, py->version, py_read, py, &py->t.L, why, len) < 0)
		return -1;
	py->rec = malloc(CBN_PY_REC_MAX);
	py->ts_tid = malloc(PY_THREADS_MAX * sizeof(*py->ts_tid));
	py->ts_addr = malloc(PY_THREADS_MAX * sizeof(*py->ts_addr));
	if (!py->rec || !py->ts_tid || !py->ts_addr) {
		attach_py_free(py);
		snprintf(why, len, "out of memory");
		return -1;
	}
	return 1;
}

static void py_threads_read(struct attach_py *py)
{
	py->nts = cbn_py_threads(&py->t, py_read, py, py->ts_tid, py->ts_addr, PY_THREADS_MAX);
	py->ts_ns = cbn_clock_ns(CLOCK_MONOTONIC);
}

static int py_thread_find(const struct attach_py *py, pid_t tid)
{
	int i;

	for (i = 0; i < py->nts; i++)
		if (py->ts_tid[i] == (uint32_t)tid)
			return i;
	return -1;
}

int attach_py_frames(struct attach_py *py, pid_t tid, struct cbn_py_frame *out, int max)
{
	int i, n = -1;

	if (!py->rec)
		return 0;
	i = py_thread_find(py, tid);
	if (i >= 0)
		n = cbn_py_frames_at(&py->t, py_read, py, py->ts_addr[i], (uint32_t)tid, out, max);
	if (n >= 0)
		return n;
	/* Its state moved, or a thread not seen yet (a new one, or one that
	 * runs no Python: looked for again after a while only). */
	if (i < 0 && py->ts_ns &&
	    cbn_clock_ns(CLOCK_MONOTONIC) - py->ts_ns < ATTACH_PY_REREAD_MS * 1000000ull)
		return 0;
	py_threads_read(py);
	i = py_thread_find(py, tid);
	if (i >= 0)
		n = cbn_py_frames_at(&py->t, py_read, py, py->ts_addr[i], (uint32_t)tid, out, max);
	return n > 0 ? n : 0;
}

size_t attach_py_code(struct attach_py *py, uint32_t id, const struct cbn_py_frame *f, int *gone)
{
	return cbn_py_code_record(&py->t, py_read, py, id, f->code, f->key, py->rec, gone);
}

/* The names of the code objects attach_py_where was asked for, kept by
 * fingerprint: a dump's threads share most of their functions, each read
 * once instead of once a frame. */
struct py_named {
	uint64_t key;
	struct cbn_rec_py_code *rec;     /* a copy of its PY_CODE record */
};
struct attach_py_names {
	struct util_map map;             /* fingerprint -> index into e */
	struct py_named *e;
	size_t n, cap;
};

struct py_named_eq {
	const struct attach_py_names *nm;
	uint64_t key;
};

static int py_named_same(const void *ctx, uint32_t val)
{
	const struct py_named_eq *q = ctx;

	return q->nm->e[val].key == q->key;
}

/* Frame f's code's PY_CODE record, read once and kept; NULL when gone.
 * Without room to keep it, py->rec (valid until the next read). */
static const struct cbn_rec_py_code *py_named(struct attach_py *py, const struct cbn_py_frame *f)
{
	struct attach_py_names *nm = py->names;
	struct py_named_eq q = {nm, f->key};
	struct cbn_rec_py_code *copy;
	uint32_t i;
	size_t size;
	int gone = 0;

	if (nm && (i = util_map_find(&nm->map, f->key, py_named_same, &q)) != UINT32_MAX)
		return nm->e[i].rec;
	size = attach_py_code(py, 0, f, &gone);
	if (!size || gone)
		return NULL;
	if (!nm)
		nm = py->names = calloc(1, sizeof(*nm));
	if (!nm || nm->n >= UINT32_MAX - 1 ||
	    util_grow((void **)&nm->e, &nm->cap, nm->n + 1, sizeof(*nm->e)) < 0 ||
	    !(copy = malloc(size)))
		return py->rec;
	if (util_map_put(&nm->map, f->key, (uint32_t)nm->n) < 0) {
		free(copy);
		return py->rec;
	}
	memcpy(copy, py->rec, size);
	nm->e[nm->n++] = (struct py_named){f->key, copy};
	return copy;
}

int attach_py_where(struct attach_py *py, const struct cbn_py_frame *f, const char **qual,
		    const char **file, int *line)
{
	const struct cbn_rec_py_code *r = py->rec ? py_named(py, f) : NULL;
	int l;

	if (!r)
		return -1;
	*qual = r->data;
	*file = r->data + r->qualname_len + 1;
	*line = r->firstlineno;
	if (f->unit != 0 && f->unit != CBN_PYW_UNIT_UNKNOWN) {
		l = load_python_line((const unsigned char *)r->data + r->qualname_len +
					     r->filename_len + 2,
				     r->linetable_len, r->firstlineno, f->unit - 1);
		if (l > 0)
			*line = l;
	}
	return 0;
}

static void py_names_free(struct attach_py_names *nm)
{
	size_t i;

	if (!nm)
		return;
	for (i = 0; i < nm->n; i++)
		free(nm->e[i].rec);
	free(nm->e);
	util_map_free(&nm->map);
	free(nm);
}

void attach_py_free(struct attach_py *py)
{
	free(py->rec);
	free(py->ts_tid);
	free(py->ts_addr);
	py->rec = NULL;
	py->ts_tid = NULL;
	py->ts_addr = NULL;
	py->nts = 0;
	py_names_free(py->names);
	py->names = NULL;
}
