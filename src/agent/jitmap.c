/*
 * jitmap.c — where the program makes code outside every module (JIT
 * compilers: oneDNN's xbyak kernels, LuaJIT, V8, CPython's perf trampolines),
 * for the launcher to name those pcs (docs/symbols.md, "Code without unwind
 * information").  mmap, mmap64 and mprotect are interposed: memory that
 * becomes executable outside the modules of the snapshot is a JIT_REGION
 * record (cbn_format.h); munmap, or mprotect without PROT_EXEC, over such a
 * region, a GONE one.  A file the program maps executable whose name is
 * jit-PID.dump is a jitdump (perf's convention: the mapping is how perf finds
 * it), recorded with its path; any other file mapped executable is a
 * CODE_FILE record with its path and offset (V8 maps its builtins from its
 * own binary a second time), so the launcher names its pcs as the module's.
 * The ranges are kept in jittab.c's lock-free table, so that a fork child's
 * new file gets them again (jitmap_replay: a file's path and offset from
 * /proc/self/maps) and an unmapped file range is said GONE.
 *
 * Only the program's own calls come here (the loader and libc map through
 * internal entry points); with --memory the allocation hooks' mmap passes on
 * to this one.  Normal context, but safe if a handler of the program's maps:
 * no lock, no allocation.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "floor.h"
#include "jitmap.h"
#include "jittab.h"
#include "modules.h"
#include "unwind.h"

static void jit_record(uint64_t start, uint64_t len, uint16_t flags, const char *name)
{
	struct {
		struct cbn_rec_jit_region r;
		char name[256];
	} rec;
	size_t n = name ? strnlen(name, sizeof(rec.name)) : 0;

	if (!atomic_load_explicit(&agent.active, memory_order_relaxed))
		return;
	memset(&rec.r, 0, sizeof(rec.r));
	rec.r.h.type = CBN_REC_JIT_REGION;
	rec.r.h.flags = flags;
	rec.r.h.size = (uint32_t)CBN_REC_ALIGN(sizeof(rec.r) + n);
	rec.r.ts = agent_now();
	rec.r.start = start;
	rec.r.len = len;
	rec.r.tid = agent_gettid();
	rec.r.name_len = (uint32_t)n;
	if (n)
		memcpy(rec.name, name, n);
	memset(rec.name + n, 0, rec.r.h.size - sizeof(rec.r) - n);
	agent_event(&rec, rec.r.h.size);
}

/* [start, start+len) is no longer executable: GONE for each remembered
 * region it overlaps (the overlap), and a region wholly inside forgotten. */
static void jit_forget(uint64_t start, uint64_t len)
{
	int i, file, used = jittab_used();

	for (i = 0; i < used; i++) {
		uint64_t s, l, lo, hi;

		if (!jittab_slot(i, &s, &l, &file) || s >= start + len || start >= s + l)
			continue;
		lo = s > start ? s : start;
		hi = s + l < start + len ? s + l : start + len;
		jit_record(lo, hi - lo, CBN_JIT_GONE, NULL);
		if (lo == s && hi == s + l)
			jittab_drop(i, s);
	}
}

/* A new executable range: a JIT region unless it lies in a module (text
 * relocations, a program's own mprotect of its code). */
static void jit_exec(uint64_t start, uint64_t len)
{
	int in_module = 0;

	if (!len)
		return;
	/* the snapshot is read as an unwind reads it: not freed meanwhile */
	if (unwind_begin(0)) {
		in_module = modules_snap_exec((uintptr_t)start);
		unwind_end();
	}
	if (in_module)
		return;
	jittab_remember(start, len, 0);
	jit_record(start, len, 0, NULL);
}

/* A file mapped executable by the program: the CODE_FILE record (path: n
 * bytes, at most 1024 kept). */
static void code_file_record(uint64_t start, uint64_t len, uint64_t off, const char *path,
			     size_t n)
{
	struct {
		struct cbn_rec_code_file r;
		char name[1024 + 8];
	} rec;

	if (!atomic_load_explicit(&agent.active, memory_order_relaxed) || !len)
		return;
	if (n > 1024)
		n = 1024;
	memset(&rec.r, 0, sizeof(rec.r));
	rec.r.h.type = CBN_REC_CODE_FILE;
	rec.r.h.size = (uint32_t)CBN_REC_ALIGN(sizeof(rec.r) + n + 1); /* a NUL after it */
	rec.r.ts = agent_now();
	rec.r.start = start;
	rec.r.len = len;
	rec.r.offset = off;
	rec.r.tid = agent_gettid();
	rec.r.name_len = (uint32_t)n;
	memcpy(rec.name, path, n);
	memset(rec.name + n, 0, rec.r.h.size - sizeof(rec.r) - n);
	agent_event(&rec, rec.r.h.size);
}

static void jit_code_file(uint64_t start, uint64_t len, uint64_t off, const char *path, size_t n)
{
	if (!atomic_load_explicit(&agent.active, memory_order_relaxed) || !len)
		return;
	jittab_remember(start, len, 1);
	code_file_record(start, len, off, path, n);
}

