/*
 * modules.c — the module map the launcher symbolizes against: a scan of the
 * loader's list at init (executable, libraries, ld.so, vdso; linkmap.c, no
 * loader lock) with build-ids read from the in-memory PT_NOTE, then
 * MODULE_LOAD/UNLOAD events on every change: after a dlopen, at the program's
 * next dlsym (the call a program makes to use what it loaded) or the next
 * stack the agent takes outside the handler, a thread start, a dlclose, an
 * exec or the exit.  Each change also publishes an immutable snapshot of the
 * loader's list, which the agent's libunwind walks instead of dl_iterate_phdr
 * (no loader lock in the signal handler).  Not signal context, except the
 * modules_snap_* readers.  Lock order: modules_lock, then the writer's locks.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc.h"
#include "floor.h"
#include "linkmap.h"
#include "modules.h"
#include "python_find.h"
#include "unwind_hold.h"

struct module {
	uint64_t base;
	char *name;                      /* dlpi_name as the loader has it */
	struct cbn_rec_module *rec;      /* the LOAD record, kept to replay after fork */
	int seen;                        /* in the list this scan */
	int written;                     /* its LOAD is in the file */
};

static pthread_mutex_t mod_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *mods;
static int nmods, capmods;
static uint32_t mod_seq;
static int mod_scanned;
static char mod_interp[512];

/* CLOCK_MONOTONIC time of the oldest dlopen entered since the last scan: the
 * LOAD event carries it, so samples taken in a new library (its constructors
 * included) are never older than the load that explains them. */
static _Atomic uint64_t mod_pending_ts;

/* A dlopen entered since the last scan: the next scan point scans. */
int modules_pending(void)
{
	return atomic_load_explicit(&mod_pending_ts, memory_order_relaxed) != 0;
}

void modules_lock(void)
{
	pthread_mutex_lock(&mod_lock);
}

void modules_unlock(void)
{
	pthread_mutex_unlock(&mod_lock);
}

int modules_trylock(void)
{
	return pthread_mutex_trylock(&mod_lock) == 0;
}

static int modules_find(uint64_t base, const char *name)
{
	int i;

	for (i = 0; i < nmods; i++)
		if (mods[i].base == base && strcmp(mods[i].name, name) == 0)
			return i;
	return -1;
}

/* The GNU build id from the module's notes, read with agent_vmread: a
 * dlclose on another thread may unmap it under a scan. */
static void modules_build_id(struct dl_phdr_info *info, struct cbn_rec_module *r)
{
	char notes[1024];
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;
		size_t n = ph->p_memsz < sizeof(notes) ? ph->p_memsz : sizeof(notes);

		if (ph->p_type != PT_NOTE ||
		    agent_vmread(notes, info->dlpi_addr + ph->p_vaddr, n) < 0)
			continue;
		p = notes;
		end = p + n;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*n);
			const char *desc = name + ((n->n_namesz + 3u) & ~3u);

			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				r->build_id_len = (uint16_t)(n->n_descsz < CBN_BUILD_ID_MAX
								 ? n->n_descsz
								 : CBN_BUILD_ID_MAX);
				memcpy(r->build_id, desc, r->build_id_len);
				return;
			}
			p = desc + ((n->n_descsz + 3u) & ~3u);
		}
	}
}

static struct cbn_rec_module *modules_record(struct dl_phdr_info *info, const char *path)
{
	struct cbn_rec_module *r;
	size_t plen = strlen(path), size;
	int i, nseg = 0;

	if (plen > 4000)
		plen = 4000;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			nseg++;
	if (nseg > CBN_MAX_SEGMENTS)
		nseg = CBN_MAX_SEGMENTS;
	size = CBN_REC_ALIGN(sizeof(*r) + (size_t)nseg * sizeof(struct cbn_segment) + plen + 1);
	r = agent_calloc(1, size);
	if (!r)
		return NULL;
	r->h.type = CBN_REC_MODULE_LOAD;
	r->h.size = (uint32_t)size;
	r->base = info->dlpi_addr;
	r->nseg = (uint16_t)nseg;
	r->path_len = (uint32_t)plen;
	for (i = 0, nseg = 0; i < info->dlpi_phnum && nseg < r->nseg; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		r->seg[nseg].vaddr = ph->p_vaddr;
		r->seg[nseg].memsz = ph->p_memsz;
		r->seg[nseg].offset = ph->p_offset;
		r->seg[nseg].flags = ph->p_flags;
		nseg++;
	}
	memcpy((char *)&r->seg[r->nseg], path, plen);
	modules_build_id(info, r);
	return r;
}

