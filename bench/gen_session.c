/*
 * gen_session.c — writes a synthetic but valid session for timing the launcher's
 * reader, symbolizer and report: N sample records x F frames over the real
 * functions of this very binary (MODULE_LOAD with its real base, segments and
 * build-id, so symbolization is real), spread over 4 threads, plus session.json.
 * Usage: gen_session DIR [SAMPLES [FRAMES [RANKS [STRAGGLER]]]]   (default 1000000 x 30)
 *
 * With RANKS > 0 it writes a distributed run instead (docs/distributed.md):
 * one session file per rank in DIR/rank-NNNNN/, SAMPLES samples each, the
 * rank header filled as Open MPI's would be, four ranks per host ("node0",
 * "node1", ...), and per rank an MPI_Init, GEN_STEPS steps of compute then
 * MPI_Allreduce then a ring of MPI_Send/MPI_Recv, and MPI_Finalize.  Rank
 * STRAGGLER (-1 none) computes twice as long as the others, who wait for it
 * in the allreduce: with step length L the others compute 0.45 L and wait
 * 0.45 L per step, so the straggler computes 2.0x the median.  Ranks on
 * node0 share rank 0's clock; those on node h run GEN_SKEW_NS x h behind it
 * and carry CLOCK records (rtt GEN_RTT_NS) that say so.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cbn_format.h"
#include "cbn_mpi.h"

#define NTHREADS 4
#define NTEMPLATES 4096          /* distinct stack shapes; samples pick them Zipf-like */
#define PERIOD_NS 1000000ull     /* 1 kHz */
#define GEN_STEPS 10
#define GEN_RANKS_PER_HOST 4
#define GEN_SKEW_NS 5000000ll    /* node h's clock runs h x this behind node0's */
#define GEN_DRIFT_NS 2000ll      /* ... and drifts this much more by MPI_Finalize */
#define GEN_RTT_NS 20000ull      /* the ping-pong's round trip: uncertainty 10 us */
#define GEN_P2P_BYTES 4096u
#define GEN_ALLREDUCE_BYTES 800u

/* 256 small, distinct functions so stacks span a realistic number of symbols. */
#define GEN_FN(n)                                                                       \
	__attribute__((noinline, used)) unsigned long gen_fn_##n(unsigned long x)       \
	{                                                                               \
		for (int i = 0; i < (n % 7) + 2; i++)                                   \
			x = x * (2 * n + 1) + (x >> (n % 13 + 1));                      \
		return x ^ n;                                                           \
	}
#define GEN_FN4(n) GEN_FN(n##0) GEN_FN(n##1) GEN_FN(n##2) GEN_FN(n##3)
#define GEN_FN16(n) GEN_FN4(n##0) GEN_FN4(n##1) GEN_FN4(n##2) GEN_FN4(n##3)
#define GEN_FN64(n) GEN_FN16(n##0) GEN_FN16(n##1) GEN_FN16(n##2) GEN_FN16(n##3)
GEN_FN64(1) GEN_FN64(2) GEN_FN64(3) GEN_FN64(4)

struct func {
	uint64_t addr, size;         /* runtime address */
};

static struct func *funcs;
static size_t nfuncs;
static uint64_t main_addr, main_size;

struct self_module {
	uint64_t base;
	int nseg;
	struct cbn_segment seg[CBN_MAX_SEGMENTS];
	uint8_t build_id[CBN_BUILD_ID_MAX];
	int build_id_len;
};

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_module *m = arg;
	int i;

	(void)size;
	m->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && m->nseg < CBN_MAX_SEGMENTS) {
			m->seg[m->nseg].vaddr = ph->p_vaddr;
			m->seg[m->nseg].memsz = ph->p_memsz;
			m->seg[m->nseg].offset = ph->p_offset;
			m->seg[m->nseg].flags = ph->p_flags;
			m->nseg++;
		} else if (ph->p_type == PT_NOTE && !m->build_id_len) {
			const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
			const char *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
				const char *desc = p + sizeof(*n) + ((n->n_namesz + 3u) & ~3u);

				if (desc + n->n_descsz > end)
					break;
				if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4) {
					m->build_id_len = n->n_descsz < CBN_BUILD_ID_MAX
								  ? (int)n->n_descsz
								  : CBN_BUILD_ID_MAX;
					memcpy(m->build_id, desc, (size_t)m->build_id_len);
					break;
				}
				p = desc + ((n->n_descsz + 3u) & ~3u);
			}
		}
	}
	return 1; /* the executable comes first: stop there */
}

