/*
 * python_calls.c — exact call counts of Python functions (--calls,
 * docs/agent.md section 17), counted as cProfile counts them: a call is the
 * start or the resumption of a frame (a generator's resumption too), a
 * primitive call one made while no call of the same code object runs, a
 * return its end or its yield.  The interpreter reports them to us itself:
 * through sys.monitoring under a tool id of our own (3.12+: every thread);
 * on 3.11 through the frame evaluation function (PEP 523: every thread), or
 * with builtins (and where a thread's C stack runs low) through the
 * profile function of one thread, as cProfile there.
 *
 * The registration needs the GIL and a running interpreter, and no thread
 * of ours may wait for one: when the interpreter sets its signal
 * dispositions while it starts (sigwrap.c tells us of each sigaction;
 * is_start_signal), we ask it for a pending call (Py_AddPendingCall),
 * which its main thread runs at its next check, holding the GIL, in normal
 * context, before the program's first line.  The callbacks run under the
 * GIL, one at a time, in normal context: they count into a table indexed
 * by the ids of python_table.c
 * (those the samples name, so a count and a sample meet on one function),
 * kept in the session file (python_counts.c: a process killed by a signal
 * keeps its counts).  An interpreter built without the GIL is not counted.
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "env.h"
#include "floor.h"
#include "python_calls.h"
#include "python_ccalls.h"
#include "python_copy.h"
#include "python_counts.h"
#include "python_find.h"
#include "python_table.h"
#include "sigwrap.h"

/* The few CPython functions used, declared here: the agent is built once
 * for every version, without Python's headers.  Objects stay opaque. */
typedef struct py_obj py_obj;
typedef py_obj *(*py_evalf)(void *ts, void *frame, int throwflag);
struct py_method_def {           /* PyMethodDef */
	const char *name;
	void *meth;
	int flags;
	const char *doc;
};
#define PY_METH_FASTCALL 0x0080
#define PY_TRACE_CALL 0
#define PY_TRACE_RETURN 3
#define PY_TRACE_C_CALL 4
#define PY_TRACE_C_EXCEPTION 5
#define PY_TRACE_C_RETURN 6

static void *sym(void *mod, const char *name);
static void *module; /* the interpreter's module, when not the executable */

static struct {
	int (*add_pending)(int (*fn)(void *), void *arg);
	void *(*this_tstate)(void);
	py_obj *(*sys_get)(const char *name);
	py_obj *(*getattr)(py_obj *o, const char *name);
	py_obj *(*call_method)(py_obj *o, const char *name, const char *fmt, ...);
	py_obj *(*cmethod_new)(struct py_method_def *ml, py_obj *self, py_obj *mod, void *cls);
	long (*as_long)(py_obj *o);
	void (*err_clear)(void);
	void (*decref)(py_obj *o);
	void (*set_profile)(int (*fn)(py_obj *, void *, int, py_obj *), py_obj *arg);
	uintptr_t (*tstate)(void);
	py_obj *none;
	py_obj *(*call)(py_obj *fn, py_obj *args);   /* optional: the GIL check */
	py_obj *no;                                   /* optional: &_Py_FalseStruct */
	py_obj *(*import)(const char *name);          /* optional: the exit copy */
	void (*incref)(py_obj *o);                    /* optional: the exit copy */
	py_obj *(*dict_get)(py_obj *d, const char *k); /* optional: sys.modules kept */
	int (*dict_del)(py_obj *d, const char *k);     /* optional: sys.modules kept */
	/* optional, 3.11's frame evaluation function (PEP 523) */
	void *(*interp_get)(void);
	py_evalf (*get_eval)(void *interp);
	void (*set_eval)(void *interp, py_evalf fn);
	void (*err_fetch)(py_obj **t, py_obj **v, py_obj **tb);
	void (*err_restore)(py_obj *t, py_obj *v, py_obj *tb);
	/* optional: a code object's extra slot, and a function at its death */
	intptr_t (*extra_index)(void (*fn)(void *));
	int (*set_extra)(py_obj *code, intptr_t index, void *extra);
	int (*get_extra)(py_obj *code, intptr_t index, void **extra);
} api;

#define PY_CO_GENERATORS 0x02a0          /* CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR */
#define PY_CHUNKS_WALKED 256             /* the data stack's chunks still_runs looks in */
#define PY_CHAIN_WALKED 4096             /* running frames runs_below looks through */

/* The counts are python_counts.c's, in the session file; here what tells
 * a primitive call. */
struct py_count {
	/* where its latest primitive call runs (or ran): the thread state,
	 * the frame and the frame's caller */
	uintptr_t ts, frame, prev;
	uint64_t ident;                  /* python_code_ident of the object first counted, 0 */
};

