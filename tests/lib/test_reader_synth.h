/*
 * test_reader_synth.h — builds session files (.cbp) in memory for the reader and
 * loader tests, with cbn_format.h, the way the agent lays them out: header,
 * then chunks handed out in order, records appended and `used` published.
 */
#ifndef CBN_TEST_READER_SYNTH_H
#define CBN_TEST_READER_SYNTH_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/cbn_format.h"

struct synth {
	unsigned char *buf;
	size_t cap;
	uint32_t chunk_size;
	uint64_t next_chunk;   /* offset of the next free chunk */
	uint64_t cur;          /* offset of the chunk being filled, 0 if none */
	uint16_t cur_kind;
	uint32_t cur_tid;
	uint32_t seq;
};

static inline struct cbn_file_header *synth_hdr(struct synth *s)
{
	return (struct cbn_file_header *)s->buf;
}

static inline void synth_reserve(struct synth *s, size_t need)
{
	if (need <= s->cap)
		return;
	size_t ncap = s->cap ? s->cap : 65536;
	while (ncap < need)
		ncap *= 2;
	s->buf = realloc(s->buf, ncap);
	if (!s->buf)
		abort();
	memset(s->buf + s->cap, 0, ncap - s->cap);
	s->cap = ncap;
}

static inline void synth_init(struct synth *s, uint32_t pid, uint32_t ppid, uint32_t exec_seq,
			      uint32_t chunk_size, const char *exe)
{
	struct cbn_file_header *h;

	memset(s, 0, sizeof(*s));
	s->chunk_size = chunk_size ? chunk_size : CBN_CHUNK_SIZE;
	synth_reserve(s, CBN_HEADER_SIZE);
	h = synth_hdr(s);
	memcpy(h->magic, CBN_MAGIC, 8);
	h->version = CBN_FORMAT_VERSION;
	h->endian = CBN_ENDIAN_CHECK;
	h->header_size = CBN_HEADER_SIZE;
	h->chunk_size = s->chunk_size;
	h->data_offset = CBN_HEADER_SIZE;
	h->file_size = CBN_HEADER_SIZE;
	h->next_chunk = CBN_HEADER_SIZE;
	h->pid = pid;
	h->ppid = ppid;
	h->exec_seq = exec_seq;
	h->signo = 34;
	h->timer_kind = CBN_TIMER_POSIX_CPU;
	h->max_depth = 128;
	h->period_ns = 10000000;
	h->start_mono_ns = 1000000000ull;
	h->start_real_ns = 1700000000000000000ull;
	h->parent_pid_file = -1;
	h->end_mono_ns = 3000000000ull;
	{
		size_t n = strlen(exe);
		if (n >= sizeof(h->exe))
			n = sizeof(h->exe) - 1;
		memcpy(h->exe, exe, n);
	}
	h->cmdline_len = (uint32_t)strlen(exe) + 1;
	memcpy(h->cmdline, exe, h->cmdline_len);
	s->next_chunk = CBN_HEADER_SIZE;
}

/* Start a new chunk of kind for tid (SAMPLES) or 0 (EVENTS). */
static inline void synth_chunk(struct synth *s, uint16_t kind, uint32_t tid)
{
	struct cbn_chunk_header *ch;

	synth_reserve(s, s->next_chunk + s->chunk_size);
	s->cur = s->next_chunk;
	s->next_chunk += s->chunk_size;
	s->cur_kind = kind;
	s->cur_tid = tid;
	ch = (struct cbn_chunk_header *)(s->buf + s->cur);
	ch->magic = CBN_CHUNK_MAGIC;
	ch->kind = kind;
	ch->tid = tid;
	ch->seq = s->seq++;
	ch->used = 0;
	synth_hdr(s)->next_chunk = s->next_chunk;
	synth_hdr(s)->file_size = s->next_chunk;
}

/* Append a complete record (size a multiple of 8) to the current chunk,
 * opening a new one of the same kind when it is full. */
static inline void synth_rec(struct synth *s, const void *rec, uint32_t size)
{
	struct cbn_chunk_header *ch;

	if (!s->cur)
		synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	ch = (struct cbn_chunk_header *)(s->buf + s->cur);
	if (ch->used + size > s->chunk_size - sizeof(*ch)) {
		synth_chunk(s, s->cur_kind, s->cur_tid);
		ch = (struct cbn_chunk_header *)(s->buf + s->cur);
	}
	memcpy(s->buf + s->cur + sizeof(*ch) + ch->used, rec, size);
	ch->used += size;
}