/* Executable text range [lo, hi) of a module, from its PF_X segments. */
static void modules_text(struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
	int i;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (a < *lo)
			*lo = a;
		if (a + ph->p_memsz > *hi)
			*hi = a + ph->p_memsz;
	}
}

/*
 * The snapshot libunwind walks in place of dl_iterate_phdr: one immutable
 * block per change, published with an atomic pointer; the previous ones are
 * freed once no unwind is running (unwind_begin counts them).
 */
struct snap_mod {
	struct dl_phdr_info info;        /* dlpi_phdr and dlpi_name point into the block */
};

/* An executable segment of a snapshot module, for modules_snap_exec; and
 * its module's unwind tables, for modules_snap_cfi: the .eh_frame_hdr
 * (PT_GNU_EH_FRAME, 0: none) and the file-backed part of the segment
 * that holds it (and .eh_frame). */
struct snap_exec {
	uintptr_t lo, hi;
	uintptr_t eh_hdr;
	uintptr_t rlo, rhi;
};

struct snap {
	struct snap *retired_next;
	int n;
	int nexec;
	const struct snap_exec *exec;    /* sorted by lo, in the block */
	struct snap_mod m[];             /* then the phdr copies, the names, the
	                                  * executable segments */
};

static _Atomic(struct snap *) snap_cur;
/* Snapshots published so far: what a cache of answers about pcs (unwind.c's
 * CFI cache) is keyed by, so that an answer never outlives the map it was
 * given for. */
static _Atomic unsigned snap_seq;
static struct snap *snap_retired;

struct snap_build {
	struct dl_phdr_info *info;       /* dlpi_phdr and dlpi_name: copies (malloc) */
	int n, cap;
	size_t extra;                    /* bytes of phdrs and names */
	int failed;
};

struct scan_state {
	int hint;                        /* modules_known's next slot */
	int first;
	int changed;
	int count;
	struct snap_build sb;
};

static void snap_build_free(struct snap_build *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		agent_free((void *)b->info[i].dlpi_phdr);
	agent_free(b->info);
	memset(b, 0, sizeof(*b));
}

/* In the dl_iterate_phdr callback: keep a copy of what the loader reports
 * (after it returns, a dlclose elsewhere may free the loader's). */
static void snap_add(struct snap_build *b, const struct dl_phdr_info *info)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t ph = (size_t)info->dlpi_phnum * sizeof(ElfW(Phdr)), nl = strlen(name) + 1;
	char *copy;

	if (b->failed)
		return;
	if (b->n == b->cap) {
		int ncap = b->cap ? b->cap * 2 : 64;
		struct dl_phdr_info *n = agent_realloc(b->info, (size_t)ncap * sizeof(*n));

		if (!n) {
			b->failed = 1;
			return;
		}
		b->info = n;
		b->cap = ncap;
	}
	copy = agent_alloc(ph + nl);
	if (!copy) {
		b->failed = 1;
		return;
	}
	memcpy(copy, info->dlpi_phdr, ph);
	memcpy(copy + ph, name, nl);
	b->info[b->n] = *info;
	b->info[b->n].dlpi_phdr = (const ElfW(Phdr) *)copy;
	b->info[b->n].dlpi_name = copy + ph;
	b->n++;
	b->extra += ph + nl + 8;
}

