/*
 * python_table.c — the code-object table of the agent's Python reading
 * (docs/agent.md section 17): each code object a stack holds gets a small id,
 * the same on every thread, made on first sight by the walker in the
 * handler (python_walk.c) and copied once by the copier (python_copy.c).
 * Lock-free and SIGNAL-SAFE (python_code_id); made once in normal context
 * (python_table_init, python_find.c).
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "cbn_pyread.h"
#include "floor.h"
#include "python_table.h"

/*
 * The code-object table: open addressing over 2^16 slots keyed by the
 * fingerprint (cbn_py_code_key: address and first header fields, so a code object
 * that died and whose address another one took gets a slot of its own), each
 * giving an id; ids index python_codes.  A slot is claimed by CAS on its key,
 * then its id is published (release); a reader that finds the key before the
 * id records id 0 (unknown) for that one frame.  Never shrinks; full at 3/4.
 */
#define PY_PROBES 64

/* The key of a retired slot: even, so no fingerprint's (cbn_py_code_key
 * sets bit 0); passed over like any other key, never claimed again. */
#define PY_KEY_RETIRED 2

struct py_slot {
	_Atomic uint64_t key;            /* 0: free */
	_Atomic uint32_t id;             /* 0: being published; UINT32_MAX: no id left */
	uint32_t pad;
};

static struct py_slot *py_slots;
struct py_code *python_codes;
_Atomic uint32_t python_ncodes;
_Atomic uint32_t python_gen = 1;
_Atomic uint32_t python_retired;

/* Normal context, once (python_find.c): the table, mapped NORESERVE so that
 * only the pages touched cost memory (2.5 MiB of address space). */
int python_table_init(void)
{
	size_t size = PY_TABLE_SIZE * sizeof(struct py_slot) +
		      (PY_CODES_CAP + 1) * sizeof(struct py_code);
	void *m;

	if (py_slots)
		return 0;
	m = (void *)agent_syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	python_codes = (struct py_code *)((char *)m + PY_TABLE_SIZE * sizeof(struct py_slot));
	py_slots = m;
	return 0;
}

static void py_fresh_add(struct py_fresh *f, uint32_t id)
{
	if (f->n < PY_FRESH)
		f->id[f->n++] = id;
}

/* SIGNAL-SAFE: the id of (code, key), made on first sight; 0 when the table
 * is full or the slot is being published by another thread this instant.
 * An id new to this generation goes into fresh (its names are copied). */
uint32_t python_code_id(uintptr_t code, uint64_t key, struct py_fresh *fresh)
{
	uint32_t i = (uint32_t)(key >> 17) & (PY_TABLE_SIZE - 1), n, id;
	uint32_t gen = atomic_load_explicit(&python_gen, memory_order_relaxed);
	struct cbn_file_header *h = agent.w.hdr;

	for (n = 0; n < PY_PROBES; n++, i = (i + 1) & (PY_TABLE_SIZE - 1)) {
		struct py_slot *s = &py_slots[i];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (k == 0) {
			if (!atomic_compare_exchange_strong(&s->key, &k, key) && k != key)
				continue; /* another key took it */
			if (k == 0) {
				/* ours: a new id */
				id = atomic_fetch_add(&python_ncodes, 1) + 1;
				if (id > PY_CODES_CAP) {
					atomic_store_explicit(&s->id, UINT32_MAX, memory_order_release);
					break;
				}
				python_codes[id].key = key;
				atomic_store_explicit(&python_codes[id].want, gen, memory_order_relaxed);
				atomic_store_explicit(&python_codes[id].addr, code, memory_order_release);
				atomic_store_explicit(&s->id, id, memory_order_release);
				py_fresh_add(fresh, id);
				return id;
			}
		} else if (k != key) {
			continue;
		}
		id = atomic_load_explicit(&s->id, memory_order_acquire);
		if (id == 0)
			return 0;
		if (id == UINT32_MAX)
			break;
		if (atomic_load_explicit(&python_codes[id].want, memory_order_relaxed) != gen) {
			/* a fork child's file does not have it yet */
			atomic_store_explicit(&python_codes[id].want, gen, memory_order_relaxed);
			py_fresh_add(fresh, id);
		} else if (atomic_load_explicit(&python_codes[id].copied, memory_order_relaxed) != gen) {
			/* its copy found no room, or is under way on another thread */
			py_fresh_add(fresh, id);
		}
		return id;
	}
	if (h)
		atomic_fetch_add_explicit(&h->python.table_full, 1, memory_order_relaxed);
	return 0;
}

void python_code_retire(uint64_t key, uint32_t id)
{
	uint32_t i = (uint32_t)(key >> 17) & (PY_TABLE_SIZE - 1), n;

	if (!py_slots)
		return;
	for (n = 0; n < PY_PROBES; n++, i = (i + 1) & (PY_TABLE_SIZE - 1)) {
		struct py_slot *s = &py_slots[i];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (k == 0)
			return;
		if (k == key && atomic_load_explicit(&s->id, memory_order_acquire) == id) {
			if (atomic_compare_exchange_strong(&s->key, &k, PY_KEY_RETIRED))
				atomic_fetch_add(&python_retired, 1);
			return;
		}
	}
}

/* A str's length and, when it is compact ASCII (names and paths nearly
 * always), its last 8 characters: what never changes in the object (its
 * cached hash may be computed between two looks). */
static uint64_t str_ident(const struct cbn_py_layout *L, uintptr_t s)
{
	uint64_t len, w = 0;
	uint32_t state;
	size_t n;

	if (!s)
		return 0;
	len = *(const uint64_t *)(s + L->uni_length);
	state = *(const uint32_t *)(s + L->uni_state);
	if ((state & 0x60) == 0x60 && len > 0 && len < (1u << 30)) {
		n = len < 8 ? (size_t)len : 8;
		memcpy(&w, (const char *)(s + L->uni_ascii_size) + len - n, n);
	}
	return (len * 0x9e3779b97f4a7c15ull) ^ w;
}

uint64_t python_code_ident(const struct cbn_py_layout *L, uintptr_t code)
{
	uint64_t x = *(const uint32_t *)(code + L->co_firstlineno);

	x = (x ^ str_ident(L, *(const uintptr_t *)(code + L->co_qualname))) * 0x9e3779b97f4a7c15ull;
	x = (x ^ str_ident(L, *(const uintptr_t *)(code + L->co_filename))) * 0xc2b2ae3d27d4eb4full;
	return x | 1;
}
