/*
 * test_load_cuda_mem.c — loading GPU memory records: a CUDA_MEMORY record with
 * the Memory4 extension after it (read), one of the older size without it
 * (zeros), one whose extension is cut before pool_size (the fields it has),
 * MEMORY_POOL records into profile.mempools, and every memory record joined
 * to its API call by correlation id within its own process (two processes
 * that reuse the same ids).
 */
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "load.h"

static char dir[] = "/tmp/cbn-test-loadmem-XXXXXX";

static void api(struct synth *s, uint64_t t, uint32_t tid, uint32_t corr, const char *name)
{
	struct cbn_rec_cuda_api a;

	memset(&a, 0, sizeof(a));
	a.h.type = CBN_REC_CUDA_API;
	a.start = t;
	a.end = t + 50;
	a.tid = tid;
	a.correlation = corr;
	a.domain = CBN_CUDA_RUNTIME;
	a.name_len = (uint16_t)strlen(name);
	synth_var(s, &a, sizeof(a), name, NULL);
}

/* ext_bytes: how much of the extension follows (0: an older file's record). */
static void memrec(struct synth *s, uint64_t ts, uint64_t addr, uint64_t bytes, int alloc,
		   uint32_t corr, size_t ext_bytes, const struct cbn_rec_cuda_memory_ext *x)
{
	_Alignas(8) unsigned char b[sizeof(struct cbn_rec_cuda_memory) +
				    sizeof(struct cbn_rec_cuda_memory_ext)];
	struct cbn_rec_cuda_memory *m = (void *)b;
	uint32_t size = (uint32_t)(sizeof(*m) + ext_bytes);

	memset(b, 0, sizeof(b));
	m->h.type = CBN_REC_CUDA_MEMORY;
	m->h.flags = alloc ? 1 : 2;
	m->h.size = size;
	m->ts = ts;
	m->address = addr;
	m->bytes = bytes;
	m->device = 0;
	m->correlation = corr;
	m->mem_kind = CBN_MEM_DEVICE;
	if (x)
		memcpy(b + sizeof(*m), x, ext_bytes);
	synth_rec(s, b, size);
}

static void session(uint32_t pid, int with_pool)
{
	struct synth s;
	struct cbn_rec_cuda_memory_ext x;
	char path[256];

	synth_init(&s, pid, 1, 0, 0, "./gpu");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	api(&s, 1000, pid, 7, "cudaMallocAsync");
	api(&s, 2000, pid, 8, "cudaMalloc");
	memset(&x, 0, sizeof(x));
	x.pool_address = 0xe0000;
	x.pool_release_threshold = 1 << 30;
	x.pool_utilized = 3 << 20;
	x.pc = 0x401234;
	x.is_async = 1;
	x.pool_type = 1;
	x.pool_size = 32 << 20;
	memrec(&s, 1010, 0xe0100, 3 << 20, 1, 7, sizeof(x), &x);
	memrec(&s, 2010, 0x100000, 1 << 20, 1, 8, 0, NULL);        /* older layout */
	memrec(&s, 2500, 0x200000, 1 << 20, 1, 99, offsetof(struct cbn_rec_cuda_memory_ext,
							     pool_size), &x); /* no call */
	memrec(&s, 3000, 0x100000, 1 << 20, 0, 0, sizeof(x), NULL);
	if (with_pool) {
		struct cbn_rec_cuda_mempool q;

		memset(&q, 0, sizeof(q));
		q.h.type = CBN_REC_CUDA_MEMPOOL;
		q.h.flags = CBN_MEMPOOL_TRIMMED;
		q.h.size = sizeof(q);
		q.ts = 3500;
		q.address = 0xe0000;
		q.size = 8 << 20;
		q.utilized = 2 << 20;
		q.release_threshold = 1 << 30;
		q.min_bytes_to_keep = 4 << 20;
		q.device = 0;
		q.correlation = 7;
		q.pool_type = 1;
		q.managed = 1;
		synth_rec(&s, &q, sizeof(q));
	}
	synth_exit(&s, 4000, 0);
	snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, pid);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);
}

int main(void)
{
	struct profile *p = NULL;
	char err[256], path[300];
	size_t i, seen = 0;

	REQUIRE(mkdtemp(dir) != NULL);
	session(500, 1);
	session(600, 0);
	CHECK_EQ_INT(prof_load(dir, &p, err, sizeof(err)), PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->nmemory, 8);
	CHECK_EQ_INT(p->ncuda_api, 4);
	REQUIRE(p->nmempools == 1);
	CHECK_EQ_INT(p->mempools[0].op, CBN_MEMPOOL_TRIMMED);
	CHECK_EQ_INT(p->mempools[0].ts, 3500);
	CHECK_EQ_INT(p->mempools[0].address, 0xe0000);
	CHECK_EQ_INT(p->mempools[0].size, 8 << 20);
	CHECK_EQ_INT(p->mempools[0].utilized, 2 << 20);
	CHECK_EQ_INT(p->mempools[0].min_bytes_to_keep, 4 << 20);
	CHECK_EQ_INT(p->mempools[0].correlation, 7);
	CHECK_EQ_INT(p->mempools[0].managed, 1);
	CHECK_EQ_INT(p->processes[p->mempools[0].process].pid, 500);
	for (i = 0; i < p->nmemory; i++) {
		const struct prof_cuda_memory *m = &p->memory[i];
		const struct prof_cuda_api *a = m->api < p->ncuda_api ? &p->cuda_api[m->api] : NULL;

		/* joined within the record's own process */
		if (a)
			CHECK_EQ_INT(a->process, m->process);
		if (m->ts == 1010) {
			seen++;
			REQUIRE(a);
			CHECK_STR(a->name, "cudaMallocAsync");
			CHECK_EQ_INT(m->pool_address, 0xe0000);
			CHECK_EQ_INT(m->pool_release_threshold, 1 << 30);
			CHECK_EQ_INT(m->pool_utilized, 3 << 20);
			CHECK_EQ_INT(m->pool_size, 32 << 20);
			CHECK_EQ_INT(m->pc, 0x401234);
			CHECK_EQ_INT(m->is_async, 1);
			CHECK_EQ_INT(m->pool_type, 1);
			CHECK_EQ_INT(m->alloc, 1);
		} else if (m->ts == 2010) {
			seen++;
			REQUIRE(a);
			CHECK_STR(a->name, "cudaMalloc");
			CHECK_EQ_INT(m->pool_address, 0);
			CHECK_EQ_INT(m->is_async, 0);
			CHECK_EQ_INT(m->pc, 0);
		} else if (m->ts == 2500) {
			seen++;
			CHECK_EQ_INT(m->api, PROF_NONE);
			CHECK_EQ_INT(m->pool_address, 0xe0000);
			CHECK_EQ_INT(m->pool_size, 0); /* cut before it */
		} else {
			seen++;
			CHECK_EQ_INT(m->ts, 3000);
			CHECK_EQ_INT(m->api, PROF_NONE); /* correlation 0 */
			CHECK_EQ_INT(m->alloc, 0);
		}
	}
	CHECK_EQ_INT(seen, 8);
	prof_free(p);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%u.0.cbp", dir, i ? 600u : 500u);
		unlink(path);
	}
	rmdir(dir);
	return test_result();
}
