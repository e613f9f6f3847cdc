/*
 * test_load_fuzz.c — prof_load() on files whose records are valid in shape but
 * hostile in content: random bytes in record bodies (record headers kept, so
 * the reader passes them on), over a file with every record type and this
 * executable as a real module.  Exercises what the reader cannot check:
 * absurd segment sizes, overflowing bases, zero and huge counts, unmatched
 * correlations, unknown enum values.  Asserts no crash and a consistent
 * profile; time-bounded (~2 s); run it under -DCBN_SANITIZE=ON too.
 *
 * ctest-labels: fuzz
 */
#include <dirent.h>
#include <stddef.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "analysis.h"
#include "load.h"
#include "memory.h"

#define FUZZ_SECONDS 2.0

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	return test_xorshift(&rng);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Offsets of every record (and its size) in the original file. */
static size_t records(const struct synth *s, size_t *off, uint32_t *sz, size_t max)
{
	const struct cbn_file_header *h = (const void *)s->buf;
	size_t n = 0;
	uint64_t c;

	for (c = h->data_offset; c < s->next_chunk; c += h->chunk_size) {
		const struct cbn_chunk_header *ch = (const void *)(s->buf + c);
		uint64_t pos = 0;
		while (pos < ch->used && n < max) {
			const struct cbn_rec *r = (const void *)(s->buf + c + 24 + pos);
			off[n] = (size_t)(c + 24 + pos);
			sz[n++] = r->size;
			pos += r->size;
		}
	}
	return n;
}

static void check_profile(const struct profile *p)
{
	size_t i, bad = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		bad += s->stack >= p->nstacks || s->thread >= p->nthreads;
	}
	for (i = 0; i < p->nstacks; i++)
		bad += (uint64_t)p->stacks[i].first + p->stacks[i].nframes > p->nframes;
	for (i = 0; i < p->nframes; i++)
		bad += p->frames[i].func >= p->nfuncs || !p->frames[i].file;
	for (i = 0; i < p->nfuncs; i++)
		bad += !p->funcs[i].name || !p->funcs[i].file || !p->funcs[i].module;
	for (i = 0; i < p->nthreads; i++)
		bad += p->threads[i].process >= p->nprocesses || !p->threads[i].name;
	for (i = 0; i < p->ncuda_api; i++)
		bad += (p->cuda_api[i].stack != PROF_NONE && p->cuda_api[i].stack >= p->nstacks) ||
		       p->cuda_api[i].thread >= p->nthreads || !p->cuda_api[i].name;
	for (i = 0; i < p->ngpu_ops; i++)
		bad += (p->gpu_ops[i].api != PROF_NONE && p->gpu_ops[i].api >= p->ncuda_api) ||
		       !p->gpu_ops[i].name;
	for (i = 0; i < p->nranges; i++)
		bad += (p->ranges[i].thread != PROF_NONE && p->ranges[i].thread >= p->nthreads) ||
		       !p->ranges[i].name || !p->ranges[i].domain;
	for (i = 0; i < p->ncuda_status; i++)
		bad += !p->cuda_status[i].message;
	for (i = 0; i < p->nwarnings; i++)
		bad += !p->warnings[i];
	for (i = 0; i < p->nmem_allocs; i++) {
		const struct prof_mem_alloc *a = &p->mem_allocs[i];
		bad += (a->stack != PROF_NONE && a->stack >= p->nstacks) ||
		       a->thread >= p->nthreads || a->process >= p->nprocesses;
		bad += i > 0 && (a[-1].process > a->process ||
				 (a[-1].process == a->process && a[-1].ts > a->ts));
	}
	for (i = 0; i < p->nmem_frees; i++) {
		const struct prof_mem_free *f = &p->mem_frees[i];
		bad += f->thread >= p->nthreads || f->process >= p->nprocesses;
		bad += i > 0 && (f[-1].process > f->process ||
				 (f[-1].process == f->process && f[-1].ts > f->ts));
	}
	for (i = 0; i < p->nmem_counters; i++)
		bad += p->mem_counters[i].process >= p->nprocesses ||
		       (i > 0 && p->mem_counters[i - 1].process == p->mem_counters[i].process &&
			p->mem_counters[i - 1].ts > p->mem_counters[i].ts);
	for (i = 0; i < p->nprocesses; i++)
		bad += !p->processes[i].mem.reason || p->processes[i].mem.state > CBN_MEM_REFUSED;
	CHECK_EQ_INT(bad, 0);
}

