/*
 * test_python_counts.c — unit test of src/agent/python_counts.c: the --calls
 * counts are in the session file as they are made (read back through a
 * mapping of its own, with no flush: what a reader finds after a SIGKILL),
 * a flag set during the run reaches the file's blocks at once,
 * a block that finds no room in the file is private and written by the
 * flush as a batch, a flush writes its state and flags (with that batch,
 * or alone), and a
 * fork child forgets the parent's file blocks and zeroes its private ones.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "floor.h"
#include "python_counts.h"
#include "testlib.h"

/* What the test stands in for: the agent's state and its event writer. */
struct agent agent;
static unsigned char events[4][sizeof(struct cbn_rec_py_calls) +
			       CBN_PY_CALLS_BATCH * sizeof(struct cbn_py_call_count)];
static int nevents;

int agent_event(const void *rec, size_t size)
{
	if (nevents < 4 && size <= sizeof(events[0]))
		memcpy(events[nevents++], rec, size);
	return 0;
}

static char dir[] = "/tmp/cbn-pycounts-test.XXXXXX";

/* The table's block of id in the file at path, read through a mapping of
 * its own; NULL when the file holds none. */
static const struct cbn_py_call_count *in_file(const unsigned char *map, size_t len, uint32_t id)
{
	const struct cbn_file_header *h = (const void *)map;
	uint64_t off;

	for (off = h->data_offset; off + CBN_CHUNK_SIZE <= len; off += CBN_CHUNK_SIZE) {
		const struct cbn_chunk_header *c = (const void *)(map + off);
		const unsigned char *p = (const unsigned char *)(c + 1), *end = p + c->used;

		if (c->magic != CBN_CHUNK_MAGIC)
			continue;
		while (p + sizeof(struct cbn_rec) <= end) {
			const struct cbn_rec_py_calls *r = (const void *)p;

			if (r->h.size < sizeof(struct cbn_rec) || p + r->h.size > end)
				break;
			if (r->h.type == CBN_REC_PY_CALLS && (r->h.flags & CBN_PYCALLS_TABLE) &&
			    r->n == CBN_PY_CALLS_BATCH && r->c[0].id <= id &&
			    id < r->c[0].id + CBN_PY_CALLS_BATCH)
				return &r->c[id - r->c[0].id];
			p += r->h.size;
		}
	}
	return NULL;
}

int main(void)
{
	const uint32_t far = 9 * CBN_PY_CALLS_BATCH + 17; /* a block past the file's room */
	const struct cbn_py_call_count *e;
	const struct cbn_rec_py_calls *r;
	struct cbn_py_call_count *k;
	char path[sizeof(dir) + 16];
	unsigned char *map;
	size_t len;
	int fd, i;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/1.0.cbp", dir);
	/* room for two chunks (the least a file has): four blocks */
	REQUIRE(writer_open(&agent.w, path, CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE,
			    CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE) == 0);

	for (i = 0; i < 7; i++) {
		k = python_count_of(3, CBN_PYCALLS_MAIN_ONLY);
		k->calls++;
		k->primitive += i == 0;
	}
	python_count_of(CBN_PY_CALLS_BATCH + 1, 0)->calls += 2;
	python_count_of(2 * CBN_PY_CALLS_BATCH, 0)->calls++;
	python_count_of(3 * CBN_PY_CALLS_BATCH + 1023, 0)->calls++;
	k = python_count_of(far, 0);
	k->calls = 9;
	k->primitive = 4;
	CHECK_EQ_INT(python_counts_calls(3), 7);
	CHECK_EQ_INT(python_counts_calls(4), 0);
	CHECK_EQ_INT(python_counts_calls(far), 9);
	CHECK_EQ_INT(python_counts_calls(4 * CBN_PY_CALLS_BATCH), 0); /* no block: 0 */

	/* the file holds the first two blocks' counts, with no flush */
	fd = open(path, O_RDONLY);
	REQUIRE(fd >= 0);
	len = CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	REQUIRE(map != MAP_FAILED);
	close(fd);
	e = in_file(map, len, 3);
	REQUIRE(e != NULL);
	CHECK(e->id == 3 && e->calls == 7 && e->primitive == 1);
	CHECK(e[1].id == 4 && e[1].calls == 0);
	e = in_file(map, len, CBN_PY_CALLS_BATCH + 1);
	CHECK(e && e->calls == 2 && e->id == CBN_PY_CALLS_BATCH + 1);
	e = in_file(map, len, 3 * CBN_PY_CALLS_BATCH + 1023);
	CHECK(e && e->calls == 1);
	CHECK(in_file(map, len, far) == NULL);
	/* counted after the reader mapped it: still seen (a shared mapping) */
	python_count_of(3, 0)->calls++;
	e = in_file(map, len, 3);
	CHECK(e && e->calls == 8);

	/* a flag set during the run is in the file's blocks, with no flush */
	python_counts_flags(CBN_PYCALLS_SWITCHED);
	e = in_file(map, len, 3);
	REQUIRE(e != NULL);
	r = (const void *)((const char *)(e - 3) - offsetof(struct cbn_rec_py_calls, c));
	CHECK(r->h.flags == (CBN_PYCALLS_SWITCHED | CBN_PYCALLS_TABLE));

	/* the flush writes the private block's counts, with state and flags */
	python_counts_flush(CBN_PYCALLS_ON, CBN_PYCALLS_REPLACED);
	REQUIRE(nevents == 1);
	r = (const void *)events[0];
	CHECK(r->h.type == CBN_REC_PY_CALLS && r->state == CBN_PYCALLS_ON && r->n == 1);
	CHECK(r->c[0].id == far && r->c[0].calls == 9 && r->c[0].primitive == 4);
	CHECK(r->h.flags == CBN_PYCALLS_REPLACED);
	CHECK(r->h.size == sizeof(*r) + sizeof(r->c[0]));
	/* written once: the next flush has only state and flags */
	CHECK_EQ_INT(python_counts_calls(far), 0);
	nevents = 0;
	python_counts_flush(CBN_PYCALLS_ON, CBN_PYCALLS_STOPPED);
	REQUIRE(nevents == 1);
	r = (const void *)events[0];
	CHECK(r->n == 0 && r->h.flags == CBN_PYCALLS_STOPPED && r->h.size == sizeof(*r));

	/* a fork child: the file's blocks are forgotten, the private ones zeroed */
	python_count_of(far, 0)->calls = 5;
	python_counts_after_fork_child();
	CHECK(python_count_blocks[0] == NULL && python_count_blocks[3] == NULL);
	CHECK(python_count_blocks[9] != NULL);
	CHECK_EQ_INT(python_counts_calls(far), 0);
	CHECK_EQ_INT(python_counts_calls(3), 0);

	munmap(map, len);
	writer_close(&agent.w);
	unlink(path);
	rmdir(dir);
	return test_result();
}
