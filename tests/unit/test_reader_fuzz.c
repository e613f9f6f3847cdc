/*
 * test_reader_fuzz.c — the reader on thousands of damaged variants of a valid
 * file holding every record type: bit flips, truncation at every length of a
 * range, size/length fields set to 0, huge or odd, zeroed and garbage chunks.
 * Asserts no crash (run it under -DCBN_SANITIZE=ON too) and sane results:
 * every delivered record lies inside the file, strings are terminated, and
 * counts never exceed what the bytes could hold.  Bounded to about 5 s.
 *
 * ctest-labels: fuzz
 */
#include <stdint.h>
#include <time.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "format/reader.h"

#define FUZZ_SECONDS 4.0

struct ctx {
	const struct reader_file *f;
	uint64_t records, bad;
	uint64_t sum;  /* touch every byte handed out so ASan sees overreads */
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int inside(const struct reader_file *f, const void *p, uint64_t len)
{
	const unsigned char *b = f->data, *q = p;

	return q >= b && q <= b + f->size && len <= (uint64_t)(b + f->size - q);
}

static int fuzz_cb(void *vctx, const struct reader_rec *r)
{
	struct ctx *c = vctx;
	const unsigned char *raw = (const unsigned char *)r->raw;
	uint32_t i;

	c->records++;
	if (!inside(c->f, raw, r->size) || r->size < 8 || r->size % 8)
		c->bad++;
	if (r->str_len && (!inside(c->f, r->str, r->str_len + 1ull) || r->str[r->str_len]))
		c->bad++;
	if (r->str2_len && (!inside(c->f, r->str2, r->str2_len + 1ull) || r->str2[r->str2_len]))
		c->bad++;
	if (r->nframes && !inside(c->f, r->pcs, r->nframes * 8ull))
		c->bad++;
	if ((const unsigned char *)r->pcs + r->nframes * 8ull > raw + r->size && r->nframes)
		c->bad++;
	for (i = 0; i < r->size; i++)
		c->sum += raw[i];
	for (i = 0; i < r->nframes; i++)
		c->sum += r->pcs[i];
	for (i = 0; i < r->str_len; i++)
		c->sum += (unsigned char)r->str[i];
	return 0;
}

/* Read one variant; returns the records delivered, or -1 on a header reject. */
static long check_one(const unsigned char *buf, size_t size)
{
	struct reader_file f;
	struct reader_result res;
	struct ctx c = {0};

	if (reader_open_mem(buf, size, &f, &res) != 0) {
		CHECK(res.reason[0] != '\0');
		CHECK(res.damaged);
		return -1;
	}
	c.f = &f;
	reader_walk(&f, fuzz_cb, &c, &res);
	CHECK_EQ_INT(c.bad, 0);
	CHECK(c.records == res.records);
	CHECK(res.records <= (f.size > f.hdr.data_offset ? (f.size - f.hdr.data_offset) / 8 : 0));
	CHECK(res.samples <= res.records);
	CHECK(!res.damaged || res.reason[0] != '\0');
	CHECK(res.chunks_damaged + res.chunks_cut + res.chunks_unused <= res.chunks + 1);
	reader_close(&f);
	return (long)c.records;
}

/* Offsets of every record in the original, to aim mutations at fields. */
static size_t collect_records(const struct synth *s, size_t *offs, size_t max)
{
	const struct cbn_file_header *h = (const void *)s->buf;
	size_t n = 0;
	uint64_t off;

	for (off = h->data_offset; off < s->next_chunk; off += h->chunk_size) {
		const struct cbn_chunk_header *ch = (const void *)(s->buf + off);
		uint64_t pos = 0;
		while (pos < ch->used && n < max) {
			const struct cbn_rec *r = (const void *)(s->buf + off + 24 + pos);
			offs[n++] = (size_t)(off + 24 + pos);
			pos += r->size;
		}
	}
	return n;
}

int main(void)
{
	struct synth s;
	unsigned total = synth_all_types(&s, 512) + synth_mem_types(&s);
	size_t size = synth_size(&s), recs[256], nrecs, len;
	unsigned char *b = malloc(size);
	double t0 = now();
	unsigned long iters = 0, rejected = 0, mode_count[6] = {0};
	long full;

	REQUIRE(b != NULL);
	nrecs = collect_records(&s, recs, 256);
	REQUIRE(nrecs > 20);
	full = check_one(s.buf, size);
	CHECK_EQ_INT(full, total);

	/* Truncation at every length from inside the header to the end. */
	for (len = 0; len < size; len += (len < CBN_HEADER_SIZE - 64 ? 61 : 1)) {
		long got = check_one(s.buf, len);
		CHECK(got <= full);
		iters++;
	}

	while (now() - t0 < FUZZ_SECONDS || iters < 1001) {
		unsigned mode = (unsigned)(rnd() % 6), k, nmut = 1 + (unsigned)(rnd() % 4);
		size_t cut = size;

		memcpy(b, s.buf, size);
		mode_count[mode]++;
		for (k = 0; k < nmut; k++) {
			size_t r = recs[rnd() % nrecs];
			size_t chunk = CBN_HEADER_SIZE + (rnd() % ((size - CBN_HEADER_SIZE) / 512)) * 512;
			switch (mode) {
			case 0: /* bit flips anywhere after the magic */
				for (unsigned j = 0; j < 1 + rnd() % 8; j++) {
					size_t at = 8 + rnd() % (size - 8);
					b[at] ^= (unsigned char)(1u << (rnd() % 8));
				}
				break;
			case 1: { /* a record's size field: 0, odd, huge, slightly off */
				static const uint32_t sizes[] = {0, 1, 7, 9, 12, 0xfffffff8u, 0xffffffffu,
								 4096, 512, 16};
				uint32_t v = sizes[rnd() % 10];
				memcpy(b + r + 4, &v, 4);
				break;
			}
			case 2: { /* a 16-bit or 32-bit length/count field inside a record */
				size_t at = r + 8 + (rnd() % 64);
				uint32_t v = (uint32_t)rnd();
				if (at + 4 <= size)
					memcpy(b + at, &v, (rnd() & 1) ? 2 : 4);
				break;
			}
			case 3: /* a zeroed chunk, or a zeroed slice */
				if (rnd() & 1)
					memset(b + chunk, 0, 512);
				else
					memset(b + chunk + rnd() % 412, 0, 1 + rnd() % 100);
				break;
			case 4: { /* garbage chunk header fields */
				uint64_t v = rnd();
				memcpy(b + chunk + (rnd() % 3) * 8, &v, 8);
				break;
			}
			case 5: { /* header fields that steer the walk, plus a cut */
				struct cbn_file_header *h = (struct cbn_file_header *)b;
				switch (rnd() % 4) {
				case 0: h->next_chunk = rnd() % (2 * size); break;
				case 1: h->file_size = rnd() % (2 * size); break;
				case 2: h->chunk_size = (uint32_t)(rnd() % 4096) & ~7u; break;
				default: h->data_offset = CBN_HEADER_SIZE + (rnd() % 64) * 8; break;
				}
				cut = size - rnd() % 2048;
				break;
			}
			}
		}
		if (check_one(b, cut) < 0)
			rejected++;
		iters++;
	}
	printf("%lu variants (%lu rejected at the header) in %.1f s; modes %lu/%lu/%lu/%lu/%lu/%lu\n",
	       iters, rejected, now() - t0, mode_count[0], mode_count[1], mode_count[2],
	       mode_count[3], mode_count[4], mode_count[5]);
	CHECK(iters > 1000);
	free(b);
	synth_free(&s);
	return test_result();
}