/* One immutable block from the copies, published for the unwinder. */
static void snap_publish(struct snap_build *b)
{
	struct snap *s, *old;
	char *p;
	int i;

	size_t nexec = 0;
	struct snap_exec *ex;
	int j, k;

	if (b->failed || !b->n)
		goto out;
	for (i = 0; i < b->n; i++)
		for (j = 0; j < b->info[i].dlpi_phnum; j++)
			if (b->info[i].dlpi_phdr[j].p_type == PT_LOAD &&
			    (b->info[i].dlpi_phdr[j].p_flags & PF_X))
				nexec++;
	s = agent_alloc(sizeof(*s) + (size_t)b->n * sizeof(s->m[0]) + b->extra + 8 +
			nexec * sizeof(struct snap_exec));
	if (!s)
		goto out;
	s->retired_next = NULL;
	s->n = b->n;
	p = (char *)&s->m[b->n];
	for (i = 0; i < b->n; i++) {
		const struct dl_phdr_info *in = &b->info[i];
		struct snap_mod *m = &s->m[i];
		size_t ph = (size_t)in->dlpi_phnum * sizeof(ElfW(Phdr));
		size_t nl = strlen(in->dlpi_name) + 1;

		p = (char *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
		m->info = *in;
		memcpy(p, in->dlpi_phdr, ph + nl); /* phdrs then name, as copied */
		m->info.dlpi_phdr = (const ElfW(Phdr) *)p;
		m->info.dlpi_name = p + ph;
		p += ph + nl;
	}
	/* The executable segments, sorted (insertion: a few hundred). */
	ex = (struct snap_exec *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
	s->exec = ex;
	s->nexec = 0;
	for (i = 0; i < b->n; i++) {
		uintptr_t eh = 0, rlo = 0, rhi = 0;

		/* the segment that holds .eh_frame_hdr, which holds .eh_frame
		 * too in what the linkers write: a read outside it could meet
		 * a hole between segments */
		for (j = 0; j < b->info[i].dlpi_phnum; j++)
			if (b->info[i].dlpi_phdr[j].p_type == PT_GNU_EH_FRAME)
				eh = b->info[i].dlpi_addr + b->info[i].dlpi_phdr[j].p_vaddr;
		for (j = 0; eh && j < b->info[i].dlpi_phnum; j++) {
			const ElfW(Phdr) *ph = &b->info[i].dlpi_phdr[j];
			uintptr_t a = b->info[i].dlpi_addr + ph->p_vaddr;

			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && eh >= a &&
			    eh - a < ph->p_filesz) {
				rlo = a;
				rhi = a + ph->p_filesz;
			}
		}
		if (!rhi)
			eh = 0;
		for (j = 0; j < b->info[i].dlpi_phnum; j++) {
			const ElfW(Phdr) *ph = &b->info[i].dlpi_phdr[j];
			struct snap_exec e;

			if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
				continue;
			e.lo = b->info[i].dlpi_addr + ph->p_vaddr;
			e.hi = e.lo + ph->p_memsz;
			e.eh_hdr = eh;
			e.rlo = rlo;
			e.rhi = rhi;
			for (k = s->nexec; k > 0 && ex[k - 1].lo > e.lo; k--)
				ex[k] = ex[k - 1];
			ex[k] = e;
			s->nexec++;
		}
	}
	/* Sequentially consistent, like unwind_idle's load of the running
	 * count in snap_reclaim and unwind_begin's increment (unwind.c). */
	old = atomic_exchange(&snap_cur, s);
	atomic_fetch_add(&snap_seq, 1);
	if (old) {
		old->retired_next = snap_retired;
		snap_retired = old;
	}
out:
	snap_build_free(b);
}

/* Free the blocks no unwind can still be reading (under mod_lock). */
static void snap_reclaim(void)
{
	if (!snap_retired || !unwind_idle())
		return;
	while (snap_retired) {
		struct snap *n = snap_retired->retired_next;

		agent_free(snap_retired);
		snap_retired = n;
	}
}

/* SIGNAL-SAFE.  Changes whenever a new snapshot is published. */
unsigned modules_snap_seq(void)
{
	return atomic_load_explicit(&snap_seq, memory_order_acquire);
}

/* SIGNAL-SAFE (between unwind_begin and unwind_end): the snapshot's
 * executable segment that holds addr (a binary search), or NULL. */
static const struct snap_exec *snap_exec_find(uintptr_t addr)
{
	struct snap *s = atomic_load(&snap_cur);
	int lo = 0, hi, mid;

	if (!s)
		return NULL;
	hi = s->nexec;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (s->exec[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && addr < s->exec[lo - 1].hi ? &s->exec[lo - 1] : NULL;
}

/* SIGNAL-SAFE (between unwind_begin and unwind_end): 1 when addr lies in
 * an executable segment of a module of the snapshot. */
int modules_snap_exec(uintptr_t addr)
{
	return snap_exec_find(addr) != NULL;
}

/* SIGNAL-SAFE (between unwind_begin and unwind_end): the unwind tables of
 * the module whose executable segment holds addr: 0 and *hdr, its
 * .eh_frame_hdr, *lo and *hi, its readable span; -1 when no module of the
 * snapshot has addr in its code, or it has no .eh_frame_hdr. */
int modules_snap_cfi(uintptr_t addr, uintptr_t *hdr, uintptr_t *lo, uintptr_t *hi)
{
	const struct snap_exec *e = snap_exec_find(addr);

	if (!e || !e->eh_hdr)
		return -1;
	*hdr = e->eh_hdr;
	*lo = e->rlo;
	*hi = e->rhi;
	return 0;
}

/* SIGNAL-SAFE (between unwind_begin and unwind_end): dl_iterate_phdr over
 * the snapshot.  The callback gets a copy, as glibc's does. */
int modules_snap_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	struct snap *s = atomic_load(&snap_cur); /* seq_cst: see snap_publish */
	struct dl_phdr_info info;
	int i, ret;

	for (i = 0; s && i < s->n; i++) {
		info = s->m[i].info;
		ret = cb(&info, sizeof(info), data);
		if (ret)
			return ret;
	}
	return 0;
}

/* SIGNAL-SAFE: [addr, addr+len) lies in a readable loaded segment. */
int modules_snap_readable(uintptr_t addr, size_t len)
{
	struct snap *s = atomic_load(&snap_cur); /* seq_cst: see snap_publish */
	int i, j;

	for (i = 0; s && i < s->n; i++) {
		const struct dl_phdr_info *in = &s->m[i].info;

		for (j = 0; j < in->dlpi_phnum; j++) {
			const ElfW(Phdr) *ph = &in->dlpi_phdr[j];
			uintptr_t a = in->dlpi_addr + ph->p_vaddr;
			uintptr_t size = ((a + ph->p_memsz + 4095) & ~(uintptr_t)4095) - a;

			/* No addr + len: near the top of the address space it
			 * wraps to a small number that every segment "covers". */
			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && addr >= a &&
			    addr - a < size && len <= size - (addr - a))
				return 1;
		}
	}
	return 0;
}

static int modules_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan_state *st = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *path = name;
	uint64_t lo, hi;
	int i, idx;

	(void)size;
	if (st->first) {
		st->first = 0;
		if (!*name) {
			/* The executable: its name is "", its PT_INTERP names ld.so. */
			for (i = 0; i < info->dlpi_phnum; i++) {
				const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

				if (ph->p_type == PT_INTERP && !mod_interp[0] &&
				    ph->p_filesz < sizeof(mod_interp))
					memcpy(mod_interp,
					       (const char *)(info->dlpi_addr + ph->p_vaddr),
					       ph->p_filesz);
			}
			path = agent.exe;
		}
	}
	st->count++;
	snap_add(&st->sb, info);
	if (!*path)
		return 0; /* unnamed object other than the executable: nothing to read */
	idx = modules_find(info->dlpi_addr, name);
	if (idx >= 0) {
		mods[idx].seen = 1;
		return 0;
	}
	st->changed = 1;
	if (nmods == capmods) {
		int ncap = capmods ? capmods * 2 : 64;
		struct module *n = agent_realloc(mods, (size_t)ncap * sizeof(*n));

		if (!n)
			return 0;
		mods = n;
		capmods = ncap;
	}
	mods[nmods].rec = modules_record(info, path);
	if (!mods[nmods].rec)
		return 0;
	mods[nmods].name = agent_strdup(name);
	if (!mods[nmods].name) {
		agent_free(mods[nmods].rec);
		return 0;
	}
	mods[nmods].base = info->dlpi_addr;
	mods[nmods].seen = 1;
	mods[nmods].written = 0;
	nmods++;
	python_module(info, path); /* the Python interpreter? (python_find.c) */

	modules_text(info, &lo, &hi);
	if ((uint64_t)(uintptr_t)&modules_cb >= lo && (uint64_t)(uintptr_t)&modules_cb < hi)
		agent_self_set(lo, hi);
	return 0;
}

