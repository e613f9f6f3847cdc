/*
 * test_writer.c — unit test of src/format/writer.c: chunk handout bounded by the
 * allocated size, growth up to the mapped maximum, record reserve/commit, loss
 * counting, O_EXCL, a reader parsing the file (through its own mapping)
 * while four threads write: it must only ever see whole, committed records;
 * and an event write that gives up on a held lock (ev_bounded), or at once
 * on one its own thread holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"
#include "writer.h"

#define NWRITERS 4
#define NRECS 20000

static char dir[] = "/tmp/cbn-writer-test.XXXXXX";
static struct writer w;
static _Atomic int writers_done;
static _Atomic uint64_t attempted, lost_full;
static _Atomic int reader_rounds;

/* A record whose payload is derived from (tid, seq): a torn record shows. */
struct test_rec {
	struct cbn_rec h;
	uint32_t tid;
	uint32_t seq;
	uint64_t check[5];
};

static void fill(struct test_rec *r, uint32_t tid, uint32_t seq)
{
	int i;

	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = 0;
	r->h.size = sizeof(*r);
	r->tid = tid;
	r->seq = seq;
	for (i = 0; i < 5; i++)
		r->check[i] = ((uint64_t)tid << 32 | seq) * 2654435761u + (uint64_t)i;
}

static int valid(const struct test_rec *r, uint32_t tid)
{
	int i;

	if (r->h.size != sizeof(*r) || r->tid != tid)
		return 0;
	for (i = 0; i < 5; i++)
		if (r->check[i] != (((uint64_t)tid << 32 | r->seq) * 2654435761u + (uint64_t)i))
			return 0;
	return 1;
}

static void *writer_thread(void *arg)
{
	uint32_t tid = (uint32_t)(uintptr_t)arg, seq;
	struct cbn_chunk_header *c = NULL;

	for (seq = 0; seq < NRECS; seq++) {
		struct test_rec *r = c ? writer_reserve(c, sizeof(*r)) : NULL;

		atomic_fetch_add(&attempted, 1);
		if (!r) {
			c = writer_chunk_new(&w, CBN_CHUNK_SAMPLES, tid);
			r = c ? writer_reserve(c, sizeof(*r)) : NULL;
		}
		if (!r) {
			writer_lost(&w, CBN_LOST_BUFFER_FULL);
			atomic_fetch_add(&lost_full, 1);
			continue;
		}
		fill(r, tid, seq);
		writer_commit(c, sizeof(*r));
		if (seq % 64 == 0)
			sched_yield(); /* let the reader run while we write */
		if (seq % 2000 == 0) {
			struct cbn_rec_exit e = {{CBN_REC_PROCESS_EXIT, 0, sizeof(e)}, seq, (int32_t)tid, 0};

			writer_append_event(&w, &e, sizeof(e));
		}
	}
	return NULL;
}

/* Parse the file through a separate read-only mapping, as the launcher does.
 * Returns committed sample records seen, or -1 on a torn/invalid one. */
static long parse(const char *path, long *events)
{
	struct stat st;
	const struct cbn_file_header *h;
	uint64_t off, end;
	long n = 0;
	void *m;
	int fd = open(path, O_RDONLY);

	*events = 0;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	h = m;
	end = atomic_load(&((struct cbn_file_header *)h)->file_size);
	if (end > (uint64_t)st.st_size)
		end = (uint64_t)st.st_size;
	for (off = h->data_offset; off + CBN_CHUNK_SIZE <= end; off += CBN_CHUNK_SIZE) {
		const struct cbn_chunk_header *c = (const void *)((const char *)m + off);
		uint64_t used, p = 0;

		if (c->magic != CBN_CHUNK_MAGIC)
			continue;
		used = atomic_load_explicit(&((struct cbn_chunk_header *)c)->used,
					    memory_order_acquire);
		if (used > CBN_CHUNK_SIZE - sizeof(*c)) {
			n = -1;
			break;
		}
		while (p < used) {
			const struct cbn_rec *r = (const void *)((const char *)(c + 1) + p);

			if (r->size < sizeof(*r) || r->size > used - p) {
				n = -1;
				goto out;
			}
			if (c->kind == CBN_CHUNK_SAMPLES) {
				if (!valid((const struct test_rec *)r, c->tid)) {
					n = -1;
					goto out;
				}
				n++;
			} else if (c->kind == CBN_CHUNK_EVENTS) {
				if (r->type != CBN_REC_PROCESS_EXIT) {
					n = -1;
					goto out;
				}
				(*events)++;
			}
			p += r->size;
		}
	}
out:
	munmap(m, (size_t)st.st_size);
	return n;
}

