/*
 * writer.c — the agent's side of the session file: create, preallocate, map,
 * grow, hand out chunks and commit records.  The chunk/record paths are
 * lock-free and async-signal-safe; everything else runs in normal context.
 */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t round_chunks(uint64_t size)
{
	uint64_t data = size > CBN_HEADER_SIZE ? size - CBN_HEADER_SIZE : 0;

	data = (data + CBN_CHUNK_SIZE - 1) / CBN_CHUNK_SIZE * CBN_CHUNK_SIZE;
	return CBN_HEADER_SIZE + data;
}

#define WRITER_PAGE 4096u
#define WRITER_SEG_MIN (1u << 20)

/* File offset where segment k begins (segment 0 holds the header too). */
static uint64_t writer_seg_off(const struct writer *w, uint32_t k)
{
	return k ? CBN_HEADER_SIZE + (uint64_t)k * w->seg_size : 0;
}

/* File offset where segment k ends, clamped to the file. */
static uint64_t writer_seg_end(const struct writer *w, uint32_t k)
{
	uint64_t end = CBN_HEADER_SIZE + (uint64_t)(k + 1) * w->seg_size;

	return end < w->max_size ? end : w->max_size;
}

void *writer_addr(const struct writer *w, uint64_t off)
{
	uint32_t k = off < CBN_HEADER_SIZE ? 0 : (uint32_t)((off - CBN_HEADER_SIZE) / w->seg_size);

	return w->seg[k] + (off - writer_seg_off(w, k));
}

uint64_t writer_mapped_bytes(const struct writer *w)
{
	uint32_t n = atomic_load_explicit(&w->nseg, memory_order_acquire);

	/* each segment after the first maps one page of the one before */
	return n ? writer_seg_end(w, n - 1) + (uint64_t)(n - 1) * WRITER_PAGE : 0;
}

/*
 * SIGNAL-SAFE.  Map segments until [0, upto) is mapped: each is a new
 * mapping of the file made from the last page of the one before (mremap with
 * old_size 0 maps the same file from that page's offset; no descriptor).
 * Called with w->growing held, or before the file is shared.  0 or -errno.
 */
static int writer_map_upto(struct writer *w, uint64_t upto)
{
	uint32_t n = atomic_load_explicit(&w->nseg, memory_order_relaxed);

	while (n && writer_seg_end(w, n - 1) < upto) {
		uint64_t len = writer_seg_end(w, n) - writer_seg_off(w, n) + WRITER_PAGE;
		char *last = w->seg[n - 1] + (writer_seg_off(w, n) - writer_seg_off(w, n - 1)) -
			     WRITER_PAGE;
		long m;

		if (n >= WRITER_SEGS_MAX)
			return -ENOSPC;
		if (w->as_cap && writer_mapped_bytes(w) + len > w->as_cap)
			return -ENOMEM; /* the program's RLIMIT_AS headroom */
		m = syscall(SYS_mremap, last, 0UL, (unsigned long)len, (unsigned long)MREMAP_MAYMOVE);
		if (m < 0 && m > -4096)
			return (int)m;
		if (m == -1)
			return -ENOMEM;
		w->seg[n] = (char *)m + WRITER_PAGE;
		/* No readahead (writer_open). */
		syscall(SYS_madvise, w->seg[n], (unsigned long)(len - WRITER_PAGE), MADV_RANDOM);
		atomic_store_explicit(&w->nseg, ++n, memory_order_release);
		if (w->hdr)
			atomic_store_explicit(&w->hdr->guard.map_bytes, writer_mapped_bytes(w),
					      memory_order_relaxed);
	}
	return 0;
}

/* SIGNAL-SAFE.  madvise each mapped segment's part of [from, to). */
static int writer_advise(struct writer *w, uint64_t from, uint64_t to, int advice)
{
	uint32_t k, n = atomic_load_explicit(&w->nseg, memory_order_acquire);

	for (k = 0; k < n && from < to; k++) {
		uint64_t lo = writer_seg_off(w, k), hi = writer_seg_end(w, k);

		if (to <= lo || from >= hi)
			continue;
		if (from > lo)
			lo = from;
		if (to < hi)
			hi = to;
		if (syscall(SYS_madvise, w->seg[k] + (lo - writer_seg_off(w, k)), (unsigned long)(hi - lo),
			    advice) != 0)
			return -errno;
	}
	return 0;
}