/*
 * linkmap_walk's known: the program headers the current snapshot holds for
 * the object at addr named name, when their dynamic segment is where the
 * loader says this object's is (a library loaded where an unloaded one of
 * the same name was, but built otherwise, is read again).  Under mod_lock:
 * the current snapshot is not freed under it.  *hint: where the search
 * starts, the slot after the last one found (the loader's order changes
 * little from one walk to the next).
 */
static const ElfW(Phdr) *modules_known(uintptr_t addr, const char *name, uintptr_t ld,
				       ElfW(Half) *phnum, void *arg)
{
	const struct snap *s = atomic_load_explicit(&snap_cur, memory_order_acquire);
	struct scan_state *st = arg;
	int i, k, j;

	if (!s || !ld)
		return NULL;
	for (k = 0; k < s->n; k++) {
		const struct dl_phdr_info *in;

		i = (st->hint + k) % s->n;
		in = &s->m[i].info;
		if (in->dlpi_addr != addr || strcmp(in->dlpi_name, name) != 0)
			continue;
		for (j = 0; j < in->dlpi_phnum; j++)
			if (in->dlpi_phdr[j].p_type == PT_DYNAMIC &&
			    in->dlpi_addr + in->dlpi_phdr[j].p_vaddr == ld) {
				st->hint = i + 1;
				*phnum = in->dlpi_phnum;
				return in->dlpi_phdr;
			}
		return NULL;
	}
	return NULL;
}

