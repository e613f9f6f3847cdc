/*
 * mem_usable.c — a program that relies on malloc_usable_size and malloc_trim:
 * for blocks of many sizes (small, large, mmapped, aligned, realloc'd) it
 * writes every usable byte and reads them back, checks the usable size is at
 * least what was asked, frees everything and trims the heap.  Must hold:
 * the same answers with the allocation hooks in front of malloc (their own
 * usable-size shortcut, their bootstrap blocks) as without.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostile.h"

#define N 4000

static void *blocks[N];
static size_t asked[N];

int main(void)
{
	size_t bad_usable = 0, bad_bytes = 0, total = 0;
	int i, trimmed;

	print_views("start");
	for (int round = 0; round < 20; round++) {
		for (i = 0; i < N; i++) {
			size_t s = (size_t)(i % 7 == 0 ? 1000 + i * 97 : 1 + (i * 31) % 600);
			if (i % 500 == 0)
				s = 300000 + (size_t)i; /* mmapped by glibc */
			if (i % 3 == 1) {
				if (posix_memalign(&blocks[i], 64, s))
					die("posix_memalign");
			} else {
				blocks[i] = malloc(s);
			}
			if (!blocks[i])
				die("malloc");
			if (i % 5 == 2) {
				s = s * 2 + 3;
				blocks[i] = realloc(blocks[i], s);
				if (!blocks[i])
					die("realloc");
			}
			asked[i] = s;
			size_t u = malloc_usable_size(blocks[i]);
			if (u < s)
				bad_usable++;
			memset(blocks[i], (int)(i & 0xff), u);
			total += u - s;
		}
		for (i = 0; i < N; i++) {
			size_t u = malloc_usable_size(blocks[i]);
			unsigned char *p = blocks[i];
			for (size_t k = 0; k < u; k += 61)
				bad_bytes += p[k] != (unsigned char)(i & 0xff);
			free(blocks[i]);
		}
	}
	(void)total;
	trimmed = malloc_trim(0);
	say("usable_size_short=%zu bytes_damaged=%zu trim_result_valid=%d null_usable=%zu\n",
	    bad_usable, bad_bytes, trimmed == 0 || trimmed == 1, malloc_usable_size(NULL));
	print_views("end");
	return bad_usable || bad_bytes ? 1 : 0;
}
