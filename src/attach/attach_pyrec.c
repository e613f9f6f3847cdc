/*
 * attach_pyrec.c — the Python frames of `cbottleneck --pid`'s samples: the
 * interpreter found as dump finds it (attach_python.c) and told in the
 * session file's header as the agent tells it (header.python), each
 * sample's thread's frame chain read when the sample is read and appended
 * to its native pcs as CBN_PYW words, each code object given an id the
 * first time and its names and line table written once as a PY_CODE record,
 * so that the loader interleaves and names them as in a launched run.
 */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "attach_int.h"
#include "util.h"

struct pyrec_eq {
	const struct attach_pyrec *p;
	uint64_t key;
};

static int pyrec_same(const void *ctx, uint32_t id)
{
	const struct pyrec_eq *e = ctx;

	return e->p->keys[id - 1] == e->key;
}

/* pid's executable into exe[len] ("" when it cannot be read). */
static void pyrec_exe(pid_t pid, char *exe, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, len - 1);
	exe[n > 0 ? n : 0] = '\0';
}

/* pid's interpreter found and said in f's header. */
static void pyrec_find(struct attach_pyrec *p, struct attach_file *f, pid_t pid)
{
	struct cbn_file_header *h = f->w.hdr;
	char why[120] = "";
	int st;

	attach_py_free(&p->py);
	st = attach_py_find(pid, &p->py, why, sizeof(why));
	if (st == 0)
		return;
	h->python.version = p->py.version;
	h->python.module_base = p->py.module_base;
	h->python.runtime = p->py.t.runtime;
	if (st < 0) {
		snprintf(h->python.reason, sizeof(h->python.reason), "%s", why);
		h->python.reason_len = (uint32_t)strlen(h->python.reason);
		atomic_store(&h->python.state, CBN_PY_REFUSED);
		return;
	}
	h->python.reason[0] = '\0';
	h->python.reason_len = 0;
	h->python_code_type = p->py.t.code_type;
	h->python_unicode_type = p->py.t.unicode_type;
	h->python_bytes_type = p->py.t.bytes_type;
	atomic_store(&h->python.state, CBN_PY_ON);
	p->on = 1;
}

void attach_pyrec_open(struct attach_pyrec *p, struct attach_file *f, pid_t pid)
{
	memset(p, 0, sizeof(*p));
	pyrec_exe(pid, p->exe, sizeof(p->exe));
	pyrec_find(p, f, pid);
}

int attach_pyrec_exec(struct attach_pyrec *p, pid_t pid)
{
	char exe[sizeof(p->exe)];

	pyrec_exe(pid, exe, sizeof(exe));
	if (!exe[0] || !strcmp(exe, p->exe))
		return 0;
	memcpy(p->exe, exe, sizeof(exe));
	return 1;
}

void attach_pyrec_again(struct attach_pyrec *p, struct attach_file *f, pid_t pid)
{
	if (p->on || p->replaced) {
		/* its addresses are the old image's: nothing of them is read */
		p->on = 0;
		p->replaced = 1;
		return;
	}
	pyrec_find(p, f, pid);
}

/* The id of frame fr's code object, its PY_CODE record written the first
 * time; 0 when the table is full. */
static uint32_t pyrec_id(struct attach_pyrec *p, struct attach_file *f, const struct cbn_py_frame *fr)
{
	struct cbn_file_header *h = f->w.hdr;
	struct pyrec_eq e = {p, fr->key};
	uint32_t id = util_map_find(&p->map, fr->key, pyrec_same, &e);
	size_t size;
	int gone = 0;

	if (id != UINT32_MAX)
		return id;
	if (p->nkeys >= CBN_PY_CODES_MAX ||
	    util_grow((void **)&p->keys, &p->capkeys, p->nkeys + 1, sizeof(*p->keys)) < 0 ||
	    util_map_put(&p->map, fr->key, (uint32_t)p->nkeys + 1) < 0) {
		atomic_fetch_add_explicit(&h->python.table_full, 1, memory_order_relaxed);
		return 0;
	}
	p->keys[p->nkeys++] = fr->key;
	id = (uint32_t)p->nkeys;
	size = attach_py_code(&p->py, id, fr, &gone);
	if (size && writer_append_event(&f->w, p->py.rec, size) == 0) {
		atomic_fetch_add_explicit(&h->python.codes, 1, memory_order_relaxed);
		if (gone)
			atomic_fetch_add_explicit(&h->python.codes_gone, 1, memory_order_relaxed);
	}
	return id;
}

int attach_pyrec_frames(struct attach_pyrec *p, struct attach_file *f, pid_t tid, uint64_t *pcs,
			int n, int max)
{
	struct cbn_file_header *h = f->w.hdr;
	int k, i;

	if (!p->on || n >= max)
		return n;
	k = attach_py_frames(&p->py, tid, p->fr, max - n < CBN_MAX_FRAMES ? max - n : CBN_MAX_FRAMES);
	for (i = 0; i < k; i++)
		pcs[n + i] = CBN_PYW_MAKE(p->fr[i].flags, pyrec_id(p, f, &p->fr[i]), p->fr[i].unit);
	if (k > 0) {
		atomic_fetch_add_explicit(&h->python.stacks, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->python.frames, (uint64_t)k, memory_order_relaxed);
		if (p->fr[k - 1].flags & CBN_PYW_TRUNC)
			atomic_fetch_add_explicit(&h->python.truncated, 1, memory_order_relaxed);
	}
	return n + k;
}

void attach_pyrec_close(struct attach_pyrec *p)
{
	attach_py_free(&p->py);
	util_map_free(&p->map);
	free(p->keys);
	p->keys = NULL;
}
