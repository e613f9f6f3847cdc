/*
 * test_export_gz.c — gz.c's own gzip writer, the one used when the build has
 * no zlib (stored deflate blocks + CRC-32): compiled into this test without
 * CBN_HAVE_ZLIB, its output must gunzip (zlib reads it back) to the exact
 * bytes written, across several blocks, and an empty stream must be valid.
 * Plain output and byte counting are checked too.
 */
#undef CBN_HAVE_ZLIB
#include "report/gz.c"

#include "testlib.h"
#include "test_export_fixture.h"

static int write_lines(const char *path, int gzip, int n, uint64_t *count)
{
	struct gz_file *f;

	if (gz_open(&f, path, gzip))
		return -1;
	for (int i = 0; i < n; i++)
		gz_printf(f, "line %d: %s\n", i,
		          i % 7 ? "short" : "a somewhat longer line of text");
	*count = gz_count(f);
	return gz_close(f);
}

static int same_text(const char *got, int n)
{
	char want[128];
	size_t off = 0;

	for (int i = 0; i < n; i++) {
		int k = snprintf(want, sizeof(want), "line %d: %s\n", i,
		                 i % 7 ? "short" : "a somewhat longer line of text");

		if (strncmp(got + off, want, (size_t)k))
			return 0;
		off += (size_t)k;
	}
	return got[off] == '\0';
}

int main(void)
{
	char *dir = ex_tmpdir(), path[256];
	uint64_t count = 0;
	size_t len;
	char *txt;

	CHECK(gz_path_wants_gzip("a.json.gz"));
	CHECK(!gz_path_wants_gzip("a.json"));
	CHECK(!gz_path_wants_gzip(".gz"));

	snprintf(path, sizeof(path), "%s/plain.txt", dir);
	CHECK_EQ_INT(write_lines(path, 0, 1000, &count), 0);
	txt = ex_slurp(path, &len);
	REQUIRE(txt != NULL);
	CHECK_EQ_INT(len, count);
	CHECK(same_text(txt, 1000));
	free(txt);

#ifdef EX_HAVE_ZLIB
	/* ~2.8 MB: several 256 KiB buffers, each several 64 KiB stored blocks */
	snprintf(path, sizeof(path), "%s/big.gz", dir);
	CHECK_EQ_INT(write_lines(path, 1, 100000, &count), 0);
	txt = ex_slurp(path, &len);
	REQUIRE(txt != NULL);
	CHECK_EQ_INT(len, count);
	CHECK(same_text(txt, 100000));
	free(txt);
	{
		/* zlib's own check of the trailer (CRC-32 and length) */
		gzFile g = gzopen(path, "rb");
		char buf[65536];
		int r, errnum = 0;

		REQUIRE(g != NULL);
		while ((r = gzread(g, buf, sizeof(buf))) > 0)
			;
		gzerror(g, &errnum);
		CHECK(r == 0 && errnum == Z_OK);
		CHECK(gzclose(g) == Z_OK);
	}
	snprintf(path, sizeof(path), "%s/empty.gz", dir);
	CHECK_EQ_INT(write_lines(path, 1, 0, &count), 0);
	txt = ex_slurp(path, &len);
	CHECK(txt && len == 0);
	free(txt);
#else
	fprintf(stderr, "zlib.h not available: gzip output not read back\n");
#endif
	CHECK(write_lines("/nonexistent-dir/x.gz", 1, 1, &count) < 0);

	ex_rmdir(dir);
	return test_result();
}