static int want;                         /* CBN_PYCALLS: 1, 2 with builtins */
static py_obj *missing;                  /* sys.monitoring.MISSING */
static _Atomic int asked;                /* the pending call was asked for (or refused) */
static int counting;                     /* the callbacks are registered */
static uint16_t rec_flags;               /* CBN_PYCALLS_* flags */
static struct py_count *counts;          /* PY_CODES_CAP + 1, by PY_CODE id */
static uint32_t top;                     /* highest id counted */
static intptr_t extra_at = -1;           /* our code-extra slot (code_died), -1: none */

/* Code object -> id, direct-mapped by address; an entry holds only while
 * the object there has the same constants and names tuples (another
 * object at the same address has its own) and the file is the same (gen: a fork child's
 * ids are copied again into its own file). */
#define PY_CC 4096
static struct {
	uintptr_t code, consts, names;
	uint32_t id, gen;
} cache[PY_CC];

/* --- counting (under the GIL) ------------------------------------------------ */

/*
 * A counted function's code object may die before any sample or the exit
 * copy names it (pdb running the script again, code made by exec and
 * dropped): its calls would be in no row.  So each new one gets our
 * code-extra slot, whose function the interpreter calls as the object dies,
 * with its fields still there: its names are copied then (once: a copy
 * already made is not made again).  One small allocation of the
 * interpreter's per function, at its first call.
 */
static void code_died(void *extra)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_relaxed);
	const struct cbn_py_layout *L;
	uintptr_t code = (uintptr_t)extra;
	struct py_fresh fresh;
	uint32_t id;

	if (!code || !pi || !counts)
		return;
	/* the next object at this address is looked up again (code_id) */
	if (cache[(code >> 6) & (PY_CC - 1)].code == code)
		cache[(code >> 6) & (PY_CC - 1)].code = 0;
	L = &pi->t.L;
	fresh.n = 0;
	id = python_code_id(code,
			    cbn_py_code_key(code, *(const uintptr_t *)(code + L->co_consts),
					    *(const uintptr_t *)(code + L->co_names),
					    *(const uint32_t *)(code + L->co_flags),
					    *(const uint64_t *)(code + L->ob_size)),
			    &fresh);
	if (id && id <= top && python_counts_calls(id))
		python_copy_live(&id, 1, code);
}

/* Under the GIL, in a callback: keep an exception being raised as it was.
 * Set once (a second set would call code_died on the first). */
static void watch_death(uintptr_t code)
{
	py_obj *t = NULL, *v = NULL, *tb = NULL;
	void *had = NULL;

	if (extra_at < 0 || !api.err_fetch || !api.err_restore || !api.get_extra)
		return;
	api.err_fetch(&t, &v, &tb);
	if (api.get_extra((py_obj *)code, extra_at, &had) != 0)
		api.err_clear();
	else if (!had && api.set_extra((py_obj *)code, extra_at, (void *)code) != 0)
		api.err_clear();
	api.err_restore(t, v, tb);
}

static uint32_t code_id(uintptr_t code)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_relaxed);
	const struct cbn_py_layout *L = &pi->t.L;
	uint32_t gen = atomic_load_explicit(&python_gen, memory_order_relaxed), id, flags;
	uintptr_t consts, names;
	uint64_t key;
	struct py_fresh fresh;
	unsigned slot = (unsigned)(code >> 6) & (PY_CC - 1);

	if (!code)
		return 0;
	consts = *(const uintptr_t *)(code + L->co_consts);
	names = *(const uintptr_t *)(code + L->co_names);
	if (cache[slot].code == code && cache[slot].consts == consts && cache[slot].names == names &&
	    cache[slot].gen == gen)
		return cache[slot].id;
	if (*(const uintptr_t *)(code + L->ob_type) != pi->t.code_type)
		return 0;
	/* Its names are copied at its first call, read directly (it runs):
	 * a process killed by a signal has every function it counted named,
	 * and a copy here costs two system calls (the signals blocked around
	 * it), where one through agent_vmread (a sample's, the exit's) costs
	 * nine more. */
	fresh.n = 0;
	flags = *(const uint32_t *)(code + L->co_flags);
	key = cbn_py_code_key(code, consts, names, flags, *(const uint64_t *)(code + L->ob_size));
	id = python_code_id(code, key, &fresh);
	if (id && id <= PY_CODES_CAP) {
		uint64_t ident = python_code_ident(L, code);

		if (counts[id].ident && counts[id].ident != ident) {
			/* another object with a dead one's fingerprint: an id of its own */
			python_code_retire(key, id);
			fresh.n = 0;
			id = python_code_id(code, key, &fresh);
		}
		if (id && id <= PY_CODES_CAP && !counts[id].ident)
			counts[id].ident = ident;
	}
	if (fresh.n)
		python_copy_live(fresh.id, fresh.n, code);
	/* its death clears the cache slot, so that the next object at its
	 * address is looked up and told apart */
	if (id)
		watch_death(code);
	if (id) {
		cache[slot].code = code;
		cache[slot].consts = consts;
		cache[slot].names = names;
		cache[slot].id = id;
		cache[slot].gen = gen;
		if (id > top)
			top = id;
	}
	return id;
}

