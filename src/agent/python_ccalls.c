/*
 * python_ccalls.c — exact calls of builtins and of methods of C types
 * (--calls, docs/agent.md section 17), counted as cProfile counts them: by
 * method definition (PyMethodDef), primitive unless a call of the same one
 * runs (a builtin that calls back into Python, which calls it again), named
 * as cProfile names them ("{built-in method builtins.len}").  CPython 3.11's
 * profile function reports them (C_CALL, C_RETURN, C_EXCEPTION: the callable,
 * a builtin function object, as its argument), 3.12+'s sys.monitoring with
 * --calls=builtins (CALL, C_RETURN, C_RAISE: every callable and its first
 * argument); python_calls.c passes them on.
 * Everything here runs under the GIL, in normal context, one call at a time.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "floor.h"
#include "python_ccalls.h"
#include "python_counts.h"

/* PyCFunctionObject: the object header, then m_ml, m_self, m_module;
 * PyMethodDescrObject: the header, d_type, d_name, d_qualname, d_method. */
#define CF_ML 16
#define CF_SELF 24
#define CF_MODULE 32
#define OB_TYPE 8
#define DESCR_METHOD 40

typedef struct py_obj py_obj;

static struct {
	py_obj *(*repr)(py_obj *o);
	const char *(*utf8)(py_obj *s);
	py_obj *(*from_string)(const char *s);
	py_obj *(*type_lookup)(void *type, py_obj *name);
	void (*decref)(py_obj *o);
	void (*err_clear)(void);
	void *str_type;
	void *cfunc_type, *cmethod_type, *descr_type; /* 3.12+'s CALL events */
} api;

/* A definition's counts are counted in e: an entry of a block of the
 * session file (CBN_PYCCALLS_TABLE: a process killed by a signal keeps
 * them), else own (written by python_ccalls_flush), which holds its
 * meth and label in any case. */
struct ccount {
	uintptr_t ml;                    /* the PyMethodDef; 0: a free slot */
	struct cbn_py_ccall_count *e;    /* NULL: none yet in this process's file */
	uint32_t depth;                  /* calls of it running now */
	uint32_t pad;
	struct cbn_py_ccall_count own;
};

/* The file's block entries are handed out from, and how many it gave. */
static struct cbn_py_ccall_count *block;
static uint32_t block_used;

/* Open addressing by the PyMethodDef's address; past half full, calls of
 * a new one are not counted. */
#define CC_CAP 8192
static struct ccount *table;