/* Every sized STT_FUNC of our own .symtab, at its runtime address. */
static int load_funcs(const char *exe, uint64_t base)
{
	FILE *f = fopen(exe, "rb");
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Sym *syms = NULL;
	char *strtab = NULL;
	size_t i, n;
	int ret = -1;

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || fseek(f, (long)eh.e_shoff, SEEK_SET) ||
	    fread(sh, sizeof(*sh), eh.e_shnum, f) != eh.e_shnum)
		goto out;
	for (i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		syms = malloc(sh[i].sh_size);
		strtab = malloc(sh[sh[i].sh_link].sh_size);
		if (!syms || !strtab || fseek(f, (long)sh[i].sh_offset, SEEK_SET) ||
		    fread(syms, sizeof(*syms), n, f) != n ||
		    fseek(f, (long)sh[sh[i].sh_link].sh_offset, SEEK_SET) ||
		    fread(strtab, 1, sh[sh[i].sh_link].sh_size, f) != sh[sh[i].sh_link].sh_size)
			goto out;
		funcs = calloc(n, sizeof(*funcs));
		if (!funcs)
			goto out;
		for (size_t k = 0; k < n; k++) {
			if (ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_size < 8 ||
			    !syms[k].st_value)
				continue;
			if (strcmp(strtab + syms[k].st_name, "main") == 0) {
				main_addr = base + syms[k].st_value;
				main_size = syms[k].st_size;
				continue;
			}
			funcs[nfuncs].addr = base + syms[k].st_value;
			funcs[nfuncs].size = syms[k].st_size;
			nfuncs++;
		}
		ret = nfuncs > 16 && main_addr ? 0 : -1;
		break;
	}
out:
	if (f)
		fclose(f);
	free(sh);
	free(syms);
	free(strtab);
	return ret;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, so every run writes the same session */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static uint64_t pc_in(const struct func *f, int ret_addr)
{
	/* a return address points after a call: never at the first byte */
	return f->addr + (ret_addr ? 1 + rnd() % (f->size - 1) : rnd() % f->size);
}

struct stack_tmpl {
	uint32_t func[CBN_MAX_FRAMES];
	uint64_t pc[CBN_MAX_FRAMES];
};

struct out {
	int fd;
	unsigned char chunk[CBN_CHUNK_SIZE];
	size_t used;                 /* bytes of records after the chunk header */
	uint32_t seq;
	uint64_t nchunks;
};

static int chunk_flush(struct out *o, uint16_t kind, uint32_t tid)
{
	struct cbn_chunk_header *ch = (struct cbn_chunk_header *)o->chunk;

	if (!o->used)
		return 0;
	memset(o->chunk + sizeof(*ch) + o->used, 0, sizeof(o->chunk) - sizeof(*ch) - o->used);
	ch->magic = CBN_CHUNK_MAGIC;
	ch->kind = kind;
	ch->reserved = 0;
	ch->tid = tid;
	ch->seq = o->seq++;
	atomic_store(&ch->used, o->used);
	if (write(o->fd, o->chunk, sizeof(o->chunk)) != (ssize_t)sizeof(o->chunk))
		return -1;
	o->used = 0;
	o->nchunks++;
	return 0;
}