/*
 * A call (3.12+: PY_START, PY_RESUME, PY_THROW; 3.11: a frame the
 * interpreter evaluates, or the profile function's call): primitive unless
 * the latest primitive call of the same code still runs on this thread.  So
 * no return event is needed (half of what counting would cost).  A frame in
 * the thread's data stack may run if it lies in the live part (the current
 * chunk up to the top, each older one up to the top it kept) and still
 * holds the same code and caller: 1 it may (*lo: the start of its chunk;
 * runs_below decides), 0 it does not, -1 it lies in no chunk (a
 * generator's or coroutine's frame, inside its object).
 */
static int still_runs(const struct cbn_py_layout *L, uintptr_t ts, uintptr_t code,
		      const struct py_count *k, uintptr_t *lo_out)
{
	uintptr_t c = *(const uintptr_t *)(ts + L->ts_datastack);
	uintptr_t top = *(const uintptr_t *)(ts + L->ts_datastack + 8);
	int n;

	/* 256 chunks of 16 KiB: a recursion some 40,000 frames deep (a deeper
	 * one counts one more primitive call each time it gets that much
	 * deeper); each chunk one load, walked only while the latest primitive
	 * call runs in an older chunk than the new one */
	for (n = 0; c && n < PY_CHUNKS_WALKED; n++) {
		/* _PyStackChunk: previous, size, top, data[] */
		uintptr_t lo = c + 24, hi = c + *(const uintptr_t *)(c + 8);

		*lo_out = lo;
		if (k->frame >= lo && k->frame < hi)
			return k->frame < top &&
			       *(const uintptr_t *)(k->frame + L->fr_code) == code &&
			       *(const uintptr_t *)(k->frame + L->fr_previous) == k->prev;
		c = *(const uintptr_t *)c;
		if (c)
			top = c + 24 + 8 * *(const uintptr_t *)(c + 16);
	}
	return -1;
}

/*
 * A frame that ended leaves its words behind, and a frame pushed later over
 * the same memory keeps them in the part it has not written yet (its value
 * stack), where they read as a running frame of the same code and caller
 * (a function called from one place, then from a frame that covers where
 * it stood).  Only the chain of running frames tells: from the new frame's
 * caller p out, a frame of the same code (this call is nested), target
 * itself, or a frame of target's chunk (from lo) below it (target ended).
 * A recursion meets its own code within a step or two, a stale copy the
 * first frame below it; a walk past PY_CHAIN_WALKED frames takes the words'
 * answer.
 */
static int runs_below(const struct cbn_py_layout *L, uintptr_t p, uintptr_t code,
		      uintptr_t target, uintptr_t lo)
{
	int n;

	for (n = 0; p && n < PY_CHAIN_WALKED; n++) {
		if (p == target || *(const uintptr_t *)(p + L->fr_code) == code)
			return 1;
		if (p >= lo && p < target)
			return 0;
		p = *(const uintptr_t *)(p + L->fr_previous);
	}
	return p != 0;
}

/* A frame outside the data stack (a generator's) runs if the thread's
 * chain of running frames holds it: looked for among the new frame's 256
 * callers from f, its caller, out (a recursion of generators deeper than
 * that counts as primitive).  Only live frames are read. */
static int on_chain(const struct cbn_py_layout *L, uintptr_t f, uintptr_t code, uintptr_t target)
{
	int n;

	for (n = 0; f && n < 256; f = *(const uintptr_t *)(f + L->fr_previous), n++)
		if (f == target)
			return *(const uintptr_t *)(f + L->fr_code) == code;
	return 0;
}

/* A call of code on thread state ts, in frame f, called from frame prev. */
static void count_frame(const struct cbn_py_layout *L, uintptr_t code, uintptr_t ts, uintptr_t f,
			uintptr_t prev)
{
	uint32_t id = code_id(code);
	struct cbn_py_call_count *e;
	struct py_count *k;

	if (!id)
		return;
	e = python_count_of(id, rec_flags);
	e->calls++;
	k = &counts[id];
	/* the new frame may stand where the latest one stood: that one ended */
	if (k->frame && k->frame != f && k->ts == ts) {
		uintptr_t lo = 0;
		int runs = still_runs(L, ts, code, k, &lo);

		if (runs < 0)
			runs = on_chain(L, prev, code, k->frame);
		else if (runs)
			runs = runs_below(L, prev, code, k->frame, lo);
		if (runs)
			return;
	}
	e->primitive++;
	k->ts = ts;
	k->frame = f;
	k->prev = prev;
}

/* The frame a thread runs now: 3.11 and 3.12 tstate->cframe->current_frame,
 * 3.13 tstate->current_frame. */
