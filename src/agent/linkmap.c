/*
 * linkmap.c — the loader's list of loaded objects, read without its lock:
 * what dl_iterate_phdr reports (address, name, program headers), walked from
 * _r_debug (the list the loader keeps for debuggers) with reads that fail
 * instead of faulting.  No loader lock is taken, so a fork child whose parent
 * had another thread inside dl_iterate_phdr (glibc resets dl_load_lock in the
 * child, not dl_load_write_lock, which that holds) can still scan: no helper
 * thread has to find out first whether the lock was lost.
 *
 * Consistency: the loader marks the list RT_ADD or RT_DELETE while it
 * changes it and RT_CONSISTENT once done (r_state, elf/dl-debug.c); a walk
 * that does not see RT_CONSISTENT before and after is tried again.  A node
 * appended by a dlopen is complete before it is linked
 * (_dl_add_to_namespace_list).  Nothing is unmapped under a walk and its
 * callbacks: the dlclose interposer waits for walks under way before the
 * real call, and a walk does not start while one is under way (a library's
 * destructor that calls dlsym: that scan waits for the next scan point).
 * The walk's own reads fail instead of faulting even so (an object glibc
 * unloads without dlclose: a failed dlopen's).  Normal context.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/uio.h>
#include <time.h>

#include "floor.h"
#include "linkmap.h"

#define LINKMAP_MAX 8192                 /* objects per namespace, a loop guard */
#define LINKMAP_PHNUM 64                 /* program headers kept per object */
#define LINKMAP_NS 16                    /* dlmopen namespaces */

/* Interposed dlclose calls under way, and walks under way: each side
 * stores its count, then loads the other's (sequentially consistent), so a
 * walk and a dlclose never overlap. */
static _Atomic int linkmap_closing, linkmap_walking;

void linkmap_close_begin(void)
{
	struct timespec ms = {0, 100000};
	int i;

	atomic_fetch_add(&linkmap_closing, 1);
	/* a walk takes about a millisecond; never wait for ever */
	for (i = 0; i < 20000 && atomic_load(&linkmap_walking) > 0; i++)
		nanosleep(&ms, NULL);
}

void linkmap_close_end(void)
{
	atomic_fetch_sub(&linkmap_closing, 1);
}

/* The rest of a NUL-terminated string at src into out (cap bytes), n of
 * them read already, in pieces that do not cross a page (the string may
 * end just before an unmapped one). */
static int linkmap_str(char *out, size_t cap, uintptr_t src, size_t n)
{
	while (n + 1 < cap) {
		size_t room = 4096 - ((src + n) & 4095), want = cap - 1 - n, i;

		if (want > room)
			want = room;
		if (want > 256)
			want = 256;
		if (agent_vmread(out + n, src + n, want) < 0)
			return -1;
		for (i = 0; i < want; i++)
			if (!out[n + i])
				return 0;
		n += want;
	}
	out[n] = '\0';
	return 0;
}

struct linkmap_obj {
	struct dl_phdr_info info;
	ElfW(Phdr) ph[LINKMAP_PHNUM];
	char name[4096];
	unsigned char page[4096];
};

/* The program headers of the object loaded at bias addr: the executable's
 * from the auxiliary vector, any other's from its ELF header, which a shared
 * object's first PT_LOAD (file offset 0, address 0) maps at addr. */
static int linkmap_phdrs(struct linkmap_obj *o, uintptr_t addr, int main_map)
{
	ElfW(Ehdr) eh;
	int i, first_load = 0;

	if (main_map) {
		uintptr_t ph = getauxval(AT_PHDR);
		unsigned long n = getauxval(AT_PHNUM);

		if (!ph || !n || n > LINKMAP_PHNUM)
			return -1;
		o->info.dlpi_phnum = (ElfW(Half))n;
		return agent_vmread(o->ph, ph, n * sizeof(ElfW(Phdr)));
	}
	/* The header and, nearly always, the program headers after it: one
	 * read of the first page. */
	if (agent_vmread(o->page, addr, sizeof(o->page)) < 0)
		return -1;
	memcpy(&eh, o->page, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phentsize != sizeof(ElfW(Phdr)) ||
	    !eh.e_phnum || eh.e_phnum > LINKMAP_PHNUM)
		return -1;
	if (eh.e_phoff + (size_t)eh.e_phnum * sizeof(ElfW(Phdr)) <= sizeof(o->page))
		memcpy(o->ph, o->page + eh.e_phoff, (size_t)eh.e_phnum * sizeof(ElfW(Phdr)));
	else if (agent_vmread(o->ph, addr + eh.e_phoff, (size_t)eh.e_phnum * sizeof(ElfW(Phdr))) < 0)
		return -1;
	o->info.dlpi_phnum = eh.e_phnum;
	for (i = 0; i < eh.e_phnum; i++)
		if (o->ph[i].p_type == PT_LOAD && o->ph[i].p_offset == 0 && o->ph[i].p_vaddr == 0)
			first_load = 1;
	return first_load ? 0 : -1; /* a prelinked object: its header is elsewhere */
}

