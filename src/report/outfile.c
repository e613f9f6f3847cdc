/*
 * outfile.c — writing one of the report's whole-document outputs (--json,
 * --html) to its file or stdout (outfile.h).
 */
#include <errno.h>
#include <string.h>

#include "outfile.h"

int outfile_write(const char *path, const char *opt, void (*fill)(FILE *f, const void *ctx),
		  const void *ctx, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	int ret = -1;

	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s; pick a writable %s path", path,
			 strerror(errno), opt);
		return -1;
	}
	fill(f, ctx);
	if (fflush(f) != 0 || ferror(f)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (f != stdout && fclose(f) != 0 && ret == 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		ret = -1;
	}
	return ret;
}