/* The address space the mapping may take: an eighth of a finite RLIMIT_AS. */
static uint64_t writer_as_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	return (uint64_t)rl.rlim_cur / 8;
}

int writer_open(struct writer *w, const char *path, uint64_t initial_size, uint64_t max_size)
{
	struct cbn_file_header *h;
	uint64_t seg0;
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
	w->max_size = max_size;
	/* At most WRITER_SEGS_MAX segments of whole chunks, at least 1 MiB. */
	w->seg_size = (max_size / WRITER_SEGS_MAX + CBN_CHUNK_SIZE - 1) / CBN_CHUNK_SIZE *
		      CBN_CHUNK_SIZE;
	if (w->seg_size < WRITER_SEG_MIN)
		w->seg_size = WRITER_SEG_MIN;
	w->as_cap = writer_as_cap();
	seg0 = writer_seg_end(w, 0);
	if (initial_size > seg0)
		initial_size = seg0;
	if (w->as_cap && seg0 > w->as_cap)
		return -ENOMEM;

	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto fail;
	}
	map = mmap(NULL, seg0, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	/* No readahead: populating a page of a sparse file otherwise reads
	 * (zero-fills) a whole readahead window around it, which made the
	 * file's creation cost 5 ms of kernel time per process (issue 21; perf
	 * record of a loop of /bin/true: 65 % in filemap_fault's
	 * page_cache_ra_order). */
	madvise(map, seg0, MADV_RANDOM);
	/* Sparse at full length; the first chunks allocated now, while there
	 * is a descriptor (fallocate: one extent, no page touched); growth
	 * populates the mapping (MADV_POPULATE_WRITE checks that it works). */
	if (ftruncate(fd, (off_t)max_size) == 0 &&
	    (fallocate(fd, 0, 0, (off_t)initial_size) == 0 ||
	     madvise(map, initial_size, MADV_POPULATE_WRITE) == 0) &&
	    madvise(map, WRITER_PAGE, MADV_POPULATE_WRITE) == 0) {
		w->populate = 1;
	} else {
		/* EINVAL: a kernel without MADV_POPULATE_WRITE; EFAULT: no space. */
		ret = errno == EFAULT || errno == ENOSPC ? -ENOSPC : 0;
		if (!ret && ftruncate(fd, 0) != 0)
			ret = -errno;
		/* posix_fallocate returns the error instead of setting errno. */
		if (!ret)
			ret = -posix_fallocate(fd, 0, (off_t)initial_size);
		if (ret) {
			munmap(map, seg0);
			goto fail;
		}
	}
	close(fd);

	h = map;
	memcpy(h->magic, CBN_MAGIC, sizeof(h->magic));
	h->version = CBN_FORMAT_VERSION;
	h->rec_type_max = CBN_REC_TYPE_MAX;
	h->endian = CBN_ENDIAN_CHECK;
	h->header_size = CBN_HEADER_SIZE;
	h->chunk_size = CBN_CHUNK_SIZE;
	h->data_offset = CBN_HEADER_SIZE;
	h->parent_pid_file = -1;
	atomic_store(&h->next_chunk, CBN_HEADER_SIZE);
	atomic_store(&h->file_size, initial_size);

	w->seg[0] = map;
	atomic_store(&w->nseg, 1);
	w->hdr = h;
	h->guard.map_bytes = seg0;
	h->guard.as_limit = w->as_cap * 8;
	/* Growth populates pages (a page fault each): small steps keep a
	 * handler that grows the file short. */
	w->grow_step = 4 * CBN_CHUNK_SIZE;
	w->dev = st.st_dev;
	w->ino = st.st_ino;
	strcpy(w->path, path);
	/* The agent writes events from functions a signal handler may call
	 * (exec, _exit, fork): one that interrupted its own thread inside a
	 * write gets EDEADLK from an error-checking mutex, where a plain one
	 * would wait for itself forever. */
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
		pthread_mutex_init(&w->ev_lock, &a);
		pthread_mutexattr_destroy(&a);
	}
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
	atomic_store_explicit(&w->grower, (uint32_t)syscall(SYS_gettid), memory_order_relaxed);
	size = atomic_load(&h->file_size);
	next = atomic_load(&h->next_chunk);
	if (size >= next + min_free)
		goto out;
	if (size >= w->max_size) {
		ret = -ENOSPC;
		goto out;
	}
	want = round_chunks(next + min_free);
	/* An eighth of the file at a time, between grow_step and 16 chunks:
	 * a program that starts a thousand threads (a chunk each) grows its
	 * file a few dozen times, not hundreds (each growth holds the lock
	 * other threads' handlers wait for). */
	if (want < size + w->grow_step)
		want = size + w->grow_step;
	if (want < size + size / 8)
		want = round_chunks(size + (size / 8 < 16 * CBN_CHUNK_SIZE ? size / 8
									  : 16 * CBN_CHUNK_SIZE));
	if (want > w->max_size)
		want = w->max_size;
	/* The address space first: a segment the size of a few chunks keeps
	 * a refusal (RLIMIT_AS) from leaving the file allocated but unused. */
	ret = writer_map_upto(w, want);
	if (ret) {
		/* Whatever is mapped still grows. */
		uint32_t n = atomic_load_explicit(&w->nseg, memory_order_relaxed);

		ret = 0;
		want = writer_seg_end(w, n - 1);
		if (want <= size) {
			ret = -ENOSPC;
			goto out;
		}
	}
	if (w->populate) {
		ret = writer_advise(w, size, want, MADV_POPULATE_WRITE);
		if (ret) {
			/* EFAULT: the pages could not be backed (full disk). */
			ret = ret == -EFAULT ? -ENOSPC : ret;
			goto out;
		}
		/* Allocated; now out of the program's RSS until written. */
		writer_advise(w, size, want, MADV_DONTNEED);
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
	atomic_store_explicit(&w->grower, 0, memory_order_relaxed);
	atomic_store_explicit(&w->growing, 0, memory_order_release);
	return ret;
}

