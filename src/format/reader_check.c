/*
 * reader_check.c — the reader's per-record validation (reader.c walks the
 * chunks and calls reader_rec_check for each record): every type's fixed
 * part, its strings and counts inside the record, before any field is
 * trusted.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "reader.h"
#include "reader_check.h"
#include "cbn_share.h"

/* A string of len bytes at off inside a record of size bytes, NUL at [len]. */
static int str_fits(uint32_t size, size_t off, uint64_t len)
{
	return off <= size && len < (uint64_t)size - off;
}

static int str_ok(const unsigned char *p, uint32_t size, size_t off, uint64_t len)
{
	return str_fits(size, off, len) && p[off + len] == '\0';
}

/* The kernel stacks after a sample's pcs (at off): every stack inside the
 * record, every count of frames in range. */
static int kstacks_check(const unsigned char *p, uint32_t size, uint64_t off,
			 struct reader_rec *r, const char **why)
{
	const struct cbn_kstacks *ks = (const void *)(p + off);
	uint32_t i;

	if (off + sizeof(*ks) > size) {
		*why = "kernel stacks do not fit in the sample";
		return -1;
	}
	off += sizeof(*ks);
	for (i = 0; i < ks->nstacks; i++) {
		const struct cbn_kstack *k = (const void *)(p + off);

		if (off + sizeof(*k) > size || k->nframes == 0 || k->nframes > CBN_MAX_FRAMES ||
		    off + sizeof(*k) + (uint64_t)k->nframes * 8 > size) {
			*why = "kernel stack does not fit in the sample";
			return -1;
		}
		off += sizeof(*k) + (uint64_t)k->nframes * 8;
	}
	r->kstacks = ks;
	r->kplace = NULL;
	if (!(ks->flags & CBN_KSTACKS_PLACED))
		return 0;
	r->kplace = (const void *)(p + off);
	for (i = 0; i < ks->nstacks; i++) {
		const struct cbn_kplace *k = (const void *)(p + off);

		if (off + sizeof(*k) > size || k->nuser > CBN_KPLACE_MAX_FRAMES ||
		    k->drop > r->stack_n || off + sizeof(*k) + (uint64_t)k->nuser * 8 > size) {
			r->kplace = NULL;
			*why = "kernel stack's user placement does not fit in the sample";
			return -1;
		}
		off += sizeof(*k) + (uint64_t)k->nuser * 8;
	}
	return 0;
}

/* What the checks of one record family share: the record must hold its
 * type, and a string of it must fit (then r->str is it). */
#define NEED(T)                                                    \
	do {                                                       \
		if (size < sizeof(T)) {                            \
			*why = "record shorter than its type";     \
			return -1;                                 \
		}                                                  \
	} while (0)
#define STR(off, len, field)                                       \
	do {                                                       \
		if (!str_ok(p, size, (off), (len))) {              \
			*why = field " does not fit in the record"; \
			return -1;                                 \
		}                                                  \
		r->str = (const char *)p + (off);                  \
		r->str_len = (uint32_t)(len);                      \
	} while (0)

/* rec_check() for the process's own records: threads, modules, exit,
 * ranges, capture marks, clock, JIT regions. */
