/*
 * pyread.c — CPython 3.11-3.13 structures read through a read function
 * (cbn_pyread.h): the same code for the agent inside the process and the
 * launcher outside it.  Signal-safe when the read function is: no
 * allocation, no lock, no libc beyond memcpy/memset/snprintf (snprintf only
 * for a layout's refusal, never in a handler).
 */
#include <stdio.h>
#include <string.h>

#include "cbn_pyread.h"

/* --- layouts ------------------------------------------------------------------ */

/* Printed with offsetof() against each version's internal headers
 * (Py_BUILD_CORE), x86-64; the same in 3.11.2 (Debian) and 3.11.7. */
static const struct cbn_py_layout py_311 = {
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

static const struct cbn_py_layout py_312 = {
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
static int py_layout_313(uintptr_t runtime, uint32_t version, cbn_py_read_fn rd, void *ctx,
			 struct cbn_py_layout *L, char *why, size_t len)
{
	unsigned char d[DO_END];
	uint64_t v, ft;
	int bad = 0;

	if (rd(ctx, d, runtime, sizeof(d)) < 0) {
		snprintf(why, len, "_PyRuntime cannot be read");
		return -1;
	}
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

int cbn_py_layout_of(uintptr_t runtime, uint32_t version, cbn_py_read_fn rd, void *ctx,
		     struct cbn_py_layout *L, char *why, size_t len)
{
	uint32_t major = version >> 24, minor = (version >> 16) & 0xff, micro = (version >> 8) & 0xff;

	if (major == 3 && minor == 11) {
		*L = py_311;
	} else if (major == 3 && minor == 12) {
		*L = py_312;
	} else if (major == 3 && minor == 13) {
		if (py_layout_313(runtime, version, rd, ctx, L, why, len) < 0)
			return -1;
	} else {
		snprintf(why, len, "CPython %u.%u.%u is not understood (this cbottleneck reads "
			 "3.11 to 3.13)", major, minor, micro);
		return -1;
	}
	L->version = version;
	return 0;
}

uint64_t cbn_py_code_key(uintptr_t code, uint64_t consts, uint64_t names, uint32_t flags,
			 uint64_t units)
{
	uint64_t x = code ^ (consts * 0x9e3779b97f4a7c15ull) ^ (names * 0xc2b2ae3d27d4eb4full) ^
		     ((uint64_t)flags << 40) ^ (units * 0x165667b19e3779f9ull);

	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	return x | 1;
}

static uint64_t rd64(const unsigned char *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* An address a user object may have. */
static int py_addr_ok(uintptr_t a)
{
	return a >= 4096 && a < 0x00007fffffffe000ull && !(a & 7);
}

/* --- another thread's chain ------------------------------------------------- */

/* The code object's header and its fingerprint now, or -1. */
static int py_code_now(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t code,
		       unsigned char *hdr, uint64_t *key)
{
	const struct cbn_py_layout *L = &t->L;
	uint32_t flags;

	if (rd(ctx, hdr, code, L->co_header) < 0 || rd64(hdr, L->ob_type) != t->code_type)
		return -1;
	memcpy(&flags, hdr + L->co_flags, 4);
	*key = cbn_py_code_key(code, rd64(hdr, L->co_consts), rd64(hdr, L->co_names), flags,
			       rd64(hdr, L->ob_size));
	return 0;
}

/* The chain from frame f, at most max frames (the caller's out). */
static int py_chain_of(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t f,
		       struct cbn_py_frame *out, int max)
{
	const struct cbn_py_layout *L = &t->L;
	unsigned char fr[256], co[1024];
	uintptr_t code, next;
	int n = 0, steps = 0;

	if (L->fr_size > sizeof(fr) || L->co_header > sizeof(co))
		return 0;
	for (; f && steps < max + 8; f = next, steps++) {
		uint64_t units, key;
		int64_t u;

		if (!py_addr_ok(f) || rd(ctx, fr, f, L->fr_size) < 0)
			return 0;
		next = rd64(fr, L->fr_previous);
		if (next == f)
			return 0;
		if (fr[L->fr_owner] >= L->owner_marker) {
			/* 3.12+: the C entry frame below an activation's first frame */
			if (n)
				out[n - 1].flags |= CBN_PYW_ENTRY;
			continue;
		}
		if (n == max) {
			out[n - 1].flags |= CBN_PYW_TRUNC;
			break;
		}
		code = rd64(fr, L->fr_code);
		if (!py_addr_ok(code) || py_code_now(t, rd, ctx, code, co, &key) < 0)
			return 0;
		units = rd64(co, L->ob_size);
		u = ((int64_t)rd64(fr, L->fr_instr) - (int64_t)(code + L->co_code)) / 2;
		out[n].code = code;
		out[n].key = key;
		out[n].flags = 0;
		/* prev_instr (3.11, 3.12) is one unit before the first instruction
		 * in a new frame: u == -1, the function's first line */
		out[n].unit = u >= -1 && u < (int64_t)units && u + 1 < CBN_PYW_UNIT_UNKNOWN
				      ? (uint32_t)(u + 1)
				      : CBN_PYW_UNIT_UNKNOWN;
		if (L->fr_is_entry >= 0 && fr[L->fr_is_entry])
			out[n].flags |= CBN_PYW_ENTRY;
		n++;
	}
	return n;
}

/* The interpreter's first thread state, 0 when the runtime finalizes or a
 * read failed. */
static uintptr_t py_threads_head(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx)
{
	const struct cbn_py_layout *L = &t->L;
	uintptr_t interp, ts, fin;

	if (rd(ctx, &fin, t->runtime + L->rt_finalizing, 8) < 0 || fin ||
	    rd(ctx, &interp, t->runtime + L->rt_interp_head, 8) < 0 || !py_addr_ok(interp) ||
	    rd(ctx, &ts, interp + L->is_threads_head, 8) < 0)
		return 0;
	return ts;
}

int cbn_py_threads(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t *tids,
		   uintptr_t *ts, int max)
{
	const struct cbn_py_layout *L = &t->L;
	uintptr_t at = py_threads_head(t, rd, ctx);
	uint64_t ntid;
	int n = 0, i;

	for (i = 0; i < 4096 && n < max && py_addr_ok(at); i++) {
		if (rd(ctx, &ntid, at + L->ts_native_tid, 8) < 0)
			break;
		tids[n] = (uint32_t)ntid;
		ts[n++] = at;
		if (rd(ctx, &at, at + L->ts_next, 8) < 0)
			break;
	}
	return n;
}

/* The frames of the thread whose state is at ts (its tid checked). */
static int py_frames_in(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t ts,
			struct cbn_py_frame *out, int max)
{
	const struct cbn_py_layout *L = &t->L;
	uintptr_t f = 0;

	if (L->ts_cframe >= 0) {
		uintptr_t cf;

		if (rd(ctx, &cf, ts + (uint32_t)L->ts_cframe, 8) < 0 || !py_addr_ok(cf) ||
		    rd(ctx, &f, cf + L->cf_current, 8) < 0)
			return 0;
	} else if (rd(ctx, &f, ts + L->cf_current, 8) < 0) {
		return 0;
	}
	return f ? py_chain_of(t, rd, ctx, f, out, max) : 0;
}

int cbn_py_frames_at(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t ts,
		     uint32_t tid, struct cbn_py_frame *out, int max)
{
	const struct cbn_py_layout *L = &t->L;
	uintptr_t fin;
	uint64_t ntid;

	if (!py_addr_ok(ts) || rd(ctx, &ntid, ts + L->ts_native_tid, 8) < 0 || ntid != tid)
		return -1;
	if (max <= 0 || rd(ctx, &fin, t->runtime + L->rt_finalizing, 8) < 0 || fin)
		return 0;
	return py_frames_in(t, rd, ctx, ts, out, max);
}

int cbn_py_frames_of(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t tid,
		     struct cbn_py_frame *out, int max)
{
	const struct cbn_py_layout *L = &t->L;
	uintptr_t ts;
	uint64_t ntid = 0;
	int i;

	if (max <= 0 || !(ts = py_threads_head(t, rd, ctx)))
		return 0;
	for (i = 0; i < 4096 && py_addr_ok(ts); i++) {
		if (rd(ctx, &ntid, ts + L->ts_native_tid, 8) < 0)
			return 0;
		if (ntid == tid)
			break;
		if (rd(ctx, &ts, ts + L->ts_next, 8) < 0)
			return 0;
	}
	if (!py_addr_ok(ts) || ntid != tid)
		return 0; /* no Python on that thread */
	return py_frames_in(t, rd, ctx, ts, out, max);
}

/* --- a code object's names ---------------------------------------------------- */

/* UTF-8 of one code point. */
static size_t utf8_put(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | (c >> 6));
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | (c >> 12));
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (c >> 18));
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A str object's text as UTF-8 into out (at most cap - 1 bytes, whole code
 * points), NUL-terminated; its length, or -1. */
static int py_str(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t obj,
		  char *out, size_t cap)
{
	const struct cbn_py_layout *L = &t->L;
	unsigned char hdr[128], raw[CBN_PY_NAME_MAX * 4];
	uint32_t state, kind;
	int64_t length;
	size_t n = 0, i, chars;

	if (!obj || (obj & 7) || L->uni_compact_size > sizeof(hdr) ||
	    rd(ctx, hdr, obj, L->uni_compact_size) < 0 || rd64(hdr, L->ob_type) != t->unicode_type)
		return -1;
	memcpy(&state, hdr + L->uni_state, 4);
	memcpy(&length, hdr + L->uni_length, 8);
	kind = (state >> 2) & 7;
	if (length < 0 || !(state & 0x20) || (kind != 1 && kind != 2 && kind != 4))
		return -1; /* not compact (a legacy string): not copied */
	chars = (size_t)length < cap / 4 ? (size_t)length : cap / 4;
	if (state & 0x40) { /* ASCII: bytes right after PyASCIIObject */
		chars = (size_t)length < cap - 1 ? (size_t)length : cap - 1;
		if (rd(ctx, out, obj + L->uni_ascii_size, chars) < 0)
			return -1;
		n = chars;
	} else {
		if (chars * kind > sizeof(raw) ||
		    rd(ctx, raw, obj + L->uni_compact_size, chars * kind) < 0)
			return -1;
		for (i = 0; i < chars; i++) {
			uint32_t c = kind == 1 ? raw[i]
				     : kind == 2 ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8)
						 : (uint32_t)(raw[4 * i] | raw[4 * i + 1] << 8 |
							      raw[4 * i + 2] << 16 |
							      (uint32_t)raw[4 * i + 3] << 24);
			char u[4];
			size_t k = utf8_put(u, c > 0x10ffff ? 0xfffd : c);

			if (n + k >= cap)
				break;
			memcpy(out + n, u, k);
			n += k;
		}
	}
	out[n] = '\0';
	return (int)n;
}

