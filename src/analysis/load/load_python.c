/*
 * load_python.c — Python frames in the profile (docs/agent.md section 17):
 * the PY_CODE records of a file (names and line tables of code objects), and
 * stacks whose pcs end with CBN_PYW words turned into ordinary frames, each
 * Python function a prof_func "file.py:FIRSTLINE(qualname)" with the line
 * executing, standing where the _PyEval_EvalFrameDefault activation that ran
 * it stands in the native stack.  With --python on (the default) the
 * interpreter's own frames (the evaluation loop, call glue, code without a
 * symbol in the interpreter's module) are folded into the Python frame that
 * was running; --python native keeps them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_int.h"

void load_python_header(struct load *L, struct prof_process *pr, const struct cbn_file_header *h)
{
	struct prof_python_proc *py = &pr->python;

	py->state = h->python.state;
	py->version = h->python.version;
	py->module_base = h->python.module_base;
	py->stacks = h->python.stacks;
	py->frames = h->python.frames;
	py->truncated = h->python.truncated;
	memcpy(py->unread, (const void *)h->python.unread, sizeof(py->unread));
	py->codes = h->python.codes;
	py->codes_gone = h->python.codes_gone;
	py->table_full = h->python.table_full;
	py->reason = load_strndup(L, h->python.reason,
					strnlen(h->python.reason, sizeof(h->python.reason)));
}

void load_python_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_py_code *c = (const void *)r->raw;
	struct load_file *F = L->f;
	struct load_pycode *pc;

	if (!c->id || c->id > CBN_PY_CODES_MAX)
		return;
	if (c->id >= F->npycodes) {
		size_t old = F->npycodes;

		if (load_grow(L, (void **)&F->pycodes, &F->cappycodes, c->id,
			      sizeof(*F->pycodes)) < 0)
			return;
		memset(F->pycodes + old, 0, (F->cappycodes - old) * sizeof(*F->pycodes));
		F->npycodes = c->id + 1;
	}
	pc = &F->pycodes[c->id];
	pc->rec = c;
	pc->lt = (const unsigned char *)r->str2 + r->str2_len + 1;
	pc->func = PROF_NONE;
	/* 3.12's trampoline code object (file "<shim>") and 3.13's
	 * _Py_InitCleanup (name and file "__init__") run between a call and
	 * the frame it makes: interpreter glue, not the program's */
	pc->shim = !(c->h.flags & CBN_PYC_GONE) &&
		   (!strcmp(r->str2, "<shim>") ||
		    (!strcmp(r->str, "__init__") && !strcmp(r->str2, "__init__")));
}

/* PY_CALLS: kept (in the file's buffer) until the file's codes are all
 * known (load_python_finish); a record without entries only says the
 * state. */
void load_python_calls_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_py_calls *c = (const void *)r->raw;
	struct load_file *F = L->f;
	struct prof_python_proc *py = &L->p->processes[F->proc].python;

	py->calls_state = c->state;
	py->calls_flags |= c->h.flags;
	if (c->n) {
		const struct cbn_rec_py_calls **slot =
			LOAD_PUSH(L, F->pycalls, F->npycalls, F->cappycalls);

		if (slot)
			*slot = c;
	}
}

/* PY_CCALLS: kept like PY_CALLS, until the file's modules are all known. */
void load_python_ccalls_rec(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_py_ccalls *c = (const void *)r->raw;
	struct load_file *F = L->f;

	if (c->n) {
		const struct cbn_rec_py_ccalls **slot =
			LOAD_PUSH(L, F->pyccalls, F->npyccalls, F->cappyccalls);

		if (slot)
			*slot = c;
	}
}

int load_python_has(struct load *L, const uint64_t *pcs, uint32_t n)
{
	uint32_t i;

	if (!L->f->py_on || L->python_off)
		return 0;
	for (i = n; i-- > 0;)
		if (CBN_PYW_IS(pcs[i]))
			return 1;
	return 0;
}

/* --- line tables ------------------------------------------------------------ */

