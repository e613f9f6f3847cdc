/*
 * mem_churn — allocation churn in a hot loop: hot_loop() makes ROUNDS
 * million short-lived allocations of 16 to 496 bytes (the line marked
 * CHURN-SITE), each freed a few iterations later; at most 8 are live at a
 * time.  Usage: mem_churn [MILLIONS] (default 4).  Prints a checksum line
 * and exits 0.  The run-time ratio with and without --memory is the cost
 * of the allocation hooks (docs/agent.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static unsigned long hot_loop(long n)
{
	char *ring[8] = {0};
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		size_t size = 16 + (size_t)((i * 7) & 31) * 15;
		char *p = malloc(size); /* CHURN-SITE */

		if (!p)
			exit(1);
		p[0] = (char)i;
		sum += (unsigned char)p[0] + size;
		free(ring[i & 7]);
		ring[i & 7] = p;
	}
	for (int i = 0; i < 8; i++)
		free(ring[i]);
	return sum;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 4;

	if (millions < 1 || millions > 100000) {
		fprintf(stderr, "usage: mem_churn [MILLIONS]\n");
		return 2;
	}
	printf("checksum %lu\n", hot_loop(millions * 1000000L));
	return 0;
}