static int rec_check_proc(const unsigned char *p, uint32_t size, struct reader_rec *r,
			  const char **why)
{
	const struct cbn_rec *h = (const struct cbn_rec *)p;

	switch (h->type) {
	case CBN_REC_PAD:
		return 0;
	case CBN_REC_THREAD_START:
	case CBN_REC_THREAD_END:
	case CBN_REC_THREAD_NAME: {
		const struct cbn_rec_thread *t = (const void *)p;
		size_t n;
		NEED(struct cbn_rec_thread);
		n = strnlen(t->name, CBN_NAME_MAX);
		if (n == CBN_NAME_MAX) {
			*why = "thread name not terminated";
			return -1;
		}
		r->str = t->name;
		r->str_len = (uint32_t)n;
		return 0;
	}
	case CBN_REC_MODULE_LOAD:
	case CBN_REC_MODULE_UNLOAD: {
		const struct cbn_rec_module *m = (const void *)p;
		uint64_t off;
		NEED(struct cbn_rec_module);
		if (m->nseg > CBN_MAX_SEGMENTS || m->build_id_len > CBN_BUILD_ID_MAX) {
			*why = "module segment or build-id count out of range";
			return -1;
		}
		off = offsetof(struct cbn_rec_module, seg) + (uint64_t)m->nseg * sizeof(struct cbn_segment);
		STR(off, m->path_len, "module path");
		return 0;
	}
	case CBN_REC_PROCESS_EXIT:
		NEED(struct cbn_rec_exit);
		return 0;
	case CBN_REC_RANGE: {
		const struct cbn_rec_range *g = (const void *)p;
		size_t off = offsetof(struct cbn_rec_range, strings);
		NEED(struct cbn_rec_range);
		if (!str_ok(p, size, off, g->domain_len) ||
		    !str_ok(p, size, off + g->domain_len + 1, g->name_len)) {
			*why = "range strings do not fit in the record";
			return -1;
		}
		r->str2 = (const char *)p + off;
		r->str2_len = g->domain_len;
		r->str = (const char *)p + off + g->domain_len + 1;
		r->str_len = g->name_len;
		return 0;
	}
	case CBN_REC_CAPTURE: {
		const struct cbn_rec_capture *c = (const void *)p;
		NEED(struct cbn_rec_capture);
		STR(offsetof(struct cbn_rec_capture, name), c->name_len, "capture mark name");
		return 0;
	}
	case CBN_REC_CLOCK:
		NEED(struct cbn_rec_clock);
		return 0;
	case CBN_REC_PY_CALLS: {
		const struct cbn_rec_py_calls *c = (const void *)p;
		NEED(struct cbn_rec_py_calls);
		if (c->n > CBN_PY_CALLS_BATCH ||
		    sizeof(*c) + (uint64_t)c->n * sizeof(c->c[0]) > size) {
			*why = "Python call-count record does not fit";
			return -1;
		}
		return 0;
	}
	case CBN_REC_PY_CCALLS: {
		const struct cbn_rec_py_ccalls *c = (const void *)p;
		NEED(struct cbn_rec_py_ccalls);
		if (c->n > CBN_PY_CCALLS_BATCH ||
		    sizeof(*c) + (uint64_t)c->n * sizeof(c->c[0]) > size) {
			*why = "C call-count record does not fit";
			return -1;
		}
		return 0;
	}
	case CBN_REC_JIT_REGION: {
		/* name_len bytes, maybe without a NUL (cbn_format.h): readers
		 * copy name_len bytes; str is set only when a NUL follows */
		const struct cbn_rec_jit_region *j = (const void *)p;
		uint64_t off = offsetof(struct cbn_rec_jit_region, name);
		NEED(struct cbn_rec_jit_region);
		if (off + (uint64_t)j->name_len > size) {
			*why = "JIT region name does not fit in the record";
			return -1;
		}
		if (str_ok(p, size, off, j->name_len)) {
			r->str = j->name;
			r->str_len = j->name_len;
		}
		return 0;
	}
	case CBN_REC_CODE_FILE: {
		const struct cbn_rec_code_file *c = (const void *)p;
		uint64_t off = offsetof(struct cbn_rec_code_file, name);
		NEED(struct cbn_rec_code_file);
		if (off + (uint64_t)c->name_len > size) {
			*why = "code file name does not fit in the record";
			return -1;
		}
		if (str_ok(p, size, off, c->name_len)) {
			r->str = c->name;
			r->str_len = c->name_len;
		}
		return 0;
	}
	}
	return 1;
}

/* rec_check() for the records that carry a stack: samples, off-CPU waits,
 * MPI calls, Python code. */
static int rec_check_stacks(const unsigned char *p, uint32_t size, uint16_t chunk_kind,
			    struct reader_rec *r, const char **why)
{
	const struct cbn_rec *h = (const struct cbn_rec *)p;

