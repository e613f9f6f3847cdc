/*
 * test_load_perf.c — loader speed on a synthetic session: N samples of 30
 * frames drawn from a few thousand distinct stacks over real addresses of this
 * executable (so the symbolizer does real DWARF work).  The target is 1 M
 * samples x 30 frames loaded and symbolized in well under 2 s; by default this
 * runs 200 k samples and requires < 1.5 s (slack for a busy CI machine) (CBN_PERF_FULL=1: 1 M, < 2 s).  The
 * time bound is not checked in sanitizer builds.
 */
#include <dirent.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"
#include "test_reader_synth.h"
#include "load.h"

#define FRAMES 30
#define UNIQUE 5000
#define PCS 3000

static uint64_t rng = 88172645463325252ull;

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

int main(void)
{
	static uint64_t pool[PCS], stacks[UNIQUE][FRAMES];
	const char *full = getenv("CBN_PERF_FULL");
	size_t nsamples = full && *full == '1' ? 1000000 : 200000, i;
	double limit = full && *full == '1' ? 2.0 : 1.5, t0, t1;
	char dir[] = "/tmp/cbn-test-load-perf-XXXXXX", path[256];
	const char *exe;
	struct synth_self t;
	struct synth s;
	struct profile *p = NULL;
	char err[256];
	int ret;

	REQUIRE(synth_self_find(&t) == 0);
	exe = t.path;
	for (i = 0; i < PCS; i++)
		pool[i] = t.lo + 1 + rnd() % (t.hi - t.lo - 1);
	for (i = 0; i < UNIQUE; i++)
		for (int f = 0; f < FRAMES; f++)
			stacks[i][f] = pool[rnd() % PCS];

	synth_init(&s, 4242, 1, 0, 0, exe);
	synth_chunk(&s, CBN_CHUNK_EVENTS, 0);
	{
		unsigned char b[8192];
		struct cbn_rec_module *m = (struct cbn_rec_module *)b;
		size_t plen = strlen(exe);
		uint32_t size = (uint32_t)CBN_REC_ALIGN(sizeof(*m) + t.nseg * sizeof(struct cbn_segment) +
							plen + 1);
		memset(b, 0, sizeof(b));
		m->h.type = CBN_REC_MODULE_LOAD;
		m->h.size = size;
		m->ts = 1;
		m->base = t.base;
		m->nseg = t.nseg;
		memcpy(m->seg, t.seg, t.nseg * sizeof(struct cbn_segment));
		m->path_len = (uint32_t)plen;
		memcpy((char *)&m->seg[t.nseg], exe, plen + 1);
		synth_rec(&s, m, size);
	}
	synth_chunk(&s, CBN_CHUNK_SAMPLES, 4242);
	for (i = 0; i < nsamples; i++)
		synth_sample(&s, 1000 + i, 1, stacks[rnd() % UNIQUE], FRAMES, 0);
	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/4242.0.cbp", dir);
	REQUIRE(synth_write(&s, path) == 0);
	synth_free(&s);

	t0 = now();
	ret = prof_load(dir, &p, err, sizeof(err));
	t1 = now();
	CHECK_EQ_INT(ret, PROF_LOAD_OK);
	REQUIRE(p != NULL);
	CHECK_EQ_INT(p->nsamples, nsamples);
	CHECK(p->nstacks <= UNIQUE);
	CHECK(p->nstacks > UNIQUE * 9 / 10);
	printf("loaded %zu samples x %d frames (%zu unique stacks, %zu functions) in %.3f s\n",
	       p->nsamples, FRAMES, p->nstacks, p->nfuncs, t1 - t0);
	if (!SANITIZED)
		CHECK(t1 - t0 < limit);
	prof_free(p);
	unlink(path);
	rmdir(dir);
	return test_result();
}