int python_ccalls_init(void *(*sym)(void *mod, const char *name), void *mod)
{
	*(void **)&api.repr = sym(mod, "PyObject_Repr");
	*(void **)&api.utf8 = sym(mod, "PyUnicode_AsUTF8");
	*(void **)&api.from_string = sym(mod, "PyUnicode_FromString");
	*(void **)&api.type_lookup = sym(mod, "_PyType_Lookup");
	*(void **)&api.decref = sym(mod, "Py_DecRef");
	*(void **)&api.err_clear = sym(mod, "PyErr_Clear");
	api.str_type = sym(mod, "PyUnicode_Type");
	api.cfunc_type = sym(mod, "PyCFunction_Type");
	api.cmethod_type = sym(mod, "PyCMethod_Type");
	api.descr_type = sym(mod, "PyMethodDescr_Type");
	if (!api.repr || !api.utf8 || !api.from_string || !api.type_lookup || !api.decref ||
	    !api.err_clear || !api.str_type || !api.cfunc_type || !api.descr_type)
		return -1;
	table = (void *)agent_syscall(SYS_mmap, NULL, CC_CAP * sizeof(*table),
				      PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (table == MAP_FAILED) {
		table = NULL;
		return -1;
	}
	return 0;
}

/* "<...>" of o, copied: 0, or -1 (the error cleared). */
static int repr_of(py_obj *o, char *out, size_t cap)
{
	py_obj *r = api.repr(o);
	const char *s = r ? api.utf8(r) : NULL;

	if (s)
		snprintf(out, cap, "%s", s);
	if (r)
		api.decref(r);
	if (!s)
		api.err_clear();
	return s ? 0 : -1;
}

/* The module's name when m_module is a str, else NULL. */
static const char *module_name(py_obj *fn)
{
	py_obj *m = *(py_obj **)((char *)fn + CF_MODULE);
	const char *s;

	if (!m || *(void **)((char *)m + OB_TYPE) != api.str_type)
		return NULL;
	s = api.utf8(m);
	if (!s)
		api.err_clear();
	return s;
}

/* cProfile's name of the builtin function object fn (_lsprof.c's
 * normalizeUserObj), in pstats' braces: a function bound to no object is
 * "{MODULE.NAME}" ("{NAME}" in builtins); a method, the repr of what its
 * type holds under its name ("{method 'append' of 'list' objects}"), else
 * "{built-in method MODULE.NAME}". */
static void label_of(py_obj *fn, const char *name, char *out, size_t cap)
{
	py_obj *self = *(py_obj **)((char *)fn + CF_SELF), *key, *mo;
	const char *mod = module_name(fn);
	char r[CBN_PY_CLABEL - 1]; /* "<" and ">" become "{" and "}": it fits */
	size_t n;

	if (!self) {
		if (mod && strcmp(mod, "builtins"))
			snprintf(out, cap, "{%s.%s}", mod, name);
		else
			snprintf(out, cap, "{%s}", name);
		return;
	}
	key = api.from_string(name);
	mo = key ? api.type_lookup(*(void **)((char *)self + OB_TYPE), key) : NULL;
	if (key)
		api.decref(key);
	else
		api.err_clear();
	/* _PyType_Lookup's result is borrowed */
	if (mo && repr_of(mo, r, sizeof(r)) == 0 && (n = strlen(r)) >= 2 && r[0] == '<' &&
	    r[n - 1] == '>') {
		r[n - 1] = '\0';
		snprintf(out, cap, "{%s}", r + 1);
	} else if (mod) {
		snprintf(out, cap, "{built-in method %s.%s}", mod, name);
	} else {
		snprintf(out, cap, "{built-in method %s}", name);
	}
}

/* cProfile's name of a method descriptor called with its object (3.12+:
 * cProfile binds it, and names the bound method by the repr of what the
 * object's type holds under its name: the descriptor, most often). */
static void label_of_descr(py_obj *descr, char *out, size_t cap)
{
	char r[CBN_PY_CLABEL - 1]; /* "<" and ">" become "{" and "}": it fits */
	size_t n;

	if (repr_of(descr, r, sizeof(r)) == 0 && (n = strlen(r)) >= 2 && r[0] == '<' &&
	    r[n - 1] == '>') {
		r[n - 1] = '\0';
		snprintf(out, cap, "{%s}", r + 1);
	} else {
		snprintf(out, cap, "{method '%s'}", *(const char *const *)((char *)descr + DESCR_METHOD));
	}
}

/* Where c counts: an entry of the file's table, given c's meth and label,
 * else c's own. */
static struct cbn_py_ccall_count *entry_of(struct ccount *c)
{
	struct cbn_py_ccall_count *e;

	if (!block || block_used == CBN_PY_CCALLS_BATCH) {
		struct cbn_rec_py_ccalls head;
		struct cbn_rec_py_ccalls *r;

		memset(&head, 0, sizeof(head));
		head.h.type = CBN_REC_PY_CCALLS;
		head.h.flags = CBN_PYCCALLS_TABLE;
		head.h.size = (uint32_t)(sizeof(head) + CBN_PY_CCALLS_BATCH * sizeof(head.c[0]));
		head.n = CBN_PY_CCALLS_BATCH;
		r = python_counts_record(&head.h, sizeof(head));
		block = r ? r->c : NULL;
		block_used = 0;
	}
	if (!block)
		return &c->own; /* no room: the next definition tries again */
	e = &block[block_used++];
	e->meth = c->own.meth;
	memcpy(e->label, c->own.label, sizeof(e->label));
	return e;
}

/* The table's entry for the method definition ml (made when make, named
 * from fn, a builtin function object, or descr, a method descriptor), with
 * its entry to count in. */
static struct ccount *slot_of(uintptr_t ml, py_obj *fn, py_obj *descr, int make)
{
	unsigned i = (unsigned)(ml >> 4) * 2654435761u, n;

	if (!table || !ml)
		return NULL;
	for (n = 0; n < CC_CAP; n++, i++) {
		struct ccount *c = &table[i & (CC_CAP - 1)];

		if (c->ml == ml) {
			if (!c->e && make)
				c->e = entry_of(c); /* a fork child's first call */
			return c;           /* a return changes the depth alone */
		}
		if (c->ml)
			continue;
		if (!make || n > CC_CAP / 2)
			break;
		/* PyMethodDef: ml_name, ml_meth, ... */
		c->ml = ml;
		c->own.meth = (uint64_t)((void *const *)ml)[1];
		if (fn)
			label_of(fn, ((const char *const *)ml)[0], c->own.label,
				 sizeof(c->own.label));
		else
			label_of_descr(descr, c->own.label, sizeof(c->own.label));
		c->e = entry_of(c);
		return c;
	}
	return NULL;
}

void python_ccalls_call(py_obj *fn)
{
	struct ccount *c = slot_of(*(uintptr_t *)((char *)fn + CF_ML), fn, NULL, 1);

	if (!c)
		return;
	c->e->calls++;
	if (c->depth++ == 0)
		c->e->primitive++;
}

void python_ccalls_return(py_obj *fn)
{
	struct ccount *c = slot_of(*(uintptr_t *)((char *)fn + CF_ML), fn, NULL, 0);

	/* a return of a call that started before we counted has none */
	if (c && c->depth)
		c->depth--;
}

/* 3.12+: what a CALL, C_RETURN or C_RAISE event names, as cProfile takes
 * it: a builtin function object, or a method descriptor called with an
 * object (self is not missing); any other callable is no C call. */
void python_ccalls_event(py_obj *callable, py_obj *self, py_obj *missing, int call)
{
	void *t = *(void **)((char *)callable + OB_TYPE);
	struct ccount *c;

	if (t == api.cfunc_type || (api.cmethod_type && t == api.cmethod_type))
		c = slot_of(*(uintptr_t *)((char *)callable + CF_ML), callable, NULL, call);
	else if (t == api.descr_type && self != missing)
		c = slot_of(*(uintptr_t *)((char *)callable + DESCR_METHOD), NULL, callable, call);
	else
		return;
	if (!c)
		return;
	if (call) {
		c->e->calls++;
		if (c->depth++ == 0)
			c->e->primitive++;
	} else if (c->depth) {
		c->depth--;
	}
}

static struct {
	struct cbn_rec_py_ccalls r;
	struct cbn_py_ccall_count c[CBN_PY_CCALLS_BATCH];
} batch;

static void emit(void)
{
	if (!batch.r.n)
		return;
	batch.r.h.type = CBN_REC_PY_CCALLS;
	batch.r.h.flags = 0;
	batch.r.h.size = (uint32_t)(sizeof(batch.r) + batch.r.n * sizeof(batch.c[0]));
	agent_event(&batch, batch.r.h.size);
	batch.r.n = 0;
}

void python_ccalls_flush(void)
{
	unsigned i;

	for (i = 0; table && i < CC_CAP; i++) {
		struct ccount *c = &table[i];

		/* the file's entries hold theirs already */
		if (!c->ml || !c->own.calls)
			continue;
		batch.c[batch.r.n++] = c->own;
		c->own.calls = c->own.primitive = 0;
		if (batch.r.n == CBN_PY_CCALLS_BATCH)
			emit();
	}
	emit();
}

/* The file's entries are the parent's, no longer mapped: each definition
 * takes one in the child's file at its next call. */
void python_ccalls_after_fork_child(void)
{
	unsigned i;

	block = NULL;
	for (i = 0; table && i < CC_CAP; i++) {
		table[i].own.calls = table[i].own.primitive = 0;
		table[i].e = NULL;
	}
}
