/*
 * jitmaps.c — after a run, the names of the code the program generated at
 * run time: for every process of the session, its perf map
 * (/tmp/perf-PID.map) copied into the session as perf-PID.map, with the
 * jitdump files it mapped (JIT_REGION records with CBN_JIT_JITDUMP) converted
 * into more lines of it, so that every later `cbottleneck report DIR` reads
 * them from the session alone (docs/symbols.md).  What cannot be read is
 * said in the session's notes, one line each.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "../format/reader.h"
#include "../symbols/jitdump.h"
#include "../util/util.h"

/* One pid of the session: every image of it shares /tmp/perf-PID.map. */
struct jm_proc {
	uint32_t pid;
	uid_t uid;               /* owner of its session files: the program's user */
	uint64_t start_real_ns;  /* its earliest image's start, 0 unknown */
	char **dumps;            /* jitdump files its images mapped, once each */
	size_t ndumps, capdumps;
	int jit;                 /* it made code at run time (a JIT_REGION record) */
};

struct jm_set {
	struct jm_proc *v;
	size_t n, cap;
	int oom;
};

struct jm_out {
	FILE *f;
	const char *dir;
	uint32_t pid;
	uint64_t bytes;          /* written so far */
	int full;                /* CBN_PERFMAP_MAX reached */
};

/* A line of the session's notes ("pid N\tTEXT", docs/format.md). */
__attribute__((format(printf, 3, 4))) static void jm_note(const char *dir, uint32_t pid,
							    const char *fmt, ...)
{
	char path[PATH_MAX + 16], text[768];
	va_list ap;
	FILE *f;
	size_t i;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (i = 0; text[i]; i++)
		if (text[i] == '\n' || text[i] == '\t')
			text[i] = ' ';
	snprintf(path, sizeof(path), "%s/%s", dir, CBN_NOTES_FILE);
	f = fopen(path, "ae");
	if (!f)
		return;
	fprintf(f, "pid %u\t%s\n", pid, text);
	fclose(f);
}

static struct jm_proc *jm_proc_of(struct jm_set *s, uint32_t pid)
{
	struct jm_proc *p;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return &s->v[i];
	if (util_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)) < 0) {
		s->oom = 1;
		return NULL;
	}
	p = &s->v[s->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void jm_add_dump(struct jm_set *s, struct jm_proc *p, const char *path, size_t len)
{
	char *copy;
	size_t i;

	for (i = 0; i < p->ndumps; i++)
		if (strlen(p->dumps[i]) == len && !memcmp(p->dumps[i], path, len))
			return;
	copy = strndup(path, len);
	if (!copy ||
	    util_grow((void **)&p->dumps, &p->capdumps, p->ndumps, sizeof(*p->dumps)) < 0) {
		free(copy);
		s->oom = 1;
		return;
	}
	p->dumps[p->ndumps++] = copy;
}

struct jm_walk {
	struct jm_set *s;
	struct jm_proc *p;
};

static int jm_rec_cb(void *ctx, const struct reader_rec *r)
{
	struct jm_walk *w = ctx;
	const struct cbn_rec_jit_region *j;

	if (r->type != CBN_REC_JIT_REGION)
		return 0;
	w->p->jit = 1;
	if (!(r->flags & CBN_JIT_JITDUMP))
		return 0;
	j = (const void *)r->raw;
	if (j->name_len && j->name_len < PATH_MAX)
		jm_add_dump(w->s, w->p, j->name, j->name_len);
	return w->s->oom;
}

/* The session's processes, and the jitdump files each mapped. */
static void jm_collect(const char *dir, struct jm_set *s)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && !s->oom && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name), ext = strlen(CBN_FILE_EXT);
		struct reader_file f;
		struct reader_result res;
		struct jm_walk w;
		struct stat st;
		char path[PATH_MAX + 256];

		if (len <= ext || strcmp(e->d_name + len - ext, CBN_FILE_EXT) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) != 0 || reader_open(path, &f, &res) != 0)
			continue;
		w.s = s;
		w.p = jm_proc_of(s, f.hdr.pid);
		if (w.p) {
			w.p->uid = st.st_uid;
			if (f.hdr.start_real_ns &&
			    (!w.p->start_real_ns || f.hdr.start_real_ns < w.p->start_real_ns))
				w.p->start_real_ns = f.hdr.start_real_ns;
			reader_walk(&f, jm_rec_cb, &w, &res);
		}
		reader_close(&f);
	}
	if (d)
		closedir(d);
}

/* Open a file the program wrote, as perf does (tools/perf/util/symbol.c: a
 * perf map must be its user's or root's): a regular file owned by the
 * program's user or root; -1 with errno otherwise (EPERM: someone else's). */
static int jm_open_theirs(const char *path, uid_t uid, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	if (st->st_uid != uid && st->st_uid != 0) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

static int jm_out_open(struct jm_out *o)
{
	char path[PATH_MAX + 64], name[64];
	int fd;

	if (o->f)
		return 0;
	snprintf(name, sizeof(name), CBN_PERFMAP_FILE, o->pid);
	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -1;
	}
	return 0;
}

/* /tmp/perf-PID.map, whole lines up to the cap; a file older than the
 * process was left by an earlier process with its pid. */