int writer_grow(struct writer *w, uint64_t min_free)
{
	sigset_t all, old;
	int ret, tries;

	/* With every signal blocked: a sampling handler on this thread must
	 * never find the growth lock held by the code it interrupted (it would
	 * lose its sample, writer_grow_signal). */
	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, _NSIG / 8);
	/* The holder is another thread or a handler that interrupted another
	 * thread; either finishes in a few syscalls. */
	for (tries = 0; tries < 1000; tries++) {
		ret = writer_do_grow(w, min_free, 0);
		if (ret != -EBUSY)
			break;
		sched_yield();
	}
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	return ret;
}

/*
 * In a handler: another thread growing the file finishes in a few system
 * calls, so wait for it (yielding, at most about a millisecond) rather than
 * lose the sample; never for this thread's own interrupted growth.
 */
int writer_grow_signal(struct writer *w, uint64_t min_free)
{
	uint32_t self = (uint32_t)syscall(SYS_gettid), g;
	int ret, tries;

	for (tries = 0; tries < 1000; tries++) {
		ret = writer_do_grow(w, min_free, 1);
		if (ret != -EBUSY)
			return ret;
		g = atomic_load_explicit(&w->grower, memory_order_relaxed);
		if (g == self)
			return ret;
		syscall(SYS_sched_yield);
	}
	return ret;
}

/* SIGNAL-SAFE.  The newest record of chunk c: SAMPLE and MEM records all
 * begin with {h, ts}, written in time order by the chunk's one thread. */
static uint64_t writer_chunk_last_ts(const struct cbn_chunk_header *c)
{
	uint64_t used = atomic_load_explicit(&c->used, memory_order_acquire), off = 0, ts = 0;
	const char *p = (const char *)(c + 1);

	while (off + sizeof(struct cbn_rec) + 8 <= used) {
		const struct cbn_rec *r = (const void *)(p + off);

		if (r->size < sizeof(*r) + 8 || r->size % 8 || off + r->size > used)
			break;
		ts = *(const uint64_t *)(p + off + sizeof(*r));
		off += r->size;
	}
	return ts;
}

/*
 * Ring mode, the file full: the retired SAMPLES or MEMORY chunk with the
 * lowest seq, claimed by a CAS on its reserved field (another thread may be
 * claiming the same one: then the next candidate); a chunk that was its
 * thread's last (FINAL) only when no other is left, so that every thread's
 * last stretch is kept as long as the file can hold them.  Reinitialised as
 * a new chunk would be, magic last, so a reader (or a crash) never sees old
 * records under the new header; the newest time it held goes to
 * header.guard.ring_lost_until_ns (what lies before may be incomplete).  A
 * scan of the chunk headers: a few thousand reads per 64 KiB of records.
 * SIGNAL-SAFE.
 */
static struct cbn_chunk_header *writer_recycle(struct writer *w, uint16_t kind, uint32_t tid)
{
	struct cbn_file_header *h = w->hdr;
	uint64_t end = atomic_load_explicit(&h->next_chunk, memory_order_acquire), off, ts, cur;
	int attempt;

