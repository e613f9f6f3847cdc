/*
 * test_reader.c — every validation rule of the session-file reader: header
 * checks, chunk checks, record checks, truncation and what is still delivered.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "format/reader.h"
#include "format/cbn_share.h"

struct tally {
	unsigned records;
	unsigned by_type[64];
	unsigned last_type;
	char names[8][32];
	unsigned nnames;
};

static int count_cb(void *ctx, const struct reader_rec *r)
{
	struct tally *t = ctx;

	t->records++;
	if (r->type < 64)
		t->by_type[r->type]++;
	t->last_type = r->type;
	/* Every string handed out is terminated where its length says. */
	CHECK(r->str[r->str_len] == '\0');
	CHECK(r->str2[r->str2_len] == '\0');
	if (r->type == CBN_REC_THREAD_NAME && t->nnames < 8)
		snprintf(t->names[t->nnames++], 32, "%s", r->str);
	if (r->type == CBN_REC_SAMPLE)
		CHECK(r->chunk_tid == 100 || r->chunk_tid == 101);
	return 0;
}

/* Open a mutated copy of the synthetic file and walk it. */
static int run(const unsigned char *buf, size_t size, struct tally *t, struct reader_result *res)
{
	struct reader_file f;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = reader_open_mem(buf, size, &f, res);
	if (ret < 0)
		return ret;
	reader_walk(&f, count_cb, t, res);
	reader_close(&f);
	return 0;
}

/* Offset of the first record of the given type, searching the whole file. */
static size_t find_rec(const struct synth *s, unsigned type)
{
	const struct cbn_file_header *h = (const void *)s->buf;
	uint64_t off;

	for (off = h->data_offset; off < s->next_chunk; off += h->chunk_size) {
		const struct cbn_chunk_header *ch = (const void *)(s->buf + off);
		uint64_t pos = 0;
		while (pos < ch->used) {
			const struct cbn_rec *r = (const void *)(s->buf + off + 24 + pos);
			if (r->type == type)
				return (size_t)(off + 24 + pos);
			pos += r->size;
		}
	}
	return 0;
}

/* A fresh copy of s in b with a pointer to its first record of type. */
static struct cbn_rec *mutate(unsigned char *b, const struct synth *s, size_t size, unsigned type)
{
	size_t off;

	memcpy(b, s->buf, size);
	off = find_rec(s, type);
	REQUIRE(off != 0);
	return (struct cbn_rec *)(b + off);
}

static void test_valid(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	unsigned n = synth_all_types(&s, 0);

	CHECK(run(s.buf, synth_size(&s), &t, &res) == 0);
	CHECK_EQ_INT(t.records, n);
	CHECK_EQ_INT(res.records, n);
	CHECK_EQ_INT(res.samples, 15);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 15);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_KERNEL], 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_MODULE_UNLOAD], 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_PAD], 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(res.chunks, 4);
	CHECK_STR(res.reason, "");
	CHECK_STR(t.names[0], "worker-1");
	CHECK_EQ_INT(t.last_type, CBN_REC_PROCESS_EXIT);
	synth_free(&s);
}