static int lt_varint(const unsigned char *lt, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v, shift = 0;
	unsigned char b;

	if (*i >= len)
		return -1;
	b = lt[(*i)++];
	v = b & 63;
	while (b & 64) {
		if (*i >= len || shift > 24)
			return -1;
		b = lt[(*i)++];
		shift += 6;
		v |= (uint32_t)(b & 63) << shift;
	}
	*out = v;
	return 0;
}

static int lt_svarint(const unsigned char *lt, size_t len, size_t *i, int *out)
{
	uint32_t v;

	if (lt_varint(lt, len, i, &v) < 0)
		return -1;
	*out = (v & 1) ? -(int)(v >> 1) : (int)(v >> 1);
	return 0;
}

/* CPython's Objects/locations.md (3.11 to 3.13): entries of 1 to 8 code
 * units, the first byte 1CCCCLLL (code, length - 1), the line a running sum of
 * the entries' deltas from co_firstlineno; code 15 has no location. */
int load_python_line(const unsigned char *lt, size_t len, int firstlineno, uint32_t u)
{
	size_t i = 0;
	uint32_t at = 0, skip;
	int line = firstlineno;

	while (i < len) {
		unsigned char b = lt[i++];
		uint32_t code = (b >> 3) & 15, n = (b & 7) + 1;
		int delta = 0, noloc = 0;

		if (!(b & 0x80))
			return -1;
		if (code == 15) {
			noloc = 1;
		} else if (code == 14) { /* long: line delta, end line, column, end column */
			if (lt_svarint(lt, len, &i, &delta) < 0 || lt_varint(lt, len, &i, &skip) < 0 ||
			    lt_varint(lt, len, &i, &skip) < 0 || lt_varint(lt, len, &i, &skip) < 0)
				return -1;
		} else if (code == 13) { /* no column */
			if (lt_svarint(lt, len, &i, &delta) < 0)
				return -1;
		} else if (code >= 10) { /* one line: delta 0..2, two column bytes */
			delta = (int)code - 10;
			i += 2;
		} else { /* short: same line, one column byte */
			i += 1;
		}
		line += delta;
		if (u < at + n)
			return noloc ? -1 : line;
		at += n;
	}
	return -1;
}

/* --- frames ------------------------------------------------------------------ */

static size_t py_base_len(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? (size_t)(s + 1 - path) : 0;
}

struct py_native {
	uint64_t pc, addr;                /* addr: where it is looked up (pc, or pc - 1) */
	uint32_t key;                    /* symbol key, PROF_NONE */
	int eval;                        /* a _PyEval_EvalFrameDefault frame */
	int internal;                    /* the interpreter's own: folded (-1 while undecided) */
	int ours;                        /* cbottleneck's own: never shown */
	int act;                         /* the activation it runs, -1 */
	int vcall;                       /* VC_*: a step of a vectorcall (py_hook_dispatch) */
};

enum { VC_NONE, VC_OBJECT, VC_FUNCTION };

struct py_act {
	uint32_t first, n;               /* words [first, first + n) of the Python part */
};

/* The prof_func of a Python frame (interned once per code object);
 * PROF_NONE when memory ran short. */
static uint32_t py_func(struct load *L, struct load_pycode *c, const char **file)
{
	if (!c || !c->rec || (c->rec->h.flags & CBN_PYC_GONE)) {
		if (L->pyunknown_func == PROF_NONE) {
			L->pyunknown_func = intern_func(L, "[unknown Python function]", "", 0, "");
			if (L->pyunknown_func != PROF_NONE)
				L->p->funcs[L->pyunknown_func].flags |= PROF_FUNC_PYTHON;
		}
		*file = "";
		return L->pyunknown_func;
	}
	if (c->func == PROF_NONE) {
		const char *q = c->rec->data, *fn = q + c->rec->qualname_len + 1;

		c->func = intern_func(L, q, fn, (uint32_t)(c->rec->firstlineno > 0 ? c->rec->firstlineno
										   : 0), "");
		if (c->func == PROF_NONE) {
			*file = "";
			return PROF_NONE;
		}
		L->p->funcs[c->func].flags |= PROF_FUNC_PYTHON;
		c->file = L->p->funcs[c->func].file;
	}
	*file = c->file;
	return c->func;
}