static void *reader_thread(void *arg)
{
	const char *path = arg;
	long last = 0, n, ev;
	int bad = 0, rounds = 0;

	while (!atomic_load(&writers_done) || rounds < 2) {
		if (atomic_load(&writers_done))
			rounds++;
		n = parse(path, &ev);
		atomic_fetch_add(&reader_rounds, 1);
		if (n < 0 || n < last)
			bad = 1;
		if (n > last)
			last = n;
	}
	return (void *)(intptr_t)bad;
}

static void test_handout(void)
{
	char path[256];
	struct cbn_chunk_header *c;
	int n = 0, ret;

	snprintf(path, sizeof(path), "%s/handout.cbp", dir);
	/* 2 chunks allocated, at most 5 mapped. */
	REQUIRE(writer_open(&w, path, CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE,
			    CBN_HEADER_SIZE + 5 * CBN_CHUNK_SIZE) == 0);
	CHECK(memcmp(w.hdr->magic, CBN_MAGIC, 8) == 0);
	CHECK_EQ_INT(w.hdr->file_size, CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE);
	while ((c = writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 7)) != NULL) {
		CHECK_EQ_INT(c->magic, CBN_CHUNK_MAGIC);
		CHECK_EQ_INT(c->tid, 7);
		CHECK((char *)c + CBN_CHUNK_SIZE <= (char *)w.hdr + w.hdr->file_size);
		n++;
	}
	CHECK_EQ_INT(n, 2);
	/* A refused chunk leaves no hole: next_chunk stays at the end. */
	CHECK_EQ_INT(w.hdr->next_chunk, w.hdr->file_size);
	ret = writer_grow(&w, CBN_CHUNK_SIZE);
	CHECK_EQ_INT(ret, 0);
	while (writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 7))
		n++;
	CHECK(n >= 3 && n <= 5);
	while (writer_grow(&w, CBN_CHUNK_SIZE) == 0 && writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 7))
		n++;
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(writer_grow(&w, CBN_CHUNK_SIZE), -ENOSPC);
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 7) == NULL);

	/* Reserve/commit: records never run past the chunk. */
	{
		struct writer w2;
		char p2[256];
		struct test_rec *r;
		int k = 0;

		snprintf(p2, sizeof(p2), "%s/fill.cbp", dir);
		REQUIRE(writer_open(&w2, p2, 1 << 20, 1 << 20) == 0);
		c = writer_chunk_new(&w2, CBN_CHUNK_SAMPLES, 1);
		REQUIRE(c != NULL);
		while ((r = writer_reserve(c, sizeof(*r))) != NULL) {
			fill(r, 1, (uint32_t)k++);
			writer_commit(c, sizeof(*r));
		}
		CHECK_EQ_INT(k, (CBN_CHUNK_SIZE - sizeof(*c)) / sizeof(*r));
		CHECK(c->used <= CBN_CHUNK_SIZE - sizeof(*c));
		CHECK(writer_reserve(c, CBN_CHUNK_SIZE) == NULL);
		writer_lost(&w2, CBN_LOST_BUFFER_FULL);
		writer_lost(&w2, CBN_LOST_BUFFER_FULL);
		CHECK_EQ_INT(w2.hdr->lost[CBN_LOST_BUFFER_FULL], 2);
		writer_close(&w2);
		/* O_EXCL: a second image never clobbers a file. */
		CHECK_EQ_INT(writer_open(&w2, p2, 1 << 20, 1 << 20), -EEXIST);
	}
	writer_close(&w);
}

/* Ring mode: a full file reuses the oldest retired SAMPLES/MEMORY chunk,
 * never an EVENTS chunk nor one still in use, and the reused chunk is empty
 * and newer than every other. */