static inline void synth_sample(struct synth *s, uint64_t ts, uint32_t weight,
				const uint64_t *pcs, uint16_t n, uint16_t flags)
{
	unsigned char b[sizeof(struct cbn_rec_sample) + CBN_MAX_FRAMES * 8];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;
	uint32_t size = (uint32_t)(sizeof(*r) + n * 8u);

	memset(b, 0, size);
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = flags;
	r->h.size = size;
	r->ts = ts;
	r->weight = weight;
	r->nframes = n;
	memcpy(r->pc, pcs, n * 8u);
	synth_rec(s, r, size);
	synth_hdr(s)->samples++;
}

/* A sample written shared (CBN_SAMPLE_SHARED): its own n words, then the
 * share naming base (the base record's offset from the chunk's first
 * record) and the kn native and kp Python words it takes from it. */
static inline void synth_sample_shared(struct synth *s, uint64_t ts, const uint64_t *own,
				       uint16_t n, uint32_t base, uint16_t kn, uint16_t kp)
{
	unsigned char b[sizeof(struct cbn_rec_sample) + CBN_MAX_FRAMES * 8 + 8];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;
	struct cbn_sample_share *sh = (struct cbn_sample_share *)(r->pc + n);
	uint32_t size = (uint32_t)(sizeof(*r) + n * 8u + sizeof(*sh));

	memset(b, 0, size);
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = CBN_SAMPLE_SHARED;
	r->h.size = size;
	r->ts = ts;
	r->weight = 1;
	r->nframes = n;
	memcpy(r->pc, own, n * 8u);
	sh->base = base;
	sh->native = kn;
	sh->python = kp;
	synth_rec(s, r, size);
	synth_hdr(s)->samples++;
}

/* A sample with kweight kw and nk kernel stacks: stack j has count[j] and
 * knf[j] frames kpc[j][0..] (leaf first); lost kernel samples. */
static inline void synth_sample_k(struct synth *s, uint64_t ts, uint32_t weight, uint16_t kw,
				  const uint64_t *pcs, uint16_t n, unsigned nk,
				  const uint32_t *count, const uint16_t *knf,
				  const uint64_t *const *kpc, uint32_t lost)
{
	unsigned char b[8192];
	struct cbn_rec_sample *r = (struct cbn_rec_sample *)b;
	struct cbn_kstacks *ks;
	size_t off;
	unsigned j;

	memset(b, 0, sizeof(b));
	r->h.type = CBN_REC_SAMPLE;
	r->h.flags = CBN_SAMPLE_KSTACKS;
	r->ts = ts;
	r->weight = weight;
	r->kweight = kw;
	r->nframes = n;
	memcpy(r->pc, pcs, n * 8u);
	off = sizeof(*r) + n * 8u;
	ks = (struct cbn_kstacks *)(b + off);
	ks->nstacks = (uint16_t)nk;
	ks->lost = lost;
	off += sizeof(*ks);
	for (j = 0; j < nk; j++) {
		struct cbn_kstack *k = (struct cbn_kstack *)(b + off);

		k->count = count[j];
		k->nframes = knf[j];
		memcpy(k->pc, kpc[j], knf[j] * 8u);
		off += sizeof(*k) + knf[j] * 8u;
	}
	r->h.size = (uint32_t)off;
	synth_rec(s, r, (uint32_t)off);
	synth_hdr(s)->samples++;
}

static inline void synth_thread(struct synth *s, uint16_t type, uint64_t ts, uint32_t tid,
				const char *name, uint64_t cpu_ns)
{
	struct cbn_rec_thread r;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
	r.h.size = sizeof(r);
	r.ts = ts;
	r.tid = tid;
	r.cpu_ns = cpu_ns;
	snprintf(r.name, sizeof(r.name), "%s", name ? name : "");
	synth_rec(s, &r, sizeof(r));
}