/* Under --calls, the interpreter's code that calls our counting callback
 * (sys.monitoring's dispatch, 3.12+; the profile function's, 3.11): its
 * time is ours, as the callback's is, never the program's (a program that
 * registers a tool of its own shares that dispatch with us). */
static int py_calls_dispatch(const char *name)
{
	return !strncmp(name, "_Py_call_instrumentation", 24) ||
	       !strncmp(name, "call_instrumentation_vector", 27) ||
	       !strncmp(name, "call_trace", 10);
}

/* The interpreter's function name's step of a call by vectorcall: the
 * generic entry (PyObject_Vectorcall, its inline _PyObject_VectorcallTstate
 * where a build keeps it a function) or a Python function's
 * (_PyFunction_Vectorcall, or _PyEval_Vector where the first calls it by a
 * tail call, as pyenv's builds do). */
static int py_vcall_kind(const char *name)
{
	if (!strcmp(name, "_PyFunction_Vectorcall") || !strcmp(name, "_PyEval_Vector"))
		return VC_FUNCTION;
	if (!strcmp(name, "PyObject_Vectorcall") || !strcmp(name, "_PyObject_VectorcallTstate"))
		return VC_OBJECT;
	return VC_NONE;
}

/*
 * Under --calls on 3.11 (the frame evaluation function, not =builtins'
 * profile function, and not replaced by the program's own): whether the
 * sample is in the call dispatch that the hook alone makes.  With a frame
 * evaluation function set, 3.11 evaluates a Python function called from
 * Python through PyObject_Vectorcall, _PyFunction_Vectorcall, _PyEval_Vector
 * and a new activation of the evaluation loop (docs/performance.md, "Exact
 * Python call counts"), where it plainly pushes the frame inside the
 * caller's loop.  So a sample whose leaf part, under the innermost running
 * Python frame's loop, is _PyFunction_Vectorcall (or _PyEval_Vector) called
 * straight from that loop (PyObject_Vectorcall between them or not), with
 * whatever that calls, is the counting's cost, as sys.monitoring's dispatch
 * is on 3.12+.  A Python function called from C code (sorted's key, a
 * callback) has that C code in between and stays the program's.  Not exact
 * either way: the frame's push, the caller's plainly, goes out with the
 * rest, and the new activation's own start and end, in the callee's frame,
 * stay (docs/performance.md).  nat[0..nn) leaf first, paired with
 * activations.
 */
static int py_hook_dispatch(const struct load *L, const struct py_native *nat, uint32_t nn)
{
	const struct prof_python_proc *py = &L->p->processes[L->f->proc].python;
	uint32_t k, j;

	if (py->calls_state != CBN_PYCALLS_ON || (py->version >> 16) != 0x030b ||
	    (py->calls_flags & (CBN_PYCALLS_BUILTINS | CBN_PYCALLS_REPLACED)))
		return 0;
	for (k = 0; k < nn && nat[k].act < 0; k++)
		;
	if (k == nn || !nat[k].eval)
		return 0;
	for (j = k; j-- > 0 && nat[j].vcall == VC_OBJECT;)
		;
	return j < k && nat[j].vcall == VC_FUNCTION;
}

/*
 * Under --calls on 3.12+: whether the sample's leaf is the evaluation loop's
 * code of an instruction that the counting's events put in place of the
 * plain one: INSTRUMENTED_RESUME for PY_START, and with builtins the
 * INSTRUMENTED_CALL family for CALL.  That code calls the event's dispatch
 * (ours already, py_calls_dispatch) and does what the plain instruction
 * does, or jumps to it (CALL's own code runs after it as in a plain run), so
 * its samples are the counting's cost, but for the case's last line of
 * code: its jump to the next instruction's code, which the plain instruction
 * makes too (half or more of the plain RESUME's cost), stays the program's.
 * RESUME's own few checks, repeated in the instrumented case, go out with it.
 * Plainly a sample there is a program's sample in the called function, at
 * its first line: that is where the events moved the function's share
 * (docs/performance.md, "Exact Python call counts").  The cases are told by
 * the interpreter's DWARF, from their TARGET_ label to the next label; an
 * interpreter without it keeps those samples the program's.
 * leaf: the interrupted pc's frame, in the interpreter's module.
 */
