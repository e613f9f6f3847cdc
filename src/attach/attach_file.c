/*
 * attach_file.c — the session file of an attached process, PID.0.cbp, in
 * the format the agent writes (cbn_format.h), so that the loader, every
 * report and the gate read it as they read a launched run's: the header
 * (what the launcher knows of the process: its pid, exe, command line, the
 * sampling period), MODULE_LOAD records for what it has mapped (from
 * /proc/PID/maps through libdwfl: path, load bias, build-id and PT_LOAD
 * segments; a module seen later is recorded when seen; CODE_FILE records
 * for the files mapped executable, V8's second view of its builtins among
 * them), THREAD_START /
 * THREAD_NAME / THREAD_END records, and each thread's SAMPLE records in its
 * own SAMPLES chunks.  Written by the launcher's one thread.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach_int.h"
#include "util.h"

#define FILE_INITIAL (CBN_HEADER_SIZE + 4 * (uint64_t)CBN_CHUNK_SIZE)
#define FILE_SEGS 16                    /* PT_LOAD segments recorded per module */

static uint64_t file_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t attach_now(void)
{
	return file_clock(CLOCK_MONOTONIC);
}

int attach_file_open(struct attach_file *f, const char *session, pid_t pid,
		     const struct attach_opts *o, char *why, size_t len)
{
	struct cbn_file_header *h;
	char path[4200];
	int ret, n;

	memset(f, 0, sizeof(*f));
	snprintf(path, sizeof(path), "%s/%d.0%s", session, (int)pid, CBN_FILE_EXT);
	ret = writer_open(&f->w, path, FILE_INITIAL, o->file_bytes);
	if (ret < 0) {
		snprintf(why, len, "cannot create %s: %s", path, strerror(-ret));
		return ret;
	}
	h = f->w.hdr;
	h->pid = (uint32_t)pid;
	h->exec_seq = 0;
	h->parent_pid_file = -1;
	h->timer_kind = CBN_TIMER_PERF_CPU_CLOCK;
	h->max_depth = (uint32_t)o->depth;
	h->period_ns = o->period_ns;
	h->start_mono_ns = attach_now();
	h->start_real_ns = file_clock(CLOCK_REALTIME);
	h->rec_type_max = CBN_REC_TYPE_MAX;
	atomic_store(&h->end_mono_ns, h->start_mono_ns);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = (int)readlink(path, h->exe, sizeof(h->exe) - 1);
	h->exe[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = util_read_small(path, h->cmdline, sizeof(h->cmdline));
	h->cmdline_len = n > 0 ? (uint32_t)n : 0;
	h->ppid = (uint32_t)attach_proc_ppid(pid);
	return 0;
}

/* One record into the EVENTS chunk; a full file counts nothing (the
 * samples' loss is counted where they are written). */
static void file_event(struct attach_file *f, const void *rec, size_t size)
{
	(void)writer_append_event(&f->w, rec, size);
}

void attach_file_thread(struct attach_file *f, uint16_t type, pid_t tid, const char *name,
			uint64_t ts, uint64_t cpu_ns)
{
	struct cbn_rec_thread r;

	memset(&r, 0, sizeof(r));
	r.h.type = type;
	r.h.size = sizeof(r);
	r.ts = ts;
	r.tid = (uint32_t)tid;
	r.cpu_ns = cpu_ns;
	snprintf(r.name, sizeof(r.name), "%s", name ? name : "");
	file_event(f, &r, sizeof(r));
}

/* 1 when key was recorded before, else recorded now (f->mods). */
static int file_seen(struct attach_file *f, uint64_t key)
{
	size_t i;

	for (i = 0; i < f->nmods; i++)
		if (f->mods[i] == key)
			return 1;
	if (util_grow((void **)&f->mods, &f->capmods, f->nmods + 1, sizeof(*f->mods)) < 0)
		return 1;
	f->mods[f->nmods++] = key;
	return 0;
}

/* A MODULE_LOAD record for mod, unless one was written for its (path, bias). */
static int file_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	struct attach_file *f = arg;
	unsigned char buf[sizeof(struct cbn_rec_module) + FILE_SEGS * sizeof(struct cbn_segment) +
			  4200] __attribute__((aligned(8)));
	struct cbn_rec_module *r = (void *)buf;
	const unsigned char *id = NULL;
	GElf_Addr bias, id_at;
	size_t nph, i, plen;
	uint64_t key;
	Elf *elf;
	int idn;

	(void)userdata;
	(void)start;
	elf = dwfl_module_getelf(mod, &bias);
	if (!elf || !name || elf_getphdrnum(elf, &nph) != 0)
		return DWARF_CB_OK;
	/* libdwfl names the vdso "[vdso: PID]"; the agent records the
	 * loader's name for it, which the symbolizer knows (sym.c). */
	if (strncmp(name, "[vdso", 5) == 0)
		name = "linux-vdso.so.1";
	else if (name[0] != '/')
		return DWARF_CB_OK;
	key = util_fnv1a_str(name, util_fnv1a(&bias, sizeof(bias), UTIL_FNV_INIT));
	if (file_seen(f, key))
		return DWARF_CB_OK;
	memset(buf, 0, sizeof(struct cbn_rec_module));
	r->h.type = CBN_REC_MODULE_LOAD;
	r->ts = attach_now();
	r->base = bias;
	r->seq = f->mod_seq++;
	idn = dwfl_module_build_id(mod, &id, &id_at);
	if (idn > 0 && idn <= CBN_BUILD_ID_MAX) {
		memcpy(r->build_id, id, (size_t)idn);
		r->build_id_len = (uint16_t)idn;
	}
	for (i = 0; i < nph && r->nseg < FILE_SEGS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		r->seg[r->nseg++] = (struct cbn_segment){ph.p_vaddr, ph.p_memsz, ph.p_offset,
							 ph.p_flags, 0};
	}
	plen = strlen(name);
	if (plen > 4095)
		return DWARF_CB_OK;
	r->path_len = (uint32_t)plen;
	memcpy((char *)&r->seg[r->nseg], name, plen + 1);
	r->h.size = (uint32_t)((sizeof(*r) + r->nseg * sizeof(struct cbn_segment) + plen + 1 + 7) &
			       ~(size_t)7);
	file_event(f, r, r->h.size);
	return DWARF_CB_OK;
}

