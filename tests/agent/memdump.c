/*
 * memdump.c — the memory tests' reader: reads one .cbp file with the format
 * reader (src/format/reader.h) and prints what the allocation hooks and the
 * background thread wrote as "key=value" lines: header.mem, counts of
 * MEM_ALLOC/MEM_FREE/MEM_COUNTERS records, frees matched to an allocation,
 * frees made by another thread than the allocation's, bytes still live.
 * Usage: memdump FILE.cbp.  Exit 0 read, 1 damaged, 2 usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbn_format.h"
#include "reader.h"

/* Addresses of sampled blocks still live (open addressing, grows). */
struct live {
	uint64_t addr, size, pc0;
	uint32_t tid;
	int used;
};

struct ev {
	uint64_t ts, addr, size, pc0;
	uint32_t tid;
	int is_free;
};

struct modl {
	uint64_t lo, hi, base;
	char path[512];
};

struct st {
	struct ev *ev;
	size_t nev, evcap;
	struct modl mods[256];
	int nmods;
	struct live *tab;
	size_t cap, n;
	uint64_t allocs, frees, counters, matched, cross, with_stack, alloc_bytes;
	uint64_t heap, mmap, brk, frames;
	uint64_t rss_max, last_live, last_allocs, exit_seen, bad_chunk;
	int64_t exit_status;
};

static size_t slot(const struct st *s, uint64_t a)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull) & (s->cap - 1);
}

static void grow(struct st *s);

static void put(struct st *s, uint64_t a, uint64_t size, uint32_t tid, uint64_t pc0)
{
	size_t i;

	if ((s->n + 1) * 2 > s->cap)
		grow(s);
	for (i = slot(s, a); s->tab[i].used; i = (i + 1) & (s->cap - 1))
		if (s->tab[i].addr == a)
			break;
	if (!s->tab[i].used)
		s->n++;
	s->tab[i] = (struct live){a, size, pc0, tid, 1};
}

static void grow(struct st *s)
{
	struct live *old = s->tab;
	size_t oc = s->cap, i;

	s->cap = oc ? oc * 2 : 1024;
	s->tab = calloc(s->cap, sizeof(*s->tab));
	if (!s->tab) {
		fprintf(stderr, "memdump: out of memory\n");
		exit(2);
	}
	s->n = 0;
	for (i = 0; i < oc; i++)
		if (old[i].used)
			put(s, old[i].addr, old[i].size, old[i].tid, old[i].pc0);
	free(old);
}

/* Remove a; returns its entry's tid + 1, 0 when absent (deletion by
 * re-inserting the rest of the cluster). */
static uint32_t take(struct st *s, uint64_t a)
{
	size_t i, j;
	uint32_t tid;

	if (!s->cap)
		return 0;
	for (i = slot(s, a); s->tab[i].used; i = (i + 1) & (s->cap - 1)) {
		if (s->tab[i].addr != a)
			continue;
		tid = s->tab[i].tid;
		s->tab[i].used = 0;
		s->n--;
		for (j = (i + 1) & (s->cap - 1); s->tab[j].used; j = (j + 1) & (s->cap - 1)) {
			struct live e = s->tab[j];
			s->tab[j].used = 0;
			s->n--;
			put(s, e.addr, e.size, e.tid, e.pc0);
		}
		return tid + 1;
	}
	return 0;
}

static void add_ev(struct st *s, struct ev e)
{
	if (s->nev == s->evcap) {
		s->evcap = s->evcap ? s->evcap * 2 : 4096;
		s->ev = realloc(s->ev, s->evcap * sizeof(*s->ev));
		if (!s->ev) {
			fprintf(stderr, "memdump: out of memory\n");
			exit(2);
		}
	}
	s->ev[s->nev++] = e;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->is_free - y->is_free;
}