static void test_ring(void)
{
	char path[256];
	struct cbn_chunk_header *c[4], *ev, *r, *r2;
	struct test_rec *rec;
	int i;

	snprintf(path, sizeof(path), "%s/ring.cbp", dir);
	REQUIRE(writer_open(&w, path, CBN_HEADER_SIZE + 5 * CBN_CHUNK_SIZE,
			    CBN_HEADER_SIZE + 5 * CBN_CHUNK_SIZE) == 0);
	w.ring = 1;
	for (i = 0; i < 4; i++) {
		c[i] = writer_chunk_new(&w, i == 1 ? CBN_CHUNK_EVENTS : CBN_CHUNK_SAMPLES, 7);
		REQUIRE(c[i] != NULL);
	}
	ev = c[1];
	REQUIRE((rec = writer_reserve(c[0], sizeof(*rec))) != NULL);
	fill(rec, 7, 1);
	writer_commit(c[0], sizeof(*rec));
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 7) != NULL); /* the fifth, last */
	/* Full, nothing retired: no chunk. */
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 8) == NULL);
	writer_chunk_retire(&w, ev); /* an EVENTS chunk is never reused */
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 8) == NULL);
	writer_chunk_retire(&w, c[3]);
	writer_chunk_retire(&w, c[0]);
	r = writer_chunk_new(&w, CBN_CHUNK_MEMORY, 9);
	CHECK(r == c[0]); /* the oldest retired one */
	CHECK_EQ_INT(r->used, 0);
	CHECK_EQ_INT(r->kind, CBN_CHUNK_MEMORY);
	CHECK_EQ_INT(r->tid, 9);
	CHECK_EQ_INT(r->reserved, 0);
	CHECK_EQ_INT(r->magic, CBN_CHUNK_MAGIC);
	CHECK(r->seq > c[2]->seq && r->seq > c[3]->seq);
	r2 = writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 9);
	CHECK(r2 == c[3]);
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 9) == NULL); /* r, r2 in use */
	CHECK_EQ_INT(w.hdr->ring_recycled, 2);
	/* Without ring mode, retiring changes nothing. */
	w.ring = 0;
	writer_chunk_retire(&w, c[2]);
	CHECK_EQ_INT(c[2]->reserved, 0);
	CHECK(writer_chunk_new(&w, CBN_CHUNK_SAMPLES, 9) == NULL);
	writer_close(&w);
}

static void test_concurrent(void)
{
	char path[256];
	pthread_t th[NWRITERS], rd;
	void *bad;
	long n, ev;
	int i;

	snprintf(path, sizeof(path), "%s/concurrent.cbp", dir);
	/* Too small on purpose: some records must be refused and counted. */
	REQUIRE(writer_open(&w, path, 1 << 20, 3 << 20) == 0);
	pthread_create(&rd, NULL, reader_thread, path);
	for (i = 0; i < NWRITERS; i++)
		pthread_create(&th[i], NULL, writer_thread, (void *)(uintptr_t)(100 + i));
	for (i = 0; i < 20; i++) {
		usleep(1000);
		writer_grow(&w, 256 << 10); /* what the agent's background thread does */
	}
	for (i = 0; i < NWRITERS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&writers_done, 1);
	pthread_join(rd, &bad);
	CHECK(bad == NULL);
	printf("reader parsed the file %d times while it was written\n", reader_rounds);
	CHECK(reader_rounds >= 3);
	n = parse(path, &ev);
	printf("records %ld, lost %llu, attempted %llu, events %ld\n", n,
	       (unsigned long long)lost_full, (unsigned long long)attempted, ev);
	CHECK_EQ_INT(n + (long)lost_full, (long)attempted);
	CHECK_EQ_INT(w.hdr->lost[CBN_LOST_BUFFER_FULL], lost_full);
	CHECK(lost_full > 0);
	CHECK(n > 0);
	CHECK(ev > 0);
	writer_close(&w);
}

/* An event whose lock this very thread holds (a signal handler of the
 * program's that interrupted the thread's own write, then called _exit,
 * exec or fork, which the agent hooks) is dropped with EDEADLK, never a
 * hang: at once (the lock checks its owner), and with ev_bounded (a process
 * ending by _exit) after a bounded wait at most; one whose lock is free is
 * written as always.  Before the owner check, the unbounded case waited
 * for itself forever. */
static void test_held(int bounded)
{
	char path[256];
	struct cbn_rec_exit e = {{CBN_REC_PROCESS_EXIT, 0, sizeof(e)}, 1, 7, 0};
	long ev;

	snprintf(path, sizeof(path), "%s/held%d.cbp", dir, bounded);
	REQUIRE(writer_open(&w, path, 1 << 20, 4 << 20) == 0);
	atomic_store(&w.ev_bounded, bounded);
	CHECK_EQ_INT(writer_append_event(&w, &e, sizeof(e)), 0);
	REQUIRE(pthread_mutex_lock(&w.ev_lock) == 0);
	CHECK_EQ_INT(writer_append_event(&w, &e, sizeof(e)), -EDEADLK);
	CHECK_EQ_INT(pthread_mutex_unlock(&w.ev_lock), 0);
	CHECK_EQ_INT(writer_append_event(&w, &e, sizeof(e)), 0);
	writer_close(&w);
	CHECK_EQ_INT(parse(path, &ev), 0);
	CHECK_EQ_INT(ev, 2);
}

int main(void)
{
	char cmd[300];

	REQUIRE(mkdtemp(dir) != NULL);
	test_handout();
	test_ring();
	test_concurrent();
	test_held(1);
	test_held(0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return test_result();
}
