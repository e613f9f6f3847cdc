/*
 * mem_leak — leaks a known number of bytes from one site: leak_some() keeps
 * COUNT blocks of 1 KiB (default 8192: 8 MiB) and never frees them (the
 * line marked LEAK-SITE); balanced() allocates and frees as much again
 * elsewhere.  Usage: mem_leak [COUNT].  Prints "leaked N bytes", exits 0.
 * Expected under --memory: live at exit ≈ COUNT KiB, all from LEAK-SITE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile keep;

__attribute__((noinline)) static void leak_some(int count)
{
	for (int i = 0; i < count; i++) {
		char *p = malloc(1024); /* LEAK-SITE */
		if (!p)
			exit(1);
		memset(p, 1, 16);
		keep = p; /* the pointer is dropped: leaked */
	}
}

__attribute__((noinline)) static void balanced(int count)
{
	for (int i = 0; i < count; i++) {
		char *p = malloc(1024);
		if (!p)
			exit(1);
		memset(p, 2, 16);
		keep = p;
		free(p);
	}
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 8192;

	if (count < 0 || count > 1 << 24) {
		fprintf(stderr, "usage: mem_leak [COUNT]\n");
		return 2;
	}
	balanced(count);
	leak_some(count);
	balanced(count);
	printf("leaked %ld bytes\n", (long)count * 1024);
	return 0;
}
