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
 * SIGNAL-SAFE (sigpath.h): the record is built in place in the thread's
 * names chunk (writer.h: lock-free handout) by cbn_py_code_record, whose
 * every read goes through agent_vmread (process_vm_readv on our own pid,
 * which fails on an unmapped page instead of faulting: a frame being pushed
 * may name an object that died); the object's fingerprint is checked before
 * and after the copy, and one that changed is recorded as gone
 * (CBN_PYC_GONE), never misnamed.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "floor.h"
#include "python_copy.h"
#include "python_find.h"
#include "python_table.h"

#define PY_REC_MAX CBN_PY_REC_MAX
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

/*
 * A read of a live object's memory (python_copy_live): directly, where it
 * lies within one page.  The string header read is a compact object's,
 * longer than an ASCII string's and so past the end of a short one, which
 * may be the end of the mapping: a read into the next page goes through
 * agent_vmread.
 */
static int live_read(void *ctx, void *dst, uintptr_t src, size_t n)
{
	(void)ctx;
	if (!src || (src & 4095) + n > 4096)
		return agent_vmread(dst, src, n);
	memcpy(dst, (const void *)src, n);
	return 0;
}

/*
 * The reads of one record (cbn_py_code_record: the code object's header,
 * then each name's and the line table's object header and the text right
 * after it) through a window: a read that misses takes up to 512 bytes
 * from where it starts, never past its page's end (the next page may not
 * be mapped), and the text after a header is then served from it.  Eight
 * system calls a record became five (each 1-1.5 us in a VM; `import
 * torch` copies some 600-700 records, all in its samples' handlers).  A read
 * of exactly the range that filled the window goes to memory again: it is
 * the check that the object is still the one copied.
 */
struct py_window {
	uintptr_t base, fill;        /* the window's first byte; the read that filled it */
	size_t len, fill_n;
	cbn_py_read_fn rd;           /* agent_vmread's (python_read) */
	unsigned char buf[512];
};

static int window_read(void *ctx, void *dst, uintptr_t src, size_t n)
{
	struct py_window *w = ctx;
	size_t want = 4096 - (src & 4095);

	if (w->len && src >= w->base && n <= w->len && src - w->base <= w->len - n &&
	    !(src == w->fill && n == w->fill_n)) {
		memcpy(dst, w->buf + (src - w->base), n);
		return 0;
	}
	if (want > sizeof(w->buf))
		want = sizeof(w->buf);
	if (n > want)
		return w->rd(NULL, dst, src, n);
	w->len = 0;
	if (w->rd(NULL, w->buf, src, want) < 0)
		return -1; /* the page holds the n bytes too: unmapped */
	w->base = w->fill = src;
	w->len = want;
	w->fill_n = n;
	memcpy(dst, w->buf, n);
	return 0;
}

/* One PY_CODE record for id, in the names chunk (cbn_pyread.h builds it,
 * reading by rd); -1 when there was no room. */
static int py_copy_one(const struct py_info *pi, uint32_t id, uintptr_t code, uint64_t key,
		       cbn_py_read_fn rd)
{
	struct cbn_file_header *h = agent.w.hdr;
	struct cbn_rec_py_code *r = py_room();
	struct py_window w;
	size_t size;
	int gone;

	if (!r)
		return -1;
	if (rd == live_read) {
		size = cbn_py_code_record(&pi->t, rd, NULL, id, code, key, r, &gone);
	} else {
		w.len = 0;
		w.rd = rd;
		size = cbn_py_code_record(&pi->t, window_read, &w, id, code, key, r, &gone);
	}
	writer_commit(agent_tls.names_chunk, (uint32_t)size);
	if (h)
		atomic_fetch_add_explicit(gone ? &h->python.codes_gone : &h->python.codes, 1,
					  memory_order_relaxed);
	return 0;
}

/*
 * SIGNAL-SAFE.  Copy the ids the calling thread's walk met first in this
 * generation (a fork child's file is a new one), each once in the process:
 * the thread that claims it copies it (another that meets it meanwhile only
 * records its id).  Outside the handler every signal is blocked meanwhile:
 * the handler writes to the same chunk.
 */
static void copy_ids(const uint32_t *ids, int n, uintptr_t live)
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
			agent_syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
			blocked = 1;
		}
		if (py_copy_one(pi, ids[i], addr, c->key, addr == live ? live_read : python_read) < 0)
			atomic_store(&c->copied, 0); /* no room: the next sight tries again */
	}
	if (blocked)
		agent_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
}

void python_copy_ids(const uint32_t *ids, int n)
{
	copy_ids(ids, n, 0);
}

void python_copy_live(const uint32_t *ids, int n, uintptr_t code)
{
	copy_ids(ids, n, code);
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