static uintptr_t current_frame(const struct cbn_py_layout *L, uintptr_t ts)
{
	if (L->ts_cframe >= 0)
		return *(const uintptr_t *)(*(const uintptr_t *)(ts + (uint32_t)L->ts_cframe) +
					    L->cf_current);
	return *(const uintptr_t *)(ts + L->cf_current);
}

/* 3.12+: the new frame is the thread's current one */
static void count_start(uintptr_t code)
{
	const struct cbn_py_layout *L =
		&atomic_load_explicit(&python_info, memory_order_relaxed)->t.L;
	uintptr_t ts = api.tstate(), f = current_frame(L, ts);

	count_frame(L, code, ts, f, f ? *(const uintptr_t *)(f + L->fr_previous) : 0);
}

/* sys.monitoring's callback (METH_FASTCALL): args[0] is the code object.
 * None is immortal in 3.12+: returned without a reference. */
static py_obj *on_start(py_obj *self, py_obj *const *args, intptr_t n)
{
	(void)self;
	if (n > 0)
		count_start((uintptr_t)args[0]);
	return api.none;
}

/* sys.monitoring's CALL, C_RETURN and C_RAISE (--calls=builtins): args[2]
 * is the callable, args[3] its first argument. */
static py_obj *on_ccall(py_obj *self, py_obj *const *args, intptr_t n)
{
	(void)self;
	if (n >= 4)
		python_ccalls_event(args[2], args[3], missing, 1);
	return api.none;
}

static py_obj *on_cret(py_obj *self, py_obj *const *args, intptr_t n)
{
	(void)self;
	if (n >= 4)
		python_ccalls_event(args[2], args[3], missing, 0);
	return api.none;
}

/* 3.11's profile function: the frame's code object is in its interpreter
 * frame (PyFrameObject.f_frame, after the object header and f_back); a C
 * call's callable is its argument (python_ccalls.c). */
static int on_profile(py_obj *obj, void *frame, int what, py_obj *arg)
{
	const struct cbn_py_layout *L =
		&atomic_load_explicit(&python_info, memory_order_relaxed)->t.L;
	uintptr_t f;

	(void)obj;
	if (!(rec_flags & CBN_PYCALLS_BUILTINS) && what >= PY_TRACE_C_CALL)
		return 0;
	if (what == PY_TRACE_C_CALL && arg) {
		python_ccalls_call(arg);
		return 0;
	}
	if ((what == PY_TRACE_C_RETURN || what == PY_TRACE_C_EXCEPTION) && arg) {
		python_ccalls_return(arg);
		return 0;
	}
	if (what != PY_TRACE_CALL || !frame)
		return 0;
	f = *(const uintptr_t *)((const char *)frame + 3 * sizeof(void *));
	if (!f)
		return 0;
	/* a call's frame has started: its caller is linked */
	if (what == PY_TRACE_CALL)
		count_frame(L, *(const uintptr_t *)(f + L->fr_code), api.tstate(), f,
			    *(const uintptr_t *)(f + L->fr_previous));
	return 0;
}

/* --- 3.11: the frame evaluation function (PEP 523) -------------------------- */

/*
 * --calls on 3.11: the interpreter calls our function to evaluate each
 * frame it starts or resumes (a generator's too, and one thrown into), on
 * every thread: ours counts the call and passes the frame on by a tail
 * call, where a profile function would put the interpreter on its slow path
 * for every call, return and C call (3.2x on the call-heavy bench;
 * docs/performance.md).  The price is the C stack (and three native frames
 * a Python level in the samples): with a frame evaluation function set, 3.11
 * evaluates each Python call in a C call of its own (some 300 bytes a
 * level) instead of in the caller's loop, so a recursion the program runs
 * plainly 100,000 deep would overflow it.  Where a thread's C stack has
 * less than a quarter of it (at least 1 MiB) left, or its bounds are not
 * known, the hook steps aside while that frame runs (a window): the
 * interpreter gets back the function it had, so the calls under it run in
 * one loop as plainly, and that thread's profile function counts them
 * (the flag SWITCHED: other threads' calls meanwhile are not counted; if
 * the program's own profile function holds the slot, neither are the
 * thread's: STOPPED).  When the frame ends, the hook is back.
 */
#define EVAL_ROOM (1u << 20)

static void *eval_interp;         /* the interpreter hooked */
static py_evalf eval_next;        /* the function ours passes each frame on to */
static uintptr_t eval_window;     /* the thread running without the hook; 0: none */
static py_obj *prof_mark;         /* our profile function's argument: ours is set */
static int prof_main;             /* counting by the main thread's profile function */

static py_obj *on_eval(void *ts, void *frame, int throwflag);
static struct py_method_def def_exit;

