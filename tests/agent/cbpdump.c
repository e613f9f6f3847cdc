/*
 * cbpdump.c — standalone checker for the agent tests: reads one .cbp file with
 * cbn_format.h alone (every length checked), prints counts as "key=value" lines,
 * and with -m MODULE=NMFILE attributes samples to functions by `nm -S` output.
 * Usage: cbpdump [-m basename=nmfile]... FILE.cbp
 * Exit: 0 file read, 1 damaged (counts printed from what was intact), 2 usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "cbn_format.h"
#include "cbn_mpi.h"
#include "cbn_share.h"

#define MAXT 1024
#define MAXM 512
#define MAXS 20000

struct thr {
	uint32_t tid;
	uint64_t samples, weight, cpu_ns;
	int started, ended;
	char name[CBN_NAME_MAX];
};

struct mod {
	char path[1024];
	uint64_t base;
	int unloaded;
};

struct sym {
	char mod[256];
	uint64_t lo, hi;
	char name[128];
	uint64_t self, total;
};

static struct thr thr[MAXT];
static int nthr;
static struct mod mods[MAXM];
static int nmods;
static struct sym syms[MAXS];
static int nsyms;
static int damaged;
/* MPI records per call: count and bytes (distributed runs). */
static uint64_t mpi_n[CBN_MPI_CALL_MAX], mpi_sent[CBN_MPI_CALL_MAX], mpi_recv[CBN_MPI_CALL_MAX];
static uint64_t mpi_records, clock_records;
static unsigned frames_max;

static struct thr *thr_get(uint32_t tid)
{
	int i;

	for (i = 0; i < nthr; i++)
		if (thr[i].tid == tid)
			return &thr[i];
	if (nthr == MAXT)
		return &thr[MAXT - 1];
	thr[nthr].tid = tid;
	return &thr[nthr++];
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void load_nm(const char *spec)
{
	char modname[256], line[512], name[256], type[8];
	unsigned long long a, sz;
	const char *eq = strchr(spec, '=');
	FILE *f;

	if (!eq || eq - spec >= (long)sizeof(modname)) {
		fprintf(stderr, "cbpdump: bad -m %s\n", spec);
		exit(2);
	}
	memcpy(modname, spec, (size_t)(eq - spec));
	modname[eq - spec] = 0;
	f = fopen(eq + 1, "r");
	if (!f) {
		perror(eq + 1);
		exit(2);
	}
	while (fgets(line, sizeof(line), f) && nsyms < MAXS) {
		if (sscanf(line, "%llx %llx %7s %255s", &a, &sz, type, name) != 4)
			continue;
		if (type[0] != 'T' && type[0] != 't')
			continue;
		snprintf(syms[nsyms].mod, sizeof(syms[nsyms].mod), "%s", modname);
		syms[nsyms].lo = a;
		syms[nsyms].hi = a + sz;
		snprintf(syms[nsyms].name, sizeof(syms[nsyms].name), "%.127s", name);
		nsyms++;
	}
	fclose(f);
}

/* Module alive (by path) containing pc, as (basename, link-time address). */
static struct sym *sym_find(uint64_t pc)
{
	int i, j;

