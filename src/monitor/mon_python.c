/*
 * mon_python.c — a process's Python frames read from outside (the off-CPU
 * sampler's blocked threads): the interpreter the agent found (header.python:
 * its version, _PyRuntime and type addresses), its layout and frame chain
 * read with process_vm_readv through cbn_pyread.h, the code of each frame
 * given an id of the launcher's own (from CBN_PY_SIDE_ID_BASE: the agent's
 * ids stay below) and its names copied once into the image's side file as a
 * PY_CODE record.  The words are the agent's (CBN_PYW_MAKE), so the loader
 * reads them as it reads the agent's.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "cbn_pyread.h"
#include "mon_int.h"

struct mon_py {
	int state;                       /* 0 not looked at, 1 ready, -1 none or refused */
	pid_t pid;
	struct cbn_py_target t;
	uint64_t *keys;                  /* open addressing: fingerprint -> id */
	uint32_t *ids;
	size_t cap, n;
	struct cbn_rec_py_code *rec;     /* CBN_PY_REC_MAX bytes */
};

static int py_remote_read(void *ctx, void *dst, uintptr_t src, size_t n)
{
	const struct mon_py *py = ctx;
	struct iovec local = {dst, n}, remote = {(void *)src, n};

	return process_vm_readv(py->pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

static struct mon_py *py_ready(struct mon_image *im)
{
	const struct cbn_file_header *h = im->hdr;
	struct mon_py *py = im->py;
	char why[120];

	if (!py) {
		py = im->py = calloc(1, sizeof(*py));
		if (!py)
			return NULL;
	}
	if (py->state)
		return py->state > 0 ? py : NULL;
	if (atomic_load(&((struct cbn_file_header *)h)->python.state) != CBN_PY_ON ||
	    !h->python_code_type)
		return NULL; /* not yet (the agent finds it at a module scan), or none */
	py->pid = (pid_t)im->pid;
	py->t.runtime = h->python.runtime;
	py->t.code_type = h->python_code_type;
	py->t.unicode_type = h->python_unicode_type;
	py->t.bytes_type = h->python_bytes_type;
	py->rec = malloc(CBN_PY_REC_MAX);
	py->state = py->rec && cbn_py_layout_of(py->t.runtime, h->python.version, py_remote_read, py,
						&py->t.L, why, sizeof(why)) == 0
			    ? 1
			    : -1;
	return py->state > 0 ? py : NULL;
}

/* The id of code (fingerprint key), and its PY_CODE record the first time. */
static uint32_t py_id(struct mon_image *im, struct mon_py *py, uintptr_t code, uint64_t key)
{
	struct writer *w;
	size_t i, size;
	uint32_t id;
	int gone;

	if (py->n * 2 >= py->cap) {
		size_t cap = py->cap ? py->cap * 2 : 1024, j;
		uint64_t *k = calloc(cap, sizeof(*k));
		uint32_t *d = calloc(cap, sizeof(*d));

		if (!k || !d) {
			free(k);
			free(d);
			return 0;
		}
		for (j = 0; j < py->cap; j++) {
			if (!py->keys[j])
				continue;
			for (i = py->keys[j] % cap; k[i]; i = (i + 1) % cap)
				;
			k[i] = py->keys[j];
			d[i] = py->ids[j];
		}
		free(py->keys);
		free(py->ids);
		py->keys = k;
		py->ids = d;
		py->cap = cap;
	}
	for (i = key % py->cap; py->keys[i]; i = (i + 1) % py->cap)
		if (py->keys[i] == key)
			return py->ids[i];
	if (CBN_PY_SIDE_ID_BASE + py->n >= CBN_PY_CODES_MAX)
		return 0;
	id = CBN_PY_SIDE_ID_BASE + (uint32_t)py->n++;
	py->keys[i] = key;
	py->ids[i] = id;
	size = cbn_py_code_record(&py->t, py_remote_read, py, id, code, key, py->rec, &gone);
	w = mon_side(im);
	if (w)
		writer_append_event(w, py->rec, size);
	return id;
}

int mon_py_frames(struct mon_image *im, uint32_t tid, uint64_t *out, int max)
{
	struct cbn_py_frame fr[CBN_MAX_FRAMES];
	struct mon_py *py = py_ready(im);
	int n, i;

	if (!py || max <= 0)
		return 0;
	n = cbn_py_frames_of(&py->t, py_remote_read, py, tid, fr,
			     max < CBN_MAX_FRAMES ? max : CBN_MAX_FRAMES);
	for (i = 0; i < n; i++)
		out[i] = CBN_PYW_MAKE(fr[i].flags, py_id(im, py, fr[i].code, fr[i].key), fr[i].unit);
	return n;
}

void mon_py_free(struct mon_image *im)
{
	struct mon_py *py = im->py;

	if (!py)
		return;
	free(py->keys);
	free(py->ids);
	free(py->rec);
	free(py);
	im->py = NULL;
}