int main(void)
{
	struct synth_self me;
	struct synth s;
	char dir[] = "/tmp/cbn-test-load-fuzz-XXXXXX", path[256];
	size_t offs[512], n, size;
	uint32_t sizes[512];
	unsigned char *b;
	unsigned long iters = 0, loaded = 0;
	double t0;

	REQUIRE(synth_self_find(&me) == 0);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/100.0.cbp", dir);
	synth_all_with_self(&s, &me, &rng);
	size = synth_size(&s);
	n = records(&s, offs, sizes, 512);
	REQUIRE(n > 50);
	b = malloc(size);
	REQUIRE(b != NULL);

	t0 = now();
	/* At least a dozen variants, however slow the machine (sanitizers, load). */
	while (now() - t0 < FUZZ_SECONDS || iters < 12) {
		struct profile *p = NULL;
		char err[256];
		unsigned k, nmut = 1 + (unsigned)(rnd() % 6);
		FILE *f;
		int ret;

		memcpy(b, s.buf, size);
		for (k = 0; k < nmut; k++) {
			size_t r = rnd() % n, at;
			if (sizes[r] <= 8)
				continue;
			at = offs[r] + 8 + rnd() % (sizes[r] - 8);
			switch (rnd() % 4) {
			case 0: b[at] ^= (unsigned char)(1u << (rnd() % 8)); break;
			case 1: b[at] = 0xff; break;
			case 2: b[at] = 0; break;
			default:
				if (at + 8 <= offs[r] + sizes[r]) {
					uint64_t v = rnd();
					memcpy(b + at, &v, 8);
				}
				break;
			}
		}
		if (rnd() % 4 == 0) {
			/* header.mem: state, flags, rate, counters, reason length */
			size_t at = offsetof(struct cbn_file_header, mem) +
				    rnd() % sizeof(struct cbn_mem_state);
			uint64_t v = rnd();
			memcpy(b + at, &v, at + 8 <= CBN_HEADER_SIZE ? 8 : 1);
		}
		f = fopen(path, "wb");
		REQUIRE(f != NULL);
		REQUIRE(fwrite(b, 1, size, f) == size);
		fclose(f);
		ret = prof_load(dir, &p, err, sizeof(err));
		CHECK(ret >= PROF_LOAD_EMPTY && ret <= PROF_LOAD_PARTIAL);
		if (ret >= 0) {
			struct analysis an;

			REQUIRE(p != NULL);
			check_profile(p);
			/* the memory view over hostile records: no crash, indices in range */
			if (analysis_run(p, NULL, &an) == 0) {
				const struct mem_analysis *m = an.memory;
				size_t i, j, bad = 0;

				for (i = 0; m && i < m->nspaces; i++)
					for (j = 0; j < m->spaces[i].nat_peak; j++)
						bad += m->spaces[i].at_peak[j].site >= m->nsites;
				for (i = 0; m && i < m->nleaks; i++)
					bad += m->leaks[i] >= m->nsites;
				for (i = 0; m && i < m->nsites; i++)
					bad += m->sites[i].stack != PROF_NONE &&
					       m->sites[i].stack >= p->nstacks;
				CHECK_EQ_INT(bad, 0);
				analysis_free(&an);
			}
			loaded++;
		} else {
			CHECK(p == NULL && err[0] != '\0');
		}
		prof_free(p);
		iters++;
	}
	printf("%lu hostile variants, %lu loaded, in %.1f s\n", iters, loaded, now() - t0);
	CHECK(iters > 10);
	unlink(path);
	rmdir(dir);
	free(b);
	synth_free(&s);
	return test_result();
}