/*
 * Compare the loader's list with ours and write the difference.  force: a
 * full scan's records and snapshot even if nothing changed.  A walk that met
 * the loader changing its list is tried again a few times, then left to the
 * next scan point (nothing is unloaded on a partial walk).
 */
void modules_scan(int force)
{
	struct scan_state st;
	uint64_t now, load_ts;
	int i, ret = -EAGAIN, tries;

	if (!agent.w.hdr)
		return;
	pthread_mutex_lock(&mod_lock);
	for (tries = 0; tries < 4 && ret == -EAGAIN; tries++) {
		if (tries)
			sched_yield();
		memset(&st, 0, sizeof(st));
		st.first = 1;
		st.changed = force;
		for (i = 0; i < nmods; i++)
			mods[i].seen = 0;
		snap_build_free(&st.sb);
		ret = linkmap_walk(modules_cb, modules_known, &st);
	}
	if (ret < 0) {
		snap_build_free(&st.sb);
		goto out;
	}
	for (i = 0; i < nmods && !st.changed; i++)
		if (!mods[i].seen || !mods[i].written)
			st.changed = 1;
	load_ts = atomic_exchange(&mod_pending_ts, 0);
	if (!st.changed) {
		snap_build_free(&st.sb);
		goto out;
	}
	snap_publish(&st.sb);
	now = agent_now();
	if (!load_ts || !mod_scanned)
		load_ts = mod_scanned ? now : agent.w.hdr->start_mono_ns;
	for (i = 0; i < nmods; i++) {
		if (mods[i].seen && !mods[i].written) {
			mods[i].rec->ts = load_ts;
			mods[i].rec->seq = mod_seq++;
			agent_event(mods[i].rec, mods[i].rec->h.size);
			mods[i].written = 1;
		}
	}
	for (i = 0; i < nmods;) {
		if (mods[i].seen) {
			i++;
			continue;
		}
		if (mods[i].written) {
			mods[i].rec->h.type = CBN_REC_MODULE_UNLOAD;
			mods[i].rec->ts = now;
			agent_event(mods[i].rec, mods[i].rec->h.size);
		}
		agent_free(mods[i].rec);
		agent_free(mods[i].name);
		mods[i] = mods[--nmods];
	}
	mod_scanned = 1;
out:
	snap_reclaim();
	pthread_mutex_unlock(&mod_lock);
}