	if (end > atomic_load_explicit(&h->file_size, memory_order_acquire))
		end = atomic_load_explicit(&h->file_size, memory_order_acquire);
	for (attempt = 0; attempt < 8; attempt++) {
		struct cbn_chunk_header *best = NULL, *final = NULL, *c;
		uint16_t want, st;

		for (off = h->data_offset; off + CBN_CHUNK_SIZE <= end; off += CBN_CHUNK_SIZE) {
			c = writer_addr(w, off);
			if (c->magic != CBN_CHUNK_MAGIC || c->kind == CBN_CHUNK_EVENTS)
				continue;
			st = __atomic_load_n(&c->reserved, __ATOMIC_ACQUIRE);
			if (st == CBN_CHUNK_RETIRED && (!best || (int32_t)(c->seq - best->seq) < 0))
				best = c;
			else if (st == CBN_CHUNK_FINAL && (!final || (int32_t)(c->seq - final->seq) < 0))
				final = c;
		}
		want = best ? CBN_CHUNK_RETIRED : CBN_CHUNK_FINAL;
		if (!best)
			best = final;
		if (!best)
			return NULL;
		if (!__atomic_compare_exchange_n(&best->reserved, &want, CBN_CHUNK_CLAIMED, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		ts = writer_chunk_last_ts(best);
		cur = atomic_load_explicit(&h->guard.ring_lost_until_ns, memory_order_relaxed);
		while (ts > cur && !atomic_compare_exchange_weak(&h->guard.ring_lost_until_ns, &cur, ts))
			;
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

static void writer_chunk_leave(struct writer *w, struct cbn_chunk_header *c, uint16_t state)
{
	if (!c)
		return;
	/* Written, so out of the program's RSS: the data stays in the page
	 * cache and the file (a shared mapping), a later write faults it in. */
	syscall(SYS_madvise, c, (unsigned long)CBN_CHUNK_SIZE, MADV_DONTNEED);
	if (w->ring)
		__atomic_store_n(&c->reserved, state, __ATOMIC_RELEASE);
}

void writer_chunk_retire(struct writer *w, struct cbn_chunk_header *c)
{
	writer_chunk_leave(w, c, CBN_CHUNK_RETIRED);
}

void writer_chunk_final(struct writer *w, struct cbn_chunk_header *c)
{
	writer_chunk_leave(w, c, CBN_CHUNK_FINAL);
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
	c = writer_addr(w, off);
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
	if (!atomic_load_explicit(&w->ev_bounded, memory_order_relaxed)) {
		int e = pthread_mutex_lock(&w->ev_lock);

		if (e)
			return -e; /* EDEADLK: this thread holds it, interrupted */
	} else {
		struct timespec wait = {0, 100000};
		int tries = 0;

		while (pthread_mutex_trylock(&w->ev_lock) != 0) {
			if (++tries == 500)
				return -EDEADLK;
			nanosleep(&wait, NULL);
		}
	}
	dst = w->ev_chunk ? writer_reserve(w->ev_chunk, (uint32_t)size) : NULL;
	if (!dst) {
		writer_chunk_retire(w, w->ev_chunk);
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
	uint32_t k, n = atomic_load(&w->nseg);

	/* Forget first: a handler that looks at hdr must never see an unmapped one. */
	w->hdr = NULL;
	w->ev_chunk = NULL;
	atomic_signal_fence(memory_order_seq_cst);
	if (!h)
		return;
	for (k = 0; k < n; k++) {
		uint64_t len = writer_seg_end(w, k) - writer_seg_off(w, k);

		if (k)
			munmap(w->seg[k] - WRITER_PAGE, len + WRITER_PAGE);
		else
			munmap(w->seg[0], len);
	}
	atomic_store(&w->nseg, 0);
}

void writer_sync(struct writer *w)
{
	uint64_t size = w->hdr ? atomic_load(&w->hdr->file_size) : 0;
	uint32_t k, n = atomic_load(&w->nseg);

	for (k = 0; k < n && writer_seg_off(w, k) < size; k++) {
		uint64_t end = writer_seg_end(w, k);

		msync(w->seg[k], (end < size ? end : size) - writer_seg_off(w, k), MS_SYNC);
	}
}

void writer_forget(struct writer *w)
{
	w->hdr = NULL;
	w->ev_chunk = NULL;
}