static int cb(void *ctx, const struct reader_rec *r)
{
	struct st *s = ctx;

	switch (r->type) {
	case CBN_REC_MODULE_LOAD: {
		const struct cbn_rec_module *m = (const void *)r->raw;
		struct modl *d;
		uint16_t i;
		if (s->nmods >= 256 || !r->str)
			break;
		d = &s->mods[s->nmods++];
		d->base = m->base;
		d->lo = UINT64_MAX;
		d->hi = 0;
		for (i = 0; i < m->nseg; i++) {
			if (m->base + m->seg[i].vaddr < d->lo)
				d->lo = m->base + m->seg[i].vaddr;
			if (m->base + m->seg[i].vaddr + m->seg[i].memsz > d->hi)
				d->hi = m->base + m->seg[i].vaddr + m->seg[i].memsz;
		}
		snprintf(d->path, sizeof(d->path), "%s", r->str);
		break;
	}
	case CBN_REC_MEM_ALLOC: {
		const struct cbn_rec_mem_alloc *m = (const void *)r->raw;
		s->allocs++;
		s->alloc_bytes += m->size;
		s->frames += m->nframes;
		if (m->nframes > 0)
			s->with_stack++;
		if (m->kind == CBN_ALLOC_HEAP)
			s->heap++;
		else if (m->kind == CBN_ALLOC_MMAP)
			s->mmap++;
		else if (m->kind == CBN_ALLOC_BRK)
			s->brk++;
		if (r->chunk_kind != CBN_CHUNK_MEMORY || r->chunk_tid != m->tid)
			s->bad_chunk++;
		if (m->kind != CBN_ALLOC_BRK)
			add_ev(s, (struct ev){m->ts, m->addr, m->size, m->nframes ? m->pc[0] : 0,
					      m->tid, 0});
		break;
	}
	case CBN_REC_MEM_FREE: {
		const struct cbn_rec_mem_free *f = (const void *)r->raw;
		s->frees++;
		add_ev(s, (struct ev){f->ts, f->addr, f->size, 0, f->tid, 1});
		if (r->chunk_kind != CBN_CHUNK_MEMORY || r->chunk_tid != f->tid)
			s->bad_chunk++;
		break;
	}
	case CBN_REC_MEM_COUNTERS: {
		const struct cbn_rec_mem_counters *c = (const void *)r->raw;
		s->counters++;
		if (c->rss > s->rss_max)
			s->rss_max = c->rss;
		s->last_live = (uint64_t)c->host_live;
		s->last_allocs = c->allocs;
		break;
	}
	case CBN_REC_PROCESS_EXIT: {
		const struct cbn_rec_exit *e = (const void *)r->raw;
		s->exit_seen = 1;
		s->exit_status = e->status;
		break;
	}
	}
	return 0;
}

/* The first frame that allocated the most bytes, as MODULE+0xADDR (the
 * call instruction's address for addr2line -e MODULE), and its share of the
 * bytes allocated. */
static int u64_pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void top_site(const struct st *s, const char *key, int live)
{
	uint64_t best = 0, best_bytes = 0, total = 0, *pairs;
	size_t i, n = 0, max = live ? s->cap : s->nev;
	int k;

	pairs = calloc(max + 1, 2 * sizeof(uint64_t));
	if (!pairs)
		return;
	for (i = 0; i < max; i++) {
		uint64_t pc, size;

		if (live ? !s->tab[i].used : s->ev[i].is_free)
			continue;
		pc = live ? s->tab[i].pc0 : s->ev[i].pc0;
		size = live ? s->tab[i].size : s->ev[i].size;
		total += size;
		if (pc) {
			pairs[2 * n] = pc;
			pairs[2 * n + 1] = size;
			n++;
		}
	}
	qsort(pairs, n, 2 * sizeof(uint64_t), u64_pair_cmp);
	for (i = 0; i < n;) {
		uint64_t pc = pairs[2 * i], bytes = 0;

		for (; i < n && pairs[2 * i] == pc; i++)
			bytes += pairs[2 * i + 1];
		if (bytes > best_bytes) {
			best_bytes = bytes;
			best = pc;
		}
	}
	free(pairs);
	for (k = 0; k < s->nmods; k++) {
		if (best >= s->mods[k].lo && best < s->mods[k].hi) {
			printf("%s=%s+0x%" PRIx64 "\n", key, s->mods[k].path,
			       best - 1 - s->mods[k].base);
			break;
		}
	}
	printf("%s_share=%.3f\n", key, total ? (double)best_bytes / (double)total : 0.0);
}