static int py_instrumented(struct load *L, const struct py_native *leaf)
{
	static const char *const cases[] = {
		"TARGET_INSTRUMENTED_RESUME", "TARGET_INSTRUMENTED_CALL",
		"TARGET_INSTRUMENTED_CALL_KW", "TARGET_INSTRUMENTED_CALL_FUNCTION_EX",
	};
	struct load_file *F = L->f;
	const struct prof_python_proc *py = &L->p->processes[F->proc].python;
	const struct load_symkey *sk;
	const struct load_frame *fn;
	int k, ncases;

	if (!leaf->eval || leaf->key == PROF_NONE || py->calls_state != CBN_PYCALLS_ON ||
	    (py->version >> 16) < 0x030c)
		return 0;
	sk = &L->symkeys[leaf->key];
	if (!F->npycases) {
		int n = 0;

		for (k = 0; k < 4; k++) {
			uint32_t hi;

			if (sym_label_lines(L->sym, sk->mod, sk->vaddr, cases[k],
					    &F->pycase_file[n], &F->pycase_lo[n], &hi,
					    &F->pycase_end[n]))
				n++;
			if (!(py->calls_flags & CBN_PYCALLS_BUILTINS))
				break; /* CALL is instrumented with builtins only */
		}
		F->npycases = n ? n : -1;
	}
	fn = &L->rframes[sk->first + sk->n - 1];
	ncases = F->npycases;
	for (k = 0; k < ncases; k++)
		if (fn->line >= F->pycase_lo[k] && fn->line < F->pycase_end[k] && fn->file &&
		    !strcmp(fn->file, F->pycase_file[k]))
			return 1;
	return 0;
}

/* Push the frames of Python words [first, first + n), leaf first. */
static void py_push(struct load *L, const uint64_t *w, uint32_t first, uint32_t n)
{
	struct load_file *F = L->f;
	struct profile *p = L->p;
	uint32_t i;

	for (i = first; i < first + n; i++) {
		uint32_t id = CBN_PYW_CODE(w[i]), unit = CBN_PYW_UNIT(w[i]);
		struct load_pycode *c = id < F->npycodes && F->pycodes[id].rec ? &F->pycodes[id] : NULL;
		struct prof_frame *f;
		const char *file;
		int line = 0;

		if (c && c->shim)
			continue;
		if (!c)
			p->processes[F->proc].python.codes_missing++;
		f = LOAD_PUSH(L, p->frames, p->nframes, L->capframes);
		if (!f)
			return;
		f->func = py_func(L, c, &file);
		if (c && !(c->rec->h.flags & CBN_PYC_GONE)) {
			line = c->rec->firstlineno;
			if (unit != 0 && unit != CBN_PYW_UNIT_UNKNOWN) {
				int l = load_python_line(c->lt, c->rec->linetable_len,
							 c->rec->firstlineno, unit - 1);
				if (l > 0)
					line = l;
			}
		}
		f->line = line > 0 ? (uint32_t)line : 0;
		f->file = file;
		f->inlined = 0;
		f->addr = w[i];
	}
}

/*
 * Raw pcs whose last words are Python frames: interleave.  The Python words
 * split into activations of the evaluation loop (each ends at an ENTRY word);
 * the native frames in the interpreter's module named
 * _PyEval_EvalFrameDefault are those activations' C frames.  Paired from the
 * root (a frame being pushed or popped at the leaf shows an evaluation frame
 * without its Python frame: it simply gets none), unless the Python chain was
 * cut or the native stack has fewer evaluation frames than activations (it
 * was cut at the depth cap, or unwinding stopped early): then from the leaf,
 * and the activations left over stand at the root end.
 */