static char *file_debuginfo_path;
static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &file_debuginfo_path,
};

/*
 * A CODE_FILE record for each file mapped executable (V8 maps its builtins
 * from its own binary a second time): the loader makes a second view of the
 * module where one is not the module's own mapping (load_modmap.c), as the
 * agent's records of the program's mmap calls do in a launched run.
 */
static void file_code_files(struct attach_file *f, pid_t pid)
{
	unsigned char buf[sizeof(struct cbn_rec_code_file) + 4104] __attribute__((aligned(8)));
	struct cbn_rec_code_file *r = (void *)buf;
	char path[64], *line = NULL;
	unsigned long long lo, hi, off;
	size_t cap = 0, n;
	char perms[8];
	int at;
	FILE *m;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(m = fopen(path, "re")))
		return;
	while (getline(&line, &cap, m) > 0) {
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &at) < 4 ||
		    perms[2] != 'x' || line[at] != '/')
			continue;
		n = strcspn(line + at, "\n");
		if (n > 4095 || file_seen(f, util_fnv1a(&lo, sizeof(lo), util_fnv1a(&off, sizeof(off),
								       UTIL_FNV_INIT)) ^ 1))
			continue;
		memset(r, 0, sizeof(*r));
		r->h.type = CBN_REC_CODE_FILE;
		r->h.size = (uint32_t)((sizeof(*r) + n + 1 + 7) & ~(size_t)7);
		r->ts = attach_now();
		r->start = lo;
		r->len = hi - lo;
		r->offset = off;
		r->name_len = (uint32_t)n;
		memcpy(r->name, line + at, n);
		memset(r->name + n, 0, r->h.size - sizeof(*r) - n);
		file_event(f, r, r->h.size);
	}
	free(line);
	fclose(m);
}

int attach_file_modules(struct attach_file *f, pid_t pid)
{
	Dwfl *d = dwfl_begin(&file_callbacks);
	int ret = -1;

	if (!d)
		return -1;
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) == 0 && dwfl_report_end(d, NULL, NULL) == 0) {
		dwfl_getmodules(d, file_module, f, 0);
		file_code_files(f, pid);
		ret = 0;
	}
	dwfl_end(d);
	return ret;
}