/* 1 when the C stack below sp has too little room for the hook to go on */
static int stack_low(uintptr_t sp)
{
	const struct agent_thread *t = &agent_tls;
	uintptr_t room;

	if (!t->ustk_hi || sp < t->ustk_lo || sp >= t->ustk_hi)
		return 1;
	room = (t->ustk_hi - t->ustk_lo) / 4;
	return sp - t->ustk_lo < (room > EVAL_ROOM ? room : EVAL_ROOM);
}

/* The calling thread's profile function's argument (sys.getprofile()):
 * NULL for none, api.none when it cannot be told; a borrowed pointer, only
 * compared.  The error indicator is kept as it was. */
static py_obj *profile_arg(void)
{
	py_obj *fn = api.call && api.err_fetch && api.err_restore ? api.sys_get("getprofile") : NULL;
	py_obj *r, *t, *v, *tb;

	if (!fn)
		return api.none;
	api.err_fetch(&t, &v, &tb);
	r = api.call(fn, NULL);
	if (r)
		api.decref(r);
	else
		api.err_clear();
	api.err_restore(t, v, tb);
	return !r ? api.none : r == api.none ? NULL : r;
}

/* The frame, on a thread whose C stack runs low (stack_low), evaluated
 * without the hook, under the GIL. */
static py_obj *eval_window_run(void *ts, void *frame, int throwflag)
{
	py_obj *r, *t, *v, *tb;
	int ours = 0, hooked = api.get_eval(eval_interp) == on_eval;

	eval_window = (uintptr_t)ts;
	if (hooked)
		api.set_eval(eval_interp, eval_next);
	if (profile_arg()) {
		if (!(rec_flags & CBN_PYCALLS_STOPPED))
			python_counts_flags(rec_flags |= CBN_PYCALLS_STOPPED);
	} else {
		if (!(rec_flags & CBN_PYCALLS_SWITCHED))
			python_counts_flags(rec_flags |= CBN_PYCALLS_SWITCHED);
		api.err_fetch(&t, &v, &tb);
		api.set_profile(on_profile, prof_mark); /* it counts this frame's call */
		api.err_restore(t, v, tb);
		ours = 1;
	}
	r = eval_next(ts, frame, throwflag);
	if (ours && profile_arg() == prof_mark) {
		api.err_fetch(&t, &v, &tb);
		api.set_profile(NULL, NULL);
		api.err_restore(t, v, tb);
	}
	if (hooked && api.get_eval(eval_interp) == eval_next)
		api.set_eval(eval_interp, on_eval);
	eval_window = 0;
	return r;
}

static py_obj *on_eval(void *ts, void *frame, int throwflag)
{
	const struct cbn_py_layout *L =
		&atomic_load_explicit(&python_info, memory_order_relaxed)->t.L;
	uintptr_t code;

	if (eval_window) /* a function set over ours passes it on: not counted */
		return eval_next(ts, frame, throwflag);
	if (stack_low((uintptr_t)__builtin_frame_address(0)))
		return eval_window_run(ts, frame, throwflag);
	code = *(const uintptr_t *)((const char *)frame + L->fr_code);
	/* A generator's or coroutine's function runs its new frame up to its
	 * first RETURN_GENERATOR, which makes the object: no call (cProfile's
	 * is the first resumption), and the frame is fresh, before its first
	 * instruction.  Otherwise the frame is not linked yet: its caller is
	 * the thread's current frame. */
	if (!(*(const uint32_t *)(code + L->co_flags) & PY_CO_GENERATORS) ||
	    *(const uintptr_t *)((const char *)frame + L->fr_instr) != code + L->co_code - 2)
		count_frame(L, code, (uintptr_t)ts, (uintptr_t)frame,
			    current_frame(L, (uintptr_t)ts));
	/* a tail call: no frame of ours between two of the interpreter's */
	return eval_next(ts, frame, throwflag);
}

/* 0 with the hook set, -1 without the API */
static int eval_start(void)
{
	if (!api.interp_get || !api.get_eval || !api.set_eval || !api.err_fetch ||
	    !api.err_restore || !api.call)
		return -1;
	prof_mark = api.cmethod_new(&def_exit, NULL, NULL, NULL); /* kept */
	eval_interp = prof_mark ? api.interp_get() : NULL;
	eval_next = eval_interp ? api.get_eval(eval_interp) : NULL;
	if (!eval_next)
		return -1;
	api.set_eval(eval_interp, on_eval);
	return 0;
}

/* --- the records ------------------------------------------------------------- */

static void write_state(uint32_t state)
{
	struct cbn_rec_py_calls r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_PY_CALLS;
	r.h.flags = rec_flags;
	r.h.size = sizeof(r);
	r.state = state;
	agent_event(&r, sizeof(r));
}

/* The counts the file does not hold yet, and the flags (the records add
 * up). */
void python_calls_flush(void)
{
	if (want && !counting && atomic_load_explicit(&python_info, memory_order_acquire)) {
		int expect = 0;

		if (atomic_compare_exchange_strong(&asked, &expect, 1))
			write_state(CBN_PYCALLS_NOT_STARTED);
		return;
	}
	if (!counting || !counts)
		return;
	python_counts_flush(CBN_PYCALLS_ON, rec_flags);
	python_ccalls_flush();
}

