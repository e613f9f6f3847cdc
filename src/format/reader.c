/*
 * reader.c — the validating reader of session files: header checks, the chunk
 * walk and per-record validation.  Nothing in a file is trusted: every length
 * and offset is checked before it is used, so a truncated, zero-filled or
 * hostile file yields a clear reason and whatever was intact, never a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"
#include "cbn_share.h"

#define READER_MAX_CHUNK (64u << 20)   /* sanity cap on header.chunk_size */
#define READER_MAX_HEADER (1u << 20)   /* sanity cap on header.header_size */
#define CHUNK_HDR ((uint64_t)sizeof(struct cbn_chunk_header))

static void damage(struct reader_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record the first problem only: later ones are usually its consequences. */
static void damage(struct reader_result *res, const char *fmt, ...)
{
	va_list ap;

	res->damaged = 1;
	if (res->reason[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
}

const char *reader_type_name(unsigned type)
{
	switch (type) {
	case CBN_REC_PAD: return "pad";
	case CBN_REC_SAMPLE: return "sample";
	case CBN_REC_THREAD_START: return "thread_start";
	case CBN_REC_THREAD_END: return "thread_end";
	case CBN_REC_THREAD_NAME: return "thread_name";
	case CBN_REC_MODULE_LOAD: return "module_load";
	case CBN_REC_MODULE_UNLOAD: return "module_unload";
	case CBN_REC_PROCESS_EXIT: return "process_exit";
	case CBN_REC_RANGE: return "range";
	case CBN_REC_CAPTURE: return "capture";
	case CBN_REC_OFFCPU: return "offcpu";
	case CBN_REC_MPI: return "mpi";
	case CBN_REC_CLOCK: return "clock";
	case CBN_REC_CUDA_API: return "cuda_api";
	case CBN_REC_CUDA_STACK: return "cuda_stack";
	case CBN_REC_CUDA_KERNEL: return "cuda_kernel";
	case CBN_REC_CUDA_MEMCPY: return "cuda_memcpy";
	case CBN_REC_CUDA_MEMSET: return "cuda_memset";
	case CBN_REC_CUDA_SYNC: return "cuda_sync";
	case CBN_REC_CUDA_OVERHEAD: return "cuda_overhead";
	case CBN_REC_CUDA_DEVICE: return "cuda_device";
	case CBN_REC_CUDA_CONTEXT: return "cuda_context";
	case CBN_REC_CUDA_MEMORY: return "cuda_memory";
	case CBN_REC_CUDA_MEMPOOL: return "cuda_mempool";
	case CBN_REC_CUDA_STATUS: return "cuda_status";
	case CBN_REC_PY_CODE: return "py_code";
	case CBN_REC_JIT_REGION: return "jit_region";
	case CBN_REC_PY_CALLS: return "py_calls";
	case CBN_REC_PY_CCALLS: return "py_ccalls";
	}
	return "unknown";
}

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

/*
 * Check one record's type-specific layout and fill the typed views of r.
 * Returns 0 when valid, 1 for an unknown type (skip it), -1 when invalid
 * (*why says what).  p points at the record; its size is already known to be
 * >= 8, a multiple of 8 and inside the chunk.
 */
static int rec_check(const unsigned char *p, uint32_t size, uint16_t chunk_kind,
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

/* Validate the header in buf[0, avail) of a file of file_bytes bytes; fill f->hdr
 * and f->end.  Returns 0 or -1 (res->reason says why). */
static int header_check(const unsigned char *buf, size_t avail, uint64_t file_bytes,
			struct reader_file *f, struct reader_result *res)
{
	struct cbn_file_header *h = &f->hdr;
	uint64_t fs, nc, end;
	size_t i;

	if (avail < sizeof(*h)) {
		damage(res, "too short to be a session file (%" PRIu64 " bytes)", file_bytes);
		return -1;
	}
	memcpy(h, buf, sizeof(*h));
	for (i = 0; i < sizeof(h->magic) && h->magic[i] == 0; i++)
		;
	if (i == sizeof(h->magic)) {
		damage(res, "header is zero-filled (the process died before writing it)");
		return -1;
	}
	if (memcmp(h->magic, CBN_MAGIC, sizeof(h->magic)) != 0) {
		damage(res, "not a cbottleneck session file (bad magic)");
		return -1;
	}
	if (h->endian != CBN_ENDIAN_CHECK) {
		if (h->endian == __builtin_bswap32(CBN_ENDIAN_CHECK))
			damage(res, "written on a machine of the other byte order; "
				    "read it where it was recorded");
		else
			damage(res, "corrupted header (endianness check 0x%08x at offset 0x%zx)", h->endian,
			       offsetof(struct cbn_file_header, endian));
		return -1;
	}
	if (h->version > CBN_FORMAT_VERSION) {
		damage(res, "written by a newer cbottleneck (format version %u; this one reads "
			    "version %u): read it with the cbottleneck that recorded it",
		       h->version, CBN_FORMAT_VERSION);
		return -1;
	}
	if (h->version != CBN_FORMAT_VERSION) {
		damage(res, "written by an older cbottleneck (format version %u; this one reads "
			    "version %u): read it with the cbottleneck that recorded it",
		       h->version, CBN_FORMAT_VERSION);
		return -1;
	}
	if (h->header_size < sizeof(*h) || h->header_size > READER_MAX_HEADER ||
	    h->header_size % 8 != 0) {
		damage(res, "corrupted header (header_size %u at offset 0x%zx)", h->header_size,
		       offsetof(struct cbn_file_header, header_size));
		return -1;
	}
	if (h->chunk_size < CHUNK_HDR + 8 || h->chunk_size > READER_MAX_CHUNK ||
	    h->chunk_size % 8 != 0) {
		damage(res, "corrupted header (chunk_size %u at offset 0x%zx)", h->chunk_size,
		       offsetof(struct cbn_file_header, chunk_size));
		return -1;
	}
	if (h->data_offset < h->header_size || h->data_offset % 8 != 0 ||
	    h->data_offset > (1ull << 40)) {
		damage(res, "corrupted header (data_offset %" PRIu64 " at offset 0x%zx)",
		       (uint64_t)h->data_offset, offsetof(struct cbn_file_header, data_offset));
		return -1;
	}

	/* Strings as the loader will use them: always terminated, lengths clamped. */
	h->exe[sizeof(h->exe) - 1] = '\0';
	h->disabled_reason[sizeof(h->disabled_reason) - 1] = '\0';
	if (h->disabled_reason_len >= sizeof(h->disabled_reason))
		h->disabled_reason_len = sizeof(h->disabled_reason) - 1;
	if (h->cmdline_len > sizeof(h->cmdline))
		h->cmdline_len = sizeof(h->cmdline);

	fs = h->file_size;
	nc = h->next_chunk;
	if (nc < h->data_offset) {
		damage(res, "corrupted header (next_chunk %" PRIu64 " before the data, at offset "
		       "0x%zx)", nc, offsetof(struct cbn_file_header, next_chunk));
		nc = h->data_offset;
	}
	end = nc < fs ? nc : fs; /* next_chunk >= file_size: the file filled up */
	if (end < h->data_offset)
		end = h->data_offset;
	if (end > file_bytes) {
		res->truncated = 1;
		damage(res, "truncated: %" PRIu64 " of %" PRIu64 " bytes present", file_bytes, end);
		end = file_bytes;
	}
	f->end = end;
	res->header_ok = 1;
	return 0;
}

static void res_reset(struct reader_result *res, uint64_t file_bytes)
{
	memset(res, 0, sizeof(*res));
	res->file_bytes = file_bytes;
}

int reader_open_mem(const void *data, size_t size, struct reader_file *f,
		    struct reader_result *res)
{
	memset(f, 0, sizeof(*f));
	res_reset(res, size);
	if (header_check(data, size, size, f, res) < 0)
		return -1;
	/* A header-sized file with no chunk is still a (empty) valid file. */
	f->size = f->end > size ? size : (size_t)f->end;
	if (f->size < sizeof(f->hdr))
		f->size = sizeof(f->hdr);
	f->data = malloc(f->size ? f->size : 1);
	if (!f->data) {
		damage(res, "out of memory reading %zu bytes", f->size);
		return -ENOMEM;
	}
	memcpy(f->data, data, f->size);
	return 0;
}

/*
 * SIGBUS guard for mapped files.  A file truncated by someone else while we
 * read it would kill us with SIGBUS at the first page past its new end.  The
 * handler instead maps a zero page over the faulting page of a guarded
 * mapping and counts the event: zeros read as padding and empty chunks, which
 * the walk skips, and reader_changed() lets the caller say the file changed.
 * Only mmap(2), a system call, runs in the handler.
 */
#define GUARD_SLOTS 8

static struct guard {
	unsigned char *volatile base;
	volatile size_t size;
	volatile sig_atomic_t hits;
} guards[GUARD_SLOTS];
static int guard_installed;
static long guard_page;
static struct sigaction guard_prev;

static void bus_guard(int sig, siginfo_t *si, void *uc)
{
	unsigned char *a = si->si_addr;
	long pg = guard_page;
	int i;

	(void)uc;
	for (i = 0; i < GUARD_SLOTS; i++) {
		unsigned char *b = guards[i].base;

		if (b && a >= b && a < b + guards[i].size) {
			void *page = (void *)((uintptr_t)a & ~(uintptr_t)(pg - 1));

			if (mmap(page, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				 -1, 0) != MAP_FAILED) {
				guards[i].hits++;
				return;
			}
			break;
		}
	}
	/* Not ours: the default action, as if we had no handler. */
	sigaction(sig, &guard_prev, NULL);
	if (guard_prev.sa_handler == SIG_DFL || guard_prev.sa_handler == SIG_IGN)
		signal(sig, SIG_DFL);
}

static int map_guarded(struct reader_file *f, int fd)
{
	void *m;
	int i;

	for (i = 0; i < GUARD_SLOTS && guards[i].base; i++)
		;
	if (i == GUARD_SLOTS)
		return -1;
	if (!guard_installed) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = bus_guard;
		sa.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&sa.sa_mask);
		guard_page = sysconf(_SC_PAGESIZE);
		if (sigaction(SIGBUS, &sa, &guard_prev) != 0)
			return -1;
		guard_installed = 1;
	}
	m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	madvise(m, f->size, MADV_SEQUENTIAL);
	guards[i].size = f->size;
	guards[i].hits = 0;
	guards[i].base = m;
	f->data = m;
	f->mapped = 1;
	f->guard = i;
	return 0;
}

static void map_unguard(struct reader_file *f)
{
	guards[f->guard].base = NULL;
	guards[f->guard].size = 0;
}

int reader_changed(const struct reader_file *f)
{
	return f->mapped && guards[f->guard].hits > 0;
}

static ssize_t read_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int reader_open(const char *path, struct reader_file *f, struct reader_result *res)
{
	unsigned char head[sizeof(struct cbn_file_header)];
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	memset(f, 0, sizeof(*f));
	res_reset(res, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		damage(res, "cannot open: %s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		damage(res, "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		damage(res, "not a regular file");
		goto out;
	}
	res->file_bytes = (uint64_t)st.st_size;
	n = read_full(fd, head, sizeof(head), 0);
	if (n < 0) {
		ret = -errno;
		damage(res, "cannot read: %s", strerror(errno));
		goto out;
	}
	if (header_check(head, (size_t)n, (uint64_t)st.st_size, f, res) < 0) {
		ret = -1;
		goto out;
	}
	/* Read only up to the last chunk handed out: the rest is preallocated zeros. */
	f->size = (size_t)f->end;
	if (f->size < sizeof(head))
		f->size = sizeof(head);
	/* Mapped, not copied: a session of hundreds of MiB costs neither the copy
	 * nor as much fresh memory (page faults are most of a large report's
	 * time).  A file cut while mapped is caught by bus_guard. */
	if ((uint64_t)f->size <= (uint64_t)st.st_size && map_guarded(f, fd) == 0)
		goto out;
	f->data = malloc(f->size);
	if (!f->data) {
		ret = -ENOMEM;
		damage(res, "out of memory reading %zu bytes", f->size);
		goto out;
	}
	n = read_full(fd, f->data, f->size, 0);
	if (n < 0) {
		ret = -errno;
		damage(res, "cannot read: %s", strerror(errno));
		goto out;
	}
	if ((size_t)n < f->size) {
		/* The file shrank between fstat and read. */
		res->truncated = 1;
		damage(res, "truncated while reading: %zd of %zu bytes", n, f->size);
		f->size = (size_t)n;
		if (f->end > (uint64_t)n)
			f->end = (uint64_t)n;
	}
out:
	close(fd);
	if (ret != 0)
		reader_close(f);
	return ret;
}

void reader_close(struct reader_file *f)
{
	if (f->mapped) {
		map_unguard(f);
		munmap(f->data, f->size);
	} else {
		free(f->data);
	}
	f->data = NULL;
	f->mapped = 0;
	f->size = 0;
	f->end = 0;
}

/*
 * A sample of a chunk: a full one (not shared, not PC_ONLY) becomes the base
 * of those that follow; a shared one must name that base, and share no more
 * of it than it has.  0, or -1 (*why says what).
 */
struct share_base {
	const struct cbn_rec_sample *s;  /* NULL: none yet in this chunk */
	uint64_t pos;                    /* its offset from the chunk's first record */
	uint16_t nn;                     /* its native words (counted once) */
};

static int chunk_share(struct reader_rec *r, uint64_t pos, struct share_base *sb, const char **why)
{
	const struct cbn_rec_sample *s = (const void *)r->raw, *b = sb->s;

	if (!(r->flags & CBN_SAMPLE_SHARED)) {
		if (!(r->flags & CBN_SAMPLE_PC_ONLY)) {
			sb->s = s;
			sb->pos = pos;
			sb->nn = (uint16_t)cbn_share_native(s->pc, s->nframes);
		}
		return 0;
	}
	if (!b || r->share->base != sb->pos) {
		*why = "shared sample without its base";
		return -1;
	}
	r->base_pcs = b->pc;
	r->base_n = b->nframes;
	r->base_nn = sb->nn;
	if (r->share->native > r->base_nn || r->share->python > r->base_n - r->base_nn) {
		*why = "shared sample shares more than its base has";
		return -1;
	}
	return 0;
}

/* Walk the records of one chunk whose committed bytes are [base, base + used). */
static int chunk_walk(const struct reader_file *f, uint64_t base, uint64_t used,
		      const struct cbn_chunk_header *ch, uint32_t idx, int cut_by_eof,
		      reader_cb cb, void *ctx, struct reader_result *res)
{
	struct share_base sb = {NULL, 0, 0};
	uint64_t pos = 0;
	int ret;

	while (pos < used) {
		const unsigned char *p = f->data + base + pos;
		struct reader_rec r;
		struct cbn_rec h = {0, 0, 0};
		const char *why = NULL;
		int st;

		if (used - pos < sizeof(h)) {
			why = "record header cut";
			goto bad;
		}
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0) {
			if (cut_by_eof && h.size == 0)
				return 0; /* zeros past the end of a truncated file */
			why = h.size == 0 ? "record size 0" : "record size not a multiple of 8";
			goto bad;
		}
		if (h.size > used - pos) {
			if (cut_by_eof)
				return 0; /* the truncation already counted */
			why = "record runs past the chunk's committed bytes";
			goto bad;
		}
		memset(&r, 0, sizeof(r));
		r.type = h.type;
		r.flags = h.flags;
		r.size = h.size;
		r.chunk_kind = ch->kind;
		r.chunk_tid = ch->tid;
		r.chunk_index = idx;
		r.offset = base + pos;
		r.raw = (const struct cbn_rec *)p;
		r.str = "";
		r.str2 = "";
		st = rec_check(p, h.size, ch->kind, &r, &why);
		if (st == 0 && h.type == CBN_REC_SAMPLE &&
		    chunk_share(&r, pos, &sb, &why) < 0)
			st = -1;
		if (st < 0)
			goto bad;
		pos += h.size;
		if (st > 0) {
			/* Types are only ever added: one this reader does not know
			 * comes from a writer that knew more, or from damage. */
			if (f->hdr.rec_type_max > CBN_REC_TYPE_MAX && h.type <= f->hdr.rec_type_max) {
				res->unknown++;
			} else {
				res->corrupt++;
				damage(res, "corrupted at offset 0x%" PRIx64 ": chunk %u holds a record "
				       "of type %u, which its writer does not know", r.offset, idx,
				       (unsigned)h.type);
			}
			continue;
		}
		if (h.type == CBN_REC_PAD)
			continue;
		res->records++;
		if (h.type == CBN_REC_SAMPLE)
			res->samples++;
		ret = cb(ctx, &r);
		if (ret != 0)
			return ret;
		continue;
bad:
		res->chunks_cut++;
		damage(res, "corrupted at offset 0x%" PRIx64 ": chunk %u cut (%s, type %u)",
		       base + pos, idx, why, (unsigned)h.type);
		return 0;
	}
	return 0;
}

int reader_walk(const struct reader_file *f, reader_cb cb, void *ctx, struct reader_result *res)
{
	const struct cbn_file_header *h = &f->hdr;
	uint64_t off, end = f->end;
	uint32_t idx = 0;
	int ret;

	if (!f->data)
		return 0;
	if (end > f->size)
		end = f->size;
	if (res->truncated && end >= h->data_offset) {
		/* Say where the data stops: more useful than the byte counts. */
		uint64_t want = h->next_chunk < h->file_size ? h->next_chunk : h->file_size;
		snprintf(res->reason, sizeof(res->reason),
			 "truncated at chunk %" PRIu64 " (the file ends at offset 0x%" PRIx64
			 ", %" PRIu64 " bytes short)", (end - h->data_offset) / h->chunk_size, end,
			 want > end ? want - end : 0);
	}
	for (off = h->data_offset; off < end; off += h->chunk_size, idx++) {
		struct cbn_chunk_header ch;
		uint64_t avail = end - off, used;
		int cut = 0;

		if (avail > h->chunk_size)
			avail = h->chunk_size;
		res->chunks++;
		if (avail < CHUNK_HDR) {
			damage(res, "truncated inside the header of chunk %u", idx);
			break;
		}
		memcpy(&ch, f->data + off, sizeof(ch));
		used = ch.used;
		if (ch.magic == 0 && ch.kind == 0 && used == 0) {
			res->chunks_unused++;
			continue;
		}
		if (ch.magic != CBN_CHUNK_MAGIC) {
			res->chunks_damaged++;
			damage(res, "corrupted at offset 0x%" PRIx64 ": chunk %u skipped (bad magic "
			       "0x%08x)", off, idx, ch.magic);
			continue;
		}
		if (ch.kind != CBN_CHUNK_SAMPLES && ch.kind != CBN_CHUNK_EVENTS &&
		    ch.kind != CBN_CHUNK_MEMORY) {
			res->chunks_damaged++;
			damage(res, "corrupted at offset 0x%" PRIx64 ": chunk %u skipped (unknown "
			       "kind %u)", off, idx, (unsigned)ch.kind);
			continue;
		}
		if (used > h->chunk_size - CHUNK_HDR || used % 8 != 0) {
			res->chunks_damaged++;
			damage(res, "corrupted at offset 0x%" PRIx64 ": chunk %u skipped (used %"
			       PRIu64 " does not fit)", off, idx, used);
			continue;
		}
		if (used > avail - CHUNK_HDR) {
			/* The file ends inside this chunk: keep the whole records before it. */
			used = avail - CHUNK_HDR;
			cut = 1;
			damage(res, "truncated at chunk %u (file ends at offset 0x%" PRIx64 ")", idx,
			       off + avail);
		}
		ret = chunk_walk(f, off + CHUNK_HDR, used, &ch, idx, cut, cb, ctx, res);
		if (ret != 0)
			return ret;
	}
	return 0;
}