static void jm_copy_map(struct jm_out *o, const struct jm_proc *p)
{
	char src[64], buf[1 << 16];
	struct stat st;
	uint64_t left, mtime;
	int fd, nl = 1;
	ssize_t r;

	snprintf(src, sizeof(src), "/tmp/perf-%u.map", p->pid);
	fd = jm_open_theirs(src, p->uid, &st);
	if (fd < 0) {
		if (errno != ENOENT)
			jm_note(o->dir, p->pid, "%s was not used (%s): its JIT code is named by "
				"region only", src, errno == EPERM ? "another user's file" :
				strerror(errno));
		return;
	}
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	if (p->start_real_ns && mtime + 1000000000ull < p->start_real_ns) {
		/* said only to a process that made code at run time: a build
		 * reuses pids a JIT left maps for, and its cc1 has nothing to name */
		if (!p->jit) {
			close(fd);
			return;
		}
		jm_note(o->dir, p->pid, "%s is older than the process (an earlier process with "
			"this pid left it): not used", src);
		close(fd);
		return;
	}
	if (jm_out_open(o) < 0) {
		close(fd);
		return;
	}
	left = (uint64_t)st.st_size < CBN_PERFMAP_MAX ? (uint64_t)st.st_size : CBN_PERFMAP_MAX;
	while (left > 0) {
		size_t want = left < sizeof(buf) ? (size_t)left : sizeof(buf), n;

		r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n = (size_t)r;
		left -= n;
		if (left == 0 && (uint64_t)st.st_size > CBN_PERFMAP_MAX) {
			while (n > 0 && buf[n - 1] != '\n')
				n--; /* the cut: whole lines only */
			o->full = 1;
		}
		fwrite(buf, 1, n, o->f);
		o->bytes += n;
		if (n)
			nl = buf[n - 1] == '\n';
	}
	close(fd);
	if (!nl) {
		fputc('\n', o->f); /* a last line the program had not ended */
		o->bytes++;
	}
	if (o->full)
		jm_note(o->dir, p->pid, "%s is larger than %u MiB: only its first %u MiB were "
			"kept", src, CBN_PERFMAP_MAX >> 20, CBN_PERFMAP_MAX >> 20);
}

static int jm_dump_cb(void *ctx, uint64_t addr, uint64_t size, const char *name)
{
	struct jm_out *o = ctx;
	char line[JITDUMP_NAME_MAX + 64];
	int n, i;

	n = snprintf(line, sizeof(line), "%" PRIx64 " %" PRIx64 " %s\n", addr, size, name);
	if (n < 0)
		return 0;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	line[n - 1] = '\n';
	/* a name's own line breaks would start a line of their own */
	for (i = 0; i < n - 1; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	if (o->bytes + (uint64_t)n > CBN_PERFMAP_MAX) {
		o->full = 1;
		return 1;
	}
	fwrite(line, 1, (size_t)n, o->f);
	o->bytes += (uint64_t)n;
	return 0;
}

static void jm_convert(struct jm_out *o, const struct jm_proc *p, const char *path)
{
	struct jitdump_stats st;
	struct stat sb;
	int fd = jm_open_theirs(path, p->uid, &sb), ret;

	if (fd < 0) {
		jm_note(o->dir, p->pid, "jitdump file %s cannot be read (%s): its JIT code is "
			"named by region only", path, errno == EPERM ? "another user's file" :
			strerror(errno));
		return;
	}
	if (jm_out_open(o) < 0) {
		close(fd);
		return;
	}
	ret = jitdump_read_fd(fd, jm_dump_cb, o, &st);
	close(fd);
	if (ret == -EINVAL)
		jm_note(o->dir, p->pid, "%s was not read: %s", path, st.why);
	else if (ret < 0)
		jm_note(o->dir, p->pid, "jitdump file %s cannot be read (%s)", path,
			strerror(-ret));
	else if (o->full)
		jm_note(o->dir, p->pid, "the perf map made from %s passed %u MiB: the rest of "
			"its JIT code is named by region only", path, CBN_PERFMAP_MAX >> 20);
	else if (st.damaged)
		jm_note(o->dir, p->pid, "jitdump file %s is damaged (%s): the %" PRIu64
			" pieces of code described before were kept", path, st.why,
			st.loads + st.moves);
}

void jitmaps_collect(const char *dir, int verbose)
{
	struct jm_set s = {NULL, 0, 0, 0};
	size_t i, k;

	jm_collect(dir, &s);
	if (s.oom && verbose)
		fprintf(stderr, "cbottleneck: out of memory reading the session's JIT code: "
			"perf maps not copied\n");
	for (i = 0; i < s.n && !s.oom; i++) {
		struct jm_out o = {NULL, dir, s.v[i].pid, 0, 0};

		jm_copy_map(&o, &s.v[i]);
		for (k = 0; k < s.v[i].ndumps && !o.full; k++)
			jm_convert(&o, &s.v[i], s.v[i].dumps[k]);
		if (o.f && fclose(o.f) != 0 && verbose)
			fprintf(stderr, "cbottleneck: cannot write the perf map of pid %u "
				"into %s\n", s.v[i].pid, dir);
	}
	for (i = 0; i < s.n; i++) {
		for (k = 0; k < s.v[i].ndumps; k++)
			free(s.v[i].dumps[k]);
		free(s.v[i].dumps);
	}
	free(s.v);
}