size_t cbn_py_code_record(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t id,
			  uintptr_t code, uint64_t key, struct cbn_rec_py_code *r, int *gone)
{
	const struct cbn_py_layout *L = &t->L;
	unsigned char hdr[512], bh[64];
	uint64_t now_key, lt, ltlen = 0;
	int qn = -1, fn = -1;
	char *d = (char *)(r + 1);
	size_t size;

	memset(r, 0, sizeof(*r));
	r->h.type = CBN_REC_PY_CODE;
	r->id = id;
	r->addr = code;
	if (L->co_header <= sizeof(hdr) && py_code_now(t, rd, ctx, code, hdr, &now_key) == 0 &&
	    now_key == key) {
		memcpy(&r->firstlineno, hdr + L->co_firstlineno, 4);
		memcpy(&r->co_flags, hdr + L->co_flags, 4);
		r->units = (uint32_t)rd64(hdr, L->ob_size);
		qn = py_str(t, rd, ctx, rd64(hdr, L->co_qualname), d, CBN_PY_NAME_MAX);
		if (qn < 0)
			qn = py_str(t, rd, ctx, rd64(hdr, L->co_name), d, CBN_PY_NAME_MAX);
		if (qn >= 0)
			fn = py_str(t, rd, ctx, rd64(hdr, L->co_filename), d + qn + 1, CBN_PY_NAME_MAX);
		lt = rd64(hdr, L->co_linetable);
		if (fn >= 0 && lt && !(lt & 7) && rd(ctx, bh, lt, L->bytes_sval) == 0 &&
		    rd64(bh, L->ob_type) == t->bytes_type) {
			ltlen = rd64(bh, L->bytes_size);
			if (ltlen > CBN_PY_LINETABLE_MAX) {
				ltlen = CBN_PY_LINETABLE_MAX;
				r->h.flags |= CBN_PYC_LINES_CUT;
			}
			if (rd(ctx, d + qn + 1 + fn + 1, lt + L->bytes_sval, (size_t)ltlen) < 0)
				fn = -1;
		}
		/* Still the same object after the copy? */
		if (fn >= 0 && (py_code_now(t, rd, ctx, code, hdr, &now_key) < 0 || now_key != key))
			fn = -1;
	}
	*gone = qn < 0 || fn < 0;
	if (*gone) {
		memset(r, 0, sizeof(*r));
		r->h.type = CBN_REC_PY_CODE;
		r->h.flags = CBN_PYC_GONE;
		r->id = id;
		r->addr = code;
		qn = fn = 0;
		ltlen = 0;
		d[0] = d[1] = '\0';
	}
	r->qualname_len = (uint16_t)qn;
	r->filename_len = (uint16_t)fn;
	r->linetable_len = (uint32_t)ltlen;
	size = CBN_REC_ALIGN(sizeof(*r) + (size_t)qn + 1 + (size_t)fn + 1 + (size_t)ltlen);
	memset((char *)r + sizeof(*r) + qn + 1 + fn + 1 + ltlen, 0,
	       size - (sizeof(*r) + qn + 1 + fn + 1 + ltlen));
	r->h.size = (uint32_t)size;
	return size;
}