/* Room for size bytes in thread t's SAMPLES chunk, a new chunk when full. */
static void *file_reserve(struct attach_file *f, struct attach_thread *t, uint32_t size)
{
	void *p = t->chunk ? writer_reserve(t->chunk, size) : NULL;

	if (p)
		return p;
	if (t->chunk)
		writer_chunk_retire(&f->w, t->chunk);
	t->chunk = writer_chunk_new(&f->w, CBN_CHUNK_SAMPLES, (uint32_t)t->tid);
	if (!t->chunk && writer_grow(&f->w, CBN_CHUNK_SIZE) == 0)
		t->chunk = writer_chunk_new(&f->w, CBN_CHUNK_SAMPLES, (uint32_t)t->tid);
	return t->chunk ? writer_reserve(t->chunk, size) : NULL;
}

void attach_file_kernel(struct attach_file *f)
{
	struct cbn_file_header *h = f->w.hdr;

	atomic_store(&h->kstack_state, CBN_KSTACK_TAKEN);
	atomic_fetch_add_explicit(&h->threads_kstacks, 1, memory_order_relaxed);
}

/* The kernel stack of a sample taken in the kernel after its pcs (struct
 * cbn_kstacks, one stack): it sits on the user stack of the system call,
 * which is the sample's own. */
static void file_kstack(struct cbn_file_header *h, struct cbn_rec_sample *s, int n,
			const struct attach_sample *as)
{
	struct cbn_kstacks *ks = (struct cbn_kstacks *)&s->pc[n];
	struct cbn_kstack *k = (struct cbn_kstack *)(ks + 1);

	ks->nstacks = 1;
	ks->flags = 0;
	ks->lost = 0;
	k->count = 1;
	k->nframes = (uint16_t)as->nk;
	k->flags = as->kcut ? CBN_KSTACK_TRUNCATED : 0;
	memcpy(k->pc, as->kpc, (size_t)as->nk * 8);
	s->h.flags |= CBN_SAMPLE_KSTACKS;
	atomic_fetch_add_explicit(&h->kstack_samples, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->kstack_placed, 1, memory_order_relaxed);
}

void attach_file_sample(struct attach_file *f, struct attach_thread *t, uint32_t weight,
			const struct attach_sample *as, const uint64_t *pcs, int n, int truncated)
{
	struct cbn_file_header *h = f->w.hdr;
	int kstack = as->kernel && as->nk > 0;
	uint32_t size = (uint32_t)(sizeof(struct cbn_rec_sample) + (size_t)n * 8 +
				   (kstack ? sizeof(struct cbn_kstacks) + sizeof(struct cbn_kstack) +
						     (size_t)as->nk * 8 : 0));
	struct cbn_rec_sample *s = file_reserve(f, t, size);
	uint64_t ts = as->time;

	if (!s) {
		writer_lost(&f->w, CBN_LOST_BUFFER_FULL);
		return;
	}
	s->h.type = CBN_REC_SAMPLE;
	s->h.flags = truncated ? CBN_SAMPLE_TRUNCATED : 0;
	s->h.size = size;
	s->ts = ts;
	s->weight = weight;
	s->nframes = (uint16_t)n;
	s->kweight = as->kernel ? (uint16_t)weight : 0;
	memcpy(s->pc, pcs, (size_t)n * 8);
	if (kstack)
		file_kstack(h, s, n, as);
	writer_commit(t->chunk, size);
	atomic_fetch_add_explicit(&h->samples, 1, memory_order_relaxed);
	if (truncated)
		atomic_fetch_add_explicit(&h->truncated, 1, memory_order_relaxed);
	if (ts > atomic_load(&h->end_mono_ns))
		atomic_store(&h->end_mono_ns, ts);
}

void attach_file_close(struct attach_file *f)
{
	if (!f->w.hdr)
		return;
	if (attach_now() > atomic_load(&f->w.hdr->end_mono_ns))
		atomic_store(&f->w.hdr->end_mono_ns, attach_now());
	writer_close(&f->w);
	free(f->mods);
	f->mods = NULL;
}