static void test_header_rules(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	unsigned char *b;
	size_t size;

	synth_all_types(&s, 0);
	size = synth_size(&s);
	b = malloc(size);

	/* too short */
	CHECK(run(s.buf, 100, &t, &res) < 0);
	CHECK(strstr(res.reason, "too short") != NULL);
	CHECK_EQ_INT(res.header_ok, 0);

	/* zero-filled */
	memset(b, 0, size);
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "zero-filled") != NULL);

	/* bad magic */
	memcpy(b, s.buf, size);
	b[0] = 'X';
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "magic") != NULL);

	/* other byte order */
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->endian = __builtin_bswap32(CBN_ENDIAN_CHECK);
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "byte order") != NULL);

	/* wrong version: older, or newer (said so) */
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->version = 0;
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "format version 0") != NULL);
	CHECK(strstr(res.reason, "older cbottleneck") != NULL);
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->version = CBN_FORMAT_VERSION + 1;
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "written by a newer cbottleneck") != NULL);

	/* silly chunk size */
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->chunk_size = 12;
	CHECK(run(b, size, &t, &res) < 0);
	CHECK(strstr(res.reason, "chunk_size") != NULL);

	/* misaligned data offset */
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->data_offset = CBN_HEADER_SIZE + 4;
	CHECK(run(b, size, &t, &res) < 0);

	/* next_chunk beyond file_size: the file filled up, still fine */
	memcpy(b, s.buf, size);
	((struct cbn_file_header *)b)->next_chunk = size + 10 * CBN_CHUNK_SIZE;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(res.samples, 15);

	/* header says more than the file has: truncated, intact part kept */
	memcpy(b, s.buf, size);
	CHECK(run(b, size - CBN_CHUNK_SIZE / 2, &t, &res) == 0);
	CHECK_EQ_INT(res.truncated, 1);
	CHECK_EQ_INT(res.damaged, 1);
	CHECK(strstr(res.reason, "truncated") != NULL);
	CHECK(res.records > 10 && res.records < t.records + 1);

	/* strings in the header are forced terminated */
	memcpy(b, s.buf, size);
	memset(((struct cbn_file_header *)b)->exe, 'A', 1024);
	{
		struct reader_file f;
		CHECK(reader_open_mem(b, size, &f, &res) == 0);
		CHECK_EQ_INT(strlen(f.hdr.exe), 1023);
		reader_close(&f);
	}
	free(b);
	synth_free(&s);
}

static void test_chunk_rules(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	unsigned n = synth_all_types(&s, 0);
	size_t size = synth_size(&s), second = CBN_HEADER_SIZE + CBN_CHUNK_SIZE;
	unsigned char *b = malloc(size);
	struct cbn_chunk_header *ch = (struct cbn_chunk_header *)(b + second);

	/* bad chunk magic: that chunk (10 samples of tid 100) skipped, rest kept */
	memcpy(b, s.buf, size);
	ch->magic = 0xdeadbeef;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_damaged, 1);
	CHECK_EQ_INT(res.damaged, 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 5);
	CHECK_EQ_INT(t.records, n - 10);
	CHECK(strstr(res.reason, "chunk 1") != NULL);

	/* unknown kind */
	memcpy(b, s.buf, size);
	ch->kind = 9;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_damaged, 1);

	/* used larger than the chunk */
	memcpy(b, s.buf, size);
	ch->used = CBN_CHUNK_SIZE;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_damaged, 1);

	/* an all-zero chunk (allocated, never written) is not damage */
	memcpy(b, s.buf, size);
	memset(b + second, 0, CBN_CHUNK_SIZE);
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_unused, 1);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.records, n - 10);

	/* file ends inside a chunk header */
	CHECK(run(s.buf, second + 10, &t, &res) == 0);
	CHECK_EQ_INT(res.truncated, 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 0);
	CHECK(t.records > 10);
	free(b);
	synth_free(&s);
}