int load_python_frames(struct load *L, const uint64_t *pcs, uint32_t n, uint64_t ts, int ret_all)
{
	struct load_file *F = L->f;
	struct py_native nat[CBN_MAX_FRAMES];
	struct py_act acts[CBN_MAX_FRAMES];
	uint64_t w[CBN_MAX_FRAMES];
	uint32_t nn = 0, nw = 0, na = 0, ne = 0, i, start = 0;
	int e, a, leaf_first, any_py = 0, owner = 1, callee_neutral = 0;
	int counted = L->p->processes[F->proc].python.calls_state == CBN_PYCALLS_ON;
	const char *callee = NULL;

	if (n > CBN_MAX_FRAMES)
		n = CBN_MAX_FRAMES;
	for (i = 0; i < n; i++) {
		struct load_mod *m = NULL;
		uint64_t addr;

		if (CBN_PYW_IS(pcs[i])) {
			w[nw++] = pcs[i];
			continue;
		}
		addr = (nn == 0 && !ret_all) ? pcs[i] : pcs[i] - 1;
		nat[nn].pc = pcs[i];
		nat[nn].addr = addr;
		nat[nn].key = pcs[i] ? load_resolve(L, addr, ts, &m) : PROF_NONE;
		nat[nn].eval = nat[nn].internal = 0;
		nat[nn].vcall = VC_NONE;
		nat[nn].act = -1;
		nat[nn].ours = m && m->ours;
		/* whose stack (load_frame.c, load_frame_owner), as for a native one */
		if (nat[nn].key == PROF_NONE) {
			if (owner == 1)
				owner = 0;
			callee = NULL;
		} else {
			const struct load_symkey *sk = &L->symkeys[nat[nn].key];

			if (owner == 1)
				owner = load_frame_owner(L, m, sk, addr, nn == 0 && !ret_all, callee,
							 callee_neutral);
			callee = L->p->funcs[L->rframes[sk->first + sk->n - 1].func].name;
			callee_neutral = m->neutral;
		}
		if (nat[nn].key != PROF_NONE && m && m->base == F->py_base) {
			const struct load_symkey *sk = &L->symkeys[nat[nn].key];
			const struct load_frame *outer = &L->rframes[sk->first + sk->n - 1];
			const char *name = L->p->funcs[outer->func].name;

			nat[nn].eval = !strncmp(name, "_PyEval_EvalFrameDefault", 24);
			nat[nn].vcall = py_vcall_kind(name);
			if (counted && py_calls_dispatch(name))
				owner = 2;
			/* the interpreter's own code: all of its module but the
			 * program's entry point of a python executable, and the
			 * builtins counted (--calls): rows of their own, as in
			 * cProfile, with the interpreter's code below them */
			nat[nn].internal = strcmp(name, "_start") != 0 &&
					   !(L->p->funcs[outer->func].flags & PROF_FUNC_BUILTIN);
			ne += nat[nn].eval;
		} else if (m && nat[nn].key != PROF_NONE &&
			   !strncmp(m->path + py_base_len(m->path), "ld-linux", 8)) {
			nat[nn].internal = -1; /* the loader: the interpreter's if its caller is */
		}
		nn++;
	}
	/* __tls_get_addr called by the interpreter (its thread state, 3.12+)
	 * is the interpreter's time too */
	for (i = nn; i-- > 0;)
		if (nat[i].internal < 0)
			nat[i].internal = i + 1 < nn && nat[i + 1].internal > 0;
	/* activations, leaf first */
	for (i = 0; i < nw; i++) {
		uint32_t id = CBN_PYW_CODE(w[i]);

		if (!(id < F->npycodes && F->pycodes[id].rec && F->pycodes[id].shim))
			any_py = 1;
		if ((CBN_PYW_FLAGS(w[i]) & CBN_PYW_ENTRY) || i == nw - 1) {
			acts[na].first = start;
			acts[na].n = i + 1 - start;
			na++;
			start = i + 1;
		}
	}
	leaf_first = (nw && (CBN_PYW_FLAGS(w[nw - 1]) & CBN_PYW_TRUNC)) || na > ne;
	if (leaf_first) {
		for (i = 0, a = 0; i < nn && a < (int)na; i++)
			if (nat[i].eval)
				nat[i].act = a++;
		start = (uint32_t)a; /* activations left for the root end */
	} else {
		for (e = (int)nn - 1, a = (int)na - 1; e >= 0 && a >= 0; e--)
			if (nat[e].eval)
				nat[e].act = a--;
		start = na;
	}
	if (counted && (py_hook_dispatch(L, nat, nn) ||
			(nn && !ret_all && py_instrumented(L, &nat[0]))))
		owner = 2;
	for (i = 0; i < nn; i++) {
		if (nat[i].act >= 0)
			py_push(L, w, acts[nat[i].act].first, acts[nat[i].act].n);
		if (nat[i].ours)
			continue; /* never a frame of the program's stack */
		if (!L->python_native && any_py && (nat[i].eval || nat[i].internal))
			continue;
		if (nat[i].key == PROF_NONE)
			load_push_nomod(L, nat[i].pc, nat[i].addr, ts); /* JIT code, or unknown */
		else
			load_push_symkey(L, nat[i].key, nat[i].pc);
	}
	for (i = start; i < na; i++)
		py_push(L, w, acts[i].first, acts[i].n);
	return owner;
}