/*
 * The name of the object at lm into o->name and, in the same system call,
 * the next node into *next (*have_next: 1 when it was read): one read an
 * object where there were two.  The name's first piece stops at its page's
 * end, as linkmap_str's do.
 */
static int linkmap_name(struct linkmap_obj *o, const struct link_map *lm, struct link_map *next,
			int *have_next)
{
	uintptr_t src = (uintptr_t)lm->l_name;
	size_t want = 4096 - (src & 4095), i;
	struct iovec loc[2], rem[2];
	long r;

	*have_next = 0;
	o->name[0] = '\0';
	if (!src)
		return 0;
	if (want > 256)
		want = 256;
	loc[0] = (struct iovec){o->name, want};
	rem[0] = (struct iovec){(void *)src, want};
	loc[1] = (struct iovec){next, sizeof(*next)};
	rem[1] = (struct iovec){(void *)lm->l_next, sizeof(*next)};
	r = agent_vmreadv(loc, rem, lm->l_next ? 2 : 1);
	if (r < (long)want)
		return linkmap_str(o->name, sizeof(o->name), src, 0);
	*have_next = lm->l_next && r == (long)(want + sizeof(*next));
	for (i = 0; i < want; i++)
		if (!o->name[i])
			return 0;
	return linkmap_str(o->name, sizeof(o->name), src, want);
}

/*
 * The base namespace's nodes and names as the last walk met them, read
 * again all at once before the next walk: a walk reads each node and its
 * name in a system call of its own, and a program that loads libraries
 * one by one (Python importing extension modules: a dlopen, then a dlsym,
 * which scans) pays the whole list at each: `import torch` made some 7,000
 * such reads.  Each node read so is used only where the walk reaches the
 * same address and the node's name pointer is the one whose text was read
 * with it; anything else is read as before.  Callers hold modules_lock.
 */
#define LINKMAP_BATCH 512
#define LINKMAP_PIECE 256

static struct {
	int n;                           /* nodes the last walk met, up to LINKMAP_BATCH */
	int got;                         /* of them, read whole by linkmap_batch_read */
	uintptr_t node[LINKMAP_BATCH];
	uintptr_t name[LINKMAP_BATCH];   /* its l_name then */
	struct link_map lm[LINKMAP_BATCH];
	char text[LINKMAP_BATCH][LINKMAP_PIECE];
	struct iovec loc[2 * LINKMAP_BATCH], rem[2 * LINKMAP_BATCH];
} lb;

/* The last walk's nodes and names, in one system call (AGENT_VMREAD_PIECES
 * pieces at most each): lb.got of them came whole. */
static void linkmap_batch_read(void)
{
	int i, k, p, got = 0;
	long r;

	for (i = 0; i < lb.n; i++) {
		size_t want = lb.name[i] ? 4096 - (lb.name[i] & 4095) : 0;

		if (want > LINKMAP_PIECE)
			want = LINKMAP_PIECE;
		lb.loc[2 * i] = (struct iovec){&lb.lm[i], sizeof(lb.lm[i])};
		lb.rem[2 * i] = (struct iovec){(void *)lb.node[i], sizeof(lb.lm[i])};
		/* no name: an empty piece, at the node (never a null source) */
		lb.loc[2 * i + 1] = (struct iovec){lb.text[i], want};
		lb.rem[2 * i + 1] =
			(struct iovec){(void *)(lb.name[i] ? lb.name[i] : lb.node[i]), want};
	}
	for (p = 0; p < 2 * lb.n; p += k) {
		k = 2 * lb.n - p < AGENT_VMREAD_PIECES ? 2 * lb.n - p : AGENT_VMREAD_PIECES;
		r = agent_vmreadv(lb.loc + p, lb.rem + p, k);
		/* whole pieces, in order, up to the first short one */
		for (i = p; i < p + k && r >= (long)lb.loc[i].iov_len; i++) {
			r -= (long)lb.loc[i].iov_len;
			if (i & 1)
				got = i / 2 + 1;
		}
		if (i < p + k)
			break;
	}
	lb.got = got;
}

