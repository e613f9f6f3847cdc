/*
 * mon.c — the monitor's images: every PID.SEQ.cbp of the session (rank
 * directories included) is found as it appears (inotify), its header mapped
 * read-write once the agent has filled it, and given a side file PID.SEQ.cbs
 * when the monitor has something to record about it.  An image ends when
 * its process is gone or has exec'd (a file of the same pid with a higher
 * sequence appeared).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mon_int.h"
#include "../format/cbn_time.h"

#define MON_SIDE_MAX (256ull << 20)     /* a side file's length at most */

static uint64_t mon_now(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

/* "PID.SEQ.cbp" */
static int mon_name(const char *name, uint32_t *pid, uint32_t *seq)
{
	size_t n = strlen(name), ext = strlen(CBN_FILE_EXT);
	unsigned long p, q;
	char *end;

	if (n <= ext || strcmp(name + n - ext, CBN_FILE_EXT) != 0)
		return -1;
	p = strtoul(name, &end, 10);
	if (end == name || *end != '.')
		return -1;
	q = strtoul(end + 1, &end, 10);
	if (strcmp(end, CBN_FILE_EXT) != 0 || !p || p > UINT32_MAX || q > UINT32_MAX)
		return -1;
	*pid = (uint32_t)p;
	*seq = (uint32_t)q;
	return 0;
}

static void mon_end(struct mon_image *im);

static void mon_add(struct mon *m, const char *dir, const char *name)
{
	struct mon_image *im;
	uint32_t pid, seq;
	size_t i;

	if (mon_name(name, &pid, &seq) < 0)
		return;
	for (i = 0; i < m->nimg; i++) {
		if (m->img[i].pid != pid)
			continue;
		if (m->img[i].seq == seq)
			return;
		if (m->img[i].seq < seq && !m->img[i].ended)
			mon_end(&m->img[i]); /* exec'd into this one */
	}
	if (m->nimg == m->capimg) {
		size_t cap = m->capimg ? m->capimg * 2 : 16;
		struct mon_image *n = realloc(m->img, cap * sizeof(*n));

		if (!n)
			return;
		m->img = n;
		m->capimg = cap;
	}
	im = &m->img[m->nimg++];
	memset(im, 0, sizeof(*im));
	im->pid = pid;
	im->seq = seq;
	im->statm = -1;
	if ((size_t)snprintf(im->path, sizeof(im->path), "%s/%s", dir, name) >= sizeof(im->path))
		m->nimg--;
}

static int mon_rank_dir(const char *name)
{
	size_t n;

	if (strncmp(name, "rank-", 5))
		return 0;
	n = strspn(name + 5, "0123456789");
	return n >= 5 && name[5 + n] == '\0';
}

static void mon_scan(struct mon *m, const char *dir, int top);

static void mon_watch(struct mon *m, const char *dir, int top)
{
	int wd;

	if (m->nwd == MON_WATCHES)
		return;
	wd = inotify_add_watch(m->inotify, dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
	if (wd < 0)
		return;
	m->wd[m->nwd] = wd;
	snprintf(m->wdir[m->nwd], sizeof(m->wdir[0]), "%s", dir);
	m->nwd++;
	mon_scan(m, dir, top);
}

/* Every file of dir (and, at the top, every rank directory's). */
static void mon_scan(struct mon *m, const char *dir, int top)
{
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (top && mon_rank_dir(e->d_name)) {
			char sub[PATH_MAX + 256];
			int i, known = 0;

			snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
			for (i = 0; i < m->nwd; i++)
				known |= strcmp(m->wdir[i], sub) == 0;
			if (!known && strlen(sub) < PATH_MAX)
				mon_watch(m, sub, 0);
			continue;
		}
		mon_add(m, dir, e->d_name);
	}
	closedir(d);
}

/* What inotify reported: new files, new rank directories. */
static void mon_events(struct mon *m)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(m->inotify, buf, sizeof(buf))) > 0) {
		char *p = buf;

		while (p < buf + n) {
			const struct inotify_event *ev = (const void *)p;
			int i;

			for (i = 0; i < m->nwd && ev->len; i++) {
				if (m->wd[i] != ev->wd)
					continue;
				if ((ev->mask & IN_ISDIR) && i == 0 && mon_rank_dir(ev->name)) {
					char sub[PATH_MAX + 256];

					snprintf(sub, sizeof(sub), "%s/%s", m->wdir[0], ev->name);
					if (strlen(sub) < PATH_MAX)
						mon_watch(m, sub, 0);
				} else if (!(ev->mask & IN_ISDIR)) {
					mon_add(m, m->wdir[i], ev->name);
				}
			}
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* Map an image's header once the agent has filled it (its magic, then its
 * pid, are written before the first sampler is armed). */
static void mon_map(struct mon *m, struct mon_image *im)
{
	struct cbn_file_header *h;
	struct stat st;
	int fd;

	if (im->hdr || im->ended)
		return;
	fd = open(im->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			im->ended = 1;
		return;
	}
	/* Just made: not yet its full (sparse) length, and a page past the
	 * end would raise SIGBUS here. */
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)CBN_HEADER_SIZE) {
		close(fd);
		return;
	}
	h = mmap(NULL, CBN_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED)
		return;
	if (memcmp(h->magic, CBN_MAGIC, sizeof(h->magic)) != 0 || h->pid != im->pid ||
	    h->endian != CBN_ENDIAN_CHECK || h->version != CBN_FORMAT_VERSION) {
		munmap(h, CBN_HEADER_SIZE);
		return;
	}
	im->hdr = h;
	mon_ctl_image(m, im);
}

