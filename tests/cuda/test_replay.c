/*
 * test_replay.c — replays raw CUPTI buffers recorded on a real GPU
 * (CBN_CUDA_DUMP_DIR, see src/agent/cuda/dump.h) that were copied into
 * tests/cuda/fixtures/, through the real parser and convert.c, and checks what
 * only real records can show: every record parses, kernels have names and
 * sane launch shapes, intervals are ordered, copies have bytes, and the device
 * record looks like a GPU.  Skips (77) while no fixture has been recorded.
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "convert.h"
#include "dump.h"
#include "testlib.h"

static size_t kernels, copies, devices;

static int check_rec(void *arg, const void *rec, size_t size)
{
	const struct cbn_rec *h = rec;
	const struct cbn_rec_cuda_kernel *k = rec;
	const struct cbn_rec_cuda_memcpy *m = rec;
	const struct cbn_rec_cuda_device *d = rec;

	(void)arg;
	CHECK_EQ_INT(h->size, size);
	switch (h->type) {
	case CBN_REC_CUDA_KERNEL:
		kernels++;
		CHECK(k->end >= k->start && k->start > 0);
		CHECK(k->name_len > 0);
		CHECK(k->grid[0] > 0 && k->block[0] > 0);
		break;
	case CBN_REC_CUDA_MEMCPY:
		copies++;
		CHECK(m->end >= m->start && m->bytes > 0);
		CHECK(m->copy_kind >= CBN_COPY_HTOD && m->copy_kind <= CBN_COPY_PTOP);
		break;
	case CBN_REC_CUDA_DEVICE:
		devices++;
		CHECK(d->sm_count > 0 && d->cc_major >= 5 && d->threads_per_warp == 32);
		CHECK(d->name_len > 0);
		break;
	default:
		break;
	}
	return 0;
}

int main(void)
{
	const char *src = getenv("CBN_SOURCE_DIR");
	char dir[4096], path[8192];
	struct dirent *e;
	size_t files = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "%s/tests/cuda/fixtures", src ? src : CBN_SOURCE_DIR_DEFAULT);
	dp = opendir(dir);
	while (dp && (e = readdir(dp))) {
		struct convert_ctx c = { .emit = check_rec };
		struct dump d;
		int n;

		if (strncmp(e->d_name, "cupti.", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		REQUIRE(dump_load(path, &d) == 0);
		CHECK_EQ_INT(d.cupti_version / 10000, 13);
		n = convert_buffer(&c, d.buf, d.valid);
		CHECK(n > 0);
		CHECK_EQ_INT(c.stats.emit_failed, 0);
		fprintf(stderr, "# %s: %d records, %llu converted, %llu without timestamps\n",
			e->d_name, n, (unsigned long long)c.stats.records,
			(unsigned long long)c.stats.zero_ts);
		dump_free(&d);
		files++;
	}
	if (dp)
		closedir(dp);
	if (!files) {
		fprintf(stderr, "no recorded CUPTI buffers in %s yet (record them on a GPU "
				"machine with CBN_CUDA_DUMP_DIR)\n", dir);
		return TEST_SKIP;
	}
	CHECK(kernels > 0);
	fprintf(stderr, "# %zu files: %zu kernels, %zu copies, %zu devices\n", files, kernels,
		copies, devices);
	return test_result();
}