/* Node i of the last walk, at l, as the batch read it: its name into o
 * when its text was read with it (else linkmap_name's reads). */
static int linkmap_batch_node(int i, uintptr_t l, struct link_map *lm, struct linkmap_obj *o)
{
	struct link_map next;
	int have;

	if (i >= lb.got || lb.node[i] != l)
		return -1;
	*lm = lb.lm[i];
	if ((uintptr_t)lm->l_name == lb.name[i] && lb.name[i] &&
	    memchr(lb.text[i], 0, lb.loc[2 * i + 1].iov_len)) {
		memcpy(o->name, lb.text[i], strlen(lb.text[i]) + 1);
		return 0;
	}
	return linkmap_name(o, lm, &next, &have);
}

/* One namespace's list from its first object; the callback's nonzero return
 * stops the walk (returned), -EAGAIN when a read failed.  known: the
 * program headers already read of an object at addr with that name and
 * dynamic section (NULL: read them). */
static int linkmap_list(uintptr_t l, int base_ns, struct linkmap_obj *o, linkmap_known_fn known,
			int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	struct link_map lm, next;
	const ElfW(Phdr) *kph;
	ElfW(Half) kn;
	int i, ret, have = 0, batch = base_ns && lb.n && lb.node[0] == l;

	if (batch)
		linkmap_batch_read();
	for (i = 0; l && i < LINKMAP_MAX; i++, l = (uintptr_t)lm.l_next) {
		if (batch && linkmap_batch_node(i, l, &lm, o) == 0) {
			have = 0;
		} else {
			batch = 0; /* off the last walk's chain: read as it goes */
			if (have)
				lm = next;
			else if (agent_vmread(&lm, l, sizeof(lm)) < 0)
				return -EAGAIN;
			if (linkmap_name(o, &lm, &next, &have) < 0)
				return -EAGAIN;
		}
		if (base_ns && i < LINKMAP_BATCH) {
			lb.node[i] = l;
			lb.name[i] = (uintptr_t)lm.l_name;
			lb.n = i + 1;
		}
		memset(&o->info, 0, sizeof(o->info));
		o->info.dlpi_phdr = o->ph;
		if (!(base_ns && i == 0) && known &&
		    (kph = known((uintptr_t)lm.l_addr, o->name, (uintptr_t)lm.l_ld, &kn, arg))) {
			o->info.dlpi_phdr = kph;
			o->info.dlpi_phnum = kn;
		} else if (linkmap_phdrs(o, (uintptr_t)lm.l_addr, base_ns && i == 0) < 0) {
			continue; /* nothing to read (or a prelinked object) */
		}
		o->info.dlpi_addr = lm.l_addr;
		o->info.dlpi_name = o->name;
		ret = cb(&o->info, sizeof(o->info), arg);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * dl_iterate_phdr without the loader's lock: cb gets each object in the
 * loader's order (the executable first).  Returns the callback's nonzero
 * value, 0 when the walk was whole and consistent, -EAGAIN when the loader
 * was changing the list (the caller tries later; what cb saw may be partial).
 */
int linkmap_walk(int (*cb)(struct dl_phdr_info *, size_t, void *), linkmap_known_fn known,
		 void *arg)
{
	static struct linkmap_obj obj; /* callers hold modules_lock */
	struct r_debug_extended rd;
	uintptr_t next = (uintptr_t)&_r_debug;
	int ns, ret = 0;

	atomic_fetch_add(&linkmap_walking, 1);
	if (atomic_load(&linkmap_closing) > 0) {
		ret = -EAGAIN;
		goto out;
	}
	for (ns = 0; next && ns < LINKMAP_NS && !ret; ns++) {
		memset(&rd, 0, sizeof(rd));
		if (agent_vmread(&rd, next, sizeof(rd)) < 0 && agent_vmread(&rd, next, sizeof(rd.base)) < 0) {
			ret = -EAGAIN;
			break;
		}
		if (rd.base.r_state != RT_CONSISTENT) {
			ret = -EAGAIN;
			break;
		}
		ret = linkmap_list((uintptr_t)rd.base.r_map, ns == 0, &obj, known, cb, arg);
		next = rd.base.r_version >= 2 ? (uintptr_t)rd.r_next : 0;
	}
	if (!ret && _r_debug.r_state != RT_CONSISTENT)
		ret = -EAGAIN;
out:
	atomic_fetch_sub(&linkmap_walking, 1);
	return ret;
}
