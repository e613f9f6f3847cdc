/*
 * preflight.c — before anything runs: find the program the way execvp would,
 * and refuse, with one line saying why and what to do, the programs the agent
 * cannot get into: static executables (no PT_INTERP, so LD_PRELOAD is never
 * read) and setuid/setgid/file-capability ones (secure-execution mode ignores
 * LD_PRELOAD).  Scripts are checked through their #! interpreter.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"

#define PF_MSG "cbottleneck: "

#if defined(__x86_64__)
#define ELF_MACHINE_SELF EM_X86_64
#elif defined(__aarch64__)
#define ELF_MACHINE_SELF EM_AARCH64
#elif defined(__powerpc64__)
#define ELF_MACHINE_SELF EM_PPC64
#elif defined(__riscv)
#define ELF_MACHINE_SELF EM_RISCV
#else
#define ELF_MACHINE_SELF EM_NONE /* unknown here: do not check */
#endif


char preflight_static_name[PATH_MAX];

/* 1 static, 0 dynamic, 2 another architecture or 32-bit, -1 not ELF or
 * unreadable. */
static int elf_is_static(int fd)
{
	unsigned char id[EI_NIDENT];
	int i;

	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG) != 0)
		return -1;
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;
		Elf64_Phdr ph;
		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
		    eh.e_phentsize != sizeof(ph))
			return -1;
		if (ELF_MACHINE_SELF != EM_NONE && eh.e_machine != ELF_MACHINE_SELF)
			return 2;
		for (i = 0; i < eh.e_phnum; i++) {
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
			    (ssize_t)sizeof(ph))
				return -1;
			if (ph.p_type == PT_INTERP)
				return 0;
		}
		return 1;
	}
	if (id[EI_CLASS] == ELFCLASS32)
		return 2; /* the agent is a 64-bit library */
	return -1;
}

/* Search PATH like execvp: the first executable regular file wins; a match
 * that is not executable only counts if nothing better is found. */
static int path_search(const char *prog, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;
	char cand[PATH_MAX];
	int seen_noexec = 0;
	struct stat st;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path;; p = end + 1) {
		size_t n;
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		n = (size_t)(end - p);
		if (n == 0)
			snprintf(cand, sizeof(cand), "%s", prog); /* empty entry = cwd */
		else
			snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, prog);
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0) {
				snprintf(out, len, "%s", cand);
				return 0;
			}
			if (!seen_noexec) {
				snprintf(out, len, "%s", cand);
				seen_noexec = 1;
			}
		}
		if (*end == '\0')
			break;
	}
	return seen_noexec ? 0 : -1;
}

static int refuse_secure(const char *shown, const char *what, const char *copy)
{
	fprintf(stderr, PF_MSG "cannot profile %s: it is %s, and secure-execution mode ignores "
		"LD_PRELOAD, so the agent would not load; run a %s copy "
		"(cp %s /tmp/ and profile that)\n", shown, what, copy, shown);
	return CLI_EXIT_REFUSED;
}

static int check_file(const char *shown, const char *path, int depth);

/* A #! script: the interpreter is what really runs. */
static int check_script(const char *shown, int fd, int depth)
{
	char line[PATH_MAX + 3], interp[PATH_MAX];
	ssize_t n = pread(fd, line, sizeof(line) - 1, 0);
	char *p, *e;

	if (n < 2)
		return 0;
	line[n] = '\0';
	p = line + 2;
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strcspn(p, " \t\n");
	if (e == p)
		return 0; /* "#!" alone: the kernel refuses; let exec say so */
	snprintf(interp, sizeof(interp), "%.*s", (int)(e - p), p);
	if (access(interp, F_OK) != 0) {
		fprintf(stderr, PF_MSG "%s: bad interpreter %s: %s\n", shown, interp, strerror(errno));
		return CLI_EXIT_NOEXEC;
	}
	if (depth > 4)
		return 0;
	return check_file(interp, interp, depth + 1);
}

static int check_file(const char *shown, const char *path, int depth)
{
	struct stat st;
	char hdr[2];
	int fd, ret = 0, st_static;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			fprintf(stderr, PF_MSG "%s: no such file or directory\n", shown);
			return CLI_EXIT_NOTFOUND;
		}
		fprintf(stderr, PF_MSG "%s: %s\n", shown, strerror(errno));
		return CLI_EXIT_NOEXEC;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, PF_MSG "%s: is a directory, not a program\n", shown);
		return CLI_EXIT_NOEXEC;
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0 ||
	    !(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH))) {
		fprintf(stderr, PF_MSG "%s: permission denied (not an executable file); "
			"chmod +x it or run it through its interpreter\n", shown);
		return CLI_EXIT_NOEXEC;
	}
	if (st.st_mode & S_ISUID)
		return refuse_secure(shown, "setuid", "non-setuid");
	if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP))
		return refuse_secure(shown, "setgid", "non-setgid");
	if (getxattr(path, "security.capability", NULL, 0) > 0)
		return refuse_secure(shown, "granted file capabilities (security.capability)",
				     "capability-free");

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* executable but unreadable: exec will tell */
	if (pread(fd, hdr, 2, 0) == 2 && hdr[0] == '#' && hdr[1] == '!') {
		ret = check_script(shown, fd, depth);
		goto out;
	}
	st_static = elf_is_static(fd);
	if (st_static == 2) {
		fprintf(stderr, PF_MSG "cannot profile %s: it is built for another architecture "
			"or as 32-bit, and the agent is a 64-bit library of this machine's "
			"architecture, so the loader would skip it\n", shown);
		ret = CLI_EXIT_REFUSED;
	} else if (st_static == 1) {
		snprintf(preflight_static_name, sizeof(preflight_static_name), "%s", shown);
		ret = PREFLIGHT_STATIC;
	}
out:
	close(fd);
	return ret;
}

void preflight_static_refuse(const char *why)
{
	fprintf(stderr, PF_MSG "cannot profile %s: it is statically linked, so LD_PRELOAD "
		"cannot load the agent%s%s; rebuild it dynamically (Go: with cgo)\n",
		preflight_static_name, why ? ", which " : "", why ? why : "");
}

int preflight(const char *prog, char *resolved, size_t len)
{
	if (!prog || !*prog) {
		fprintf(stderr, PF_MSG "empty program name\n");
		return CLI_EXIT_NOTFOUND;
	}
	if (strchr(prog, '/')) {
		snprintf(resolved, len, "%s", prog);
	} else if (path_search(prog, resolved, len) < 0) {
		fprintf(stderr, PF_MSG "%s: command not found (searched PATH)\n", prog);
		return CLI_EXIT_NOTFOUND;
	}
	return check_file(prog, resolved, 0);
}