/* One executable segment [vaddr, vaddr+memsz) at file offset vaddr. */
static inline void synth_module(struct synth *s, uint16_t type, uint64_t ts, uint64_t base,
				uint32_t seq, const char *path, uint64_t vaddr, uint64_t memsz)
{
	unsigned char b[512];
	struct cbn_rec_module *m = (struct cbn_rec_module *)b;
	size_t plen = strlen(path);
	uint32_t size = (uint32_t)CBN_REC_ALIGN(sizeof(*m) + sizeof(struct cbn_segment) + plen + 1);

	memset(b, 0, sizeof(b));
	m->h.type = type;
	m->h.size = size;
	m->ts = ts;
	m->base = base;
	m->seq = seq;
	m->nseg = 1;
	m->seg[0].vaddr = vaddr;
	m->seg[0].memsz = memsz;
	m->seg[0].offset = vaddr;
	m->seg[0].flags = 5; /* PF_R | PF_X */
	m->path_len = (uint32_t)plen;
	memcpy((char *)&m->seg[1], path, plen + 1);
	synth_rec(s, m, size);
}

/* A record with a fixed part of fixed_size bytes and strings appended. */
static inline void synth_var(struct synth *s, const void *fixed, size_t fixed_size,
			     const char *s1, const char *s2)
{
	unsigned char b[4096];
	size_t n = fixed_size;

	memset(b, 0, sizeof(b));
	memcpy(b, fixed, fixed_size);
	if (s1) {
		memcpy(b + n, s1, strlen(s1) + 1);
		n += strlen(s1) + 1;
	}
	if (s2) {
		memcpy(b + n, s2, strlen(s2) + 1);
		n += strlen(s2) + 1;
	}
	n = CBN_REC_ALIGN(n);
	((struct cbn_rec *)b)->size = (uint32_t)n;
	synth_rec(s, b, (uint32_t)n);
}

/* A JIT_REGION record (CBN_JIT_* flags; name may be NULL), in the current
 * chunk; with nul 0 the name has no NUL after it (cbn_format.h allows it). */
static inline void synth_jit_region_nul(struct synth *s, uint64_t ts, uint64_t start,
					uint64_t len, uint16_t flags, const char *name, int nul)
{
	unsigned char b[sizeof(struct cbn_rec_jit_region) + 1024];
	struct cbn_rec_jit_region *r = (struct cbn_rec_jit_region *)b;
	size_t n = name ? strlen(name) : 0;
	uint32_t size;

	if (n > 1000)
		n = 1000;
	memset(b, 0, sizeof(b));
	size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + n + (nul ? 1 : 0));
	r->h.type = CBN_REC_JIT_REGION;
	r->h.flags = flags;
	r->h.size = size;
	r->ts = ts;
	r->start = start;
	r->len = len;
	r->name_len = (uint32_t)n;
	if (n)
		memcpy(r->name, name, n);
	synth_rec(s, r, size);
}

static inline void synth_jit_region(struct synth *s, uint64_t ts, uint64_t start, uint64_t len,
				    uint16_t flags, const char *name)
{
	synth_jit_region_nul(s, ts, start, len, flags, name, 1);
}

/* A CODE_FILE record: path mapped executable at [start, start+len) from
 * byte offset off of the file. */
static inline void synth_code_file(struct synth *s, uint64_t ts, uint64_t start, uint64_t len,
				   uint64_t off, const char *path)
{
	unsigned char b[sizeof(struct cbn_rec_code_file) + 1024];
	struct cbn_rec_code_file *r = (struct cbn_rec_code_file *)b;
	size_t n = strlen(path);
	uint32_t size;

	if (n > 1000)
		n = 1000;
	memset(b, 0, sizeof(b));
	size = (uint32_t)CBN_REC_ALIGN(sizeof(*r) + n + 1);
	r->h.type = CBN_REC_CODE_FILE;
	r->h.size = size;
	r->ts = ts;
	r->start = start;
	r->len = len;
	r->offset = off;
	r->name_len = (uint32_t)n;
	memcpy(r->name, path, n);
	synth_rec(s, r, size);
}

static inline void synth_exit(struct synth *s, uint64_t ts, int status)
{
	struct cbn_rec_exit r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_PROCESS_EXIT;
	r.h.size = sizeof(r);
	r.ts = ts;
	r.status = status;
	synth_rec(s, &r, sizeof(r));
	synth_hdr(s)->clean_exit = 1;
	synth_hdr(s)->exit_code = status;
}

