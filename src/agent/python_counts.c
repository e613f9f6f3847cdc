/*
 * python_counts.c — the counts of --calls (python_calls.c), kept where a
 * reader finds them however the process ends.
 *
 * A table in process memory, written at exit, loses every count of a
 * process killed by a signal: a multiprocessing pool's workers, which the
 * pool's `with` block ends by SIGTERM, an OOM kill, a CI job's timeout.  So
 * the counts live in the session file, which the agent maps shared: each
 * block of CBN_PY_CALLS_BATCH ids is one PY_CALLS record, its entries'
 * ids set and their counts 0, committed when the block's first id is
 * counted, and counted in place from then on.  The reader adds the entries
 * as it adds any PY_CALLS record's, after the process ended whichever way.
 * The records sit in a chunk of their own, never retired, so a ring never
 * reuses it.  Where the file has no room left, a block is private memory
 * and written as records by python_counts_flush, as every count was before.
 *
 * Normal context, under the GIL (python_calls.c's callbacks); the blocks'
 * pointers are read by the same code only.
 */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "floor.h"
#include "python_counts.h"
#include "python_table.h"

#define PY_BLOCKS (PY_CODES_CAP / CBN_PY_CALLS_BATCH + 1)
#define PY_ENTRIES_BYTES (CBN_PY_CALLS_BATCH * sizeof(struct cbn_py_call_count))
#define PY_BLOCK_BYTES ((uint32_t)(sizeof(struct cbn_rec_py_calls) + PY_ENTRIES_BYTES))

_Static_assert(PY_BLOCK_BYTES % 8 == 0, "a block is a whole record");
_Static_assert(2 * PY_BLOCK_BYTES <= CBN_CHUNK_SIZE - sizeof(struct cbn_chunk_header),
	       "two blocks a chunk");

struct cbn_py_call_count *python_count_blocks[PY_BLOCKS];
static uint8_t is_private[PY_BLOCKS];      /* written by python_counts_flush */
static struct cbn_chunk_header *chunk;     /* the file's chunk new blocks come from */
/* where counts go when neither the file nor private memory had room */
static struct cbn_py_call_count nowhere[CBN_PY_CALLS_BATCH];

static void set_ids(struct cbn_py_call_count *b, uint32_t block)
{
	uint32_t i;

	for (i = 0; i < CBN_PY_CALLS_BATCH; i++) {
		b[i].id = block * CBN_PY_CALLS_BATCH + i;
		b[i].pad = 0;
		b[i].calls = b[i].primitive = 0;
	}
}

void *python_counts_record(const struct cbn_rec *head, uint32_t head_size)
{
	uint32_t size = head->size;
	void *r = chunk ? writer_reserve(chunk, size) : NULL;
	int tries;

	/* the file grows by the sampler's way, a try-lock: never a wait here */
	for (tries = 0; !r && agent.w.hdr && tries < 4; tries++) {
		chunk = writer_chunk_new(&agent.w, CBN_CHUNK_EVENTS, 0);
		if (chunk)
			r = writer_reserve(chunk, size);
		else if (writer_grow_signal(&agent.w, 4 * CBN_CHUNK_SIZE) != 0 && tries)
			break;
	}
	if (!r)
		return NULL;
	memset(r, 0, size); /* a ring's chunk may hold old records */
	memcpy(r, head, head_size);
	writer_commit(chunk, size);
	return r;
}

struct cbn_py_call_count *python_counts_block(uint32_t block, uint16_t flags)
{
	struct cbn_rec_py_calls head, *r;
	struct cbn_py_call_count *b;
	uint32_t i;

	if (block >= PY_BLOCKS)
		return nowhere; /* ids stop at PY_CODES_CAP */
	memset(&head, 0, sizeof(head));
	head.h.type = CBN_REC_PY_CALLS;
	head.h.flags = flags | CBN_PYCALLS_TABLE;
	head.h.size = PY_BLOCK_BYTES;
	head.state = CBN_PYCALLS_ON;
	head.n = CBN_PY_CALLS_BATCH;
	r = python_counts_record(&head.h, sizeof(head));
	if (r) {
		/* set before any count: an entry of 0 calls is empty to a reader */
		for (i = 0; i < CBN_PY_CALLS_BATCH; i++)
			r->c[i].id = block * CBN_PY_CALLS_BATCH + i;
		b = r->c;
	} else {
		b = (void *)agent_syscall(SYS_mmap, NULL, PY_ENTRIES_BYTES, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			return nowhere; /* the next count tries again */
		set_ids(b, block);
		is_private[block] = 1;
	}
	python_count_blocks[block] = b;
	return b;
}

void python_counts_flags(uint16_t flags)
{
	uint32_t block;

	for (block = 0; block < PY_BLOCKS; block++) {
		struct cbn_py_call_count *b = python_count_blocks[block];
		struct cbn_rec_py_calls *r;

		if (!b || is_private[block])
			continue;
		r = (void *)((char *)b - offsetof(struct cbn_rec_py_calls, c));
		r->h.flags = flags | CBN_PYCALLS_TABLE;
	}
}

uint64_t python_counts_calls(uint32_t id)
{
	const struct cbn_py_call_count *b = python_count_blocks[id / CBN_PY_CALLS_BATCH];

	return b ? b[id % CBN_PY_CALLS_BATCH].calls : 0;
}

static struct {
	struct cbn_rec_py_calls r;
	struct cbn_py_call_count c[CBN_PY_CALLS_BATCH];
} batch;

static void emit(uint32_t state, uint16_t flags)
{
	batch.r.h.type = CBN_REC_PY_CALLS;
	batch.r.h.flags = flags;
	batch.r.h.size = (uint32_t)(sizeof(batch.r) + batch.r.n * sizeof(batch.c[0]));
	batch.r.state = state;
	agent_event(&batch, batch.r.h.size);
	batch.r.n = 0;
}

void python_counts_flush(uint32_t state, uint16_t flags)
{
	uint32_t block, i;

	for (block = 0; block < PY_BLOCKS; block++) {
		struct cbn_py_call_count *b = python_count_blocks[block];

		if (!b || !is_private[block])
			continue;
		for (i = 0; i < CBN_PY_CALLS_BATCH; i++) {
			if (!b[i].calls)
				continue;
			batch.c[batch.r.n++] = b[i];
			b[i].calls = b[i].primitive = 0;
			if (batch.r.n == CBN_PY_CALLS_BATCH)
				emit(state, flags);
		}
	}
	/* the rest, and the flags as they are now (the file's blocks carry
	 * those of their first count) */
	emit(state, flags);
}

void python_counts_after_fork_child(void)
{
	uint32_t block;

	chunk = NULL; /* in the parent's file, no longer mapped here */
	for (block = 0; block < PY_BLOCKS; block++) {
		if (is_private[block] && python_count_blocks[block])
			set_ids(python_count_blocks[block], block);
		else
			python_count_blocks[block] = NULL;
	}
}