	for (i = 0; i < nmods; i++) {
		const char *b = base_name(mods[i].path);
		uint64_t rel = pc - mods[i].base;

		for (j = 0; j < nsyms; j++)
			if (strcmp(syms[j].mod, b) == 0 && rel >= syms[j].lo && rel < syms[j].hi)
				return &syms[j];
	}
	return NULL;
}

/*
 * Capture windows (CAPTURE records), collected by a first pass over the event
 * chunks, so that samples and ranges can be checked against them: "outside"
 * counts those more than WIN_SLACK_NS from every window (a sample that began
 * in a window is stamped when its unwind ends, a few microseconds later).
 */
#define MAXW 4096
#define WIN_SLACK_NS 1000000ull
#define WIN_TIDS 16
static struct {
	uint64_t open, close;            /* close: UINT64_MAX while open */
	uint64_t samples;
	uint32_t tid[WIN_TIDS];          /* threads sampled in it (the first WIN_TIDS) */
	int ntid;
} win[MAXW];
static int nwin, capture_seen;
static uint64_t samples_outside, ranges_outside, steps_outside;

static void win_add(const struct cbn_rec_capture *c)
{
	if (c->event == CBN_CAPTURE_OPEN && nwin < MAXW) {
		win[nwin].open = c->ts;
		win[nwin++].close = UINT64_MAX;
	} else if (c->event == CBN_CAPTURE_CLOSE && nwin && win[nwin - 1].close == UINT64_MAX) {
		win[nwin - 1].close = c->ts;
	}
}

/* The window ts lies in, or -1 (or -2 when the file has no CAPTURE record). */
static int win_find(uint64_t ts)
{
	int i;

	if (!capture_seen)
		return -2;
	for (i = 0; i < nwin; i++)
		if (ts + WIN_SLACK_NS >= win[i].open &&
		    (win[i].close == UINT64_MAX || ts <= win[i].close + WIN_SLACK_NS))
			return i;
	return -1;
}

static int win_inside(uint64_t ts)
{
	return win_find(ts) != -1;
}

/* A sample in window i from thread tid: per-window counts. */
static void win_sample(int i, uint32_t tid)
{
	int j;

	if (i < 0)
		return;
	win[i].samples++;
	for (j = 0; j < win[i].ntid; j++)
		if (win[i].tid[j] == tid)
			return;
	if (win[i].ntid < WIN_TIDS)
		win[i].tid[win[i].ntid++] = tid;
}

/* s's stack is pc[n], whole (a shared sample's put back). */
static void on_sample(const struct cbn_rec_sample *s, const uint64_t *pc, int n, uint32_t tid,
		      uint64_t *frames)
{
	struct thr *t = thr_get(tid);
	struct sym *seen[CBN_MAX_FRAMES];
	int i, j, nseen = 0;

	t->samples++;
	t->weight += s->weight;
	win_sample(win_find(s->ts), tid);
	if (!win_inside(s->ts) && samples_outside++ < 5)
		printf("sample_outside tid=%u ts=%llu weight=%u\n", tid, (unsigned long long)s->ts,
		       s->weight);
	*frames += (uint64_t)n;
	if ((unsigned)n > frames_max)
		frames_max = (unsigned)n;
	for (i = 0; i < n && nsyms; i++) {
		struct sym *y = sym_find(i ? pc[i] - 1 : pc[i]);

		if (!y)
			continue;
		if (i == 0)
			y->self += s->weight;
		for (j = 0; j < nseen; j++)
			if (seen[j] == y)
				break;
		if (j == nseen) {
			seen[nseen++] = y;
			y->total += s->weight;
		}
	}
}

static void on_event(const struct cbn_rec *r, size_t avail)
{
	switch (r->type) {
	case CBN_REC_THREAD_START:
	case CBN_REC_THREAD_END:
	case CBN_REC_THREAD_NAME: {
		const struct cbn_rec_thread *t = (const void *)r;
		struct thr *x;

		if (avail < sizeof(*t)) {
			damaged = 1;
			return;
		}
		x = thr_get(t->tid);
		if (t->name[0] && memchr(t->name, 0, CBN_NAME_MAX))
			memcpy(x->name, t->name, CBN_NAME_MAX);
		if (r->type == CBN_REC_THREAD_START)
			x->started = 1;
		if (r->type == CBN_REC_THREAD_END) {
			x->ended = 1;
			x->cpu_ns = t->cpu_ns;
		}
		if (r->type == CBN_REC_THREAD_NAME)
			printf("thread_name tid=%u name=%s\n", t->tid, x->name);
		break;
	}
	case CBN_REC_MODULE_LOAD:
	case CBN_REC_MODULE_UNLOAD: {
		const struct cbn_rec_module *m = (const void *)r;
		const char *path;
		char bid[41] = "";
		int i;

		if (avail < sizeof(*m) || m->nseg > CBN_MAX_SEGMENTS ||
		    sizeof(*m) + m->nseg * sizeof(struct cbn_segment) + m->path_len + 1 > avail ||
		    m->build_id_len > CBN_BUILD_ID_MAX) {
			damaged = 1;
			return;
		}
		path = (const char *)&m->seg[m->nseg];
		for (i = 0; i < m->build_id_len; i++)
			sprintf(bid + 2 * i, "%02x", m->build_id[i]);
		printf("%s path=%.*s base=0x%llx nseg=%u build_id=%s ts=%llu\n",
		       r->type == CBN_REC_MODULE_LOAD ? "module" : "unload", (int)m->path_len, path,
		       (unsigned long long)m->base, m->nseg, bid, (unsigned long long)m->ts);
		if (r->type == CBN_REC_MODULE_LOAD && nmods < MAXM) {
			snprintf(mods[nmods].path, sizeof(mods[nmods].path), "%.*s",
				 (int)m->path_len, path);
			mods[nmods++].base = m->base;
		}
		break;
	}
	case CBN_REC_PROCESS_EXIT: {
		const struct cbn_rec_exit *e = (const void *)r;

		if (avail < sizeof(*e)) {
			damaged = 1;
			return;
		}
		printf("exit status=%d\n", e->status);
		break;
	}
	case CBN_REC_RANGE: {
		const struct cbn_rec_range *g = (const void *)r;

		if (avail < sizeof(*g) ||
		    sizeof(*g) + (size_t)g->domain_len + g->name_len + 2 > avail) {
			damaged = 1;
			return;
		}
		if (!win_inside(g->end))
			(*(g->kind == CBN_RANGE_STEP ? &steps_outside : &ranges_outside))++;
		printf("range kind=%u source=%u depth=%u tid=%u dur_ns=%llu domain=%.*s name=%.*s\n",
		       g->kind, g->source, g->depth, g->tid,
		       (unsigned long long)(g->end - g->start), (int)g->domain_len, g->strings,
		       (int)g->name_len, g->strings + g->domain_len + 1);
		break;
	}
	case CBN_REC_CAPTURE: {
		const struct cbn_rec_capture *c = (const void *)r;

		if (avail < sizeof(*c) || sizeof(*c) + (size_t)c->name_len + 1 > avail) {
			damaged = 1;
			return;
		}
		printf("capture_rec event=%u cause=%u ts=%llu step=%llu tid=%u name=%.*s\n",
		       c->event, c->cause, (unsigned long long)c->ts, (unsigned long long)c->step,
		       c->tid, (int)c->name_len, c->name);
		break;
	}
	case CBN_REC_MPI: {
		const struct cbn_rec_mpi *m = (const void *)r;
		const char *name;

		if (avail < sizeof(*m) || sizeof(*m) + (size_t)m->nframes * 8 > avail ||
		    m->end < m->start) {
			damaged = 1;
			return;
		}
		name = cbn_mpi_call_name(m->call);
		mpi_records++;
		if (m->call < CBN_MPI_CALL_MAX) {
			mpi_n[m->call]++;
			mpi_sent[m->call] += m->bytes_sent;
			mpi_recv[m->call] += m->bytes_recv;
		}
		printf("mpi call=%s peer=%d tag=%d sent=%llu recv=%llu comm=%u comm_size=%d seq=%u "
		       "count=%u flags=%u tid=%u nframes=%u dur_ns=%llu pc0=0x%llx\n",
		       name ? name : "?", m->peer, m->tag, (unsigned long long)m->bytes_sent,
		       (unsigned long long)m->bytes_recv, m->comm, m->comm_size, m->seq, m->count,
		       r->flags, m->tid, m->nframes, (unsigned long long)(m->end - m->start),
		       (unsigned long long)(m->nframes ? m->pc[0] : 0));
		break;
	}
	case CBN_REC_CLOCK: {
		const struct cbn_rec_clock *k = (const void *)r;

		if (avail < sizeof(*k)) {
			damaged = 1;
			return;
		}
		clock_records++;
		printf("clock at=%u ref=%d offset=%lld rtt=%llu rounds=%u local=%llu real=%llu\n",
		       r->flags, k->ref_rank, (long long)k->offset, (unsigned long long)k->rtt,
		       k->rounds, (unsigned long long)k->local, (unsigned long long)k->real);
		break;
	}
	case CBN_REC_UNPROFILED: {
		const struct cbn_rec_unprofiled *u = (const void *)r;

		if (avail < sizeof(*u) || sizeof(*u) + (size_t)u->path_len + 1 > avail) {
			damaged = 1;
			return;
		}
		printf("unprofiled pid=%u reason=%u uid=%u euid=%u path=%.*s\n", u->pid, u->reason,
		       u->uid, u->euid, (int)u->path_len, u->path);
		break;
	}
	case CBN_REC_JIT_REGION: {
		const struct cbn_rec_jit_region *j = (const void *)r;

		if (avail < sizeof(*j) || sizeof(*j) + (size_t)j->name_len > avail) {
			damaged = 1;
			return;
		}
		printf("jit start=0x%llx len=%llu tid=%u flags=%u name=%.*s\n",
		       (unsigned long long)j->start, (unsigned long long)j->len, j->tid, r->flags,
		       (int)j->name_len, j->name);
		break;
	}
	case CBN_REC_CODE_FILE: {
		const struct cbn_rec_code_file *c = (const void *)r;

		if (avail < sizeof(*c) || sizeof(*c) + (size_t)c->name_len > avail) {
			damaged = 1;
			return;
		}
		printf("codefile start=0x%llx len=%llu off=%llu tid=%u name=%.*s\n",
		       (unsigned long long)c->start, (unsigned long long)c->len,
		       (unsigned long long)c->offset, c->tid, (int)c->name_len, c->name);
		break;
	}
	default:
		printf("record type=%u size=%u\n", r->type, r->size);
	}
}

int main(int argc, char **argv)
{
	const struct cbn_file_header *h;
	uint64_t size, end, off, nsamples = 0, weight = 0, frames = 0, chunks = 0, shared = 0;
	struct stat st;
	const char *file = NULL;
	void *map;
	int fd, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
			load_nm(argv[++i]);
		else
			file = argv[i];
	}
	if (!file) {
		fprintf(stderr, "usage: cbpdump [-m module=nmfile]... FILE.cbp\n");
		return 2;
	}
	fd = open(file, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(file);
		return 2;
	}
	size = (uint64_t)st.st_size;
	if (size < CBN_HEADER_SIZE) {
		fprintf(stderr, "%s: too small\n", file);
		return 1;
	}
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	h = map;
	if (memcmp(h->magic, CBN_MAGIC, 8) || h->version != CBN_FORMAT_VERSION ||
	    h->endian != CBN_ENDIAN_CHECK || h->chunk_size != CBN_CHUNK_SIZE ||
	    h->data_offset < CBN_HEADER_SIZE) {
		fprintf(stderr, "%s: bad header\n", file);
		return 1;
	}
	end = h->file_size < size ? h->file_size : size;
	if (h->next_chunk < end)
		end = h->next_chunk;
	printf("file pid=%u ppid=%u exec_seq=%u parent=%lld signo=%u timer=%u period_ns=%llu "
	       "depth=%u clean_exit=%u exit_code=%d disabled=%u file_size=%llu\n",
	       h->pid, h->ppid, h->exec_seq, (long long)h->parent_pid_file, h->signo, h->timer_kind,
	       (unsigned long long)h->period_ns, h->max_depth, h->clean_exit, h->exit_code,
	       h->disabled, (unsigned long long)h->file_size);
	printf("sampler signo_first=%u perf_threads=%u timer_threads=%u notes=%u perf_errno=%d "
	       "pc_only_paused=%llu pc_only_low_stack=%llu pc_only_no_trace=%llu "
	       "unsampled_stack=%u unsampled_timer=%u reason=%s\n",
	       h->signo_first, h->threads_perf, h->threads_timer, h->notes, h->perf_errno,
	       (unsigned long long)h->pc_only_why[CBN_PCONLY_HELD],
	       (unsigned long long)h->pc_only_why[CBN_PCONLY_LOW_STACK],
	       (unsigned long long)h->pc_only_why[CBN_PCONLY_NO_TRACE],
	       h->unsampled_why[CBN_UNSAMPLED_NO_STACK], h->unsampled_why[CBN_UNSAMPLED_NO_TIMER],
	       h->timer_reason_len ? h->timer_reason : "-");
	printf("exe path=%s\n", h->exe);
	printf("rank rank=%d local_rank=%d world_size=%d source=%u host=%.*s mpi=%u impl=%u "
	       "mpi_calls=%llu mpi_lost=%llu polls=%llu poll_ns=%llu version=%.*s\n",
	       h->rank.rank, h->rank.local_rank, h->rank.world_size, h->rank.source,
	       (int)sizeof(h->rank.host), h->rank.host, h->rank.mpi, h->rank.mpi_impl,
	       (unsigned long long)h->rank.mpi_calls, (unsigned long long)h->rank.mpi_lost,
	       (unsigned long long)h->rank.mpi_polls, (unsigned long long)h->rank.mpi_poll_ns,
	       (int)sizeof(h->rank.mpi_version), h->rank.mpi_version);
	printf("overhead threads_cpu_ns=%llu threads=%u init_cpu_ns=%llu other_ns=%llu "
	       "other_calls=%llu\n",
	       (unsigned long long)h->overhead.threads_cpu_ns, h->overhead.threads,
	       (unsigned long long)h->overhead.init_cpu_ns,
	       (unsigned long long)h->overhead.site_ns[CBN_OVH_OTHER],
	       (unsigned long long)h->overhead.site_calls[CBN_OVH_OTHER]);
	printf("guard seccomp=%u seccomp_tid=%u seccomp_threads=%u sigqueue_full=%u "
	       "ring_lost_until_ns=%llu as_limit=%llu map_bytes=%llu exec_unprofiled=%u "
	       "end_samples=%u lost_sandboxed=%llu lost_sigqueue=%llu lost_buffer_full=%llu\n",
	       h->guard.seccomp, h->guard.seccomp_tid, h->guard.seccomp_threads,
	       h->guard.sigqueue_full, (unsigned long long)h->guard.ring_lost_until_ns,
	       (unsigned long long)h->guard.as_limit, (unsigned long long)h->guard.map_bytes,
	       h->guard.exec_unprofiled, h->guard.end_samples,
	       (unsigned long long)h->lost[CBN_LOST_SANDBOXED],
	       (unsigned long long)h->lost[CBN_LOST_SIGQUEUE],
	       (unsigned long long)h->lost[CBN_LOST_BUFFER_FULL]);
	if (h->disabled)
		printf("disabled reason=%s\n", h->disabled_reason);
	/* First pass: the capture windows (records in file order, one writer
	 * lock: opens and closes alternate). */
	for (off = h->data_offset; off + CBN_CHUNK_SIZE <= end; off += CBN_CHUNK_SIZE) {
		const struct cbn_chunk_header *c = (const void *)((const char *)map + off);
		uint64_t used = c->used, p = 0;

		if (c->magic != CBN_CHUNK_MAGIC || c->kind != CBN_CHUNK_EVENTS ||
		    used > CBN_CHUNK_SIZE - sizeof(*c))
			continue;
		while (p + sizeof(struct cbn_rec) <= used) {
			const struct cbn_rec *r = (const void *)((const char *)(c + 1) + p);

			if (r->size < sizeof(*r) || r->size % 8 || r->size > used - p)
				break;
			if (r->type == CBN_REC_CAPTURE && r->size >= sizeof(struct cbn_rec_capture)) {
				capture_seen = 1;
				win_add((const void *)r);
			}
			p += r->size;
		}
	}
	for (off = h->data_offset; off + CBN_CHUNK_SIZE <= end; off += CBN_CHUNK_SIZE) {
		const struct cbn_chunk_header *c = (const void *)((const char *)map + off);
		uint64_t used = c->used, p = 0, base_p = 0;
		const struct cbn_rec_sample *base = NULL;

		if (c->magic != CBN_CHUNK_MAGIC)
			continue; /* handed out, header not yet written */
		chunks++;
		if (used > CBN_CHUNK_SIZE - sizeof(*c)) {
			damaged = 1;
			continue;
		}
		while (p + sizeof(struct cbn_rec) <= used) {
			const struct cbn_rec *r = (const void *)((const char *)(c + 1) + p);

			if (r->size < sizeof(*r) || r->size % 8 || r->size > used - p) {
				damaged = 1;
				break;
			}
			if (c->kind == CBN_CHUNK_SAMPLES && r->type == CBN_REC_SAMPLE) {
				const struct cbn_rec_sample *s = (const void *)r;

				const struct cbn_sample_share *sh = (const void *)(s->pc + s->nframes);
				uint64_t whole[CBN_MAX_FRAMES];
				int n = s->nframes, bnn;

				if (r->size < sizeof(*s) + (size_t)s->nframes * 8 ||
				    s->nframes > CBN_MAX_FRAMES) {
					damaged = 1;
					break;
				}
				if (r->flags & CBN_SAMPLE_SHARED) {
					/* its base: the chunk's latest full sample */
					bnn = base ? cbn_share_native(base->pc, base->nframes) : 0;
					if (!base || r->size < sizeof(*s) + (size_t)n * 8 + sizeof(*sh) ||
					    sh->base != base_p || sh->native > bnn ||
					    sh->python > base->nframes - bnn ||
					    n + sh->native + sh->python > CBN_MAX_FRAMES) {
						damaged = 1;
						break;
					}
					n = cbn_share_expand(s->pc, n, base->pc, base->nframes, bnn,
							     sh->native, sh->python, whole);
					shared++;
				} else {
					memcpy(whole, s->pc, (size_t)n * 8);
					if (!(r->flags & CBN_SAMPLE_PC_ONLY)) {
						base = s;
						base_p = p;
					}
				}
				nsamples++;
				weight += s->weight;
				on_sample(s, whole, n, c->tid, &frames);
			} else if (c->kind == CBN_CHUNK_EVENTS) {
				on_event(r, r->size);
			}
			p += r->size;
		}
	}
	printf("samples records=%llu weight=%llu frames_avg=%.1f frames_max=%u pc_only=%llu "
	       "truncated=%llu chunks=%llu shared=%llu\n",
	       (unsigned long long)nsamples, (unsigned long long)weight,
	       nsamples ? (double)frames / (double)nsamples : 0.0, frames_max,
	       (unsigned long long)h->pc_only, (unsigned long long)h->truncated,
	       (unsigned long long)chunks, (unsigned long long)shared);
	printf("capture mode=%u active=%u windows=%u parks=%u steps=%llu active_ns=%llu "
	       "windows_seen=%d samples_outside=%llu ranges_outside=%llu steps_outside=%llu "
	       "spec=%.*s\n",
	       h->capture.mode, h->capture.active, h->capture.windows, h->capture.parks,
	       (unsigned long long)h->capture.steps, (unsigned long long)h->capture.active_ns, nwin,
	       (unsigned long long)samples_outside, (unsigned long long)ranges_outside,
	       (unsigned long long)steps_outside,
	       (int)(h->capture.spec_len < sizeof(h->capture.spec) ? h->capture.spec_len : 0),
	       h->capture.spec);
	for (i = 0; i < nwin; i++)
		printf("window idx=%d dur_ns=%lld samples=%llu threads=%d\n", i,
		       win[i].close == UINT64_MAX ? -1ll : (long long)(win[i].close - win[i].open),
		       (unsigned long long)win[i].samples, win[i].ntid);
	printf("lost reentrant=%llu buffer_full=%llu no_thread=%llu foreign_pid=%llu "
	       "disabled=%llu\n",
	       (unsigned long long)h->lost[0], (unsigned long long)h->lost[1],
	       (unsigned long long)h->lost[2], (unsigned long long)h->lost[3],
	       (unsigned long long)h->lost[4]);
	for (i = 0; i < nthr; i++)
		printf("thread tid=%u name=%s samples=%llu weight=%llu cpu_ns=%llu started=%d "
		       "ended=%d\n",
		       thr[i].tid, thr[i].name[0] ? thr[i].name : "-",
		       (unsigned long long)thr[i].samples, (unsigned long long)thr[i].weight,
		       (unsigned long long)thr[i].cpu_ns, thr[i].started, thr[i].ended);
	for (i = 0; i < nsyms; i++)
		if (syms[i].total)
			printf("func name=%s module=%s self=%llu total=%llu\n", syms[i].name,
			       syms[i].mod, (unsigned long long)syms[i].self,
			       (unsigned long long)syms[i].total);
	printf("mpi_summary records=%llu clocks=%llu\n", (unsigned long long)mpi_records,
	       (unsigned long long)clock_records);
	for (i = 0; i < CBN_MPI_CALL_MAX; i++)
		if (mpi_n[i])
			printf("mpi_total call=%s calls=%llu sent=%llu recv=%llu\n",
			       cbn_mpi_call_name((unsigned)i) ? cbn_mpi_call_name((unsigned)i) : "?",
			       (unsigned long long)mpi_n[i], (unsigned long long)mpi_sent[i],
			       (unsigned long long)mpi_recv[i]);
	if (damaged)
		printf("damaged=1\n");
	return damaged ? 1 : 0;
}
