/*
 * test_load_python.c — Python frames in the loader (load_python.c) on
 * synthetic session files whose "interpreter" is this test executable: it
 * defines a _PyEval_EvalFrameDefault and some glue, and libc's qsort stands
 * for a C extension.  Checked: activations paired with their evaluation
 * frames from the root (a C callback into Python lands under the C that
 * called it), an extra leaf evaluation frame (a frame being pushed) gets
 * none, a cut native stack pairs from the leaf and puts what is left at the
 * root; the interpreter's frames folded (--python on), kept (native), Python
 * words dropped (off); names, first lines and executing lines from PY_CODE
 * records, shims skipped, a gone or missing record named
 * [unknown Python function] and counted; header.python into the profile; a
 * CUDA launch's host stack with its Python frames; under --calls on 3.11,
 * the hook's call dispatch taken out as the profiler's.
 * And the location-table decoder against co_positions() of CPython 3.11.2,
 * 3.12.1 and 3.13.0 for the same function.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "load_int.h"
#include "profile.h"
#include "test_reader_synth.h"
#include "testlib.h"

/* This executable is the interpreter module of the synthetic files. */
__attribute__((noinline, used)) int _PyEval_EvalFrameDefault(int x);
__attribute__((noinline, used)) int py_glue(int x);

/* Written as labelled cases, as the interpreter's loop is (py_instrumented):
 * a plain instruction's, the instrumented one's and the next.  Called with
 * x < 0, it gives where each case starts. */
static uintptr_t eval_case_pc[3];

__attribute__((noinline, used)) int _PyEval_EvalFrameDefault(int x)
{
	if (x < 0) {
		eval_case_pc[0] = (uintptr_t)&&TARGET_RESUME;
		eval_case_pc[1] = (uintptr_t)&&TARGET_INSTRUMENTED_RESUME;
		eval_case_pc[2] = (uintptr_t)&&TARGET_LOAD_FAST;
		return 0;
	}
	switch (x % 3) {
	case 0:
		goto TARGET_RESUME;
	case 1:
		goto TARGET_INSTRUMENTED_RESUME;
	default:
		goto TARGET_LOAD_FAST;
	}
TARGET_RESUME:
	x = x * 3 + 1 + (int)getpid() % 3;
	goto done;
TARGET_INSTRUMENTED_RESUME:
	x = x * 5 + (int)getppid() % 7;
	x += (int)getpid() % 5;
	x ^= (int)getppid() % 11;
	goto done;
TARGET_LOAD_FAST:
	x = x * 7 + 3 + (int)getpid() % 13;
done:
	return x;
}

__attribute__((noinline, used)) int py_glue(int x)
{
	return x * 5 + 2 + (int)getppid() % 5;
}

/* The vectorcall steps of a call (load_python.c, py_hook_dispatch) */
__attribute__((noinline, used)) int _PyFunction_Vectorcall(int x);
__attribute__((noinline, used)) int PyObject_Vectorcall(int x);

__attribute__((noinline, used)) int _PyFunction_Vectorcall(int x)
{
	return x * 7 + 3 + (int)getpid() % 7;
}

__attribute__((noinline, used)) int PyObject_Vectorcall(int x)
{
	return x * 11 + 4 + (int)getppid() % 11;
}

/* --- the location table ------------------------------------------------------ */

struct lt_case {
	const char *version, *hex;
	int firstlineno, n;
	int lines[80];
};

/* tests/python: sample(a, b) (an if, a for, a multi-line expression, a
 * try/except, a multi-line list), printed by co_linetable.hex() and
 * [p[0] for p in co_positions()] (-1: no location). */
static const struct lt_case lt_cases[] = {
	{"3.11.2",
	 "8000d80809884189058041d80708883282768076dd1116907191189418f000010913f0000109138841d80c0d"
	 "9011894688418841f003010913f006000e0fd80d0ef103010e0f8801f00403050ed80c0d9001894588018801"
	 "f8dd0b1cf00001050ef00001050ef00001050ed80c0d880188018801f00301050ef8f8f8e00c0d8871d80c0d"
	 "f003010c0ff00001050f",
	 2, 71,
	 {2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6,
	  6, 6, 6, 6, 6, 5, 8, 9, 8, 8, 8, 10, 11, 11, 11, 11, 11, 11, -1, 12, 12, 12, 12, 12, 12,
	  12, 12, 12, 13, 13, 13, 13, 12, -1, -1, -1, 14, 14, 15, 14, 14}},
	{"3.12.1",
	 "8000d80809884189058041d8070888328276dc111690719318f2000109138841d80c0d901189468941f10301"
	 "0913f006000e0fd80d0ef103010e0f8801f00403050ed80c0d900189458801f006000d0e8871d80c0df00301"
	 "0c0ff00001050ff8f405000c1df20001050ed80c0d8a01f00301050efa",
	 2, 66,
	 {2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6,
	  6, 5, 5, 8, 9, 8, 8, 8, 10, 11, 11, 11, 11, 11, 14, 14, 15, 14, 14, -1, 12, 12, 12, 12,
	  12, 12, 12, 12, 13, 13, 13, 13, 12, -1, -1, -1}},
	{"3.13.0",
	 "8000d8080989058041d8070888328376dc1116907196188841d80c0d89468a41f20300121af006000e0fd80d"
	 "0ef103010e0f8801f00403050ed80c0d900189458801f006000d0ed80c0df003010c0ff00001050ff8f40500"
	 "0c1df30001050ed80c0d8a01f00301050efa",
	 2, 67,
	 {2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6,
	  6, 5, 5, 5, 8, 9, 8, 8, 8, 10, 11, 11, 11, 11, 11, 14, 15, 14, 14, -1, 12, 12, 12, 12, 12,
	  12, 12, 12, 12, 13, 13, 13, 13, 12, -1, -1, -1}},
};

