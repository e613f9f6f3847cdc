/*
 * session.c — where the agent libraries are (CBN_AGENT_DIR, <exe dir>/lib,
 * the installed libdir) and the session directory's life: a private 0700
 * mkdtemp directory removed after the report, or the user's -o DIR, created
 * if needed and refused when it holds anything that is not a session.
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cbn_format.h"

#ifndef CBN_LIBDIR_INSTALLED
#define CBN_LIBDIR_INSTALLED "/usr/local/lib/cbottleneck"
#endif

#define AGENT_SO "libcbottleneck.so"
#define CUDA_SO "libcbottleneck_cuda.so"
#define MEM_SO "libcbottleneck_mem.so"
#define MPI_SO "libcbottleneck_mpi.so"
#define META_NAME "session.json"

static int is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int session_find_agent(char *agent, size_t alen, char *cuda, size_t clen)
{
	char exe[PATH_MAX], dirs[3][PATH_MAX], cand[PATH_MAX + 64], looked[3 * PATH_MAX + 16];
	const char *env = getenv("CBN_AGENT_DIR");
	ssize_t n;
	int nd = 0, i;
	char *slash;

	if (env && *env) {
		snprintf(dirs[nd++], PATH_MAX, "%s", env);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			slash = strrchr(exe, '/');
			if (slash)
				*slash = '\0';
			if (snprintf(dirs[nd], PATH_MAX, "%s/lib", exe) < PATH_MAX)
				nd++;
			if (snprintf(dirs[nd], PATH_MAX, "%s/../lib/cbottleneck", exe) < PATH_MAX)
				nd++;
		}
		snprintf(dirs[nd++], PATH_MAX, "%s", CBN_LIBDIR_INSTALLED);
	}
	looked[0] = '\0';
	for (i = 0; i < nd; i++) {
		if (snprintf(cand, sizeof(cand), "%s/%s", dirs[i], AGENT_SO) >= (int)sizeof(cand))
			continue;
		if (is_file(cand) && realpath(cand, agent) && strlen(agent) < alen) {
			cuda[0] = '\0';
			if (snprintf(cand, sizeof(cand), "%s/%s", dirs[i], CUDA_SO) <
				    (int)sizeof(cand) && is_file(cand)) {
				char real[PATH_MAX];
				if (realpath(cand, real))
					snprintf(cuda, clen, "%s", real);
			}
			if (strpbrk(agent, " :\t")) {
				/* ld.so splits LD_PRELOAD on spaces and colons. */
				fprintf(stderr, "cbottleneck: the agent's path %s contains a space or "
					"a colon, which LD_PRELOAD cannot express; install cbottleneck "
					"elsewhere or point CBN_AGENT_DIR at a copy\n", agent);
				return CLI_EXIT_REFUSED;
			}
			return 0;
		}
		snprintf(looked + strlen(looked), sizeof(looked) - strlen(looked), "%s%s",
			 i ? ", " : "", dirs[i]);
	}
	fprintf(stderr, "cbottleneck: cannot find the agent %s (looked in %s); reinstall "
		"cbottleneck or set CBN_AGENT_DIR to the directory that holds it\n", AGENT_SO, looked);
	return CLI_EXIT_REFUSED;
}

/* The agent's library so in the agent's directory (into dir, len PATH_MAX):
 * 0 with its absolute path in out, -1 when it is not there or its path does
 * not fit. */
static int session_find_beside(const char *agent, const char *so, char *dir, char *out,
			       size_t len)
{
	char cand[PATH_MAX + 64], real[PATH_MAX];
	char *slash;

	snprintf(dir, PATH_MAX, "%s", agent);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (snprintf(cand, sizeof(cand), "%s/%s", dir, so) < (int)sizeof(cand) &&
	    is_file(cand) && realpath(cand, real) && strlen(real) < len) {
		snprintf(out, len, "%s", real);
		return 0;
	}
	return -1;
}

int session_find_mem(const char *agent, char *out, size_t len)
{
	char dir[PATH_MAX];

	if (session_find_beside(agent, MEM_SO, dir, out, len) == 0)
		return 0;
	fprintf(stderr, "cbottleneck: --memory needs %s next to the agent in %s, and it is not "
		"there; reinstall cbottleneck or run without --memory\n", MEM_SO, dir);
	return CLI_EXIT_REFUSED;
}