int main(int argc, char **argv)
{
	struct reader_file f;
	struct reader_result res;
	struct st s;
	const struct cbn_mem_state *m;
	uint64_t live_bytes = 0;
	size_t i;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: memdump FILE.cbp\n");
		return 2;
	}
	memset(&s, 0, sizeof(s));
	ret = reader_open(argv[1], &f, &res);
	if (ret) {
		fprintf(stderr, "memdump: %s: %s\n", argv[1], res.reason);
		return 1;
	}
	reader_walk(&f, cb, &s, &res);
	/* Threads' chunks interleave in time: replay in timestamp order. */
	if (s.nev)
		qsort(s.ev, s.nev, sizeof(*s.ev), ev_cmp);
	for (i = 0; i < s.nev; i++) {
		const struct ev *e = &s.ev[i];
		uint32_t t;

		if (!e->is_free) {
			put(&s, e->addr, e->size, e->tid, e->pc0);
			continue;
		}
		t = take(&s, e->addr);
		if (t) {
			s.matched++;
			if (t - 1 != e->tid)
				s.cross++;
		}
	}
	top_site(&s, "top_site", 0);
	top_site(&s, "top_live_site", 1);
	for (i = 0; i < s.cap; i++)
		if (s.tab[i].used)
			live_bytes += s.tab[i].size;
	m = &f.hdr.mem;
	printf("pid=%u\n", f.hdr.pid);
	printf("mem.state=%u\nmem.flags=%u\nmem.rate=%" PRIu64 "\n", m->state, m->flags, m->rate);
	printf("mem.host_live=%" PRId64 "\nmem.mmap_live=%" PRId64 "\n", m->host_live, m->mmap_live);
	printf("mem.host_peak=%" PRIu64 "\nmem.host_peak_ts=%" PRIu64 "\n", m->host_peak,
	       m->host_peak_ts);
	printf("mem.rss_peak=%" PRIu64 "\nmem.allocs=%" PRIu64 "\nmem.frees=%" PRIu64 "\n",
	       m->rss_peak, m->allocs, m->frees);
	printf("mem.alloc_bytes=%" PRIu64 "\nmem.sampled=%" PRIu64 "\nmem.lost=%" PRIu64 "\n",
	       m->alloc_bytes, m->sampled, m->lost);
	printf("mem.untracked=%" PRIu64 "\nmem.no_stack=%" PRIu64 "\nmem.brk_start=%" PRIu64 "\n",
	       m->untracked, m->no_stack, m->brk_start);
	printf("mem.reason=%.*s\n", (int)(m->reason_len < sizeof(m->reason) ? m->reason_len : 0),
	       m->reason);
	printf("allocs=%" PRIu64 "\nfrees=%" PRIu64 "\nmatched=%" PRIu64 "\ncross=%" PRIu64 "\n",
	       s.allocs, s.frees, s.matched, s.cross);
	printf("with_stack=%" PRIu64 "\nframes=%" PRIu64 "\nheap=%" PRIu64 "\nmmap=%" PRIu64
	       "\nbrk=%" PRIu64 "\n", s.with_stack, s.frames, s.heap, s.mmap, s.brk);
	printf("alloc_bytes=%" PRIu64 "\nlive_records=%zu\nlive_bytes=%" PRIu64 "\n",
	       s.alloc_bytes, s.n, live_bytes);
	printf("counters=%" PRIu64 "\nrss_max=%" PRIu64 "\nbad_chunk=%" PRIu64 "\n", s.counters,
	       s.rss_max, s.bad_chunk);
	printf("exit_seen=%" PRIu64 "\nexit_status=%" PRId64 "\ndamaged=%d\n", s.exit_seen,
	       s.exit_status, res.damaged);
	free(s.tab);
	free(s.ev);
	reader_close(&f);
	return res.damaged ? 1 : 0;
}