static size_t unhex(const char *h, unsigned char *out)
{
	size_t n = 0;

	for (; h[0] && h[1]; h += 2) {
		unsigned v;

		sscanf(h, "%2x", &v);
		out[n++] = (unsigned char)v;
	}
	return n;
}

static void test_line_table(void)
{
	unsigned char lt[256];
	size_t i, len;
	int u;

	for (i = 0; i < sizeof(lt_cases) / sizeof(lt_cases[0]); i++) {
		const struct lt_case *c = &lt_cases[i];
		int bad = 0;

		len = unhex(c->hex, lt);
		for (u = 0; u < c->n; u++)
			if (load_python_line(lt, len, c->firstlineno, (uint32_t)u) != c->lines[u]) {
				if (!bad++)
					fprintf(stderr, "%s: unit %d: line %d, co_positions %d\n",
						c->version, u,
						load_python_line(lt, len, c->firstlineno, (uint32_t)u),
						c->lines[u]);
			}
		CHECK_EQ_INT(bad, 0);
		/* past the table, or a table cut short: no line, no crash */
		CHECK_EQ_INT(load_python_line(lt, len, c->firstlineno, (uint32_t)c->n + 5), -1);
		for (u = 0; u < (int)len; u++)
			(void)load_python_line(lt, (size_t)u, c->firstlineno, 60);
	}
	/* a byte without its entry bit */
	lt[0] = 0x10;
	CHECK_EQ_INT(load_python_line(lt, 1, 7, 0), -1);
}

/* --- stacks -------------------------------------------------------------------- */

struct libc_mod {
	char path[4096];
	uint64_t base;
	struct cbn_segment seg[CBN_MAX_SEGMENTS];
	uint16_t nseg;
};

static int libc_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct libc_mod *m = ctx;
	int i;

	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so"))
		return 0;
	snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	m->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum && m->nseg < CBN_MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		m->seg[m->nseg].vaddr = ph->p_vaddr;
		m->seg[m->nseg].memsz = ph->p_memsz;
		m->seg[m->nseg].offset = ph->p_offset;
		m->seg[m->nseg].flags = ph->p_flags;
		m->nseg++;
	}
	return 1;
}

static void module_rec(struct synth *s, const char *path, uint64_t base,
		       const struct cbn_segment *seg, uint16_t nseg, uint32_t seq)
{
	unsigned char b[8192];
	struct cbn_rec_module *r = (struct cbn_rec_module *)b;
	size_t plen = strlen(path);
	uint32_t size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + nseg * sizeof(struct cbn_segment) +
						plen + 1);

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_MODULE_LOAD;
	r->h.size = size;
	r->ts = 1000;
	r->base = base;
	r->seq = seq;
	r->nseg = nseg;
	memcpy(r->seg, seg, nseg * sizeof(struct cbn_segment));
	r->path_len = (uint32_t)plen;
	memcpy((char *)&r->seg[nseg], path, plen + 1);
	synth_rec(s, r, size);
}

/* A PY_CODE record: id, names, first line, line table (hex), flags. */
static void py_code(struct synth *s, uint32_t id, const char *qual, const char *file, int first,
		    const char *lthex, uint16_t flags)
{
	unsigned char b[4096];
	struct cbn_rec_py_code *c = (struct cbn_rec_py_code *)b;
	size_t q = strlen(qual), f = strlen(file), lt;
	uint32_t size;

	memset(b, 0, sizeof(b));
	c->h.type = CBN_REC_PY_CODE;
	c->h.flags = flags;
	c->id = id;
	c->firstlineno = first;
	c->qualname_len = (uint16_t)q;
	c->filename_len = (uint16_t)f;
	memcpy(c->data, qual, q + 1);
	memcpy(c->data + q + 1, file, f + 1);
	lt = lthex ? unhex(lthex, (unsigned char *)c->data + q + 1 + f + 1) : 0;
	c->linetable_len = (uint32_t)lt;
	size = (uint32_t)CBN_REC_ALIGN(sizeof(*c) + q + 1 + f + 1 + lt);
	c->h.size = size;
	synth_rec(s, c, size);
}