/* The names of every function counted since the last flush (each copied
 * once in the process's file). */
static void copy_counted(void)
{
	uint32_t id, ids[64];
	int k = 0;

	for (id = 1; counts && id <= top; id++) {
		if (!python_counts_calls(id))
			continue;
		ids[k++] = id;
		if (k == 64) {
			python_copy_ids(ids, k);
			k = 0;
		}
	}
	python_copy_ids(ids, k);
}

/*
 * The process ends by _exit: no atexit callback copies the names, so the
 * functions counted are named here, while their code objects still live
 * (a multiprocessing child forked from the parent runs its work and ends
 * by os._exit, after clearing the atexit callbacks it inherited), then the
 * counts are written.  Before, such a child's calls were in no record.
 */
void python_calls_quick_exit(void)
{
	if (counting)
		copy_counted();
	python_calls_flush();
}

/* A fork child writes its own file: only its own calls go there (the frames
 * running go on, so their records stay). */
void python_calls_after_fork_child(void)
{
	if (!counting || !counts)
		return;
	python_counts_after_fork_child();
	python_ccalls_after_fork_child();
	write_state(CBN_PYCALLS_ON);
}

/*
 * The names of every function counted and not yet copied, in the program's
 * atexit callbacks, before the interpreter's finalization frees its modules
 * and their functions: a function that was called but never sampled is a
 * row of its own (cProfile lists every function called), and at the
 * agent's own exit its code object was gone (a run of bench/py_stdlib.py
 * on 3.13: 318 of 358 counted functions).  Registered first, it runs after
 * the program's own atexit callbacks, whose calls count too.
 */
static py_obj *on_exit_copy(py_obj *self, py_obj *const *args, intptr_t n)
{
	(void)self;
	(void)args;
	(void)n;
	/* the program set a frame evaluation function of its own after ours */
	if (eval_interp && !eval_window && api.get_eval(eval_interp) != on_eval)
		rec_flags |= CBN_PYCALLS_REPLACED;
	/* or its own profile function in the main thread (sys.setprofile,
	 * cProfile), which took ours out of the slot */
	if (prof_main && prof_mark) {
		py_obj *a = profile_arg();

		if (a != api.none && a != prof_mark)
			rec_flags |= CBN_PYCALLS_PROFILE_TAKEN;
	}
	copy_counted();
	api.incref(api.none);
	return api.none;
}

static struct py_method_def def_exit = {"cbottleneck_names", (void *)on_exit_copy,
					PY_METH_FASTCALL, NULL};

/*
 * atexit.register(on_exit_copy), under the GIL; nothing when it fails (the
 * names are then copied at the agent's exit, of what still lives).  The
 * interpreter keeps its atexit callbacks itself (3.10+), not in the module:
 * a module imported for us alone leaves sys.modules again, so the program
 * finds there what it finds without us ("atexit" is not imported at start).
 */
static void exit_copy_register(void)
{
	py_obj *mods = api.sys_get("modules"), *m, *fn, *r; /* mods: borrowed */
	int had = mods && api.dict_get && api.dict_get(mods, "atexit");

	if (!api.import || !api.incref || !mods || !api.dict_get || !api.dict_del)
		return;
	m = api.import("atexit");
	fn = m ? api.cmethod_new(&def_exit, NULL, NULL, NULL) : NULL;
	r = fn ? api.call_method(m, "register", "O", fn) : NULL;
	if (r)
		api.decref(r);
	if (fn)
		api.decref(fn);
	if (m)
		api.decref(m);
	if (m && !had)
		api.dict_del(mods, "atexit");
	api.err_clear();
}

/* --- registration (the pending call) ----------------------------------------- */

static struct py_method_def def_start = {"cbottleneck_call", (void *)on_start, PY_METH_FASTCALL,
					 NULL};
static struct py_method_def def_ccall = {"cbottleneck_ccall", (void *)on_ccall, PY_METH_FASTCALL,
					 NULL};
static struct py_method_def def_cret = {"cbottleneck_creturn", (void *)on_cret, PY_METH_FASTCALL,
					NULL};


/* One event's callback: 0, or -1 with the error cleared. */
static int monitor_event(py_obj *mon, py_obj *events, int tool, const char *name, py_obj *fn,
			 long *mask)
{
	py_obj *e = api.getattr(events, name), *r;
	long v;

	if (!e)
		return -1;
	v = api.as_long(e);
	api.decref(e);
	if (v <= 0)
		return -1;
	r = api.call_method(mon, "register_callback", "ilO", tool, v, fn);
	if (!r)
		return -1;
	api.decref(r);
	*mask |= v;
	return 0;
}