/*
 * The MPI wrappers are preloaded into every process of the run when they were
 * built: they stay inert where no libmpi is, and a preload (unlike an
 * injection at exec of processes that link libmpi) also catches a libmpi that
 * comes later by dlopen (mpi4py, a Python training script).
 */
int session_find_mpi(const char *agent, char *out, size_t len)
{
	char dir[PATH_MAX];

	/* ld.so splits LD_PRELOAD on spaces and colons: such a path is left out */
	if (session_find_beside(agent, MPI_SO, dir, out, len) == 0 && !strpbrk(out, " :\t"))
		return 0;
	return -1;
}

/* 1 when name is one of the files a session holds. */
static int session_file(const char *name)
{
	size_t len = strlen(name), ext = strlen(CBN_FILE_EXT), sext = strlen(CBN_SIDE_EXT);

	return strcmp(name, META_NAME) == 0 || strcmp(name, CBN_KSYMS_FILE) == 0 ||
	       strcmp(name, CBN_NOTES_FILE) == 0 ||
	       (len > ext && strcmp(name + len - ext, CBN_FILE_EXT) == 0) ||
	       (len > sext && strcmp(name + len - sext, CBN_SIDE_EXT) == 0);
}

/* 1 when name is a rank's directory, "rank-" and five or more digits
 * (docs/distributed.md). */
static int session_rank_dir(const char *name)
{
	size_t n;

	if (strncmp(name, "rank-", 5))
		return 0;
	n = strspn(name + 5, "0123456789");
	return n >= 5 && name[5 + n] == '\0';
}

int session_is_session(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d)) != NULL) {
		found = session_file(e->d_name);
		/* A distributed run's DIR may hold nothing but rank directories
		 * (one launcher per rank). */
		if (!found && session_rank_dir(e->d_name)) {
			char sub[PATH_MAX + 256];

			snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
			found = session_is_session(sub);
		}
	}
	closedir(d);
	return found;
}

/* Count entries other than . and .. (stop at the first). */
static int dir_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int empty = 1;

	if (!d)
		return 1;
	while (empty && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = 0;
	closedir(d);
	return empty;
}

/* Call fn on each entry of dir (only session files unless everything). */
static void session_each(const char *dir, int everything, void (*fn)(const char *path))
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!everything && !session_file(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fn(path);
	}
	closedir(d);
}

static void session_unlink(const char *path)
{
	unlink(path);
}

/* Remove the session files (and the loader's temporaries) in dir, and those
 * of its rank directories (a previous distributed run's ranks must not merge
 * with this run's): a rank directory left empty goes too. */
static void session_clear(const char *dir, int everything)
{
	DIR *d;
	struct dirent *e;
	char sub[PATH_MAX + 256];

	session_each(dir, everything, session_unlink);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!session_rank_dir(e->d_name))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		session_each(sub, everything, session_unlink);
		rmdir(sub);
	}
	closedir(d);
}

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

int session_create(const char *dir, char *out, size_t len)
{
	struct stat st;

	if (!dir) {
		const char *tmp = getenv("TMPDIR");
		char tmpl[PATH_MAX];

		if (!tmp || !*tmp || access(tmp, W_OK) != 0)
			tmp = "/tmp";
		snprintf(tmpl, sizeof(tmpl), "%s/cbottleneck-XXXXXX", tmp);
		if (!mkdtemp(tmpl)) {
			fprintf(stderr, "cbottleneck: cannot create a session directory in %s: %s; "
				"set TMPDIR or use -o DIR\n", tmp, strerror(errno));
			return CLI_EXIT_REFUSED;
		}
		if (!realpath(tmpl, out) || strlen(out) >= len)
			snprintf(out, len, "%s", tmpl);
		return 0;
	}
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "cbottleneck: -o %s: exists and is not a directory\n", dir);
			return CLI_EXIT_REFUSED;
		}
		if (!dir_empty(dir) && !session_is_session(dir)) {
			fprintf(stderr, "cbottleneck: -o %s: the directory is not empty and is not a "
				"cbottleneck session; choose a new or empty directory\n", dir);
			return CLI_EXIT_REFUSED;
		}
		/* A previous session here: its files would mix with this run's. */
		session_clear(dir, 0);
	} else if (mkdir_p(dir) < 0) {
		fprintf(stderr, "cbottleneck: cannot create -o %s: %s\n", dir, strerror(errno));
		return CLI_EXIT_REFUSED;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "cbottleneck: -o %s: not writable: %s\n", dir, strerror(errno));
		return CLI_EXIT_REFUSED;
	}
	if (!realpath(dir, out) || strlen(out) >= len) {
		fprintf(stderr, "cbottleneck: -o %s: %s\n", dir, strerror(errno));
		return CLI_EXIT_REFUSED;
	}
	return 0;
}