static void sample_pcs(struct synth *s, uint64_t ts, const uint64_t *pcs, uint16_t n)
{
	unsigned char b[sizeof(struct cbn_rec_sample) + 64 * 8];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_SAMPLE;
	r->h.size = (uint32_t)(sizeof(*r) + n * 8u);
	r->ts = ts;
	r->weight = 1;
	r->nframes = n;
	memcpy(r->pc, pcs, n * 8u);
	synth_rec(s, r, r->h.size);
}

static struct profile *load_with(struct synth *s, enum prof_python view)
{
	char dir[64], path[256], err[256];
	struct prof_load_opts o = {PROF_INLINE_EXPAND, NULL, view};
	struct profile *p = NULL;
	int ret;

	snprintf(dir, sizeof(dir), "/tmp/cbn-test-load-python-XXXXXX");
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	REQUIRE(synth_write(s, path) == 0);
	ret = prof_load_with(dir, &o, &p, err, sizeof(err));
	if (ret < 0)
		fprintf(stderr, "prof_load: %s\n", err);
	REQUIRE(ret >= 0 && p != NULL);
	unlink(path);
	rmdir(dir);
	return p;
}

/* The names of stack st's frames, leaf first, joined with ';'. */
static const char *names(const struct profile *p, uint32_t st, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < p->stacks[st].nframes && off + 1 < len; i++) {
		const struct prof_frame *f = &p->frames[p->stacks[st].first + i];
		int w = snprintf(buf + off, len - off, "%s%s", i ? ";" : "", p->funcs[f->func].name);

		if (w < 0)
			break;
		off += (size_t)w;
	}
	return buf;
}

/* The frame of stack st named name, or NULL. */
static const struct prof_frame *frame_named(const struct profile *p, uint32_t st, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->stacks[st].nframes; i++) {
		const struct prof_frame *f = &p->frames[p->stacks[st].first + i];

		if (!strcmp(p->funcs[f->func].name, name))
			return f;
	}
	return NULL;
}

#define W(flags, id, unit) CBN_PYW_MAKE(flags, id, unit)