static inline size_t synth_size(const struct synth *s)
{
	return (size_t)s->next_chunk;
}

static inline int synth_write(const struct synth *s, const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (fwrite(s->buf, 1, synth_size(s), f) != synth_size(s)) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static inline void synth_free(struct synth *s)
{
	free(s->buf);
	s->buf = NULL;
}

/* A file with at least one record of every type: 2 sample chunks (2 threads)
 * and event chunks.  Returns the number of records written (PAD excluded). */
static inline unsigned synth_all_types(struct synth *s, uint32_t chunk_size)
{
	uint64_t pcs[4] = {0x401100, 0x401200, 0x401300, 0x401400};
	unsigned n = 0;

	synth_init(s, 100, 1, 0, chunk_size, "/usr/bin/prog");
	synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	synth_module(s, CBN_REC_MODULE_LOAD, 1000, 0x400000, 0, "/usr/bin/prog", 0x1000, 0x2000); n++;
	synth_module(s, CBN_REC_MODULE_LOAD, 1001, 0x7f0000000000, 1, "/lib/libc.so.6", 0x0, 0x100000); n++;
	synth_thread(s, CBN_REC_THREAD_START, 1100, 100, "prog", 0); n++;
	synth_thread(s, CBN_REC_THREAD_START, 1200, 101, "worker", 0); n++;
	synth_thread(s, CBN_REC_THREAD_NAME, 1300, 101, "worker-1", 0); n++;
	{
		struct cbn_rec pad = {CBN_REC_PAD, 0, 16};
		unsigned char b[16] = {0};
		memcpy(b, &pad, sizeof(pad));
		synth_rec(s, b, 16);
	}
	{
		struct cbn_rec_range r;
		memset(&r, 0, sizeof(r));
		r.h.type = CBN_REC_RANGE;
		r.start = 2000; r.end = 3000; r.tid = 100; r.kind = CBN_RANGE_PUSHPOP;
		r.source = CBN_SRC_NVTX; r.domain_len = 3; r.name_len = 4;
		synth_var(s, &r, sizeof(r), "dom", "step"); n++;
	}
	{
		struct cbn_rec_cuda_api a;
		memset(&a, 0, sizeof(a));
		a.h.type = CBN_REC_CUDA_API;
		a.start = 2100; a.end = 2200; a.tid = 100; a.correlation = 7; a.cbid = 211;
		a.domain = CBN_CUDA_RUNTIME; a.name_len = 16;
		synth_var(s, &a, sizeof(a), "cudaLaunchKernel", NULL); n++;
	}
	{
		unsigned char b[sizeof(struct cbn_rec_cuda_stack) + 3 * 8];
		struct cbn_rec_cuda_stack *k = (struct cbn_rec_cuda_stack *)b;
		memset(b, 0, sizeof(b));
		k->h.type = CBN_REC_CUDA_STACK; k->h.size = sizeof(b);
		k->correlation = 7; k->tid = 100; k->nframes = 3;
		memcpy(k->pc, pcs + 1, 3 * 8);
		synth_rec(s, b, sizeof(b)); n++;
	}
	{
		struct cbn_rec_cuda_kernel k;
		memset(&k, 0, sizeof(k));
		k.h.type = CBN_REC_CUDA_KERNEL;
		k.start = 2300; k.end = 2900; k.correlation = 7; k.grid[0] = 64; k.block[0] = 256;
		k.registers = 32; k.name_len = 13;
		synth_var(s, &k, sizeof(k), "_Z6kernelPfi", NULL); n++;
	}
	{
		struct cbn_rec_cuda_memcpy m;
		memset(&m, 0, sizeof(m));
		m.h.type = CBN_REC_CUDA_MEMCPY; m.h.size = sizeof(m);
		m.start = 3000; m.end = 3100; m.bytes = 4096; m.copy_kind = CBN_COPY_HTOD;
		m.correlation = 8;
		synth_rec(s, &m, sizeof(m)); n++;
	}
	{
		struct cbn_rec_cuda_memset m;
		memset(&m, 0, sizeof(m));
		m.h.type = CBN_REC_CUDA_MEMSET; m.h.size = sizeof(m);
		m.start = 3200; m.end = 3300; m.bytes = 4096;
		synth_rec(s, &m, sizeof(m)); n++;
	}
	{
		struct cbn_rec_cuda_sync y;
		memset(&y, 0, sizeof(y));
		y.h.type = CBN_REC_CUDA_SYNC; y.h.size = sizeof(y);
		y.start = 3400; y.end = 3500; y.stream = 0xffffffffu;
		synth_rec(s, &y, sizeof(y)); n++;
	}
	{
		struct cbn_rec_cuda_overhead o;
		memset(&o, 0, sizeof(o));
		o.h.type = CBN_REC_CUDA_OVERHEAD; o.h.size = sizeof(o);
		o.start = 3600; o.end = 3700;
		synth_rec(s, &o, sizeof(o)); n++;
	}
	{
		struct cbn_rec_cuda_device d;
		memset(&d, 0, sizeof(d));
		d.h.type = CBN_REC_CUDA_DEVICE; d.id = 0; d.sm_count = 132; d.cc_major = 9;
		d.name_len = 4;
		synth_var(s, &d, sizeof(d), "H100", NULL); n++;
	}
	{
		struct cbn_rec_cuda_context c;
		memset(&c, 0, sizeof(c));
		c.h.type = CBN_REC_CUDA_CONTEXT; c.h.size = sizeof(c); c.context = 1;
		synth_rec(s, &c, sizeof(c)); n++;
	}
	{
		struct cbn_rec_cuda_memory m;
		memset(&m, 0, sizeof(m));
		m.h.type = CBN_REC_CUDA_MEMORY; m.h.size = sizeof(m); m.h.flags = 1;
		m.ts = 3800; m.address = 0x7000; m.bytes = 1 << 20;
		synth_rec(s, &m, sizeof(m)); n++;
	}
	{
		struct cbn_rec_unprofiled u;
		memset(&u, 0, sizeof(u));
		u.h.type = CBN_REC_UNPROFILED; u.ts = 3900; u.pid = 100;
		u.reason = CBN_UNPROF_NO_ACCESS; u.uid = u.euid = 65534;
		u.path_len = (uint32_t)strlen("/usr/bin/helper");
		synth_var(s, &u, sizeof(u), "/usr/bin/helper", NULL); n++;
	}
	{
		struct cbn_rec_cuda_status st;
		memset(&st, 0, sizeof(st));
		st.h.type = CBN_REC_CUDA_STATUS; st.state = CBN_CUDA_FINISHED; st.message_len = 2;
		synth_var(s, &st, sizeof(st), "ok", NULL); n++;
	}
	synth_jit_region(s, 4100, 0x7f1000000000, 0x1000, 0, NULL); n++;
	synth_jit_region(s, 4200, 0x7f2000000000, 0x8000, CBN_JIT_JITDUMP, "/tmp/jit-100.dump"); n++;
	synth_module(s, CBN_REC_MODULE_UNLOAD, 5000, 0x7f0000000000, 1, "/lib/libc.so.6", 0x0, 0x100000); n++;

	synth_chunk(s, CBN_CHUNK_SAMPLES, 100);
	for (int i = 0; i < 10; i++) {
		synth_sample(s, 1500 + (uint64_t)i, 1, pcs, 4, 0); n++;
	}
	synth_chunk(s, CBN_CHUNK_SAMPLES, 101);
	for (int i = 0; i < 5; i++) {
		synth_sample(s, 1600 + (uint64_t)i, 2, pcs + 1, 3, 0); n++;
	}
	synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	synth_thread(s, CBN_REC_THREAD_END, 4000, 101, "worker-1", 12345); n++;
	synth_exit(s, 6000, 0); n++;
	return n;
}

/* --- host memory (--memory) ----------------------------------------------- */

/* header.mem as the agent leaves it recording at rate (CBN_MEMF_* flags). */
static inline void synth_mem_on(struct synth *s, uint64_t rate, uint32_t flags)
{
	struct cbn_mem_state *m = &synth_hdr(s)->mem;

	m->state = CBN_MEM_ON;
	m->flags = flags | (rate == 1 ? CBN_MEMF_EXACT : 0);
	m->rate = rate;
}

/* A MEM_ALLOC in the current chunk (open a MEMORY chunk for tid first);
 * pcs: n return addresses, innermost first. */
static inline void synth_mem_alloc(struct synth *s, uint64_t ts, uint64_t addr, uint64_t size,
				   uint32_t tid, uint8_t kind, uint8_t fn, const uint64_t *pcs,
				   uint16_t n)
{
	unsigned char b[sizeof(struct cbn_rec_mem_alloc) + CBN_MAX_FRAMES * 8];
	struct cbn_rec_mem_alloc *r = (struct cbn_rec_mem_alloc *)b;
	uint32_t size8 = (uint32_t)(sizeof(*r) + n * 8u);

	memset(b, 0, size8);
	r->h.type = CBN_REC_MEM_ALLOC;
	r->h.size = size8;
	r->ts = ts;
	r->addr = addr;
	r->size = size;
	r->tid = tid;
	r->kind = kind;
	r->fn = fn;
	r->nframes = n;
	if (n)
		memcpy(r->pc, pcs, n * 8u);
	synth_rec(s, r, size8);
	synth_hdr(s)->mem.sampled++;
}

static inline void synth_mem_free(struct synth *s, uint64_t ts, uint64_t addr, uint64_t size,
				  uint32_t tid, uint8_t kind, uint8_t fn)
{
	struct cbn_rec_mem_free r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_MEM_FREE;
	r.h.size = sizeof(r);
	r.ts = ts;
	r.addr = addr;
	r.size = size;
	r.tid = tid;
	r.kind = kind;
	r.fn = fn;
	synth_rec(s, &r, sizeof(r));
}

/* A MEM_COUNTERS in the current chunk (an EVENTS chunk, as the agent writes it). */
static inline void synth_mem_counters(struct synth *s, uint64_t ts, uint64_t rss, int64_t live)
{
	struct cbn_rec_mem_counters r;

	memset(&r, 0, sizeof(r));
	r.h.type = CBN_REC_MEM_COUNTERS;
	r.h.size = sizeof(r);
	r.ts = ts;
	r.rss = rss;
	r.host_live = live;
	synth_rec(s, &r, sizeof(r));
}

/* Memory on and a few records of each host memory type after what s holds:
 * two MEMORY chunks (threads 100 and 101; a block freed by the other thread)
 * and counters in an EVENTS chunk.  Returns the number of records written. */
static inline unsigned synth_mem_types(struct synth *s)
{
	uint64_t pcs[3] = {0x401210, 0x401310, 0x401410};
	unsigned n = 0;

	synth_mem_on(s, 4096, CBN_MEMF_USABLE);
	synth_chunk(s, CBN_CHUNK_MEMORY, 100);
	synth_mem_alloc(s, 2500, 0x10000, 100000, 100, CBN_ALLOC_HEAP, CBN_AFN_MALLOC, pcs, 3); n++;
	synth_mem_alloc(s, 2600, 0x20000, 64, 100, CBN_ALLOC_HEAP, CBN_AFN_CALLOC, pcs + 1, 2); n++;
	synth_mem_free(s, 2700, 0x20000, 64, 100, CBN_ALLOC_HEAP, CBN_AFN_FREE); n++;
	synth_mem_alloc(s, 2800, 0x30000, 1 << 20, 100, CBN_ALLOC_MMAP, CBN_AFN_MMAP, NULL, 0); n++;
	synth_chunk(s, CBN_CHUNK_MEMORY, 101);
	synth_mem_free(s, 2900, 0x10000, 100000, 101, CBN_ALLOC_HEAP, CBN_AFN_FREE); n++;
	synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	synth_mem_counters(s, 2550, 200000, 100000); n++;
	synth_mem_counters(s, 2950, 300000, 1 << 20); n++;
	synth_hdr(s)->mem.host_peak = 1100000;
	synth_hdr(s)->mem.host_peak_ts = 2850;
	synth_hdr(s)->mem.rss_peak = 300000;
	synth_hdr(s)->mem.allocs = 3;
	synth_hdr(s)->mem.frees = 2;
	synth_hdr(s)->mem.alloc_bytes = 100064 + (1 << 20);
	return n;
}

/* The test executable itself as a module: its path, load bias, PT_LOAD
 * segments and executable range, so synthetic samples symbolize for real. */
struct synth_self {
	char path[4096];
	uint64_t base, lo, hi;          /* lo, hi: executable segment, runtime addresses */
	struct cbn_segment seg[CBN_MAX_SEGMENTS];
	uint16_t nseg;
};

static inline int synth_self_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct synth_self *m = ctx;
	int i;

	(void)size;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* the main program comes first, with an empty name */
	m->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum && m->nseg < CBN_MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		m->seg[m->nseg].vaddr = ph->p_vaddr;
		m->seg[m->nseg].memsz = ph->p_memsz;
		m->seg[m->nseg].offset = ph->p_offset;
		m->seg[m->nseg].flags = ph->p_flags;
		m->nseg++;
		if (ph->p_flags & PF_X) {
			m->lo = info->dlpi_addr + ph->p_vaddr;
			m->hi = m->lo + ph->p_memsz;
		}
	}
	return 1;
}