/* One count onto the function its code id names (several code objects may
 * make one function: their counts add up); every count into the totals. */
static void py_count_one(struct load *L, const struct cbn_py_call_count *e)
{
	struct load_file *F = L->f;
	struct prof_python_proc *py = &L->p->processes[F->proc].python;
	struct load_pycode *pc = e->id && e->id < F->npycodes && F->pycodes[e->id].rec
					 ? &F->pycodes[e->id]
					 : NULL;
	struct prof_func *f;
	const char *file;
	uint32_t fi;

	if (!e->calls)
		return; /* an empty slot of a table block (CBN_PYCALLS_TABLE) */
	py->calls += e->calls;
	py->primitive += e->primitive;
	if (!pc || (pc->rec->h.flags & CBN_PYC_GONE) || pc->shim) {
		py->calls_unnamed += !pc || !pc->shim;
		return;
	}
	fi = py_func(L, pc, &file); /* may move funcs */
	if (fi == PROF_NONE)
		return;
	f = &L->p->funcs[fi];
	if (!(f->flags & PROF_FUNC_COUNTED))
		py->calls_funcs++;
	f->flags |= PROF_FUNC_COUNTED;
	f->calls += e->calls;
	f->primitive += e->primitive;
}

/* The function a builtin's C code is (a sample in it names the same one),
 * or NULL. */
static struct prof_func *py_builtin_func(struct load *L, const struct cbn_py_ccall_count *e)
{
	const struct load_symkey *sk;
	struct load_mod *m;
	uint32_t k = load_resolve(L, e->meth, L->f->last_ts, &m);

	if (k == PROF_NONE || m->ours || !L->symkeys[k].n)
		return NULL;
	sk = &L->symkeys[k];
	return &L->p->funcs[L->rframes[sk->first + sk->n - 1].func]; /* not an inlined one */
}

void load_python_builtins(struct load *L)
{
	struct load_file *F = L->f;
	struct prof_func *f;
	size_t i;
	uint32_t k;

	for (i = 0; i < F->npyccalls; i++)
		for (k = 0; k < F->pyccalls[i]->n; k++)
			if ((f = py_builtin_func(L, &F->pyccalls[i]->c[k])))
				f->flags |= PROF_FUNC_BUILTIN;
}

/* One builtin's count onto its function, labelled as cProfile labels it;
 * every count into the totals, as cProfile's total counts builtins. */
static void py_ccount_one(struct load *L, const struct cbn_py_ccall_count *e)
{
	struct prof_python_proc *py = &L->p->processes[L->f->proc].python;
	struct prof_func *f;
	char label[CBN_PY_CLABEL + 1];

	if (!e->calls)
		return; /* an empty slot of a table block (CBN_PYCCALLS_TABLE) */
	f = py_builtin_func(L, e);
	py->calls += e->calls;
	py->primitive += e->primitive;
	if (!f) {
		py->calls_unnamed++;
		return;
	}
	if (!(f->flags & PROF_FUNC_COUNTED))
		py->calls_funcs++;
	f->flags |= PROF_FUNC_COUNTED;
	f->calls += e->calls;
	f->primitive += e->primitive;
	memcpy(label, e->label, CBN_PY_CLABEL);
	label[CBN_PY_CLABEL] = '\0';
	if (!f->label && label[0])
		f->label = load_intern(L, label);
}