	switch (h->type) {
	case CBN_REC_SAMPLE: {
		const struct cbn_rec_sample *s = (const void *)p;
		uint64_t off;

		NEED(struct cbn_rec_sample);
		if (chunk_kind != CBN_CHUNK_SAMPLES) {
			*why = "sample outside a samples chunk";
			return -1;
		}
		if (s->nframes > CBN_MAX_FRAMES ||
		    offsetof(struct cbn_rec_sample, pc) + (uint64_t)s->nframes * 8 > size) {
			*why = "sample frame count does not fit";
			return -1;
		}
		r->pcs = s->pc;
		r->nframes = s->nframes;
		r->stack_n = s->nframes;
		off = offsetof(struct cbn_rec_sample, pc) + (uint64_t)s->nframes * 8;
		if (h->flags & CBN_SAMPLE_SHARED) {
			/* its base is checked by chunk_walk */
			const struct cbn_sample_share *sh = (const void *)(p + off);

			if (off + sizeof(*sh) > size) {
				*why = "sample share does not fit";
				return -1;
			}
			if ((uint32_t)s->nframes + sh->native + sh->python > CBN_MAX_FRAMES) {
				*why = "shared sample deeper than a stack can be";
				return -1;
			}
			r->share = sh;
			r->stack_n = (uint32_t)s->nframes + sh->native + sh->python;
			off += sizeof(*sh);
		}
		if (h->flags & CBN_SAMPLE_KSTACKS)
			return kstacks_check(p, size, off, r, why);
		return 0;
	}
	case CBN_REC_OFFCPU: {
		const struct cbn_rec_offcpu *o = (const void *)p;
		NEED(struct cbn_rec_offcpu);
		if (o->nframes > CBN_MAX_FRAMES ||
		    offsetof(struct cbn_rec_offcpu, pc) + (uint64_t)o->nframes * 8 > size) {
			*why = "off-CPU stack frame count does not fit";
			return -1;
		}
		r->pcs = o->pc;
		r->nframes = o->nframes;
		return 0;
	}
	case CBN_REC_MPI: {
		const struct cbn_rec_mpi *m = (const void *)p;
		NEED(struct cbn_rec_mpi);
		if (m->nframes > CBN_MAX_FRAMES ||
		    offsetof(struct cbn_rec_mpi, pc) + (uint64_t)m->nframes * 8 > size) {
			*why = "MPI call-site frame count does not fit";
			return -1;
		}
		r->pcs = m->pc;
		r->nframes = m->nframes;
		return 0;
	}
	case CBN_REC_PY_CODE: {
		/* qualname (str), filename (str2), then the line table after
		 * filename's NUL: the loader finds it at str2 + str2_len + 1 */
		const struct cbn_rec_py_code *c = (const void *)p;
		uint64_t off = offsetof(struct cbn_rec_py_code, data);
		NEED(struct cbn_rec_py_code);
		if (c->qualname_len > CBN_PY_NAME_MAX || c->filename_len > CBN_PY_NAME_MAX ||
		    c->linetable_len > CBN_PY_LINETABLE_MAX ||
		    off + c->qualname_len + 1 + c->filename_len + 1 + c->linetable_len > size ||
		    c->data[c->qualname_len] != '\0' ||
		    c->data[c->qualname_len + 1 + c->filename_len] != '\0') {
			*why = "Python code record does not fit";
			return -1;
		}
		r->str = c->data;
		r->str_len = c->qualname_len;
		r->str2 = c->data + c->qualname_len + 1;
		r->str2_len = c->filename_len;
		return 0;
	}
	case CBN_REC_UNPROFILED: {
		const struct cbn_rec_unprofiled *u = (const void *)p;
		NEED(struct cbn_rec_unprofiled);
		STR(offsetof(struct cbn_rec_unprofiled, path), u->path_len, "unprofiled path");
		return 0;
	}
	}
	return 1;
}