static void test_record_rules(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	unsigned n = synth_all_types(&s, 0);
	size_t size = synth_size(&s);
	unsigned char *b = malloc(size);
	struct cbn_rec *r;

#define MUTATE(type) (r = mutate(b, &s, size, (type)))

	/* size 0: the rest of the chunk is dropped, other chunks kept */
	CHECK(MUTATE(CBN_REC_CUDA_KERNEL) != NULL);
	r->size = 0;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "record size 0") != NULL);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_API], 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_KERNEL], 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_STATUS], 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 15);
	CHECK_EQ_INT(t.by_type[CBN_REC_PROCESS_EXIT], 1);

	/* size not a multiple of 8 */
	MUTATE(CBN_REC_CUDA_MEMCPY);
	r->size = 13;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_KERNEL], 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_MEMCPY], 0);

	/* size past the committed bytes */
	MUTATE(CBN_REC_PROCESS_EXIT);
	r->size = 4096;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_THREAD_END], 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_PROCESS_EXIT], 0);

	/* shorter than its type */
	MUTATE(CBN_REC_CUDA_MEMSET);
	r->type = CBN_REC_CUDA_MEMCPY; /* memset records are 8 bytes shorter */
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "shorter") != NULL);

	/* sample frames beyond the record */
	MUTATE(CBN_REC_SAMPLE);
	((struct cbn_rec_sample *)r)->nframes = 200;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 5);

	/* module: too many segments, path too long, path not terminated */
	MUTATE(CBN_REC_MODULE_LOAD);
	((struct cbn_rec_module *)r)->nseg = 9;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_MODULE_LOAD], 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	MUTATE(CBN_REC_MODULE_LOAD);
	((struct cbn_rec_module *)r)->path_len = 1000;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_MODULE_LOAD], 0);
	MUTATE(CBN_REC_MODULE_LOAD);
	((struct cbn_rec_module *)r)->path_len = 3; /* byte 3 of the path is not NUL */
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_MODULE_LOAD], 0);

	/* range strings */
	MUTATE(CBN_REC_RANGE);
	((struct cbn_rec_range *)r)->name_len = 60;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_RANGE], 0);

	/* API name length */
	MUTATE(CBN_REC_CUDA_API);
	((struct cbn_rec_cuda_api *)r)->name_len = 0xffff;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_API], 0);

	/* CUDA stack frames */
	MUTATE(CBN_REC_CUDA_STACK);
	((struct cbn_rec_cuda_stack *)r)->nframes = 4;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_STACK], 0);

	/* thread name without its NUL */
	MUTATE(CBN_REC_THREAD_NAME);
	memset(((struct cbn_rec_thread *)r)->name, 'x', CBN_NAME_MAX);
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_THREAD_NAME], 0);

	/* kernel / device / status names */
	MUTATE(CBN_REC_CUDA_KERNEL);
	((struct cbn_rec_cuda_kernel *)r)->name_len = 100;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_KERNEL], 0);
	MUTATE(CBN_REC_CUDA_DEVICE);
	((struct cbn_rec_cuda_device *)r)->name_len = 100;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_DEVICE], 0);
	MUTATE(CBN_REC_CUDA_STATUS);
	((struct cbn_rec_cuda_status *)r)->message_len = 100;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_STATUS], 0);

	/* a sample inside an events chunk is invalid */
	MUTATE(CBN_REC_CUDA_CONTEXT);
	r->type = CBN_REC_SAMPLE;
	r->size = 24;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "outside") != NULL);

	/* a type its writer did not know: corruption, named with its offset;
	 * the record is skipped and the chunk goes on */
	MUTATE(CBN_REC_CUDA_OVERHEAD);
	r->type = 99;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.corrupt, 1);
	CHECK_EQ_INT(res.unknown, 0);
	CHECK_EQ_INT(res.damaged, 1);
	CHECK(strstr(res.reason, "corrupted at offset 0x") != NULL);
	CHECK(strstr(res.reason, "type 99") != NULL);
	CHECK_EQ_INT(t.records, n - 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_CUDA_DEVICE], 1);
	/* the same record from a newer writer, which knew types up to 120:
	 * skipped and counted as newer, no damage */
	MUTATE(CBN_REC_CUDA_OVERHEAD);
	r->type = 99;
	((struct cbn_file_header *)b)->rec_type_max = 120;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.unknown, 1);
	CHECK_EQ_INT(res.corrupt, 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.records, n - 1);
	((struct cbn_file_header *)b)->rec_type_max = CBN_REC_TYPE_MAX;
	/* CBN_REC_TYPE_MAX is the reader's highest type: it knows that one and
	 * none above (a new type must raise it, or old readers call the new
	 * writer's records corruption) */
	for (unsigned ty = CBN_REC_TYPE_MAX; ty < 256; ty++) {
		MUTATE(CBN_REC_CUDA_OVERHEAD);
		r->type = (uint16_t)ty;
		run(b, size, &t, &res);
		if (ty == CBN_REC_TYPE_MAX)
			CHECK_EQ_INT(res.corrupt, 0);
		else if (res.corrupt != 1)
			CHECK_EQ_INT(ty, 0); /* names the type the reader knows */
	}
#undef MUTATE
	free(b);
	synth_free(&s);
}

static int stop_cb(void *ctx, const struct reader_rec *r)
{
	(void)r;
	return ++*(int *)ctx == 3 ? 42 : 0;
}