/* The file's call counts (PY_CALLS and PY_CCALLS records, kept until its
 * codes are all known). */
static void py_calls_finish(struct load *L)
{
	struct load_file *F = L->f;
	size_t i;
	uint32_t k;

	for (i = 0; i < F->npycalls; i++)
		for (k = 0; k < F->pycalls[i]->n; k++)
			py_count_one(L, &F->pycalls[i]->c[k]);
	for (i = 0; i < F->npyccalls; i++)
		for (k = 0; k < F->pyccalls[i]->n; k++)
			py_ccount_one(L, &F->pyccalls[i]->c[k]);
}

/* What each counting flag of 3.11's (docs/agent.md section 17) leaves
 * uncounted, as Data quality says it. */
static const struct {
	uint16_t flag;
	const char *text;
} calls_flag_said[] = {
	{CBN_PYCALLS_SWITCHED,
	 "--calls: a thread ran low on C stack (a deep recursion, or a small thread stack): "
	 "while it did, only its calls were counted, by its profile function"},
	{CBN_PYCALLS_STOPPED,
	 "--calls: a thread ran low on C stack (a deep recursion, or a small thread stack) "
	 "while the program's own profile function ran there: no calls were counted meanwhile"},
	{CBN_PYCALLS_PROFILE_TAKEN,
	 "--calls=builtins: the program set a profile function of its own (sys.setprofile, "
	 "cProfile) in the main thread, in the counting's place: the calls after that were not "
	 "counted (on 3.11 --calls without =builtins counts beside it)"},
	{CBN_PYCALLS_REPLACED,
	 "--calls: the program set a frame evaluation function of its own (PEP 523): the calls "
	 "it evaluated were counted only if it passes frames on to the one it replaced"},
};

void load_python_finish(struct load *L)
{
	const struct prof_process *pr = &L->p->processes[L->f->proc];
	size_t i, nthreads;

	py_calls_finish(L);
	if (pr->python.calls_state > CBN_PYCALLS_ON)
		load_warn(L, "%s: --calls: the Python calls were not counted: %s; ncalls counts "
			     "samples", pr->file,
			  pr->python.calls_state == CBN_PYCALLS_TOOL_TAKEN
				  ? "sys.monitoring's tool ids 3 and 4 were both taken"
			  : pr->python.calls_state == CBN_PYCALLS_NO_API
				  ? "the interpreter lacks a function the counting calls"
			  : pr->python.calls_state == CBN_PYCALLS_NOT_STARTED
				  ? "the interpreter never set its signal dispositions, where the "
				    "counting starts (embedded with its signal handlers off?)"
				  : "the interpreter refused the registration (or runs without "
				    "its GIL)");
	for (i = 0; i < sizeof(calls_flag_said) / sizeof(calls_flag_said[0]); i++)
		if (pr->python.calls_flags & calls_flag_said[i].flag)
			load_warn(L, "%s: %s", pr->file, calls_flag_said[i].text);
	/* 3.11 with builtins: a profile function is one thread's */
	for (i = 0, nthreads = 0; i < L->p->nthreads; i++)
		nthreads += L->p->threads[i].process == L->f->proc;
	if ((pr->python.calls_flags & CBN_PYCALLS_MAIN_ONLY) &&
	    (nthreads > 1 || pr->threads_perf + pr->threads_timer > 1))
		load_warn(L, "%s: --calls=builtins on 3.11 counts through the main thread's profile "
			     "function: the calls the program's other threads made were not counted "
			     "(--calls alone counts every thread's Python functions)", pr->file);
	if (pr->python.codes_missing)
		load_warn(L, "%s: %llu Python frames (counted once per distinct stack) name code "
			     "objects the agent had not copied yet when the process ended; they "
			     "show as [unknown Python function]",
			  pr->file, (unsigned long long)pr->python.codes_missing);
}
