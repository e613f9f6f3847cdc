/*
 * load_dir.c — the session directory: its *.cbp files (those of rank-NNNNN/
 * folders too, filtered by --ranks), in start order, root process first.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load_int.h"
#include "load_meta.h"

/* --- the directory --------------------------------------------------------- */

static int cbp_cmp(const void *a, const void *b)
{
	const struct cbp_name *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Peek at a file's start time so processes come out in start order (root
 * first); a file whose header is unreadable sorts first and is reported. */
static void cbp_peek(const char *dir, struct cbp_name *c)
{
	struct cbn_file_header h;
	char path[PATH_MAX];
	int fd;

	const char *base = strrchr(c->name, '/');

	c->start = 0;
	c->rank = -1;
	sscanf(base ? base + 1 : c->name, "%" SCNu32 ".%" SCNu32, &c->pid, &c->seq);
	snprintf(path, sizeof(path), "%s/%s", dir, c->name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    memcmp(h.magic, CBN_MAGIC, sizeof(h.magic)) == 0) {
		c->start = h.start_mono_ns;
		if (h.rank.source != CBN_RANK_NONE && h.rank.rank >= 0)
			c->rank = h.rank.rank;
	}
	close(fd);
}

/* The *.cbp of dir/sub (sub "" the top) into *out, names relative to dir;
 * with ranks, only files whose header names one of them.  0, -1 when dir
 * cannot be opened (errno), PROF_LOAD_NOMEM. */
static int list_dir(const char *dir, const char *sub, const char *ranks, struct cbp_name **out,
		    size_t *n, size_t *cap)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *e;

	int ret = 0;

	snprintf(path, sizeof(path), "%s%s%s", dir, sub[0] ? "/" : "", sub);
	d = opendir(path);
	if (!d)
		return errno == ENOMEM ? PROF_LOAD_NOMEM : -1;
	while (ret == 0 && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		struct cbp_name *c;
		char name[PATH_MAX];

		/* a rank's session lives in OUT/rank-NNNNN/ (docs/distributed.md) */
		if (!sub[0] && strncmp(e->d_name, "rank-", 5) == 0) {
			if (list_dir(dir, e->d_name, ranks, out, n, cap) == PROF_LOAD_NOMEM)
				ret = PROF_LOAD_NOMEM;
			continue;
		}
		if (len <= strlen(CBN_FILE_EXT) ||
		    strcmp(e->d_name + len - strlen(CBN_FILE_EXT), CBN_FILE_EXT) != 0)
			continue;
		snprintf(name, sizeof(name), "%s%s%s", sub, sub[0] ? "/" : "", e->d_name);
		if (util_grow((void **)out, cap, *n, sizeof(**out)) < 0) {
			ret = PROF_LOAD_NOMEM;
			break;
		}
		c = &(*out)[(*n)++];
		memset(c, 0, sizeof(*c));
		c->name = strdup(name);
		if (!c->name) {
			(*n)--;
			ret = PROF_LOAD_NOMEM;
			break;
		}
		cbp_peek(dir, c);
		if (ranks && (c->rank < 0 || prof_ranks_match(ranks, c->rank, NULL, 0) != 1)) {
			free(c->name);
			(*n)--;
		}
	}
	closedir(d);
	return ret;
}

int load_list_files(const char *dir, const char *ranks, struct cbp_name **out, size_t *n,
		    char *err, size_t errlen)
{
	size_t cap = 0, i;
	int ret;

	*out = NULL;
	*n = 0;
	ret = list_dir(dir, "", ranks, out, n, &cap);
	if (ret < 0) {
		if (ret == PROF_LOAD_NOMEM)
			snprintf(err, errlen, "out of memory listing %s", dir);
		else
			snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
		for (i = 0; i < *n; i++)
			free((*out)[i].name);
		free(*out);
		*out = NULL;
		*n = 0;
		return ret == PROF_LOAD_NOMEM ? PROF_LOAD_NOMEM : PROF_LOAD_EMPTY;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), cbp_cmp);
	return 0;
}