/* rec_check() for the CUDA layer's records. */
static int rec_check_cuda(const unsigned char *p, uint32_t size, struct reader_rec *r,
			  const char **why)
{
	const struct cbn_rec *h = (const struct cbn_rec *)p;

	switch (h->type) {
	case CBN_REC_CUDA_API: {
		const struct cbn_rec_cuda_api *a = (const void *)p;
		NEED(struct cbn_rec_cuda_api);
		STR(offsetof(struct cbn_rec_cuda_api, name), a->name_len, "API name");
		return 0;
	}
	case CBN_REC_CUDA_STACK: {
		const struct cbn_rec_cuda_stack *s = (const void *)p;
		NEED(struct cbn_rec_cuda_stack);
		if (s->nframes > CBN_MAX_FRAMES ||
		    offsetof(struct cbn_rec_cuda_stack, pc) + (uint64_t)s->nframes * 8 > size) {
			*why = "CUDA stack frame count does not fit";
			return -1;
		}
		r->pcs = s->pc;
		r->nframes = s->nframes;
		r->stack_key = 0;
		if (s->h.flags & CBN_CSTACK_KEYED) {
			uint64_t off = offsetof(struct cbn_rec_cuda_stack, pc) + (uint64_t)s->nframes * 8;

			if (off + 8 > size) {
				*why = "CUDA stack key does not fit";
				return -1;
			}
			memcpy(&r->stack_key, (const char *)p + off, 8);
			if (!r->stack_key) {
				*why = "CUDA stack key is 0";
				return -1;
			}
		}
		return 0;
	}
	case CBN_REC_CUDA_KERNEL: {
		const struct cbn_rec_cuda_kernel *k = (const void *)p;
		NEED(struct cbn_rec_cuda_kernel);
		STR(offsetof(struct cbn_rec_cuda_kernel, name), k->name_len, "kernel name");
		return 0;
	}
	case CBN_REC_CUDA_MEMCPY:
		NEED(struct cbn_rec_cuda_memcpy);
		return 0;
	case CBN_REC_CUDA_MEMSET:
		NEED(struct cbn_rec_cuda_memset);
		return 0;
	case CBN_REC_CUDA_SYNC:
		NEED(struct cbn_rec_cuda_sync);
		return 0;
	case CBN_REC_CUDA_OVERHEAD:
		NEED(struct cbn_rec_cuda_overhead);
		return 0;
	case CBN_REC_CUDA_DEVICE: {
		const struct cbn_rec_cuda_device *d = (const void *)p;
		NEED(struct cbn_rec_cuda_device);
		STR(offsetof(struct cbn_rec_cuda_device, name), d->name_len, "device name");
		/* A UUID that does not fit is not there (the loader checks the
		 * flag against the size too): the record stays usable. */
		return 0;
	}
	case CBN_REC_CUDA_CONTEXT:
		NEED(struct cbn_rec_cuda_context);
		return 0;
	case CBN_REC_CUDA_MEMORY:
		NEED(struct cbn_rec_cuda_memory);
		return 0;
	case CBN_REC_CUDA_MEMPOOL:
		NEED(struct cbn_rec_cuda_mempool);
		return 0;
	case CBN_REC_CUDA_STATUS: {
		const struct cbn_rec_cuda_status *s = (const void *)p;
		NEED(struct cbn_rec_cuda_status);
		STR(offsetof(struct cbn_rec_cuda_status, message), s->message_len, "status message");
		return 0;
	}
	}
	return 1;
}

/* rec_check() for the allocation hooks' records. */
static int rec_check_mem(const unsigned char *p, uint32_t size, uint16_t chunk_kind,
			 struct reader_rec *r, const char **why)
{
	const struct cbn_rec *h = (const struct cbn_rec *)p;

	switch (h->type) {
	case CBN_REC_MEM_ALLOC: {
		const struct cbn_rec_mem_alloc *m = (const void *)p;
		NEED(struct cbn_rec_mem_alloc);
		if (chunk_kind != CBN_CHUNK_MEMORY) {
			*why = "allocation record outside a memory chunk";
			return -1;
		}
		if (m->nframes > CBN_MAX_FRAMES ||
		    offsetof(struct cbn_rec_mem_alloc, pc) + (uint64_t)m->nframes * 8 > size) {
			*why = "allocation stack frame count does not fit";
			return -1;
		}
		r->pcs = m->pc;
		r->nframes = m->nframes;
		return 0;
	}
	case CBN_REC_MEM_FREE:
		NEED(struct cbn_rec_mem_free);
		if (chunk_kind != CBN_CHUNK_MEMORY) {
			*why = "free record outside a memory chunk";
			return -1;
		}
		return 0;
	case CBN_REC_MEM_COUNTERS:
		NEED(struct cbn_rec_mem_counters);
		return 0;
	}
	return 1;
}

#undef NEED
#undef STR

/* reader_check.h */
int reader_rec_check(const unsigned char *p, uint32_t size, uint16_t chunk_kind,
		      struct reader_rec *r, const char **why)
{
	int ret = rec_check_proc(p, size, r, why);

	if (ret == 1)
		ret = rec_check_stacks(p, size, chunk_kind, r, why);
	if (ret == 1)
		ret = rec_check_cuda(p, size, r, why);
	if (ret == 1)
		ret = rec_check_mem(p, size, chunk_kind, r, why);
	return ret;
}