/* Normal context, at a scan point (dlsym, a thread start, a stack taken
 * outside the handler): scan if a dlopen was entered since the last scan, so
 * that a stack through a library just loaded is walked in full. */
void modules_refresh(void)
{
	if (agent.w.hdr && modules_pending())
		modules_scan(0);
}

int modules_init(void)
{
	modules_scan(1);
	return nmods ? 0 : -1;
}

/* A forked child starts a new file: replay the map as it stands. */
void modules_after_fork_child(void)
{
	int i;

	pthread_mutex_init(&mod_lock, NULL);
	for (i = 0; i < nmods; i++)
		agent_event(mods[i].rec, mods[i].rec->h.size);
}

int modules_have(const char *prefix)
{
	size_t n = strlen(prefix);
	int i, found = 0;

	for (i = 0; i < nmods && !found; i++) {
		const char *b = strrchr(mods[i].name, '/');

		b = b ? b + 1 : mods[i].name;
		found = strncmp(b, prefix, n) == 0;
	}
	return found;
}

/*
 * dlopen interposer.  glibc's dlopen resolves $ORIGIN and DT_RUNPATH relative to
 * its caller (RETURN_ADDRESS in dlfcn/dlopen.c), so a C wrapper would make
 * every dlopen look like it came from us.  The x86-64 trampoline below notes
 * the time and then tail-jumps to the real dlopen with the caller's return
 * address untouched; the background thread (or the next dlclose/exit) writes
 * the LOAD with that time.
 */
AGENT_HIDDEN void *modules_dlopen_enter(void);
void *modules_dlopen_enter(void)
{
	static void *real;
	uint64_t zero = 0;

	if (!real)
		real = agent_real("dlopen");
	if (atomic_load(&agent.active))
		atomic_compare_exchange_strong(&mod_pending_ts, &zero, agent_now());
	return real;
}

/*
 * dlsym interposer: the same kind of trampoline (glibc's dlsym reads its
 * caller's address for RTLD_NEXT).  A program looks up what it has just
 * loaded: the module scan a dlopen left pending is done first, in the
 * program's thread, where a helper thread used to do it.  Not for the
 * agent's own lookups (caller: the agent's text, which may hold mod_lock).
 */
AGENT_HIDDEN void *modules_dlsym_enter(uintptr_t caller);
void *modules_dlsym_enter(uintptr_t caller)
{
	static void *(*_Atomic real)(void *, const char *);
	void *(*fn)(void *, const char *) = atomic_load(&real);

	if (!fn) {
		fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
		if (!fn)
			fn = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym",
								     "GLIBC_2.2.5");
		atomic_store(&real, fn);
	}
	if (modules_pending() && atomic_load(&agent.active) && !agent_is_self(caller) &&
	    !agent_tls.in_agent && !agent_sandboxed())
		modules_scan(0);
	return (void *)fn;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	".cfi_startproc\n"
	"	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call modules_dlopen_enter\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	"dlsym:\n"
	".cfi_startproc\n"
	"	pushq %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	movq 16(%rsp), %rdi\n"
	"	subq $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call modules_dlsym_enter\n"
	"	addq $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	".cfi_endproc\n"
	".size dlsym, .-dlsym\n");
#endif

__attribute__((visibility("default"))) int dlclose(void *handle)
{
	static int (*real)(void *);
	int ret;

	if (!real)
		real = (int (*)(void *))agent_real("dlclose");
	if (!real)
		return -1;
	/*
	 * The library's unwind tables go away with it: no unwind may run from
	 * here until the snapshot without it is published (samples meanwhile
	 * are PC-only, counted).
	 */
	unwind_quiesce();
	linkmap_close_begin();
	ret = real(handle);
	linkmap_close_end();
	unwind_invalidate();
	/* Under a seccomp filter: no scan here (its system calls), the next
	 * one elsewhere sees the unload. */
	if (atomic_load(&agent.active) && !agent_sandboxed())
		modules_scan(0);
	unwind_release();
	return ret;
}