/* --calls=builtins: CALL, and C_RETURN and C_RAISE for the depth; 0, or
 * -1 (the error cleared, nothing of it registered that counts). */
static int monitor_builtins(py_obj *mon, py_obj *events, int tool, long *mask)
{
	py_obj *call = api.cmethod_new(&def_ccall, NULL, NULL, NULL);
	py_obj *ret = api.cmethod_new(&def_cret, NULL, NULL, NULL);
	long m = 0;

	missing = api.getattr(mon, "MISSING"); /* kept */
	if (!call || !ret || !missing || python_ccalls_init(sym, module) != 0 ||
	    monitor_event(mon, events, tool, "CALL", call, &m) != 0 ||
	    monitor_event(mon, events, tool, "C_RETURN", ret, &m) != 0 ||
	    monitor_event(mon, events, tool, "C_RAISE", ret, &m) != 0) {
		api.err_clear();
		return -1;
	}
	*mask |= m;
	return 0;
}

/* 3.12+: a free tool id of sys.monitoring (cProfile holds 2, debuggers 0,
 * coverage 1, optimizers 5; 4, else 3), our callback, the events that
 * start or resume a frame. */
static uint32_t monitor_start(void)
{
	static const char *const calls[] = {"PY_START", "PY_RESUME", "PY_THROW"};
	py_obj *mon = api.sys_get("monitoring"), *events, *fn, *r;
	int tool, ok = 0;
	long mask = 0;
	size_t i;

	if (!mon)
		return CBN_PYCALLS_NO_API;
	for (tool = 4; tool >= 3; tool--) {
		r = api.call_method(mon, "use_tool_id", "is", tool, "cbottleneck");
		if (r) {
			api.decref(r);
			break;
		}
		api.err_clear();
	}
	if (tool < 3)
		return CBN_PYCALLS_TOOL_TAKEN;
	events = api.getattr(mon, "events");
	fn = api.cmethod_new(&def_start, NULL, NULL, NULL);
	if (events && fn) {
		ok = 1;
		for (i = 0; i < 3 && ok; i++)
			ok = monitor_event(mon, events, tool, calls[i], fn, &mask) == 0;
		if (ok && want == 2 && monitor_builtins(mon, events, tool, &mask) == 0)
			rec_flags |= CBN_PYCALLS_BUILTINS;
	}
	if (ok) {
		r = api.call_method(mon, "set_events", "il", tool, mask);
		ok = r != NULL;
		if (r)
			api.decref(r);
	}
	if (events)
		api.decref(events);
	/* fn stays: the interpreter holds it, and so do we */
	if (!ok) {
		api.err_clear();
		r = api.call_method(mon, "free_tool_id", "i", tool);
		if (r)
			api.decref(r);
		return CBN_PYCALLS_FAILED;
	}
	return CBN_PYCALLS_ON;
}

/* 3.13's free-threaded build runs callbacks on several threads at once:
 * 0 when sys._is_gil_enabled() says the GIL is off. */
static int gil_enabled(void)
{
	py_obj *fn = api.call && api.no ? api.sys_get("_is_gil_enabled") : NULL, *r;
	int on;

	if (!fn)
		return 1;
	r = api.call(fn, NULL);
	if (!r)
		return 1;
	on = r != api.no;
	api.decref(r);
	return on;
}

static int start(void *arg)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_acquire);
	uint32_t state;

	(void)arg;
	if (!gil_enabled()) {
		state = CBN_PYCALLS_FAILED; /* our counters are not made for threads at once */
	} else if (pi->t.L.version >= 0x030c0000) {
		state = monitor_start();
	} else if (want == 1 && eval_start() == 0) {
		state = CBN_PYCALLS_ON; /* 3.11, Python functions: PEP 523 */
	} else {
		/* 3.11 with builtins: the profile slot of the thread that
		 * runs this (the main one); cProfile's own use of it takes it
		 * from us */
		rec_flags = CBN_PYCALLS_MAIN_ONLY;
		if (python_ccalls_init(sym, module) == 0)
			rec_flags |= CBN_PYCALLS_BUILTINS;
		if (!prof_mark)
			prof_mark = api.cmethod_new(&def_exit, NULL, NULL, NULL); /* kept */
		prof_main = 1;
		api.set_profile(on_profile, prof_mark);
		state = CBN_PYCALLS_ON;
	}
	if (state == CBN_PYCALLS_ON && api.extra_index && api.set_extra && extra_at < 0)
		extra_at = api.extra_index(code_died);
	api.err_clear();
	counting = state == CBN_PYCALLS_ON;
	if (counting)
		exit_copy_register();
	write_state(state);
	return 0;
}

/* --- arming --------------------------------------------------------------------- */

static void *sym(void *mod, const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p ? p : mod ? dlsym(mod, name) : NULL;
}

/* The functions, from the interpreter's module (the executable, or a
 * libpython loaded locally): 0, or -1 when one is missing. */
