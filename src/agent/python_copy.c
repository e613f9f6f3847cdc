/*
 * python_copy.c — for every code object a stack holds (an id of
 * python_walk.c's table), one PY_CODE record with its qualified name, file
 * name, first line and line table, so that the launcher can name frames whose
 * objects are long gone.  The thread whose walk first meets the object copies
 * it, at once (a module's code object dies as soon as its body has run), into
 * a chunk of its own: in the sampling handler, or in normal code (the CUDA
 * layer's and the allocation hooks' stacks) with every signal blocked.  No
 * thread of the agent's is needed.
 *
 * SIGNAL-SAFE (sigpath.h): every read goes through python_vmread
 * (process_vm_readv on our own pid, which fails on an unmapped page instead
 * of faulting: a frame being pushed may name an object that died); the
 * object's fingerprint (python_code_key) is checked before and after the
 * copy, and one that changed is recorded as gone (CBN_PYC_GONE), never
 * misnamed; the record is built in place in the thread's names chunk
 * (writer.h: lock-free handout).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "python.h"
#include "sigpath.h"

#define PY_CODES_CAP ((1u << 16) / 4 * 3) /* python_walk.c */
/* The largest PY_CODE record: room reserved in the names chunk. */
#define PY_REC_MAX                                                                                 \
	CBN_REC_ALIGN(sizeof(struct cbn_rec_py_code) + 2 * (CBN_PY_NAME_MAX + 1) +                   \
		      CBN_PY_LINETABLE_MAX)

/* n bytes at src, or -1 when any of them is not mapped. */
static int py_read(void *dst, uintptr_t src, size_t n)
{
	return python_vmread(dst, src, n);
}