/* 0 when the executable's path and an executable segment were found. */
static inline int synth_self_find(struct synth_self *m)
{
	ssize_t n;

	memset(m, 0, sizeof(*m));
	n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
	if (n <= 0)
		return -1;
	dl_iterate_phdr(synth_self_cb, m);
	return m->nseg > 0 && m->hi > m->lo ? 0 : -1;
}

static inline uint64_t synth_rnd(uint64_t *rng)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return *rng;
}

/* The test executable (synth_self_find) as a MODULE_LOAD record at ts 10. */
static inline void synth_self_module(struct synth *s, const struct synth_self *me)
{
	unsigned char b[8192];
	struct cbn_rec_module *m = (struct cbn_rec_module *)b;
	size_t plen = strlen(me->path);
	uint32_t size = (uint32_t)CBN_REC_ALIGN(sizeof(*m) + me->nseg * sizeof(struct cbn_segment) +
						plen + 1);

	memset(b, 0, sizeof(b));
	m->h.type = CBN_REC_MODULE_LOAD;
	m->h.size = size;
	m->ts = 10;
	m->base = me->base;
	m->nseg = me->nseg;
	memcpy(m->seg, me->seg, me->nseg * sizeof(struct cbn_segment));
	m->path_len = (uint32_t)plen;
	memcpy((char *)&m->seg[me->nseg], me->path, plen + 1);
	synth_rec(s, m, size);
}

