/*
 * attach_python.c — the CPython 3.11-3.13 interpreter of a process we did
 * not start, read from outside as the agent reads it from inside (docs/
 * agent.md section 17, cbn_pyread.h): the module that exports _PyRuntime
 * (libpython, or the python executable with it linked in; its symbols from
 * libdwfl), Py_Version, the type objects; then each thread's frame chain and
 * each code object's names and line table with process_vm_readv.  Reads
 * never stop the process: a running thread's chain may be torn, and a read
 * that fails ends it.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "attach.h"
#include "load.h"

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
	if (!py->rec) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	return 1;
}

int attach_py_frames(struct attach_py *py, pid_t tid, struct cbn_py_frame *out, int max)
{
	return py->rec ? cbn_py_frames_of(&py->t, py_read, py, (uint32_t)tid, out, max) : 0;
}

size_t attach_py_code(struct attach_py *py, uint32_t id, const struct cbn_py_frame *f, int *gone)
{
	return cbn_py_code_record(&py->t, py_read, py, id, f->code, f->key, py->rec, gone);
}

int attach_py_where(struct attach_py *py, const struct cbn_py_frame *f, const char **qual,
		    const char **file, int *line)
{
	const struct cbn_rec_py_code *r = py->rec;
	int gone = 0, l;

	if (!py->rec || !attach_py_code(py, 0, f, &gone) || gone)
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

void attach_py_free(struct attach_py *py)
{
	free(py->rec);
	py->rec = NULL;
}
