/*
 * jitmap.c — executable memory made the ways a JIT makes it, for agent_test.sh
 * jitmap (jitmap.c's records):
 *   A: mmap RW, then mprotect RX (xbyak, LuaJIT), later unmapped;
 *   B: mmap RWX at once, kept;
 *   C: mmap RW, mprotect RX, then mprotect RW again (no longer code);
 *   a page of the program's own text made RX again (in a module: no region);
 *   a file named jit-PID.dump mapped PROT_EXEC (perf's jitdump convention);
 *   E: the second page of its own executable mapped PROT_EXEC again (as V8
 *      maps its builtins), kept;
 *   a failing munmap and mprotect keep their errno;
 *   a fork child, which prints B's address (its file must hold B and E again).
 * Prints the addresses it made on stderr ("A=0x... B=0x... C=0x...", then
 * "E=0x... PATH"), and "jitmap: ok".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void spin(void)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < 20000000ul; i++)
		x += i;
}

int main(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *a, *b, *c, *text;
	char path[64], exe[4096];
	void *d, *e;
	ssize_t n;
	pid_t pid;
	int fd, st;

	a = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, pg, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED)
		return 2;
	if (mprotect(a, 2 * pg, PROT_READ | PROT_EXEC) || mprotect(c, pg, PROT_READ | PROT_EXEC) ||
	    mprotect(c, pg, PROT_READ | PROT_WRITE))
		return 3;
	text = (unsigned char *)((uintptr_t)&main & ~(uintptr_t)(pg - 1));
	if (mprotect(text, pg, PROT_READ | PROT_EXEC))
		return 4;
	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)pg))
		return 5;
	d = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	if (d == MAP_FAILED)
		return 6;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 11;
	exe[n] = '\0';
	fd = open(exe, O_RDONLY);
	if (fd < 0)
		return 12;
	e = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)pg);
	close(fd);
	if (e == MAP_FAILED)
		return 13;
	errno = 0;
	if (munmap((void *)1, pg) == 0 || errno != EINVAL)
		return 7;
	errno = 0;
	if (mprotect((void *)3, pg, PROT_READ) == 0 || errno != EINVAL)
		return 8;
	spin();
	if (munmap(a, 2 * pg))
		return 9;
	fprintf(stderr, "A=%p B=%p C=%p\n", (void *)a, (void *)b, (void *)c);
	fprintf(stderr, "E=%p %s\n", e, exe);
	pid = fork();
	if (pid == 0) {
		spin();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 10;
	printf("jitmap: ok\n");
	return 0;
}
