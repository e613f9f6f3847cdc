/*
 * writer.h — appends records to one session file (cbn_format.h) from inside the
 * target: file creation and growth, chunk handout, record commit, loss counters.
 * Each function says whether it may run in signal context.
 */
#ifndef CBN_WRITER_H
#define CBN_WRITER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"

/*
 * One open session file.  Only [0, header.file_size) is backed by allocated
 * blocks; a chunk is handed out only if it lies entirely below file_size, so
 * the signal handler never touches an unallocated page (which would raise
 * SIGBUS on a full disk).  The fd is closed right after the first mapping
 * and none is ever opened again: the file is created sparse at its full
 * length and grows by madvise(MADV_POPULATE_WRITE), which allocates the
 * blocks and reports a full disk as an error instead of SIGBUS (Linux 5.14).
 * Older kernels: growth reopens the file by path and fallocates, as the
 * first release did.
 *
 * The address space grows with the file, not up front (a program under
 * RLIMIT_AS keeps its headroom): the file is mapped in segments of seg_size
 * bytes of chunks, each made without a descriptor by mremap(old_size 0) of
 * the previous segment's last page (a new mapping of the same file, from
 * that page's offset on), and never moved or unmapped until writer_close,
 * so a pointer into the file stays valid.  Chunks never straddle segments.
 * Under a finite RLIMIT_AS the mapped total stays under an eighth of it.
 *
 * Pages of the file count in the process's RSS only while mapped: growth
 * drops the pages it populated, and a retired chunk's pages are dropped
 * (MADV_DONTNEED: a shared file mapping keeps its data in the page cache
 * and the file), so the program's RSS holds the header and the pages each
 * thread is writing.
 */
#define WRITER_SEGS_MAX 1024
struct writer {
	struct cbn_file_header *hdr;     /* NULL: not open; also seg[0] */
	uint64_t max_size;               /* file length, growth limit */
	uint64_t grow_step;              /* bytes added per growth */
	uint64_t seg_size;               /* bytes of chunks per segment after the first */
	uint64_t as_cap;                 /* bytes of address space at most, 0: no limit */
	char *seg[WRITER_SEGS_MAX];      /* seg[k]: address of file offset writer_seg_off(k) */
	_Atomic uint32_t nseg;           /* segments mapped (release after seg[] is set) */
	_Atomic int growing;             /* try-lock of writer_grow (signal-safe) */
	_Atomic uint32_t grower;         /* the thread holding it, 0 */
	int no_fallocate;                /* fs lacks fallocate(2): grow only outside handlers */
	int populate;                    /* grows with MADV_POPULATE_WRITE, no descriptor */
	int ring;                        /* ring mode: a full file reuses retired chunks */
	pthread_mutex_t ev_lock;         /* protects ev_chunk; error-checking: a thread
					  * that holds it gets EDEADLK (writer_open) */
	_Atomic int ev_bounded;          /* 1: ev_lock waited for 50 ms at most, then
					  * the record is dropped (a process ending
					  * by _exit, which a signal handler may call
					  * while its thread holds the lock) */
	struct cbn_chunk_header *ev_chunk; /* current EVENTS chunk */
	uint64_t dev, ino;               /* identity of the file, checked on reopen */
	char path[4096];
};

/* The address of file offset off (which must lie in a mapped segment: below
 * header.file_size).  SIGNAL-SAFE. */
void *writer_addr(const struct writer *w, uint64_t off);

/* Bytes of address space the mapping takes now. */
uint64_t writer_mapped_bytes(const struct writer *w);

/* msync what is allocated (ctl's dump).  Not signal-safe. */
void writer_sync(struct writer *w);

/*
 * Create "path" with O_EXCL, sparse at max_size bytes, allocate initial_size
 * bytes (rounded to whole chunks past the header), map the first segment and
 * fill the fixed header fields (magic, sizes, offsets).  The caller fills
 * pid, times etc.  Returns 0 or -errno (-EEXIST when the file exists, -ENOMEM
 * when RLIMIT_AS leaves no room for the first segment).  Not signal-safe.
 */
int writer_open(struct writer *w, const char *path, uint64_t initial_size, uint64_t max_size);

/*
 * Make sure at least min_free bytes are allocated past next_chunk (up to
 * max_size), by populating more of the mapping (or, on old kernels, reopening
 * the file and fallocate(2)-ing more).  Returns 0,
 * -ENOSPC when max_size is reached, -EBUSY when another grow is in progress
 * (writer_grow waits for it, writer_grow_signal waits about a millisecond
 * for another thread's, never for its own thread's), or -errno.
 * writer_grow_signal is SIGNAL-SAFE (raw syscalls, an atomic try-lock, no
 * allocation): the sampler grows the file itself when it runs out, so a
 * single-threaded target needs no helper thread.  writer_grow is thread-safe
 * and also falls back to posix_fallocate's zero-filling where the file
 * system has no fallocate(2).
 */
int writer_grow(struct writer *w, uint64_t min_free);
int writer_grow_signal(struct writer *w, uint64_t min_free);

/*
 * Take a fresh chunk of the given kind (enum cbn_chunk_kind) for thread tid.
 * Lock-free (one CAS loop on header.next_chunk): SIGNAL-SAFE.  Returns NULL
 * when the allocated part of the file is used up; the caller counts the loss.
 */
struct cbn_chunk_header *writer_chunk_new(struct writer *w, uint16_t kind, uint32_t tid);

/*
 * Room for a record of size bytes (multiple of 8) in chunk c, or NULL if it does
 * not fit.  Nothing is visible to readers until writer_commit.  SIGNAL-SAFE; a
 * chunk has one writer at a time.
 */
void *writer_reserve(struct cbn_chunk_header *c, uint32_t size);

/* The caller's thread is done with c (it takes a new chunk): in ring mode c
 * may now be reused.  SIGNAL-SAFE. */
void writer_chunk_retire(struct writer *w, struct cbn_chunk_header *c);

/* The same for the last chunk of a thread that ends: in ring mode it is
 * reused only once no other retired chunk is left.  SIGNAL-SAFE. */
void writer_chunk_final(struct writer *w, struct cbn_chunk_header *c);

/* Publish the record reserved last (release store of used).  SIGNAL-SAFE. */
void writer_commit(struct cbn_chunk_header *c, uint32_t size);

/* Count one lost sample of reason r with weight 1.  SIGNAL-SAFE. */
void writer_lost(struct writer *w, enum cbn_lost_reason r);

/*
 * Append one complete record (rec->size == size) to the shared EVENTS chunk,
 * taking a new chunk (and growing the file) when needed.  Takes ev_lock: NOT
 * signal-safe.  Returns 0 or -ENOSPC (file full) / -EINVAL (bad size) /
 * -EDEADLK (the calling thread holds ev_lock: a signal handler of the
 * program's interrupted the thread's own write).
 */
int writer_append_event(struct writer *w, const void *rec, size_t size);

/* The same, and *where (when not NULL) = the committed record in the mapping,
 * NULL on error.  The mapping never moves (writer_open maps max_size up
 * front) and EVENTS chunks are never reused, so the writer may update fields
 * of its own record in place later (whole aligned 8-byte stores): a reader
 * sees the old or the new value of each. */
int writer_append_event_at(struct writer *w, const void *rec, size_t size, void **where);

/* Unmap.  The file keeps everything committed.  Not signal-safe. */
void writer_close(struct writer *w);

/* Forget the mapping without unmapping it, e.g. in a forked child that must
 * not write to its parent's file but may still have pointers into it.  */
void writer_forget(struct writer *w);

#endif