static uint64_t rd64(const unsigned char *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

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
static int py_str(const struct py_info *pi, uintptr_t obj, char *out, size_t cap)
{
	const struct py_layout *L = &pi->L;
	unsigned char hdr[128], raw[CBN_PY_NAME_MAX * 4];
	uint32_t state, kind;
	int64_t length;
	size_t n = 0, i, chars;

	if (!obj || (obj & 7) || L->uni_compact_size > sizeof(hdr) ||
	    py_read(hdr, obj, L->uni_compact_size) < 0 || rd64(hdr, L->ob_type) != pi->unicode_type)
		return -1;
	memcpy(&state, hdr + L->uni_state, 4);
	memcpy(&length, hdr + L->uni_length, 8);
	kind = (state >> 2) & 7;
	if (length < 0 || !(state & 0x20) || (kind != 1 && kind != 2 && kind != 4))
		return -1; /* not compact (a legacy string): not copied */
	chars = (size_t)length < cap / 4 ? (size_t)length : cap / 4;
	if (state & 0x40) { /* ASCII: bytes right after PyASCIIObject */
		chars = (size_t)length < cap - 1 ? (size_t)length : cap - 1;
		if (py_read(out, obj + L->uni_ascii_size, chars) < 0)
			return -1;
		n = chars;
	} else {
		if (chars * kind > sizeof(raw) || py_read(raw, obj + L->uni_compact_size, chars * kind) < 0)
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

/* The code object's header and its fingerprint now, or -1. */
static int py_code_now(const struct py_info *pi, uintptr_t code, unsigned char *hdr,
		       uint64_t *key)
{
	const struct py_layout *L = &pi->L;
	uint32_t flags;

	if (py_read(hdr, code, L->co_header) < 0 || rd64(hdr, L->ob_type) != pi->code_type)
		return -1;
	memcpy(&flags, hdr + L->co_flags, 4);
	*key = python_code_key(code, rd64(hdr, L->co_consts), rd64(hdr, L->co_names), flags,
			       rd64(hdr, L->ob_size));
	return 0;
}

/* Room for the largest record in the calling thread's names chunk (a
 * chunk of its own: EVENTS, never reused by a ring), or NULL. */
static struct cbn_rec_py_code *py_room(void)
{
	struct agent_thread *t = &agent_tls;
	void *r = t->names_chunk ? writer_reserve(t->names_chunk, PY_REC_MAX) : NULL;
	int i;

	if (r)
		return r;
	writer_chunk_retire(&agent.w, t->names_chunk);
	t->names_chunk = writer_chunk_new(&agent.w, CBN_CHUNK_EVENTS, t->tid);
	for (i = 0; !t->names_chunk && i < 4; i++) {
		if (writer_grow_signal(&agent.w, 4 * CBN_CHUNK_SIZE) != 0 && i)
			break;
		t->names_chunk = writer_chunk_new(&agent.w, CBN_CHUNK_EVENTS, t->tid);
	}
	return t->names_chunk ? writer_reserve(t->names_chunk, PY_REC_MAX) : NULL;
}

/* One PY_CODE record for id, in the names chunk; -1 when there was no room. */
static int py_copy_one(const struct py_info *pi, uint32_t id, uintptr_t code, uint64_t key)
{
	const struct py_layout *L = &pi->L;
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_rec_py_code *r = py_room();
	unsigned char hdr[512], bh[64];
	uint64_t now_key, lt, ltlen = 0;
	int qn = -1, fn = -1;
	size_t size;
	char *d;

	if (!r)
		return -1;
	d = (char *)(r + 1);
	memset(r, 0, sizeof(*r));
	r->h.type = CBN_REC_PY_CODE;
	r->id = id;
	r->addr = code;
	if (L->co_header <= sizeof(hdr) && py_code_now(pi, code, hdr, &now_key) == 0 &&
	    now_key == key) {
		memcpy(&r->firstlineno, hdr + L->co_firstlineno, 4);
		memcpy(&r->co_flags, hdr + L->co_flags, 4);
		r->units = (uint32_t)rd64(hdr, L->ob_size);
		qn = py_str(pi, rd64(hdr, L->co_qualname), d, CBN_PY_NAME_MAX);
		if (qn < 0)
			qn = py_str(pi, rd64(hdr, L->co_name), d, CBN_PY_NAME_MAX);
		if (qn >= 0)
			fn = py_str(pi, rd64(hdr, L->co_filename), d + qn + 1, CBN_PY_NAME_MAX);
		lt = rd64(hdr, L->co_linetable);
		if (fn >= 0 && lt && !(lt & 7) && py_read(bh, lt, L->bytes_sval) == 0 &&
		    rd64(bh, L->ob_type) == pi->bytes_type) {
			ltlen = rd64(bh, L->bytes_size);
			if (ltlen > CBN_PY_LINETABLE_MAX) {
				ltlen = CBN_PY_LINETABLE_MAX;
				r->h.flags |= CBN_PYC_LINES_CUT;
			}
			if (py_read(d + qn + 1 + fn + 1, lt + L->bytes_sval, (size_t)ltlen) < 0)
				fn = -1;
		}
		/* Still the same object after the copy? */
		if (fn >= 0 && (py_code_now(pi, code, hdr, &now_key) < 0 || now_key != key))
			fn = -1;
	}
	if (qn < 0 || fn < 0) {
		memset(r, 0, sizeof(*r));
		r->h.type = CBN_REC_PY_CODE;
		r->h.flags = CBN_PYC_GONE;
		r->id = id;
		r->addr = code;
		qn = fn = 0;
		ltlen = 0;
		d[0] = d[1] = '\0';
		if (h)
			atomic_fetch_add_explicit(&h->python.codes_gone, 1, memory_order_relaxed);
	}
	r->qualname_len = (uint16_t)qn;
	r->filename_len = (uint16_t)fn;
	r->linetable_len = (uint32_t)ltlen;
	size = CBN_REC_ALIGN(sizeof(*r) + (size_t)qn + 1 + (size_t)fn + 1 + (size_t)ltlen);
	memset((char *)r + sizeof(*r) + qn + 1 + fn + 1 + ltlen, 0,
	       size - (sizeof(*r) + qn + 1 + fn + 1 + ltlen));
	r->h.size = (uint32_t)size;
	writer_commit(agent_tls.names_chunk, (uint32_t)size);
	if (h)
		atomic_fetch_add_explicit(&h->python.codes, 1, memory_order_relaxed);
	return 0;
}

/*
 * SIGNAL-SAFE.  Copy the ids the calling thread's walk met first in this
 * generation (a fork child's file is a new one), each once in the process:
 * the thread that claims it copies it (another that meets it meanwhile only
 * records its id).  Outside the handler every signal is blocked meanwhile:
 * the handler writes to the same chunk.
 */
void python_copy_ids(const uint32_t *ids, int n)
{
	const struct py_info *pi = atomic_load_explicit(&python_info, memory_order_acquire);
	uint32_t gen = atomic_load_explicit(&python_gen, memory_order_relaxed);
	sigset_t all, old;
	int i, blocked = 0;

	if (!pi || !python_codes || !agent.w.hdr || n <= 0)
		return;
	for (i = 0; i < n; i++) {
		struct py_code *c = &python_codes[ids[i]];
		uintptr_t addr = atomic_load_explicit(&c->addr, memory_order_acquire);
		uint32_t was = atomic_load_explicit(&c->copied, memory_order_relaxed);

		if (!addr || was == gen ||
		    !atomic_compare_exchange_strong(&c->copied, &was, gen))
			continue;
		if (!agent_tls.in_handler && !blocked) {
			sigfillset(&all);
			syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
			blocked = 1;
		}
		if (py_copy_one(pi, ids[i], addr, c->key) < 0)
			atomic_store(&c->copied, 0); /* no room: the next sight tries again */
	}
	if (blocked)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

/* Every id of this generation not copied yet (normal context: exit). */
static void py_sweep(void)
{
	uint32_t n, id, batch[64];
	int k = 0;

	if (!python_codes)
		return;
	n = atomic_load(&python_ncodes);
	if (n > PY_CODES_CAP)
		n = PY_CODES_CAP;
	for (id = 1; id <= n && agent.w.hdr; id++) {
		batch[k++] = id;
		if (k == 64) {
			python_copy_ids(batch, k);
			k = 0;
		}
	}
	python_copy_ids(batch, k);
}

/* A fork child: its own file, which holds no PY_CODE yet.  Ids stay (the
 * child has the parent's objects); the generation moves, so each is copied
 * again once the child's stacks hold it; the survivor's names chunk is the
 * parent's. */
void python_after_fork_child(void)
{
	agent_tls.names_chunk = NULL;
	if (!atomic_load(&python_info) && !agent.w.hdr)
		return;
	atomic_fetch_add(&python_gen, 1);
	python_header_write();
}

/* exit(): copy what is pending now (the objects may be gone after the
 * interpreter's finalization: those are recorded as gone). */
void python_exit(void)
{
	py_sweep();
}