static int resolve(const struct py_info *pi)
{
	void *mod = NULL;
	Dl_info di;

	if (dladdr((void *)pi->t.code_type, &di) && di.dli_fname)
		mod = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	*(void **)&api.add_pending = sym(mod, "Py_AddPendingCall");
	*(void **)&api.this_tstate = sym(mod, "PyGILState_GetThisThreadState");
	*(void **)&api.sys_get = sym(mod, "PySys_GetObject");
	*(void **)&api.getattr = sym(mod, "PyObject_GetAttrString");
	*(void **)&api.call_method = sym(mod, "PyObject_CallMethod");
	*(void **)&api.cmethod_new = sym(mod, "PyCMethod_New");
	*(void **)&api.as_long = sym(mod, "PyLong_AsLong");
	*(void **)&api.err_clear = sym(mod, "PyErr_Clear");
	*(void **)&api.decref = sym(mod, "Py_DecRef");
	*(void **)&api.set_profile = sym(mod, "PyEval_SetProfile");
	*(void **)&api.tstate = sym(mod, "PyThreadState_Get");
	api.none = sym(mod, "_Py_NoneStruct");
	*(void **)&api.call = sym(mod, "PyObject_CallObject");
	api.no = sym(mod, "_Py_FalseStruct");
	*(void **)&api.import = sym(mod, "PyImport_ImportModule");
	*(void **)&api.incref = sym(mod, "Py_IncRef");
	*(void **)&api.dict_get = sym(mod, "PyDict_GetItemString");
	*(void **)&api.dict_del = sym(mod, "PyDict_DelItemString");
	*(void **)&api.interp_get = sym(mod, "PyInterpreterState_Get");
	*(void **)&api.get_eval = sym(mod, "_PyInterpreterState_GetEvalFrameFunc");
	*(void **)&api.set_eval = sym(mod, "_PyInterpreterState_SetEvalFrameFunc");
	*(void **)&api.err_fetch = sym(mod, "PyErr_Fetch");
	*(void **)&api.err_restore = sym(mod, "PyErr_Restore");
	*(void **)&api.extra_index = sym(mod, "PyUnstable_Eval_RequestCodeExtraIndex");
	if (!api.extra_index)
		*(void **)&api.extra_index = sym(mod, "_PyEval_RequestCodeExtraIndex");
	*(void **)&api.set_extra = sym(mod, "PyUnstable_Code_SetExtra");
	if (!api.set_extra)
		*(void **)&api.set_extra = sym(mod, "_PyCode_SetExtra");
	*(void **)&api.get_extra = sym(mod, "PyUnstable_Code_GetExtra");
	if (!api.get_extra)
		*(void **)&api.get_extra = sym(mod, "_PyCode_GetExtra");
	module = mod; /* kept: python_ccalls_init looks in it too */
	return api.add_pending && api.this_tstate && api.sys_get && api.getattr &&
			       api.call_method && api.cmethod_new && api.as_long && api.err_clear &&
			       api.decref && api.set_profile && api.tstate && api.none
		       ? 0
		       : -1;
}

/*
 * The interpreter's start-up sets its signal dispositions: SIGPIPE ignored,
 * then its SIGINT handler, the latter only over SIG_DFL.  A program started
 * with SIGINT ignored (nohup, a shell's background job) gets no SIGINT
 * handler, so the ignored SIGPIPE starts the counting too.
 */
static int is_start_signal(int sig, const struct sigaction *act)
{
	if (sig == SIGPIPE)
		return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN;
	return sig == SIGINT && act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN;
}

/* sigwrap.c, after a sigaction of the program's: the first start signal
 * (is_start_signal) set from a thread with a Python thread state. */
static void on_install(int sig, const struct sigaction *act)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_acquire);
	int expect = 0;

	if (!pi || !is_start_signal(sig, act) || atomic_load(&asked))
		return;
	if (!api.add_pending && resolve(pi) != 0) {
		if (atomic_compare_exchange_strong(&asked, &expect, 1))
			write_state(CBN_PYCALLS_NO_API);
		return;
	}
	if (!api.this_tstate() || !atomic_compare_exchange_strong(&asked, &expect, 1))
		return;
	counts = (void *)agent_syscall(SYS_mmap, NULL, (PY_CODES_CAP + 1) * sizeof(*counts),
				       PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (counts == MAP_FAILED) {
		counts = NULL;
		write_state(CBN_PYCALLS_FAILED);
		return;
	}
	if (api.add_pending(start, NULL) != 0)
		write_state(CBN_PYCALLS_FAILED);
}

void python_calls_config(void)
{
	const char *v = agent_getenv(CBN_ENV_PYCALLS);

	want = v && (v[0] == '1' || v[0] == '2') && v[1] == '\0' ? v[0] - '0' : 0;
	if (want)
		sigwrap_watch_installs(on_install);
}
