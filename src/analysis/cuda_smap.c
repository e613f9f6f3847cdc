/*
 * cuda_smap.c — the string → index map the CUDA analysis groups records with
 * (by name, by launch site): open addressing, FNV-1a, keys not copied.
 */
#include <string.h>

#include "cuda_int.h"

static uint64_t cuda_smap_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int cuda_smap_rehash(struct cuda_smap *m, size_t ncap)
{
	const char **keys = calloc(ncap, sizeof(*keys));
	uint32_t *vals = calloc(ncap, sizeof(*vals));
	size_t i, j;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		for (j = cuda_smap_hash(m->keys[i]) & (ncap - 1); keys[j]; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	return 0;
}

uint32_t cuda_smap_get(struct cuda_smap *m, const char *key, uint32_t val, int *added)
{
	size_t j;

	*added = 0;
	if ((m->n + 1) * 2 > m->cap && cuda_smap_rehash(m, m->cap ? m->cap * 2 : 64))
		return CUDA_NO_IDX;
	for (j = cuda_smap_hash(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key || strcmp(m->keys[j], key) == 0)
			return m->vals[j];
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	*added = 1;
	return val;
}

void cuda_smap_free(struct cuda_smap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