static void *chunk_room(struct out *o, size_t size, uint16_t kind, uint32_t tid)
{
	void *p;

	if (sizeof(struct cbn_chunk_header) + o->used + size > sizeof(o->chunk) &&
	    chunk_flush(o, kind, tid) < 0)
		return NULL;
	p = o->chunk + sizeof(struct cbn_chunk_header) + o->used;
	memset(p, 0, size);
	o->used += size;
	return p;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What one file is: the plain session, or rank `rank` of `nranks`. */
struct gen_file {
	int32_t rank, nranks, straggler;
	uint32_t pid;
	int64_t skew;                /* reference clock - this file's clock */
};

static struct self_module self;
static char exe[1024];
static struct stack_tmpl *tmpl;

static struct cbn_rec_mpi *mpi_rec(struct out *o, uint16_t call, uint64_t start, uint64_t end,
				   uint32_t tid, size_t fi)
{
	size_t size = CBN_REC_ALIGN(sizeof(struct cbn_rec_mpi) + 2 * 8);
	struct cbn_rec_mpi *m = chunk_room(o, size, CBN_CHUNK_EVENTS, 0);

	if (!m)
		return NULL;
	m->h.type = CBN_REC_MPI;
	m->h.size = (uint32_t)size;
	m->start = start;
	m->end = end;
	m->tid = tid;
	m->call = call;
	m->nframes = 2;
	m->peer = CBN_MPI_PEER_NONE;
	/* the call site: a return address in one of our functions, then main */
	m->pc[0] = funcs[fi % nfuncs].addr + 1 + (funcs[fi % nfuncs].size - 1) / 2;
	m->pc[1] = main_addr + 1 + (main_size - 1) / 2;
	return m;
}

static int clock_rec(struct out *o, uint32_t when, uint64_t local, int64_t offset, uint64_t real)
{
	struct cbn_rec_clock *c = chunk_room(o, sizeof(*c), CBN_CHUNK_EVENTS, 0);

	if (!c)
		return -1;
	c->h.type = CBN_REC_CLOCK;
	c->h.size = sizeof(*c);
	c->h.flags = (uint16_t)when;
	c->local = local;
	c->offset = offset;
	c->rtt = GEN_RTT_NS;
	c->real = real;
	c->ref_rank = 0;
	c->rounds = 10;
	return 0;
}

/* The MPI calls of one rank (times on the reference clock, written on the
 * rank's own).  Returns the number of records, or -1. */
static int64_t mpi_calls(struct out *o, const struct gen_file *g, uint64_t ref_start,
			 uint64_t duration)
{
	uint64_t L = (duration - 2000000) / GEN_STEPS;
	uint64_t c = L * 45 / 100, xfer = L * 6 / 100, p2p = L - 2 * c - xfer;
	uint64_t w0 = ref_start + 1000000, sk = (uint64_t)g->skew, t;
	int32_t next = (g->rank + 1) % g->nranks, prev = (g->rank + g->nranks - 1) % g->nranks;
	struct cbn_rec_mpi *m;
	int64_t n = 0;
	unsigned k;

	if (!(m = mpi_rec(o, CBN_MPI_Init, ref_start - sk, w0 - sk, g->pid, 1)))
		return -1;
	n++;
	for (k = 0; k < GEN_STEPS; k++) {
		uint64_t tk = w0 + k * L, mine = g->rank == g->straggler ? 2 * c : c;
		/* without a straggler everyone computes c and leaves together */
		uint64_t last = g->straggler >= 0 ? 2 * c : c;

		if (!(m = mpi_rec(o, CBN_MPI_Allreduce, tk + mine - sk, tk + last + xfer - sk, g->pid,
				  2)))
			return -1;
		m->comm = 0;
		m->comm_size = g->nranks;
		m->seq = k + 1;
		m->bytes_sent = m->bytes_recv = GEN_ALLREDUCE_BYTES;
		t = tk + last + xfer;
		if (g->nranks > 1) {
			if (!(m = mpi_rec(o, CBN_MPI_Send, t - sk, t + p2p / 2 - sk, g->pid, 3)))
				return -1;
			m->peer = next;
			m->tag = 7;
			m->comm_size = g->nranks;
			m->bytes_sent = GEN_P2P_BYTES;
			if (!(m = mpi_rec(o, CBN_MPI_Recv, t + p2p / 2 - sk, t + p2p - sk, g->pid, 4)))
				return -1;
			m->peer = prev;
			m->tag = 7;
			m->comm_size = g->nranks;
			m->bytes_recv = GEN_P2P_BYTES;
			n += 2;
		}
		n++;
	}
	t = w0 + GEN_STEPS * L;
	if (!(m = mpi_rec(o, CBN_MPI_Finalize, t - sk, t + 500000 - sk, g->pid, 5)))
		return -1;
	return n + 1;
}

/* One session file at path.  Returns 0 or -1 (errno). */
static int write_file(const char *path, const struct gen_file *g, uint64_t ref_start,
		      uint64_t nsamples, unsigned nframes)
{
	static struct out o;
	static struct cbn_file_header h;
	uint64_t start = ref_start - (uint64_t)g->skew, ts, s;
	uint64_t duration = (nsamples / NTHREADS + 1) * PERIOD_NS;
	uint32_t pid = g->pid;
	int64_t nmpi = 0;
	unsigned t;

	memset(&o, 0, sizeof(o));
	memset(&h, 0, sizeof(h));
	o.fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (o.fd < 0 || lseek(o.fd, CBN_HEADER_SIZE, SEEK_SET) < 0)
		return -1;

	/* Events chunk: the module, the threads, the exit. */
	{
		size_t size = CBN_REC_ALIGN(sizeof(struct cbn_rec_module) +
					    (size_t)self.nseg * sizeof(struct cbn_segment) +
					    strlen(exe) + 1);
		struct cbn_rec_module *r = chunk_room(&o, size, CBN_CHUNK_EVENTS, 0);
		struct cbn_rec_exit *x;

		r->h.type = CBN_REC_MODULE_LOAD;
		r->h.size = (uint32_t)size;
		r->ts = start;
		r->base = self.base;
		r->nseg = (uint16_t)self.nseg;
		r->build_id_len = (uint16_t)self.build_id_len;
		memcpy(r->build_id, self.build_id, (size_t)self.build_id_len);
		r->path_len = (uint32_t)strlen(exe);
		memcpy(r->seg, self.seg, (size_t)self.nseg * sizeof(struct cbn_segment));
		memcpy((char *)&r->seg[self.nseg], exe, strlen(exe) + 1);
		for (t = 0; t < NTHREADS; t++) {
			struct cbn_rec_thread *th = chunk_room(&o, sizeof(*th), CBN_CHUNK_EVENTS, 0);

			th->h.type = CBN_REC_THREAD_START;
			th->h.size = sizeof(*th);
			th->ts = start;
			th->tid = pid + t;
			th = chunk_room(&o, sizeof(*th), CBN_CHUNK_EVENTS, 0);
			th->h.type = CBN_REC_THREAD_NAME;
			th->h.size = sizeof(*th);
			th->ts = start;
			th->tid = pid + t;
			snprintf(th->name, sizeof(th->name), t ? "worker-%u" : "gen_session", t);
		}
		x = chunk_room(&o, sizeof(*x), CBN_CHUNK_EVENTS, 0);
		x->h.type = CBN_REC_PROCESS_EXIT;
		x->h.size = sizeof(*x);
		x->ts = start + nsamples / NTHREADS * PERIOD_NS;
		if (g->rank >= 0) {
			if (g->skew && (clock_rec(&o, CBN_CLOCK_AT_INIT, start, g->skew,
						  (uint64_t)time(NULL) * 1000000000ull) < 0 ||
					clock_rec(&o, CBN_CLOCK_AT_FINALIZE, start + duration,
						  g->skew + GEN_DRIFT_NS * (g->skew / GEN_SKEW_NS),
						  (uint64_t)time(NULL) * 1000000000ull) < 0))
				return -1;
			if ((nmpi = mpi_calls(&o, g, ref_start, duration)) < 0)
				return -1;
		}
		if (chunk_flush(&o, CBN_CHUNK_EVENTS, 0) < 0)
			return -1;
	}

	/* Samples: each thread fills its own chunks, as the agent does. */
	for (t = 0; t < NTHREADS; t++) {
		uint64_t mine = nsamples / NTHREADS + (t < nsamples % NTHREADS);
		uint32_t tid = pid + t;
		size_t size = CBN_REC_ALIGN(sizeof(struct cbn_rec_sample) + nframes * 8u);

		ts = start;
		for (s = 0; s < mine; s++) {
			struct cbn_rec_sample *r = chunk_room(&o, size, CBN_CHUNK_SAMPLES, tid);
			uint64_t z = rnd();
			/* Zipf-ish: half the samples in the 32 hottest stacks */
			unsigned k = (unsigned)(z & 1 ? (z >> 1) % 32 : (z >> 1) % NTEMPLATES);

			if (!r)
				return -1;
			ts += PERIOD_NS;
			r->h.type = CBN_REC_SAMPLE;
			r->h.size = (uint32_t)size;
			r->ts = ts;
			r->weight = 1;
			r->nframes = (uint16_t)nframes;
			memcpy(r->pc, tmpl[k].pc, nframes * sizeof(r->pc[0]));
			r->pc[0] = pc_in(&funcs[tmpl[k].func[0]], 0);
		}
		if (chunk_flush(&o, CBN_CHUNK_SAMPLES, tid) < 0)
			return -1;
	}
	/* The threads end with the CPU time their samples stand for. */
	for (t = 0; t < NTHREADS; t++) {
		struct cbn_rec_thread *th = chunk_room(&o, sizeof(*th), CBN_CHUNK_EVENTS, 0);

		if (!th)
			return -1;
		th->h.type = CBN_REC_THREAD_END;
		th->h.size = sizeof(*th);
		th->ts = start + duration;
		th->tid = pid + t;
		th->cpu_ns = (nsamples / NTHREADS + (t < nsamples % NTHREADS)) * PERIOD_NS;
	}
	if (chunk_flush(&o, CBN_CHUNK_EVENTS, 0) < 0)
		return -1;

	memcpy(h.magic, CBN_MAGIC, sizeof(h.magic));
	h.version = CBN_FORMAT_VERSION;
	h.endian = CBN_ENDIAN_CHECK;
	h.header_size = CBN_HEADER_SIZE;
	h.chunk_size = CBN_CHUNK_SIZE;
	h.data_offset = CBN_HEADER_SIZE;
	atomic_store(&h.file_size, CBN_HEADER_SIZE + o.nchunks * CBN_CHUNK_SIZE);
	atomic_store(&h.next_chunk, CBN_HEADER_SIZE + o.nchunks * CBN_CHUNK_SIZE);
	h.pid = pid;
	h.ppid = (uint32_t)getppid();
	h.signo = SIGPROF;
	h.timer_kind = CBN_TIMER_POSIX_CPU;
	h.max_depth = CBN_MAX_FRAMES;
	h.period_ns = PERIOD_NS;
	h.start_mono_ns = start;
	/* one real-time clock across hosts: the CLOCK_REALTIME fallback would
	 * find the same skew */
	h.start_real_ns = (uint64_t)time(NULL) * 1000000000ull + (uint64_t)g->skew;
	h.parent_pid_file = -1;
	atomic_store(&h.end_mono_ns, start + duration);
	atomic_store(&h.clean_exit, 1);
	atomic_store(&h.samples, nsamples);
	snprintf(h.exe, sizeof(h.exe), "%s", exe);
	h.cmdline_len = (uint32_t)snprintf(h.cmdline, sizeof(h.cmdline), "gen_session") + 1;
	if (g->rank >= 0) {
		struct cbn_rank_state *rs = &h.rank;

		atomic_store(&rs->rank, g->rank);
		rs->local_rank = g->rank % GEN_RANKS_PER_HOST;
		atomic_store(&rs->world_size, g->nranks);
		atomic_store(&rs->source, CBN_RANK_OMPI);
		snprintf(rs->host, sizeof(rs->host), "node%d", g->rank / GEN_RANKS_PER_HOST);
		atomic_store(&rs->mpi, CBN_MPI_FINALIZED);
		rs->mpi_impl = CBN_MPI_IMPL_OPENMPI;
		snprintf(rs->mpi_version, sizeof(rs->mpi_version), "Open MPI v4.1.4 (synthetic)");
		atomic_store(&rs->mpi_calls, (uint64_t)nmpi);
	}
	if (pwrite(o.fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || close(o.fd) < 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	unsigned nframes = argc > 3 ? (unsigned)atoi(argv[3]) : 30;
	int32_t nranks = argc > 4 ? atoi(argv[4]) : 0;
	int32_t straggler = argc > 5 ? atoi(argv[5]) : -1;
	uint64_t start = mono_now();
	uint64_t duration = (nsamples / NTHREADS + 1) * PERIOD_NS;
	ssize_t n;
	FILE *meta;
	unsigned t, i;

	if (argc < 2 || nsamples == 0 || nframes < 2 || nframes > CBN_MAX_FRAMES || nranks < 0 ||
	    (nranks && duration < 20000000)) {
		fprintf(stderr, "usage: gen_session DIR [SAMPLES [FRAMES [RANKS [STRAGGLER]]]] "
			"(ranks need SAMPLES >= 100)\n");
		return 2;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		perror("gen_session: /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	dl_iterate_phdr(phdr_cb, &self);
	if (load_funcs(exe, self.base) < 0) {
		fprintf(stderr, "gen_session: cannot read the symbol table of %s (build with -g, "
			"not stripped)\n", exe);
		return 1;
	}
	if (mkdir(argv[1], 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "gen_session: cannot create %s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	/* Stack templates: a path of call sites from main down, fixed per template
	 * as real return addresses are; a few templates are hot (Zipf-like pick
	 * below) and only the leaf pc varies from sample to sample. */
	tmpl = calloc(NTEMPLATES, sizeof(*tmpl));
	if (!tmpl)
		return 1;
	for (i = 0; i < NTEMPLATES; i++) {
		for (t = 0; t + 1 < nframes; t++) {
			size_t fi = i % 64 < 48 ? (i * 7 + t * 13) % (nfuncs < 64 ? nfuncs : 64)
						: rnd() % nfuncs;

			tmpl[i].func[t] = (uint32_t)fi;
			tmpl[i].pc[t] = pc_in(&funcs[fi], 1);
		}
		tmpl[i].pc[nframes - 1] = main_addr + 1 + rnd() % (main_size - 1);
	}

	if (nranks > 0) {
		for (int32_t r = 0; r < nranks; r++) {
			/* pids repeat across hosts, as on a real cluster */
			struct gen_file g = {r, nranks, straggler,
					     100000u + (uint32_t)(r % GEN_RANKS_PER_HOST) * 8u,
					     GEN_SKEW_NS * (r / GEN_RANKS_PER_HOST)};

			snprintf(path, sizeof(path), "%s/rank-%05d", argv[1], (int)r);
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				goto io_error;
			snprintf(path, sizeof(path), "%s/rank-%05d/%u.0%s", argv[1], (int)r, g.pid,
				 CBN_FILE_EXT);
			if (write_file(path, &g, start, nsamples, nframes) < 0)
				goto io_error;
		}
		printf("gen_session: %d ranks x %llu samples x %u frames, straggler %d, in %s\n",
		       (int)nranks, (unsigned long long)nsamples, nframes, (int)straggler, argv[1]);
		free(tmpl);
		return 0;
	}

	{
		struct gen_file g = {-1, 0, -1, (uint32_t)getpid(), 0};

		snprintf(path, sizeof(path), "%s/%d.0%s", argv[1], (int)getpid(), CBN_FILE_EXT);
		if (write_file(path, &g, start, nsamples, nframes) < 0)
			goto io_error;
	}
	snprintf(path, sizeof(path), "%s/session.json", argv[1]);
	meta = fopen(path, "w");
	if (!meta)
		goto io_error;
	fprintf(meta, "{\"cbottleneck_session\":1,\"argv\":[\"gen_session\"],\"exit_status\":0,"
		"\"exit_signal\":0,\"start_mono_ns\":%llu,\"end_mono_ns\":%llu,\"wall_ns\":%llu,"
		"\"frequency_hz\":1000}\n",
		(unsigned long long)start, (unsigned long long)(start + duration),
		(unsigned long long)duration);
	if (fclose(meta) != 0)
		goto io_error;
	printf("gen_session: %llu samples x %u frames over %zu functions of %s\n",
	       (unsigned long long)nsamples, nframes, nfuncs + 1, exe);
	free(tmpl);
	return 0;
io_error:
	fprintf(stderr, "gen_session: cannot write the session in %s: %s\n", argv[1],
		strerror(errno));
	return 1;
}
