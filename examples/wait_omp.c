/*
 * wait_omp — an OpenMP loop with a known imbalance: a team of 2 threads runs
 * ITERS rounds of a worksharing loop of two chunks where chunk 0 (thread 0)
 * does 3 units of work and chunk 1 (thread 1) 1 unit, in chunk_work().  At the
 * loop's implicit barrier thread 1 waits for 2 units of every round: with
 * libgomp's default wait policy (OMP_WAIT_POLICY unset) it first spins in the
 * runtime (GOMP_SPINCOUNT, 300 000 polls), then sleeps in a futex.  So about
 * a third of the team's CPU time is barrier spin in libgomp.  A unit is a fixed
 * amount of work (some 1-2 ms of CPU), so the imbalance holds on a loaded
 * machine.  Usage: wait_omp [ITERS] (default 100).  Prints a checksum, exits 0.
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define UNIT 1000000 /* LCG steps per unit of work */

__attribute__((noinline)) static uint64_t chunk_work(uint64_t seed, int units)
{
	uint64_t x = seed;

	for (long i = 0; i < (long)units * UNIT; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 && atol(argv[1]) > 0 ? atol(argv[1]) : 100;
	uint64_t sum[2] = {0, 0};

	omp_set_dynamic(0);
	omp_set_num_threads(2);
#pragma omp parallel num_threads(2)
	{
		for (long it = 0; it < iters; it++) {
#pragma omp for schedule(static, 1)
			for (int c = 0; c < 2; c++)
				sum[c] ^= chunk_work((uint64_t)it * 2 + (uint64_t)c, c == 0 ? 3 : 1);
		}
	}
	printf("wait_omp: %ld rounds, checksum %016llx\n", iters,
	       (unsigned long long)(sum[0] ^ sum[1]));
	return 0;
}