/* The process pid is alive: not a zombie, or a zombie main thread (it left
 * with pthread_exit) with other threads running (the thread count, field
 * 20). */
static int session_pid_alive(uint32_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	if (p[2] != 'Z' && p[2] != 'X')
		return 1;
	for (i = 2; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	return p && strtol(p + 1, NULL, 10) > 1;
}

/* The header of a session file, 0 when it is one we can trust. */
static int session_header(int fd, struct cbn_file_header *h)
{
	return pread(fd, h, sizeof(*h), 0) == (ssize_t)sizeof(*h) &&
			       !memcmp(h->magic, CBN_MAGIC, sizeof(h->magic)) &&
			       h->endian == CBN_ENDIAN_CHECK ? 0 : -1;
}

/* A session file is created sparse at its full length: cut it to what its
 * agent filled, which only a header we can trust says.  Not the file of a
 * process still running (left running by the program): it may still grow. */
static void session_trim_file(const char *path)
{
	struct cbn_file_header h;
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && session_header(fd, &h) == 0 && !session_pid_alive(h.pid) &&
	    h.file_size >= CBN_HEADER_SIZE && (off_t)h.file_size < st.st_size)
		(void)!ftruncate(fd, (off_t)h.file_size);
	close(fd);
}

/* Add the children of pid (every thread's, /proc/PID/task/TID/children),
 * and theirs, to out[*n..cap). */
static void session_descendants(uint32_t pid, uint32_t *out, size_t *n, size_t cap, int depth)
{
	char path[96], buf[4096];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL && *n < cap) {
		char *tok, *save = NULL;
		ssize_t len;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.20s/children", pid, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (tok = strtok_r(buf, " \n", &save); tok && *n < cap; tok = strtok_r(NULL, " \n", &save)) {
			uint32_t c = (uint32_t)strtoul(tok, NULL, 10);

			if (!c || !session_pid_alive(c))
				continue;
			out[(*n)++] = c;
			if (depth < 64)
				session_descendants(c, out, n, cap, depth + 1);
		}
	}
	closedir(d);
}

size_t session_running(uint32_t *out, size_t cap)
{
	size_t n = 0;

	session_descendants((uint32_t)getpid(), out, &n, cap, 0);
	return n;
}

void session_trim(const char *dir)
{
	DIR *d;
	struct dirent *e;
	char sub[PATH_MAX + 256];

	session_each(dir, 0, session_trim_file);
	/* The run is over: control sockets that a process could not remove
	 * (it ended with _exit, or its new credentials cannot write here). */
	snprintf(sub, sizeof(sub), "%s/%s", dir, CBN_CTL_DIR);
	session_clear(sub, 1);
	rmdir(sub);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!session_rank_dir(e->d_name))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		session_each(sub, 0, session_trim_file);
	}
	closedir(d);
}

void session_remove(const char *dir)
{
	char ctl[PATH_MAX];

	session_clear(dir, 1);
	/* Control sockets a killed process could not remove. */
	snprintf(ctl, sizeof(ctl), "%s/%s", dir, CBN_CTL_DIR);
	session_clear(ctl, 1);
	rmdir(ctl);
	rmdir(dir);
}

void session_notes_echo(const char *dir)
{
	char path[PATH_MAX + 16], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, CBN_NOTES_FILE);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');

		if (!tab)
			continue;
		*tab = '\0';
		fprintf(stderr, "cbottleneck: agent note: %s: %s%s", line, tab + 1,
			strchr(tab + 1, '\n') ? "" : "\n");
	}
	fclose(f);
}
