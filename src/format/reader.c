/*
 * reader.c — the validating reader of session files: header checks and the
 * chunk walk (per-record validation: reader_check.c).  Nothing in a file is trusted: every length
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
#include "reader_check.h"
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
	case CBN_REC_CODE_FILE: return "code_file";
	}
	return "unknown";
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
		st = reader_rec_check(p, h.size, ch->kind, &r, &why);
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
