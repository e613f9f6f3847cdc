/*
 * writer.c — the agent's side of the session file: create, preallocate, map,
 * grow, hand out chunks and commit records.  The chunk/record paths are
 * lock-free and async-signal-safe; everything else runs in normal context.
 */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint64_t round_chunks(uint64_t size)
{
	uint64_t data = size > CBN_HEADER_SIZE ? size - CBN_HEADER_SIZE : 0;

	data = (data + CBN_CHUNK_SIZE - 1) / CBN_CHUNK_SIZE * CBN_CHUNK_SIZE;
	return CBN_HEADER_SIZE + data;
}

int writer_open(struct writer *w, const char *path, uint64_t initial_size, uint64_t max_size)
{
	struct cbn_file_header *h;
	struct stat st;
	void *map;
	int fd, ret;

	memset(w, 0, sizeof(*w));
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	max_size = round_chunks(max_size);
	if (max_size < CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE)
		max_size = CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE;
	initial_size = round_chunks(initial_size);
	if (initial_size < CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE)
		initial_size = CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE;
	if (initial_size > max_size)
		initial_size = max_size;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	map = mmap(NULL, max_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	/* Sparse at full length, blocks allocated as the mapping is populated. */
	if (ftruncate(fd, (off_t)max_size) == 0 &&
	    madvise(map, initial_size, MADV_POPULATE_WRITE) == 0) {
		w->populate = 1;
	} else {
		/* EINVAL: a kernel without MADV_POPULATE_WRITE; EFAULT: no space. */
		ret = errno == EFAULT ? -ENOSPC : 0;
		if (!ret && ftruncate(fd, 0) != 0)
			ret = -errno;
		/* posix_fallocate returns the error instead of setting errno. */
		if (!ret)
			ret = -posix_fallocate(fd, 0, (off_t)initial_size);
		if (ret) {
			munmap(map, max_size);
			goto fail;
		}
	}
	close(fd);

	h = map;
	memcpy(h->magic, CBN_MAGIC, sizeof(h->magic));
	h->version = CBN_FORMAT_VERSION;
	h->endian = CBN_ENDIAN_CHECK;
	h->header_size = CBN_HEADER_SIZE;
	h->chunk_size = CBN_CHUNK_SIZE;
	h->data_offset = CBN_HEADER_SIZE;
	h->parent_pid_file = -1;
	atomic_store(&h->next_chunk, CBN_HEADER_SIZE);
	atomic_store(&h->file_size, initial_size);

	w->hdr = h;
	w->max_size = max_size;
	/* Growth populates pages (a page fault each): small steps keep a
	 * handler that grows the file short. */
	w->grow_step = 4 * CBN_CHUNK_SIZE;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	strcpy(w->path, path);
	pthread_mutex_init(&w->ev_lock, NULL);
	return 0;
fail:
	close(fd);
	unlink(path);
	return ret;
}

static int writer_do_grow(struct writer *w, uint64_t min_free, int in_signal)
{
	struct cbn_file_header *h = w->hdr;
	uint64_t size, next, want;
	struct stat st;
	int fd = -1, ret = 0;

	if (!h)
		return -EBADF;
	if (atomic_exchange_explicit(&w->growing, 1, memory_order_acquire))
		return -EBUSY;
	size = atomic_load(&h->file_size);
	next = atomic_load(&h->next_chunk);
	if (size >= next + min_free)
		goto out;
	if (size >= w->max_size) {
		ret = -ENOSPC;
		goto out;
	}
	want = round_chunks(next + min_free);
	if (want < size + w->grow_step)
		want = size + w->grow_step;
	if (want > w->max_size)
		want = w->max_size;
	if (w->populate) {
		if (madvise((char *)h + size, want - size, MADV_POPULATE_WRITE) != 0) {
			/* EFAULT: the pages could not be backed (full disk). */
			ret = errno == EFAULT ? -ENOSPC : -errno;
			goto out;
		}
		atomic_store_explicit(&h->file_size, want, memory_order_release);
		goto out;
	}
	if (in_signal && w->no_fallocate) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	/*
	 * Reopen by path: we keep no fd (the target may close all of them).  The
	 * inode check makes sure a file renamed over ours is not extended instead.
	 */
	fd = open(w->path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_dev != w->dev || (uint64_t)st.st_ino != w->ino) {
		ret = -ESTALE;
		goto out;
	}
	/* fallocate(2) itself, not posix_fallocate: glibc's emulation for file
	 * systems without it writes zeros with pwrite, too slow for a handler. */
	if (syscall(SYS_fallocate, fd, 0, (off_t)0, (off_t)want) < 0) {
		ret = -errno;
		if (ret == -EOPNOTSUPP) {
			w->no_fallocate = 1;
			if (!in_signal) {
				ret = -posix_fallocate(fd, 0, (off_t)want);
			}
		}
		if (ret)
			goto out;
	}
	/* Blocks exist now: publish them to chunk handout. */
	atomic_store_explicit(&h->file_size, want, memory_order_release);
out:
	if (fd >= 0)
		close(fd);
	atomic_store_explicit(&w->growing, 0, memory_order_release);
	return ret;
}

int writer_grow(struct writer *w, uint64_t min_free)
{
	int ret, tries;

	/* The holder is another thread or a handler that interrupted another
	 * thread; either finishes in a few syscalls. */
	for (tries = 0; tries < 1000; tries++) {
		ret = writer_do_grow(w, min_free, 0);
		if (ret != -EBUSY)
			return ret;
		sched_yield();
	}
	return ret;
}

int writer_grow_signal(struct writer *w, uint64_t min_free)
{
	return writer_do_grow(w, min_free, 1);
}

/*
 * Ring mode, the file full: the retired SAMPLES or MEMORY chunk with the
 * lowest seq, claimed by a CAS on its reserved field (another thread may be
 * claiming the same one: then the next candidate).  Reinitialised as a new
 * chunk would be, magic last, so a reader (or a crash) never sees old records
 * under the new header.  A scan of the chunk headers: a few thousand reads
 * per 64 KiB of records.  SIGNAL-SAFE.
 */
static struct cbn_chunk_header *writer_recycle(struct writer *w, uint16_t kind, uint32_t tid)
{
	struct cbn_file_header *h = w->hdr;
	uint64_t end = atomic_load_explicit(&h->next_chunk, memory_order_acquire), off;
	int attempt;

	if (end > w->max_size)
		end = w->max_size;
	for (attempt = 0; attempt < 8; attempt++) {
		struct cbn_chunk_header *best = NULL, *c;
		uint16_t want = CBN_CHUNK_RETIRED;

		for (off = h->data_offset; off + CBN_CHUNK_SIZE <= end; off += CBN_CHUNK_SIZE) {
			c = (struct cbn_chunk_header *)((char *)h + off);
			if (c->magic != CBN_CHUNK_MAGIC || c->kind == CBN_CHUNK_EVENTS ||
			    __atomic_load_n(&c->reserved, __ATOMIC_ACQUIRE) != CBN_CHUNK_RETIRED)
				continue;
			if (!best || (int32_t)(c->seq - best->seq) < 0)
				best = c;
		}
		if (!best)
			return NULL;
		if (!__atomic_compare_exchange_n(&best->reserved, &want, CBN_CHUNK_CLAIMED, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		best->magic = 0;
		atomic_thread_fence(memory_order_release);
		atomic_store_explicit(&best->used, 0, memory_order_relaxed);
		best->kind = kind;
		best->tid = tid;
		best->seq = atomic_fetch_add_explicit(&h->chunk_seq, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->ring_recycled, 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		__atomic_store_n(&best->reserved, 0, __ATOMIC_RELAXED);
		best->magic = CBN_CHUNK_MAGIC;
		return best;
	}
	return NULL;
}

void writer_chunk_retire(struct writer *w, struct cbn_chunk_header *c)
{
	if (w->ring && c)
		__atomic_store_n(&c->reserved, CBN_CHUNK_RETIRED, __ATOMIC_RELEASE);
}

struct cbn_chunk_header *writer_chunk_new(struct writer *w, uint16_t kind, uint32_t tid)
{
	struct cbn_file_header *h = w->hdr;
	struct cbn_chunk_header *c;
	uint64_t off, size;

	if (!h)
		return NULL;
	/*
	 * A CAS loop rather than a blind fetch_add: next_chunk never passes
	 * file_size, so a failed attempt leaves no hole and a later growth makes
	 * the space usable again.  Lock-free, so safe in a signal handler.
	 */
	off = atomic_load_explicit(&h->next_chunk, memory_order_relaxed);
	do {
		size = atomic_load_explicit(&h->file_size, memory_order_acquire);
		if (off + CBN_CHUNK_SIZE > w->max_size && w->ring && kind != CBN_CHUNK_EVENTS)
			return writer_recycle(w, kind, tid);
		if (off + CBN_CHUNK_SIZE > size || off + CBN_CHUNK_SIZE > w->max_size)
			return NULL;
	} while (!atomic_compare_exchange_weak_explicit(&h->next_chunk, &off, off + CBN_CHUNK_SIZE,
							memory_order_acq_rel,
							memory_order_relaxed));
	c = (struct cbn_chunk_header *)((char *)h + off);
	c->kind = kind;
	c->reserved = 0;
	c->tid = tid;
	c->seq = w->ring ? atomic_fetch_add_explicit(&h->chunk_seq, 1, memory_order_relaxed) :
			   (uint32_t)((off - h->data_offset) / CBN_CHUNK_SIZE);
	atomic_store_explicit(&c->used, 0, memory_order_relaxed);
	/* The magic last: a reader seeing it sees a consistent chunk header. */
	atomic_thread_fence(memory_order_release);
	c->magic = CBN_CHUNK_MAGIC;
	return c;
}

void *writer_reserve(struct cbn_chunk_header *c, uint32_t size)
{
	uint64_t used = atomic_load_explicit(&c->used, memory_order_relaxed);

	if (size > CBN_CHUNK_SIZE - sizeof(*c) || used + size > CBN_CHUNK_SIZE - sizeof(*c))
		return NULL;
	return (char *)(c + 1) + used;
}

void writer_commit(struct cbn_chunk_header *c, uint32_t size)
{
	uint64_t used = atomic_load_explicit(&c->used, memory_order_relaxed);

	atomic_store_explicit(&c->used, used + size, memory_order_release);
}

void writer_lost(struct writer *w, enum cbn_lost_reason r)
{
	if (w->hdr && (unsigned)r < CBN_LOST_NREASONS)
		atomic_fetch_add_explicit(&w->hdr->lost[r], 1, memory_order_relaxed);
}

int writer_append_event(struct writer *w, const void *rec, size_t size)
{
	return writer_append_event_at(w, rec, size, NULL);
}

int writer_append_event_at(struct writer *w, const void *rec, size_t size, void **where)
{
	const struct cbn_rec *r = rec;
	void *dst;
	int ret = 0;

	if (where)
		*where = NULL;
	if (!w->hdr)
		return -EBADF;
	if (size < sizeof(*r) || size % 8 || r->size != size ||
	    size > CBN_CHUNK_SIZE - sizeof(struct cbn_chunk_header))
		return -EINVAL;
	pthread_mutex_lock(&w->ev_lock);
	dst = w->ev_chunk ? writer_reserve(w->ev_chunk, (uint32_t)size) : NULL;
	if (!dst) {
		w->ev_chunk = writer_chunk_new(w, CBN_CHUNK_EVENTS, 0);
		if (!w->ev_chunk) {
			writer_grow(w, 4 * CBN_CHUNK_SIZE);
			w->ev_chunk = writer_chunk_new(w, CBN_CHUNK_EVENTS, 0);
		}
		if (!w->ev_chunk) {
			ret = -ENOSPC;
			goto out;
		}
		dst = writer_reserve(w->ev_chunk, (uint32_t)size);
	}
	memcpy(dst, rec, size);
	writer_commit(w->ev_chunk, (uint32_t)size);
	if (where)
		*where = dst;
out:
	pthread_mutex_unlock(&w->ev_lock);
	return ret;
}

void writer_close(struct writer *w)
{
	struct cbn_file_header *h = w->hdr;

	/* Forget first: a handler that looks at hdr must never see an unmapped one. */
	w->hdr = NULL;
	w->ev_chunk = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	if (h)
		munmap(h, w->max_size);
}

void writer_forget(struct writer *w)
{
	w->hdr = NULL;
	w->ev_chunk = NULL;
}