/* The all-types file (synth_all_types) plus the test executable as a module
 * (synth_self_find), with samples and allocations inside it so that
 * symbolization runs; rng: an xorshift state for the pcs. */
static inline void synth_all_with_self(struct synth *s, const struct synth_self *me,
				       uint64_t *rng)
{
	uint64_t pcs[6];
	int i;

	synth_all_types(s, 4096);
	synth_chunk(s, CBN_CHUNK_EVENTS, 0);
	synth_self_module(s, me);
	synth_chunk(s, CBN_CHUNK_SAMPLES, 102);
	for (i = 0; i < 40; i++) {
		for (int k = 0; k < 6; k++)
			pcs[k] = me->lo + 1 + synth_rnd(rng) % (me->hi - me->lo - 1);
		synth_sample(s, 2000 + (uint64_t)i, 1, pcs, (uint16_t)(1 + i % 6), 0);
	}
	/* host memory: allocations with stacks in this executable, frees, counters */
	synth_mem_types(s);
	synth_chunk(s, CBN_CHUNK_MEMORY, 102);
	for (i = 0; i < 20; i++) {
		for (int k = 0; k < 6; k++)
			pcs[k] = me->lo + 1 + synth_rnd(rng) % (me->hi - me->lo - 1);
		synth_mem_alloc(s, 3000 + (uint64_t)i, 0x50000 + 64 * (uint64_t)i, 1 + synth_rnd(rng) % 100000,
				102, CBN_ALLOC_HEAP, CBN_AFN_MALLOC, pcs, (uint16_t)(i % 7));
		if (i % 3 == 0)
			synth_mem_free(s, 3001 + (uint64_t)i, 0x50000 + 64 * (uint64_t)i, 0, 102,
				       CBN_ALLOC_HEAP, CBN_AFN_FREE);
	}
}

#endif