static void test_stacks(const struct synth_self *self, const struct libc_mod *libc)
{
	uint64_t ev = (uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 2;
	uint64_t gl = (uint64_t)(uintptr_t)&py_glue + 2;
	/* libc's own qsort (a sanitizer's runtime interposes its own) */
	void *libc_h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	uint64_t qs = (uint64_t)(uintptr_t)(libc_h ? dlsym(libc_h, "qsort") : NULL) + 1;
	/* 1: a callback from C (qsort) into Python, under the Python that called qsort */
	uint64_t cb[] = {ev, gl, qs, gl, ev,
			 W(CBN_PYW_ENTRY, 1, 0),                      /* cmp, new frame */
			 W(0, 2, 42), W(CBN_PYW_ENTRY, 3, 1)};        /* by_qsort, <module> */
	/* 2: a leaf evaluation frame without its frame yet (being pushed) */
	uint64_t race[] = {ev, gl, ev, W(CBN_PYW_ENTRY, 3, 1)};
	/* 3: the native stack cut (one evaluation frame for two activations) */
	uint64_t cut[] = {ev, gl, W(CBN_PYW_ENTRY, 1, 0), W(0, 2, 42), W(CBN_PYW_ENTRY, 3, 1)};
	/* 4: a shim between two frames, an unknown (gone) and a missing record */
	uint64_t odd[] = {ev, W(0, 5, 0), W(0, 4, 0), W(0, 6, 0), W(CBN_PYW_ENTRY, 3, 1)};
	static const enum prof_python views[] = {PROF_PYTHON_ON, PROF_PYTHON_NATIVE,
						 PROF_PYTHON_OFF};
	size_t v;

	REQUIRE(qs > 1);
	for (v = 0; v < 3; v++) {
		struct synth s;
		struct profile *p;
		const struct prof_frame *f;
		char buf[2048];
		uint32_t st[4], i;

		synth_init(&s, 100, 1, 0, 0, self->path);
		synth_hdr(&s)->python.state = CBN_PY_ON;
		synth_hdr(&s)->python.version = 0x030b02f0;
		synth_hdr(&s)->python.module_base = self->base;
		synth_hdr(&s)->python.stacks = 4;
		synth_hdr(&s)->python.codes_gone = 1;
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
		module_rec(&s, libc->path, libc->base, libc->seg, libc->nseg, 1);
		synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
		py_code(&s, 1, "cmp_keys", "/t/w.py", 80, NULL, 0);
		py_code(&s, 2, "by_qsort", "/t/w.py", 2, lt_cases[0].hex, 0);
		py_code(&s, 3, "<module>", "/t/w.py", 1, NULL, 0);
		py_code(&s, 4, "__init__", "__init__", 0, NULL, 0); /* 3.13's init shim */
		py_code(&s, 5, "", "", 0, NULL, CBN_PYC_GONE);
		/* id 6: no record */
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
		sample_pcs(&s, 2000, cb, sizeof(cb) / 8);
		sample_pcs(&s, 2001, race, sizeof(race) / 8);
		sample_pcs(&s, 2002, cut, sizeof(cut) / 8);
		sample_pcs(&s, 2003, odd, sizeof(odd) / 8);
		p = load_with(&s, views[v]);
		synth_free(&s);

		REQUIRE(p->nsamples == 4);
		CHECK_EQ_INT(p->processes[0].python.state, CBN_PY_ON);
		CHECK_EQ_INT(p->processes[0].python.version, 0x030b02f0);
		CHECK_EQ_INT(p->processes[0].python.codes_gone, 1);
		for (i = 0; i < 4; i++)
			st[i] = p->samples[i].stack;
		if (views[v] == PROF_PYTHON_ON) {
			/* qsort's frames (libc's own names) between the two Python parts */
			names(p, st[0], buf, sizeof(buf));
			CHECK(!strncmp(buf, "cmp_keys;", 9));
			CHECK(strstr(buf, "qsort") != NULL);
			CHECK(strstr(buf, "qsort") < strstr(buf, ";by_qsort;<module>"));
			CHECK(strstr(buf, "py_glue") == NULL && strstr(buf, "_PyEval") == NULL);
			CHECK_STR(names(p, st[1], buf, sizeof(buf)), "<module>");
			CHECK_STR(names(p, st[2], buf, sizeof(buf)), "cmp_keys;by_qsort;<module>");
			CHECK_STR(names(p, st[3], buf, sizeof(buf)),
				  "[unknown Python function];[unknown Python function];<module>");
			CHECK_EQ_INT(p->processes[0].python.codes_missing, 1);
			/* names, first lines, lines executing */
			f = frame_named(p, st[0], "by_qsort");
			REQUIRE(f);
			CHECK_STR(p->funcs[f->func].file, "/t/w.py");
			CHECK_EQ_INT(p->funcs[f->func].line, 2);
			CHECK_EQ_INT(f->line, lt_cases[0].lines[41]); /* unit 41: line 10 */
			CHECK(p->funcs[f->func].flags & PROF_FUNC_PYTHON);
			CHECK_STR(p->funcs[f->func].module, "");
			f = frame_named(p, st[0], "cmp_keys");
			REQUIRE(f);
			CHECK_EQ_INT(f->line, 80); /* a new frame: its first line */
			f = frame_named(p, st[0], "<module>");
			REQUIRE(f);
			CHECK_EQ_INT(f->line, 1); /* no line table: its first line */
		} else if (views[v] == PROF_PYTHON_NATIVE) {
			names(p, st[0], buf, sizeof(buf));
			CHECK(!strncmp(buf, "cmp_keys;_PyEval_EvalFrameDefault;py_glue;", 42));
			CHECK(strstr(buf, ";py_glue;by_qsort;<module>;_PyEval_EvalFrameDefault") != NULL);
			CHECK_STR(names(p, st[1], buf, sizeof(buf)),
				  "_PyEval_EvalFrameDefault;py_glue;<module>;_PyEval_EvalFrameDefault");
			CHECK_STR(names(p, st[2], buf, sizeof(buf)),
				  "cmp_keys;_PyEval_EvalFrameDefault;py_glue;by_qsort;<module>");
		} else {
			names(p, st[0], buf, sizeof(buf));
			CHECK(strstr(buf, "cmp_keys") == NULL && strstr(buf, "[unknown") == NULL);
			CHECK(!strncmp(buf, "_PyEval_EvalFrameDefault;py_glue;", 33));
			CHECK_STR(names(p, st[2], buf, sizeof(buf)), "_PyEval_EvalFrameDefault;py_glue");
			for (i = 0; i < p->nfuncs; i++)
				CHECK(!(p->funcs[i].flags & PROF_FUNC_PYTHON));
		}
		prof_free(p);
	}
}

/* Without header.python ON (an older file, --python off at run time),
 * words are never Python frames: they are dropped, not symbolized. */
static void test_not_on(const struct synth_self *self)
{
	uint64_t ev = (uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 2;
	uint64_t pcs[] = {ev, W(CBN_PYW_ENTRY, 3, 1)};
	struct synth s;
	struct profile *p;
	char buf[512];

	synth_init(&s, 100, 1, 0, 0, self->path);
	synth_hdr(&s)->python.state = CBN_PY_OFF;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
	py_code(&s, 3, "<module>", "/t/w.py", 1, NULL, 0);
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
	sample_pcs(&s, 2000, pcs, 2);
	p = load_with(&s, PROF_PYTHON_ON);
	synth_free(&s);
	REQUIRE(p->nsamples == 1);
	CHECK_EQ_INT(p->processes[0].python.state, CBN_PY_OFF);
	CHECK_STR(names(p, p->samples[0].stack, buf, sizeof(buf)), "_PyEval_EvalFrameDefault");
	prof_free(p);
}

/* A PY_CALLS record (state, flags, one entry per code id). */
static void py_calls(struct synth *s, uint32_t state, uint16_t flags, uint32_t id,
		     uint64_t calls, uint64_t prim)
{
	struct {
		struct cbn_rec_py_calls r;
		struct cbn_py_call_count c[1];
	} b;

	memset(&b, 0, sizeof(b));
	b.r.h.type = CBN_REC_PY_CALLS;
	b.r.h.flags = flags;
	b.r.state = state;
	b.r.n = id ? 1 : 0;
	b.r.h.size = (uint32_t)(sizeof(b.r) + b.r.n * sizeof(b.c[0]));
	b.c[0].id = id;
	b.c[0].calls = calls;
	b.c[0].primitive = prim;
	synth_rec(s, &b, b.r.h.size);
}

/* A builtin's entry: its C function fn, its counts, cProfile's name. */
static void cc_entry(struct cbn_py_ccall_count *e, void (*fn)(const struct synth_self *),
		     uint64_t calls, uint64_t prim, const char *label)
{
	e->meth = (uint64_t)(uintptr_t)fn;
	e->calls = calls;
	e->primitive = prim;
	snprintf(e->label, sizeof(e->label), "%s", label);
}

/* A builtin's count lands on the C function at its address, with
 * cProfile's name; a code id's on its Python function; both in the run's
 * total.  The refusals of the registration each say why. */
static void test_calls(const struct synth_self *self)
{
	static const struct {
		uint16_t flag;
		const char *why;
	} stepped[] = {
		{0, ""},
		{CBN_PYCALLS_MAIN_ONLY, ""},
		{CBN_PYCALLS_SWITCHED, "only its calls were counted, by its profile function"},
		{CBN_PYCALLS_STOPPED, "no calls were counted meanwhile"},
		{CBN_PYCALLS_REPLACED, "a frame evaluation function of its own"},
		{CBN_PYCALLS_PROFILE_TAKEN, "a profile function of its own"},
	};
	static const struct {
		uint32_t state;
		const char *why;
	} refused[] = {
		{CBN_PYCALLS_TOOL_TAKEN, "sys.monitoring's tool ids 3 and 4 were both taken"},
		{CBN_PYCALLS_NO_API, "the interpreter lacks a function the counting calls"},
		{CBN_PYCALLS_NOT_STARTED, "the interpreter never set its signal dispositions"},
		{CBN_PYCALLS_FAILED, "the interpreter refused the registration (or runs without its GIL)"},
	};
	struct {
		struct cbn_rec_py_ccalls r;
		struct cbn_py_ccall_count c[1];
	} cc;
	const struct prof_python_proc *py;
	struct synth s;
	struct profile *p;
	size_t i, k;
	int seen_c = 0, seen_py = 0;

	synth_init(&s, 100, 1, 0, 0, self->path);
	synth_hdr(&s)->python.state = CBN_PY_ON;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
	py_code(&s, 3, "tiny", "/t/w.py", 7, NULL, 0);
	py_calls(&s, CBN_PYCALLS_ON, CBN_PYCALLS_MAIN_ONLY | CBN_PYCALLS_BUILTINS, 0, 0, 0);
	py_calls(&s, CBN_PYCALLS_ON, CBN_PYCALLS_MAIN_ONLY | CBN_PYCALLS_BUILTINS, 3, 1000, 10);
	memset(&cc, 0, sizeof(cc));
	cc.r.h.type = CBN_REC_PY_CCALLS;
	cc.r.h.size = sizeof(cc);
	cc.r.n = 1;
	cc_entry(&cc.c[0], test_not_on, 70000, 69999, "{built-in method m.f}");
	synth_rec(&s, &cc, sizeof(cc));
	p = load_with(&s, PROF_PYTHON_ON);
	synth_free(&s);
	py = &p->processes[0].python;
	CHECK(py->calls == 71000 && py->primitive == 70009);
	CHECK(py->calls_flags & CBN_PYCALLS_BUILTINS);
	for (i = 0; i < p->nfuncs; i++) {
		const struct prof_func *f = &p->funcs[i];

		if (!strcmp(f->name, "test_not_on")) {
			seen_c = 1;
			CHECK(f->flags & PROF_FUNC_COUNTED);
			CHECK(f->calls == 70000 && f->primitive == 69999);
			CHECK(f->label && !strcmp(f->label, "{built-in method m.f}"));
		} else if (!strcmp(f->name, "tiny")) {
			seen_py = 1;
			CHECK(f->calls == 1000 && f->primitive == 10 && !f->label);
		}
	}
	CHECK(seen_c && seen_py);
	prof_free(p);

	for (k = 0; k < sizeof(refused) / sizeof(refused[0]); k++) {
		int said = 0;

		synth_init(&s, 100, 1, 0, 0, self->path);
		synth_hdr(&s)->python.state = CBN_PY_ON;
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
		py_calls(&s, refused[k].state, 0, 0, 0, 0);
		p = load_with(&s, PROF_PYTHON_ON);
		synth_free(&s);
		for (i = 0; i < p->nwarnings; i++)
			said |= strstr(p->warnings[i], refused[k].why) != NULL &&
				strstr(p->warnings[i], "--calls: the Python calls were not counted") != NULL;
		if (!said)
			fprintf(stderr, "no warning says: %s\n", refused[k].why);
		CHECK(said);
		prof_free(p);
	}

	/* 3.11's frame evaluation hook: each flag its own warning, none without */
	for (k = 0; k < sizeof(stepped) / sizeof(stepped[0]); k++) {
		int said = 0, any = 0;

		synth_init(&s, 100, 1, 0, 0, self->path);
		synth_hdr(&s)->python.state = CBN_PY_ON;
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
		py_calls(&s, CBN_PYCALLS_ON, 0, 0, 0, 0);
		py_calls(&s, CBN_PYCALLS_ON, stepped[k].flag, 3, 1000, 10);
		p = load_with(&s, PROF_PYTHON_ON);
		synth_free(&s);
		for (i = 0; i < p->nwarnings; i++) {
			any |= strstr(p->warnings[i], "--calls") != NULL;
			said |= strstr(p->warnings[i], stepped[k].why) != NULL;
		}
		if (stepped[k].why[0] && !said)
			fprintf(stderr, "no warning says: %s\n", stepped[k].why);
		CHECK(stepped[k].why[0] ? said : !any);
		prof_free(p);
	}

	/* 3.11 with builtins, and more threads than the main one: their
	 * calls were not counted, and the report says so */
	for (k = 1; k <= 2; k++) {
		int said = 0;

		synth_init(&s, 100, 1, 0, 0, self->path);
		synth_hdr(&s)->python.state = CBN_PY_ON;
		synth_hdr(&s)->threads_perf = (uint32_t)k;
		synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
		module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
		py_calls(&s, CBN_PYCALLS_ON, CBN_PYCALLS_MAIN_ONLY, 3, 1000, 10);
		p = load_with(&s, PROF_PYTHON_ON);
		synth_free(&s);
		for (i = 0; i < p->nwarnings; i++)
			said |= strstr(p->warnings[i], "other threads made were not counted") != NULL;
		CHECK(said == (k == 2));
		prof_free(p);
	}
}

/* Load s (and free it): of its n samples, case k's ours are the profiler's. */
static void calls_check(struct synth *s, size_t k, uint64_t n, uint64_t ours)
{
	struct profile *p = load_with(s, PROF_PYTHON_ON);

	synth_free(s);
	if (p->processes[0].overhead_samples != ours)
		fprintf(stderr, "case %zu: %llu samples the profiler's, expected %llu\n", k,
			(unsigned long long)p->processes[0].overhead_samples,
			(unsigned long long)ours);
	CHECK_EQ_INT(p->processes[0].overhead_samples, ours);
	CHECK_EQ_INT(p->nsamples, n - ours);
	prof_free(p);
}

/* A file of one Python process of version (and libc when given), its main
 * thread, f's code (id 1): the start of the --calls cases below. */
static void calls_start(struct synth *s, const struct synth_self *self,
			const struct libc_mod *libc, uint32_t version)
{
	synth_init(s, 100, 1, 0, 0, self->path);
	synth_hdr(s)->python.state = CBN_PY_ON;
	synth_hdr(s)->python.version = version;
	synth_hdr(s)->python.module_base = self->base;
	synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	module_rec(s, self->path, self->base, self->seg, self->nseg, 0);
	if (libc)
		module_rec(s, libc->path, libc->base, libc->seg, libc->nseg, 1);
	synth_thread(s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	py_code(s, 1, "f", "/t/w.py", 6, NULL, 0);
}

/*
 * --calls on 3.11: a sample in the call dispatch that the frame evaluation
 * hook makes (_PyFunction_Vectorcall called from the running frame's loop,
 * PyObject_Vectorcall between them or not, and what it calls, a new loop's
 * prologue included) is the profiler's; PyObject_Vectorcall alone, a
 * running callee, a C function between, =builtins (the profile function),
 * a hook of the program's own, 3.12 and no counting leave it the program's.
 */
static void test_hook_dispatch(const struct synth_self *self, const struct libc_mod *libc)
{
	uint64_t ev = (uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 2;
	uint64_t gl = (uint64_t)(uintptr_t)&py_glue + 2;
	uint64_t vf = (uint64_t)(uintptr_t)&_PyFunction_Vectorcall + 2;
	uint64_t vo = (uint64_t)(uintptr_t)&PyObject_Vectorcall + 2;
	void *libc_h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	uint64_t qs = (uint64_t)(uintptr_t)(libc_h ? dlsym(libc_h, "qsort") : NULL) + 1;
	uint64_t g = W(CBN_PYW_ENTRY, 3, 1), f = W(CBN_PYW_ENTRY, 1, 0);
	/* the dispatch's: 4 samples */
	uint64_t s1[] = {vf, vo, ev, g};         /* in _PyFunction_Vectorcall */
	uint64_t s2[] = {gl, vf, ev, g};         /* what it calls, no PyObject_Vectorcall */
	uint64_t s3[] = {ev, vf, vo, ev, g};     /* the new loop, its frame not linked yet */
	uint64_t s4[] = {gl, gl, vf, vo, ev, g}; /* deeper */
	/* the program's: 4 samples */
	uint64_t s5[] = {vo, ev, g};             /* PyObject_Vectorcall alone */
	uint64_t s6[] = {gl, ev, vf, vo, ev, f, g}; /* the callee running */
	uint64_t s7[] = {vf, qs, ev, g};         /* called from C */
	uint64_t s8[] = {ev, g};
	static const struct {
		uint32_t version, state;
		uint16_t flags;
		uint64_t ours;
	} cases[] = {
		{0x030b02f0, CBN_PYCALLS_ON, 0, 4},
		{0x030b07f0, CBN_PYCALLS_ON, CBN_PYCALLS_SWITCHED, 4},
		{0x030b02f0, CBN_PYCALLS_ON, CBN_PYCALLS_BUILTINS | CBN_PYCALLS_MAIN_ONLY, 0},
		{0x030b02f0, CBN_PYCALLS_ON, CBN_PYCALLS_REPLACED, 0},
		{0x030c01f0, CBN_PYCALLS_ON, 0, 0},
		{0x030b02f0, 0, 0, 0},
	};
	size_t k;

	REQUIRE(qs > 1);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct synth s;

		calls_start(&s, self, libc, cases[k].version);
		py_code(&s, 3, "g", "/t/w.py", 10, NULL, 0);
		if (cases[k].state)
			py_calls(&s, cases[k].state, cases[k].flags, 0, 0, 0);
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
		sample_pcs(&s, 2000, s1, sizeof(s1) / 8);
		sample_pcs(&s, 2001, s2, sizeof(s2) / 8);
		sample_pcs(&s, 2002, s3, sizeof(s3) / 8);
		sample_pcs(&s, 2003, s4, sizeof(s4) / 8);
		sample_pcs(&s, 2004, s5, sizeof(s5) / 8);
		sample_pcs(&s, 2005, s6, sizeof(s6) / 8);
		sample_pcs(&s, 2006, s7, sizeof(s7) / 8);
		sample_pcs(&s, 2007, s8, sizeof(s8) / 8);
		calls_check(&s, k, 8, cases[k].ours);
	}
}

/* Under --calls on 3.12+, a sample at the instrumented RESUME's own code,
 * told by its label's lines, is the counting's; one at a plain instruction's
 * is the program's.  3.11's counting has no instrumented instructions. */
static void test_instrumented(const struct synth_self *self)
{
	uint64_t f = W(CBN_PYW_ENTRY, 1, 0);
	static const struct {
		uint32_t version, state;
		uint64_t ours;
	} cases[] = {
		{0x030d00f0, CBN_PYCALLS_ON, 1},
		{0x030c01f0, CBN_PYCALLS_ON, 1},
		{0x030b02f0, CBN_PYCALLS_ON, 0},
		{0x030d00f0, 0, 0},
	};
	size_t k, i;

	REQUIRE(_PyEval_EvalFrameDefault(-1) == 0);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct synth s;

		calls_start(&s, self, NULL, cases[k].version);
		if (cases[k].state)
			py_calls(&s, cases[k].state, 0, 0, 0, 0);
		synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
		for (i = 0; i < 3; i++) {
			uint64_t pcs[] = {eval_case_pc[i], f};

			sample_pcs(&s, 2000 + i, pcs, 2);
		}
		calls_check(&s, k, 3, cases[k].ours);
	}
}

/* A block of the agent's table (CBN_PYCALLS_TABLE, CBN_PYCCALLS_TABLE:
 * counted in place in the file): its empty entries are no calls and no
 * unnamed function; its counts add to those of a batch written at exit
 * for the same id. */
static void test_calls_table(const struct synth_self *self)
{
	struct {
		struct cbn_rec_py_calls r;
		struct cbn_py_call_count c[8];
	} b;
	struct {
		struct cbn_rec_py_ccalls r;
		struct cbn_py_ccall_count c[4];
	} cc;
	const struct prof_python_proc *py;
	struct synth s;
	struct profile *p;
	size_t i;
	int seen = 0, seen_c = 0;

	synth_init(&s, 100, 1, 0, 0, self->path);
	synth_hdr(&s)->python.state = CBN_PY_ON;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
	py_code(&s, 3, "tiny", "/t/w.py", 7, NULL, 0);
	py_calls(&s, CBN_PYCALLS_ON, 0, 0, 0, 0);
	memset(&b, 0, sizeof(b));
	b.r.h.type = CBN_REC_PY_CALLS;
	b.r.h.flags = CBN_PYCALLS_TABLE;
	b.r.h.size = sizeof(b);
	b.r.state = CBN_PYCALLS_ON;
	b.r.n = 8;
	for (i = 0; i < 8; i++)
		b.c[i].id = (uint32_t)i;
	b.c[3].calls = 500;
	b.c[3].primitive = 5;
	synth_rec(&s, &b, sizeof(b));
	py_calls(&s, CBN_PYCALLS_ON, 0, 3, 20, 2);
	memset(&cc, 0, sizeof(cc));
	cc.r.h.type = CBN_REC_PY_CCALLS;
	cc.r.h.flags = CBN_PYCCALLS_TABLE;
	cc.r.h.size = sizeof(cc);
	cc.r.n = 4;
	cc_entry(&cc.c[0], test_not_on, 40, 39, "{built-in method m.f}");
	cc_entry(&cc.c[1], test_calls, 0, 0, "{built-in method m.g}"); /* not called yet */
	synth_rec(&s, &cc, sizeof(cc));
	p = load_with(&s, PROF_PYTHON_ON);
	synth_free(&s);
	py = &p->processes[0].python;
	CHECK(py->calls == 560 && py->primitive == 46);
	CHECK_EQ_INT((int)py->calls_unnamed, 0);
	CHECK_EQ_INT((int)py->calls_funcs, 2);
	for (i = 0; i < p->nfuncs; i++) {
		if (!strcmp(p->funcs[i].name, "tiny")) {
			seen = 1;
			CHECK(p->funcs[i].calls == 520 && p->funcs[i].primitive == 7);
		} else if (!strcmp(p->funcs[i].name, "test_not_on")) {
			seen_c = 1;
			CHECK(p->funcs[i].calls == 40 && p->funcs[i].primitive == 39);
		} else if (!strcmp(p->funcs[i].name, "test_calls")) {
			CHECK(!(p->funcs[i].flags & PROF_FUNC_COUNTED));
		}
	}
	CHECK(seen && seen_c);
	prof_free(p);
}

/* A CUDA launch's host stack (CUDA_STACK, every pc a return address) gets
 * its Python frames too: the launch's call site is a Python line. */
static void test_cuda_stack(const struct synth_self *self)
{
	uint64_t gl = (uint64_t)(uintptr_t)&py_glue + 2;
	uint64_t ev = (uint64_t)(uintptr_t)&_PyEval_EvalFrameDefault + 2;
	unsigned char b[256];
	struct cbn_rec_cuda_api *a = (struct cbn_rec_cuda_api *)b;
	struct cbn_rec_cuda_stack *st = (struct cbn_rec_cuda_stack *)b;
	struct synth s;
	struct profile *p;
	char buf[512];

	synth_init(&s, 100, 1, 0, 0, self->path);
	synth_hdr(&s)->python.state = CBN_PY_ON;
	synth_hdr(&s)->python.module_base = self->base;
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	module_rec(&s, self->path, self->base, self->seg, self->nseg, 0);
	synth_thread(&s, CBN_REC_THREAD_START, 1100, 100, "main", 0);
	py_code(&s, 2, "launch_step", "/t/train.py", 7, NULL, 0);
	py_code(&s, 3, "<module>", "/t/train.py", 1, NULL, 0);
	memset(b, 0, sizeof(b));
	a->h.type = CBN_REC_CUDA_API;
	a->start = 2000;
	a->end = 2100;
	a->tid = 100;
	a->correlation = 7;
	a->cbid = 211;
	a->domain = CBN_CUDA_RUNTIME;
	a->name_len = 16;
	synth_var(&s, a, sizeof(*a), "cudaLaunchKernel", NULL);
	memset(b, 0, sizeof(b));
	st->h.type = CBN_REC_CUDA_STACK;
	st->correlation = 7;
	st->tid = 100;
	st->nframes = 4;
	st->pc[0] = gl;
	st->pc[1] = ev;
	st->pc[2] = W(0, 2, 0);
	st->pc[3] = W(CBN_PYW_ENTRY, 3, 0);
	st->h.size = (uint32_t)(sizeof(*st) + 4 * 8);
	synth_rec(&s, st, st->h.size);
	p = load_with(&s, PROF_PYTHON_ON);
	synth_free(&s);
	REQUIRE(p->ncuda_api == 1);
	REQUIRE(p->cuda_api[0].stack != PROF_NONE);
	CHECK_STR(names(p, p->cuda_api[0].stack, buf, sizeof(buf)), "launch_step;<module>");
	prof_free(p);
}

int main(void)
{
	struct synth_self self;
	struct libc_mod libc;

	test_line_table();
	if (synth_self_find(&self) < 0) {
		fprintf(stderr, "SKIP: cannot find this executable's own segments\n");
		return test_result();
	}
	memset(&libc, 0, sizeof(libc));
	dl_iterate_phdr(libc_cb, &libc);
	REQUIRE(libc.nseg > 0);
	test_stacks(&self, &libc);
	test_not_on(&self);
	test_calls(&self);
	test_calls_table(&self);
	test_hook_dispatch(&self, &libc);
	test_instrumented(&self);
	test_cuda_stack(&self);
	return test_result();
}