/* A file mapped executable: a jitdump when its name says so, else a
 * CODE_FILE. */
static void jit_file(int fd, uint64_t start, uint64_t len, uint64_t off)
{
	char link[64], path[1024];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (!strncmp(base, "jit-", 4) && strlen(base) > 9 && !strcmp(base + strlen(base) - 5, ".dump"))
		jit_record(start, len, CBN_JIT_JITDUMP, path);
	else
		jit_code_file(start, len, off, path, (size_t)n);
}

static void jit_after_map(void *p, size_t len, int prot, int flags, int fd, uint64_t off)
{
	int e = errno;

	if (p == MAP_FAILED || !(prot & PROT_EXEC))
		return;
	if ((flags & MAP_ANONYMOUS) || fd < 0)
		jit_exec((uint64_t)(uintptr_t)p, len);
	else
		jit_file(fd, (uint64_t)(uintptr_t)p, len, off);
	errno = e;
}

/* The next definitions (libc's), found at start-up: a program's signal
 * handler may map, and dlsym is no call for a handler.  Before that (another
 * library's constructor), the system calls themselves. */
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_mprotect)(void *, size_t, int);
static int (*real_munmap)(void *, size_t);

void jitmap_init(void)
{
	*(void **)&real_mmap = agent_real("mmap");
	*(void **)&real_mprotect = agent_real("mprotect");
	*(void **)&real_munmap = agent_real("munmap");
}

__attribute__((visibility("default"))) void *mmap(void *addr, size_t len, int prot, int flags,
						   int fd, off_t off)
{
	void *p;

	if (real_mmap)
		p = real_mmap(addr, len, prot, flags, fd, off);
	else {
		long r = agent_syscall(SYS_mmap, addr, len, prot, flags, fd, off);

		p = r == -1 ? MAP_FAILED : (void *)r;
	}
	if (prot & PROT_EXEC)
		jit_after_map(p, len, prot, flags, fd, (uint64_t)off);
	return p;
}

__attribute__((visibility("default"))) void *mmap64(void *addr, size_t len, int prot, int flags,
						     int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

__attribute__((visibility("default"))) int mprotect(void *addr, size_t len, int prot)
{
	int r, e;

	r = real_mprotect ? real_mprotect(addr, len, prot)
			  : (int)agent_syscall(SYS_mprotect, addr, len, prot);
	if (r == 0) {
		e = errno;
		if (prot & PROT_EXEC)
			jit_exec((uint64_t)(uintptr_t)addr, len);
		else if (jittab_used())
			jit_forget((uint64_t)(uintptr_t)addr, len);
		errno = e;
	}
	return r;
}

__attribute__((visibility("default"))) int munmap(void *addr, size_t len)
{
	int r, e;

	r = real_munmap ? real_munmap(addr, len)
			: (int)agent_syscall(SYS_munmap, addr, len);
	if (r == 0 && jittab_used()) {
		e = errno;
		jit_forget((uint64_t)(uintptr_t)addr, len);
		errno = e;
	}
	return r;
}

/* One line of /proc/self/maps ("lo-hi perms offset dev inode path"): a
 * CODE_FILE for each part of it that a file range of the table holds.  The
 * table keeps no path, so a fork child's file ranges come from the mappings
 * its /proc/self/maps shows there now (split or merged as the kernel keeps
 * them), with the path and offset they have. */
static int replay_line(char *line, void *arg)
{
	char *end;
	const char *perms, *path;
	uint64_t lo, hi, off;
	int i, file, used = jittab_used(), field;

	(void)arg;
	lo = strtoull(line, &end, 16);
	if (*end != '-')
		return 0;
	hi = strtoull(end + 1, &end, 16);
	perms = end + 1;
	if (*end != ' ' || strnlen(perms, 4) < 4 || perms[2] != 'x')
		return 0;
	off = strtoull(perms + 4, &end, 16);
	/* then dev, inode, and the path after the spaces that align it */
	path = end;
	for (field = 0; field < 2; field++) {
		while (*path == ' ')
			path++;
		while (*path && *path != ' ')
			path++;
	}
	while (*path == ' ')
		path++;
	if (*path != '/')
		return 0;
	for (i = 0; i < used; i++) {
		uint64_t s, l, a, b;

		if (!jittab_slot(i, &s, &l, &file) || !file || s >= hi || lo >= s + l)
			continue;
		a = s > lo ? s : lo;
		b = s + l < hi ? s + l : hi;
		code_file_record(a, b - a, off + (a - lo), path, strlen(path));
	}
	return 0;
}

/* A fork child's new file: the regions and the files' ranges it inherited. */
void jitmap_replay(void)
{
	int i, file, files = 0, used = jittab_used();
	uint64_t s, l;

	for (i = 0; i < used; i++) {
		if (!jittab_slot(i, &s, &l, &file))
			continue;
		if (file)
			files++;
		else
			jit_record(s, l, 0, NULL);
	}
	if (files)
		agent_maps_each(replay_line, NULL);
}
