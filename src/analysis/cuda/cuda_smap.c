/*
 * cuda_smap.c — the string → index map the CUDA analysis groups records with
 * (by name, by launch site): util's hash index over FNV-1a, keys not copied.
 */
#include <string.h>

#include "cuda_int.h"

struct smap_probe {
	const struct cuda_smap *m;
	const char *key;
};

static int smap_eq(const void *ctx, uint32_t e)
{
	const struct smap_probe *pr = ctx;
	const char *k = pr->m->ent[e].key;

	return k == pr->key || strcmp(k, pr->key) == 0;
}

uint32_t cuda_smap_get(struct cuda_smap *m, const char *key, uint32_t val, int *added)
{
	struct smap_probe pr = { m, key };
	uint64_t h = util_fnv1a_str(key, UTIL_FNV_INIT);
	uint32_t e = util_map_find(&m->map, h, smap_eq, &pr);

	*added = 0;
	if (e != UINT32_MAX)
		return m->ent[e].val;
	if (m->n >= UINT32_MAX - 1 || util_grow((void **)&m->ent, &m->cap, m->n, sizeof(*m->ent)) ||
	    util_map_put(&m->map, h, (uint32_t)m->n))
		return CUDA_NO_IDX;
	m->ent[m->n].key = key;
	m->ent[m->n].val = val;
	m->n++;
	*added = 1;
	return val;
}

uint32_t cuda_smap_find(const struct cuda_smap *m, const char *key)
{
	struct smap_probe pr = { m, key };
	uint32_t e = util_map_find(&m->map, util_fnv1a_str(key, UTIL_FNV_INIT), smap_eq, &pr);

	return e != UINT32_MAX ? m->ent[e].val : CUDA_NO_IDX;
}

void cuda_smap_free(struct cuda_smap *m)
{
	util_map_free(&m->map);
	free(m->ent);
	memset(m, 0, sizeof(*m));
}