/* The process of an image is gone: no /proc entry, or a zombie.  A main
 * thread that left with pthread_exit shows as a zombie while the other
 * threads run on: the thread count (field 20) tells. */
static int mon_gone(const struct mon_image *im)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%u/stat", im->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 1;
	if (p[2] != 'Z' && p[2] != 'X')
		return 0;
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	return !p || strtol(p + 1, NULL, 10) <= 1;
}

static void mon_end(struct mon_image *im)
{
	mon_mem_end(im);
	mon_offcpu_end(im);
	mon_py_free(im);
	im->ended = 1;
}

struct writer *mon_side(struct mon_image *im)
{
	struct cbn_file_header *h;
	char path[PATH_MAX + 8];
	size_t n;

	if (im->side.hdr)
		return &im->side;
	if (im->side_failed || !im->hdr)
		return NULL;
	n = strlen(im->path) - strlen(CBN_FILE_EXT);
	snprintf(path, sizeof(path), "%.*s%s", (int)n, im->path, CBN_SIDE_EXT);
	if (writer_open(&im->side, path, CBN_HEADER_SIZE + 2 * CBN_CHUNK_SIZE, MON_SIDE_MAX) < 0) {
		im->side_failed = 1;
		return NULL;
	}
	h = im->side.hdr;
	h->pid = im->pid;
	h->ppid = im->hdr->ppid;
	h->exec_seq = im->seq;
	h->period_ns = im->hdr->period_ns;
	h->start_mono_ns = im->hdr->start_mono_ns;
	h->start_real_ns = im->hdr->start_real_ns;
	h->parent_pid_file = -1;
	h->rec_type_max = CBN_REC_TYPE_MAX;
	return &im->side;
}

struct mon *mon_start(const struct mon_opts *o, int verbose)
{
	struct mon *m;

	if (!o->memory && !o->controlled && !o->ctl && o->offcpu_hz <= 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->o = *o;
	m->verbose = verbose;
	m->ctl = o->ctl;
	m->off_rnd = cbn_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^
		     0x9e3779b97f4a7c15ull;
	m->inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (m->inotify < 0) {
		if (verbose)
			fprintf(stderr, "cbottleneck: inotify: %s: the launcher does not follow the "
				"run's processes\n", strerror(errno));
		free(m);
		return NULL;
	}
	mon_watch(m, o->session, 1);
	return m;
}

int mon_fds(struct mon *m, struct pollfd *p, int max)
{
	if (!m || max < 1)
		return 0;
	p[0].fd = m->inotify;
	p[0].events = POLLIN;
	p[0].revents = 0;
	return 1 + mon_ctl_fds(m, p + 1, max - 1);
}

uint64_t mon_turn(struct mon *m, uint64_t now, const struct pollfd *p, int n)
{
	uint64_t next, t;
	size_t i;

	if (!m)
		return 0;
	mon_events(m);
	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (im->ended)
			continue;
		mon_map(m, im);
		if (im->hdr && mon_gone(im))
			mon_end(im);
	}
	mon_ctl_reap(m);
	if (n > 1)
		mon_ctl_serve(m, p + 1, n - 1);
	next = now + 100000000ull; /* a look at least every 100 ms */
	t = mon_mem_turn(m, now);
	if (t && t < next)
		next = t;
	t = mon_capture_turn(m, now);
	if (t && t < next)
		next = t;
	t = mon_offcpu_turn(m, now);
	if (t && t < next)
		next = t;
	/* an image whose header is not filled yet: look again soon */
	for (i = 0; i < m->nimg; i++)
		if (!m->img[i].ended && !m->img[i].hdr && now + 1000000 < next)
			next = now + 1000000;
	return next;
}

void mon_stop(struct mon *m)
{
	size_t i;

	if (!m)
		return;
	mon_turn(m, mon_now(), NULL, 0);
	for (i = 0; i < m->nimg; i++) {
		struct mon_image *im = &m->img[i];

		if (!im->ended)
			mon_end(im);
		if (im->side.hdr) {
			im->side.hdr->end_mono_ns = mon_now();
			writer_close(&im->side);
		}
		if (im->hdr)
			munmap(im->hdr, CBN_HEADER_SIZE);
	}
	mon_ctl_end(m);
	free(m->img);
	close(m->inotify);
	free(m);
}
