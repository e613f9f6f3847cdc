/*
 * mem_peak — a heap peak of a known size at a known line: peak_build()
 * allocates 64 blocks of 1 MiB (64 MiB, the line marked PEAK-SITE below),
 * touches them, frees them all, while churn() elsewhere keeps a few small
 * short-lived blocks (at most 64 KiB live) going before and after.  Usage:
 * mem_peak [MIB] (default 64).  Prints "peak MIB MiB" and exits 0.
 * Expected under --memory: host peak ≈ MIB MiB (plus well under 1 MiB of
 * churn and start-up), the peak's live bytes from PEAK-SITE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void churn(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		char *b[16];

		for (int i = 0; i < 16; i++) {
			b[i] = malloc(64 + (size_t)(i * 200));
			memset(b[i], i, 64);
		}
		for (int i = 0; i < 16; i++) {
			sink += (unsigned char)b[i][0];
			free(b[i]);
		}
	}
}

__attribute__((noinline)) static void peak_build(char **blocks, int n)
{
	for (int i = 0; i < n; i++) {
		blocks[i] = malloc(1 << 20); /* PEAK-SITE */
		if (!blocks[i])
			exit(1);
		memset(blocks[i], i, 1 << 20);
	}
}

__attribute__((noinline)) static void peak_release(char **blocks, int n)
{
	for (int i = 0; i < n; i++) {
		sink += (unsigned char)blocks[i][i];
		free(blocks[i]);
	}
}

int main(int argc, char **argv)
{
	int mib = argc > 1 ? atoi(argv[1]) : 64;
	char **blocks;

	if (mib < 1 || mib > 4096) {
		fprintf(stderr, "usage: mem_peak [MIB]\n");
		return 2;
	}
	blocks = calloc((size_t)mib, sizeof(*blocks));
	if (!blocks)
		return 1;
	churn(2000);
	peak_build(blocks, mib);
	churn(2000);
	peak_release(blocks, mib);
	churn(2000);
	free(blocks);
	printf("peak %d MiB\n", mib);
	return 0;
}