/* A sample's kernel stacks are checked like its pcs: all inside the record. */
static void test_kstacks(void)
{
	struct synth s;
	struct reader_file f;
	struct reader_result res;
	uint64_t pc[1] = {0x401000}, k1[2] = {0xffffffff81000010ull, 0xffffffff81000020ull};
	const uint64_t *kpc[1] = {k1};
	uint32_t count[1] = {3};
	uint16_t knf[1] = {2};
	struct cbn_kstacks *ks;
	struct cbn_kstack *k;
	struct tally t;
	size_t off;

	synth_init(&s, 100, 1, 0, 0, "/bin/k");
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
	synth_sample_k(&s, 10, 4, 3, pc, 1, 1, count, knf, kpc, 2);
	synth_sample(&s, 20, 1, pc, 1, 0);
	CHECK(run(s.buf, synth_size(&s), &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 2);
	CHECK_EQ_INT(res.damaged, 0);
	REQUIRE(reader_open_mem(s.buf, synth_size(&s), &f, &res) == 0);
	reader_close(&f);
	off = find_rec(&s, CBN_REC_SAMPLE);
	ks = (struct cbn_kstacks *)(s.buf + off + sizeof(struct cbn_rec_sample) + 8);
	k = (struct cbn_kstack *)(ks + 1);
	CHECK_EQ_INT(ks->nstacks, 1);
	CHECK_EQ_INT(ks->lost, 2);
	CHECK_EQ_INT(k->count, 3);
	/* frames beyond the record: the record is invalid, the chunk cut there */
	k->nframes = 3;
	CHECK(run(s.buf, synth_size(&s), &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 0);
	CHECK(strstr(res.reason, "kernel stack") != NULL);
	k->nframes = 0;
	CHECK(run(s.buf, synth_size(&s), &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 0);
	k->nframes = 2;
	ks->nstacks = 2;
	CHECK(run(s.buf, synth_size(&s), &t, &res) == 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_SAMPLE], 0);
	synth_free(&s);
}

static void test_file_io(void)
{
	struct synth s;
	struct reader_file f;
	struct reader_result res;
	char path[] = "/tmp/cbn-test-reader-XXXXXX";
	int fd = mkstemp(path), calls = 0;

	REQUIRE(fd >= 0);
	close(fd);
	synth_all_types(&s, 0);
	REQUIRE(synth_write(&s, path) == 0);
	/* Preallocated space past next_chunk is never read. */
	REQUIRE(truncate(path, (off_t)synth_size(&s) + 4 * CBN_CHUNK_SIZE) == 0);
	CHECK(reader_open(path, &f, &res) == 0);
	CHECK_EQ_INT(f.size, synth_size(&s));
	CHECK_EQ_INT(reader_walk(&f, stop_cb, &calls, &res), 42);
	CHECK_EQ_INT(calls, 3);
	reader_close(&f);
	unlink(path);
	CHECK_EQ_INT(reader_open(path, &f, &res), -ENOENT);
	CHECK(strstr(res.reason, "cannot open") != NULL);
	CHECK(reader_open("/tmp", &f, &res) < 0);
	CHECK_STR(reader_type_name(CBN_REC_CUDA_KERNEL), "cuda_kernel");
	synth_free(&s);
}

/* A file cut by someone else while mapped: no SIGBUS, the loss is said. */
static void test_cut_while_mapped(void)
{
	struct synth s;
	struct reader_file f;
	struct reader_result res;
	struct tally full, cut;
	char path[] = "/tmp/cbn-test-reader-XXXXXX";
	int fd = mkstemp(path);
	long pg = sysconf(_SC_PAGESIZE);
	/* Cut after the header's pages (the header struct is over a page). */
	long cut_at = (long)((sizeof(struct cbn_file_header) + (size_t)pg - 1) / (size_t)pg) * pg;

	REQUIRE(fd >= 0);
	close(fd);
	synth_all_types(&s, 0);
	REQUIRE(synth_write(&s, path) == 0);
	REQUIRE(synth_size(&s) > (size_t)(cut_at + pg));
	memset(&full, 0, sizeof(full));
	CHECK(reader_open(path, &f, &res) == 0);
	CHECK(f.mapped);
	reader_walk(&f, count_cb, &full, &res);
	CHECK(!reader_changed(&f));
	reader_close(&f);

	memset(&cut, 0, sizeof(cut));
	CHECK(reader_open(path, &f, &res) == 0);
	REQUIRE(truncate(path, (off_t)cut_at) == 0);
	reader_walk(&f, count_cb, &cut, &res);
	CHECK(reader_changed(&f));
	CHECK(cut.records < full.records);
	reader_close(&f);
	/* Reopened, the cut file is a plain truncated one. */
	CHECK(reader_open(path, &f, &res) == 0);
	CHECK(!reader_changed(&f));
	reader_close(&f);
	unlink(path);
	synth_free(&s);
}

struct mem_tally {
	unsigned allocs, frees, counters, other, frames;
	uint32_t tids[8];
};

static int mem_cb(void *ctx, const struct reader_rec *r)
{
	struct mem_tally *t = ctx;

	switch (r->type) {
	case CBN_REC_MEM_ALLOC:
		CHECK(r->chunk_kind == CBN_CHUNK_MEMORY);
		if (t->allocs < 8)
			t->tids[t->allocs] = r->chunk_tid;
		t->allocs++;
		t->frames += r->nframes;
		if (r->nframes)
			CHECK(r->pcs != NULL && r->pcs[0] != 0);
		break;
	case CBN_REC_MEM_FREE: t->frees++; break;
	case CBN_REC_MEM_COUNTERS: t->counters++; break;
	default: t->other++; break;
	}
	return 0;
}

static int mem_run(const unsigned char *buf, size_t size, struct mem_tally *t,
		   struct reader_result *res)
{
	struct reader_file f;
	int ret;

	memset(t, 0, sizeof(*t));
	if ((ret = reader_open_mem(buf, size, &f, res)) < 0)
		return ret;
	reader_walk(&f, mem_cb, t, res);
	reader_close(&f);
	return 0;
}

/* MEMORY chunks and the host memory records: delivered with their stacks;
 * damaged ones cut their chunk and leave the others. */
static void test_memory_records(void)
{
	struct synth s;
	struct mem_tally t;
	struct reader_result res;
	unsigned n;
	size_t size, off;
	unsigned char *b;
	struct cbn_rec_mem_alloc *a;

	synth_init(&s, 100, 1, 0, 0, "/usr/bin/prog");
	n = synth_mem_types(&s);
	size = synth_size(&s);
	CHECK(mem_run(s.buf, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(res.records, n);
	CHECK_EQ_INT(t.allocs, 3);
	CHECK_EQ_INT(t.frees, 2);
	CHECK_EQ_INT(t.counters, 2);
	CHECK_EQ_INT(t.frames, 5);
	CHECK_EQ_INT(t.tids[0], 100);
	CHECK_EQ_INT(((struct cbn_file_header *)s.buf)->mem.state, CBN_MEM_ON);

	b = malloc(size);
	REQUIRE(b);
	/* a frame count past the limit, or past the record: the chunk is cut there */
	a = (struct cbn_rec_mem_alloc *)mutate(b, &s, size, CBN_REC_MEM_ALLOC);
	a->nframes = CBN_MAX_FRAMES + 1;
	CHECK(mem_run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "allocation stack frame count does not fit") != NULL);
	CHECK_EQ_INT(t.allocs, 0);
	CHECK_EQ_INT(t.frees, 1);       /* the other thread's chunk */
	CHECK_EQ_INT(t.counters, 2);
	a = (struct cbn_rec_mem_alloc *)mutate(b, &s, size, CBN_REC_MEM_ALLOC);
	a->nframes = 4;                 /* the record holds 3 */
	CHECK(mem_run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	/* a free shorter than its type */
	{
		struct cbn_rec *r = mutate(b, &s, size, CBN_REC_MEM_FREE);
		struct cbn_rec pad = { CBN_REC_PAD, 0, 0 };
		pad.size = r->size - 16;
		r->size = 16;
		memcpy((unsigned char *)r + 16, &pad, sizeof(pad));
	}
	CHECK(mem_run(b, size, &t, &res) == 0);
	CHECK(strstr(res.reason, "record shorter than its type") != NULL);
	/* allocation records belong in MEMORY chunks */
	memcpy(b, s.buf, size);
	off = CBN_HEADER_SIZE;          /* the first chunk: thread 100's MEMORY chunk */
	((struct cbn_chunk_header *)(b + off))->kind = CBN_CHUNK_EVENTS;
	CHECK(mem_run(b, size, &t, &res) == 0);
	CHECK(strstr(res.reason, "allocation record outside a memory chunk") != NULL);
	CHECK_EQ_INT(t.allocs, 0);
	/* an unknown chunk kind is still skipped */
	memcpy(b, s.buf, size);
	((struct cbn_chunk_header *)(b + off))->kind = 4;
	CHECK(mem_run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_damaged, 1);
	CHECK_EQ_INT(t.frees, 1);
	free(b);
	synth_free(&s);
}

/* PY_CODE: qualname and filename (str, str2) and the line table inside the
 * record, each string with its NUL; a damaged one cuts its chunk. */
static void test_python_records(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	unsigned char rec[128], *b;
	struct cbn_rec_py_code *c = (struct cbn_rec_py_code *)rec;
	size_t size;
	int k;

	synth_init(&s, 100, 1, 0, 0, "/usr/bin/python3");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	memset(rec, 0, sizeof(rec));
	c->h.type = CBN_REC_PY_CODE;
	c->id = 1;
	c->firstlineno = 3;
	c->qualname_len = 4;
	c->filename_len = 5;
	c->linetable_len = 2;
	memcpy(c->data, "main\0/a.py\0\x80\x01", 14);
	c->h.size = (uint32_t)CBN_REC_ALIGN(sizeof(*c) + 14);
	synth_rec(&s, c, c->h.size);
	size = synth_size(&s);
	CHECK(run(s.buf, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.records, 1);
	CHECK_EQ_INT(t.last_type, CBN_REC_PY_CODE);
	b = malloc(size);
	REQUIRE(b);
	for (k = 0; k < 4; k++) {
		c = (struct cbn_rec_py_code *)mutate(b, &s, size, CBN_REC_PY_CODE);
		if (k == 0)
			c->linetable_len = 4000;            /* past the record */
		else if (k == 1)
			c->data[4] = 'x';                   /* qualname not terminated */
		else if (k == 2)
			c->qualname_len = CBN_PY_NAME_MAX + 1;
		else
			c->filename_len = 4;                /* its NUL elsewhere */
		CHECK(run(b, size, &t, &res) == 0);
		CHECK_EQ_INT(res.chunks_cut, 1);
		CHECK_EQ_INT(t.records, 0);
		CHECK(strstr(res.reason, "Python code record does not fit") != NULL);
	}
	free(b);
	synth_free(&s);
}

/* JIT_REGION: its name inside the record (with or without a NUL after it:
 * str is set only with one); a name past the record cuts its chunk. */
static void test_jit_records(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	struct cbn_rec_jit_region *j;
	unsigned char *b;
	size_t size;
	int k;

	synth_init(&s, 100, 1, 0, 0, "/usr/bin/prog");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_jit_region(&s, 10, 0x7f0000001000, 0x2000, 0, NULL);
	synth_jit_region(&s, 20, 0x7f0000008000, 0x1000, CBN_JIT_JITDUMP, "/tmp/jit-100.dump");
	synth_jit_region_nul(&s, 30, 0, 0, CBN_JIT_JITDUMP, "/tmp/jit-8.dump", 0); /* 16 bytes */
	synth_jit_region(&s, 40, 0x7f0000001000, 0x2000, CBN_JIT_GONE, NULL);
	synth_exit(&s, 50, 0);
	size = synth_size(&s);
	CHECK(run(s.buf, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_JIT_REGION], 4);
	CHECK_EQ_INT(t.records, 5);
	CHECK_STR(reader_type_name(CBN_REC_JIT_REGION), "jit_region");
	b = malloc(size);
	REQUIRE(b);
	for (k = 0; k < 3; k++) {
		j = (struct cbn_rec_jit_region *)mutate(b, &s, size, CBN_REC_JIT_REGION);
		if (k == 0)
			j->name_len = 1; /* fits: one byte, no NUL needed */
		else if (k == 1)
			j->name_len = 4096; /* past the record */
		else
			j->h.size = 32; /* shorter than its type */
		CHECK(run(b, size, &t, &res) == 0);
		if (k == 0) {
			CHECK_EQ_INT(res.damaged, 0);
			CHECK_EQ_INT(t.by_type[CBN_REC_JIT_REGION], 4);
			continue;
		}
		CHECK_EQ_INT(res.chunks_cut, 1);
		CHECK_EQ_INT(t.by_type[CBN_REC_JIT_REGION], 0);
		CHECK(strstr(res.reason, k == 1 ? "JIT region name does not fit" : "shorter") != NULL);
	}
	/* the second record's name, 8 bytes past the fixed part + NUL: the
	 * largest name_len that fits ends exactly at the record's end */
	j = (struct cbn_rec_jit_region *)mutate(b, &s, size, CBN_REC_JIT_REGION);
	j = (struct cbn_rec_jit_region *)((unsigned char *)j + j->h.size);
	j->name_len = j->h.size - (uint32_t)sizeof(*j);
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_JIT_REGION], 4);
	j->name_len++;
	CHECK(run(b, size, &t, &res) == 0);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK_EQ_INT(t.by_type[CBN_REC_JIT_REGION], 1);
	free(b);
	synth_free(&s);
}

/* CODE_FILE: its path inside the record, else the chunk is cut. */
static void test_code_file_records(void)
{
	struct synth s;
	struct tally t;
	struct reader_result res;
	struct cbn_rec_code_file *c;
	unsigned char *b;
	size_t size;
	int k;

	synth_init(&s, 100, 1, 0, 0, "/usr/bin/prog");
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	synth_code_file(&s, 10, 0x7f0000001000, 0x2000, 0x14c4000, "/usr/bin/node");
	synth_code_file(&s, 20, 0x7f0000008000, 0x1000, 0, "/lib/x.so");
	synth_exit(&s, 50, 0);
	size = synth_size(&s);
	CHECK(run(s.buf, size, &t, &res) == 0);
	CHECK_EQ_INT(res.damaged, 0);
	CHECK_EQ_INT(t.by_type[CBN_REC_CODE_FILE], 2);
	CHECK_STR(reader_type_name(CBN_REC_CODE_FILE), "code_file");
	b = malloc(size);
	REQUIRE(b);
	for (k = 0; k < 2; k++) {
		c = (struct cbn_rec_code_file *)mutate(b, &s, size, CBN_REC_CODE_FILE);
		if (k == 0)
			c->name_len = 4096; /* past the record */
		else
			c->h.size = 40; /* shorter than its type */
		CHECK(run(b, size, &t, &res) == 0);
		CHECK_EQ_INT(res.chunks_cut, 1);
		CHECK_EQ_INT(t.by_type[CBN_REC_CODE_FILE], 0);
		CHECK(strstr(res.reason, k == 0 ? "code file name does not fit" : "shorter") != NULL);
	}
	free(b);
	synth_free(&s);
}

/* The whole stack of a walked sample (its base's words put back). */
struct whole {
	uint64_t pc[8][CBN_MAX_FRAMES];
	int n[8];
	int shared[8];
	int count;
};

static int whole_cb(void *ctx, const struct reader_rec *r)
{
	struct whole *w = ctx;

	if (r->type != CBN_REC_SAMPLE || w->count >= 8)
		return 0;
	if (r->share) {
		w->n[w->count] = cbn_share_expand(r->pcs, (int)r->nframes, r->base_pcs, r->base_n,
						  r->base_nn, r->share->native, r->share->python,
						  w->pc[w->count]);
		w->shared[w->count] = 1;
		CHECK_EQ_INT(r->stack_n, w->n[w->count]);
	} else {
		memcpy(w->pc[w->count], r->pcs, r->nframes * 8u);
		w->n[w->count] = (int)r->nframes;
		CHECK_EQ_INT(r->stack_n, r->nframes);
	}
	w->count++;
	return 0;
}

/* Walk the synthetic file into w (emptied first). */
static void walk_whole(struct synth *s, struct whole *w, struct reader_result *res)
{
	struct reader_file f;

	memset(w, 0, sizeof(*w));
	REQUIRE(reader_open_mem(s->buf, synth_size(s), &f, res) == 0);
	reader_walk(&f, whole_cb, w, res);
	reader_close(&f);
}

/* A samples chunk holding base (5 words, 3 native) first. */
static void with_base(struct synth *s, const uint64_t *base)
{
	synth_init(s, 100, 1, 0, 0, "/bin/s");
	synth_chunk(s, CBN_CHUNK_SAMPLES, 100);
	synth_sample(s, 10, 1, base, 5, 0);
}

/* Samples written shared come back whole; a share without its base (the
 * chunk's latest full sample, PC_ONLY ones not counted) or asking for more
 * than the base has cuts the chunk there. */
static void test_shared(void)
{
	uint64_t py1 = CBN_PYW_MAKE(0, 7, 3), py2 = CBN_PYW_MAKE(0, 8, 1), py3 = CBN_PYW_MAKE(1, 9, 2);
	uint64_t base[5] = {0x401000, 0x402000, 0x403000, py1, py2};
	uint64_t own[2] = {0x401010, py3}, pc1[1] = {0x405000};
	uint64_t want[6] = {0x401010, 0x402000, 0x403000, py3, py1, py2};
	struct synth s;
	struct reader_result res;
	struct whole w;
	uint32_t base_off = 0;

	with_base(&s, base);
	synth_sample_shared(&s, 20, own, 2, base_off, 2, 2);
	/* a PC_ONLY sample is no base: the next one still shares the first */
	synth_sample(&s, 25, 1, pc1, 1, CBN_SAMPLE_PC_ONLY);
	synth_sample_shared(&s, 30, own, 1, base_off, 2, 0);
	walk_whole(&s, &w, &res);
	CHECK_EQ_INT(res.damaged, 0);
	REQUIRE(w.count == 4);
	CHECK_EQ_INT(w.n[1], 6);
	CHECK(memcmp(w.pc[1], want, sizeof(want)) == 0);
	CHECK_EQ_INT(w.n[3], 3);
	CHECK(w.pc[3][0] == 0x401010 && w.pc[3][1] == 0x402000 && w.pc[3][2] == 0x403000);
	CHECK_EQ_INT(w.shared[2], 0);

	/* a new full sample is the base from then on: naming the old one fails */
	synth_sample(&s, 40, 1, base, 5, 0);
	synth_sample_shared(&s, 50, own, 2, base_off, 2, 2);
	walk_whole(&s, &w, &res);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "without its base") != NULL);
	CHECK_EQ_INT(w.count, 5);
	synth_free(&s);

	/* more native or Python words than the base has */
	with_base(&s, base);
	synth_sample_shared(&s, 20, own, 2, 0, 4, 2);
	walk_whole(&s, &w, &res);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK(strstr(res.reason, "more than its base") != NULL);
	CHECK_EQ_INT(w.count, 1);
	synth_free(&s);

	/* a shared sample first in its chunk has no base */
	synth_init(&s, 100, 1, 0, 0, "/bin/s");
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 100);
	synth_sample_shared(&s, 20, own, 2, 0, 0, 0);
	walk_whole(&s, &w, &res);
	CHECK_EQ_INT(res.chunks_cut, 1);
	CHECK_EQ_INT(w.count, 0);
	synth_free(&s);

	/* deeper than a stack can be, or its share cut off by the record's end */
	with_base(&s, base);
	synth_sample_shared(&s, 20, own, 2, 0, 2, 2);
	{
		struct cbn_rec_sample *r =
			(struct cbn_rec_sample *)(s.buf + s.cur + sizeof(struct cbn_chunk_header) +
						  sizeof(struct cbn_rec_sample) + 5 * 8);
		struct cbn_sample_share *sh = (struct cbn_sample_share *)(r->pc + 2);

		sh->native = CBN_MAX_FRAMES;
		walk_whole(&s, &w, &res);
		CHECK(strstr(res.reason, "deeper") != NULL);
		sh->native = 2;
		r->h.size -= 8;
		r->nframes = 3;
		walk_whole(&s, &w, &res);
		CHECK(res.chunks_cut == 1);
	}
	synth_free(&s);
}

int main(void)
{
	test_shared();
	test_jit_records();
	test_code_file_records();
	test_python_records();
	test_memory_records();
	test_valid();
	test_cut_while_mapped();
	test_header_rules();
	test_chunk_rules();
	test_record_rules();
	test_kstacks();
	test_file_io();
	return test_result();
}
