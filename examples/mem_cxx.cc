/*
 * mem_cxx — C++ allocation through operator new/delete: single objects,
 * arrays, over-aligned objects (aligned new), nothrow new, and std::vector
 * growth (its buffer reallocated by doubling).  Usage: mem_cxx [ROUNDS]
 * (default 1000).  Prints "ok SUM" and exits 0.  Expected under --memory
 * --memory-rate 1: a MEM_ALLOC for each new, every one freed.
 */
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

struct alignas(64) Wide {
	double v[8];
};

__attribute__((noinline)) static long objects(int rounds)
{
	long sum = 0;

	for (int i = 0; i < rounds; i++) {
		int *one = new int(i);
		char *arr = new char[256 + i % 64];
		Wide *w = new Wide();
		Wide *wa = new Wide[4];
		int *nt = new (std::nothrow) int[16];

		arr[0] = (char)i;
		w->v[0] = i;
		wa[3].v[7] = i;
		sum += *one + arr[0] + (long)w->v[0] + (long)wa[3].v[7] + (nt ? 1 : 0);
		delete one;
		delete[] arr;
		delete w;
		delete[] wa;
		delete[] nt;
	}
	return sum;
}

__attribute__((noinline)) static long vectors(int rounds)
{
	long sum = 0;

	for (int i = 0; i < rounds; i++) {
		std::vector<long> v;
		for (int k = 0; k < 1000; k++)
			v.push_back(k); /* VECTOR-SITE: doubling reallocations */
		sum += v[999];
	}
	return sum;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? std::atoi(argv[1]) : 1000;

	if (rounds < 1 || rounds > 10000000) {
		std::fprintf(stderr, "usage: mem_cxx [ROUNDS]\n");
		return 2;
	}
	std::printf("ok %ld\n", objects(rounds) + vectors(rounds));
	return 0;
}
