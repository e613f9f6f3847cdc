/*
 * test_linkmap.c — unit test of src/agent/linkmap.c (the loader's list read
 * without its lock) and of floor.c's reads that fail instead of faulting:
 * a walk gives what dl_iterate_phdr gives, object for object; a walk told
 * the headers it already knows reads none of them again and gives the same;
 * a library loaded between walks is read in full; the walks after loads
 * and unloads (a name longer than the piece read with its node, a node
 * gone from the middle and from the end) give what dl_iterate_phdr gives;
 * pieces read in one call, eight or forty, stop at the first unmapped one; and a fork child's reads read the child,
 * not its parent (the pid kept in a page the child sees wiped).
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib.h"
#include "env.h"
#include "floor.h"
#include "linkmap.h"
#include "writer.h"

/* floor.c's two calls into the rest of the agent, not reached here */
const char *agent_getenv(const char *name)
{
	(void)name;
	return NULL;
}

int writer_append_event(struct writer *w, const void *rec, size_t size)
{
	(void)w;
	(void)rec;
	(void)size;
	return -1;
}

#define MAXOBJ 512

struct obj {
	uintptr_t addr;
	char name[512];
	int phnum;
	ElfW(Phdr) ph[64];
};

struct list {
	struct obj o[MAXOBJ];
	int n;
};

static struct list by_loader, by_walk, known_walk;

static int keep(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct list *l = arg;
	struct obj *o;

	(void)size;
	if (l->n == MAXOBJ || info->dlpi_phnum > 64)
		return 0;
	o = &l->o[l->n++];
	o->addr = info->dlpi_addr;
	snprintf(o->name, sizeof(o->name), "%s", info->dlpi_name ? info->dlpi_name : "");
	o->phnum = info->dlpi_phnum;
	memcpy(o->ph, info->dlpi_phdr, (size_t)o->phnum * sizeof(ElfW(Phdr)));
	return 0;
}

static int same_lists(const struct list *a, const struct list *b)
{
	int i, diff = 0;

	if (a->n != b->n) {
		fprintf(stderr, "objects: %d against %d\n", a->n, b->n);
		return 0;
	}
	for (i = 0; i < a->n; i++)
		if (a->o[i].addr != b->o[i].addr || strcmp(a->o[i].name, b->o[i].name) != 0 ||
		    a->o[i].phnum != b->o[i].phnum ||
		    memcmp(a->o[i].ph, b->o[i].ph, (size_t)a->o[i].phnum * sizeof(ElfW(Phdr)))) {
			fprintf(stderr, "object %d: %s at %#lx against %s at %#lx\n", i,
				a->o[i].name, (unsigned long)a->o[i].addr, b->o[i].name,
				(unsigned long)b->o[i].addr);
			diff++;
		}
	return !diff;
}

/* known from an earlier walk's list; counts what it answered, and checks
 * the dynamic section the walk passes against the headers it holds */
struct known_state {
	const struct list *from;
	int asked, answered, bad_ld;
};

static struct known_state ks;

static const ElfW(Phdr) *known(uintptr_t addr, const char *name, uintptr_t ld, ElfW(Half) *phnum,
			       void *arg)
{
	int i, j;

	(void)arg;
	ks.asked++;
	for (i = 0; i < ks.from->n; i++) {
		const struct obj *o = &ks.from->o[i];

		if (o->addr != addr || strcmp(o->name, name) != 0)
			continue;
		for (j = 0; j < o->phnum; j++)
			if (o->ph[j].p_type == PT_DYNAMIC && o->addr + o->ph[j].p_vaddr != ld)
				ks.bad_ld++;
		ks.answered++;
		*phnum = (ElfW(Half))o->phnum;
		return o->ph;
	}
	return NULL;
}

static void test_walks(void)
{
	static struct list after;
	void *h;
	int i, found = 0;

	dl_iterate_phdr(keep, &by_loader);
	CHECK(linkmap_walk(keep, NULL, &by_walk) == 0);
	CHECK(by_walk.n > 3);
	CHECK(same_lists(&by_loader, &by_walk));

	ks.from = &by_walk;
	CHECK(linkmap_walk(keep, known, &known_walk) == 0);
	CHECK(same_lists(&by_walk, &known_walk));
	/* every object but the executable (its headers from the auxiliary
	 * vector) is asked about, and known */
	CHECK(ks.asked == by_walk.n - 1);
	CHECK(ks.answered == ks.asked);
	CHECK(ks.bad_ld == 0);

	/* a library loaded since: not known, so read */
	h = dlopen("libutil.so.1", RTLD_NOW);
	if (!h)
		h = dlopen("libresolv.so.2", RTLD_NOW);
	REQUIRE(h != NULL);
	memset(&ks, 0, sizeof(ks));
	ks.from = &by_walk;
	CHECK(linkmap_walk(keep, known, &after) == 0);
	memset(&by_loader, 0, sizeof(by_loader));
	dl_iterate_phdr(keep, &by_loader);
	CHECK(same_lists(&by_loader, &after));
	CHECK(after.n == by_walk.n + 1);
	CHECK(ks.answered == ks.asked - 1);
	for (i = 0; i < after.n; i++)
		found += strstr(after.o[i].name, "libutil") || strstr(after.o[i].name, "libresolv");
	CHECK(found == 1);
	dlclose(h);
}

static void test_pieces(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char a[16], b[16];
	struct iovec loc[2] = {{a, 16}, {b, 16}}, rem[2];

	REQUIRE(m != MAP_FAILED);
	memset(m, 0x5a, (size_t)page);
	REQUIRE(mprotect(m + page, (size_t)page, PROT_NONE) == 0);
	rem[0] = (struct iovec){m, 16};
	rem[1] = (struct iovec){m + 64, 16};
	CHECK(agent_vmreadv(loc, rem, 2) == 32);
	CHECK(a[0] == 0x5a && b[15] == 0x5a);
	rem[1] = (struct iovec){m + page, 16};
	CHECK(agent_vmreadv(loc, rem, 2) == 16);
	rem[0] = (struct iovec){m + page + 32, 16};
	CHECK(agent_vmreadv(loc, rem, 2) == -1);
	CHECK(agent_vmread(a, (uintptr_t)m + page - 8, 16) == -1);
	CHECK(agent_vmread(a, (uintptr_t)m + page - 16, 16) == 0);
	CHECK(agent_vmreadv(loc, rem, 0) == -1);

	/* many pieces in one call (linkmap.c reads a whole list so): up to
	 * the first that is not mapped */
	{
		static unsigned char out[40][16];
		static struct iovec ml[40], mr[40];
		int i;

		for (i = 0; i < 40; i++) {
			ml[i] = (struct iovec){out[i], 16};
			mr[i] = (struct iovec){m + 64 * i, 16};
		}
		CHECK(agent_vmreadv(ml, mr, 40) == 40 * 16);
		CHECK(out[39][15] == 0x5a);
		mr[30] = (struct iovec){m + page + 64, 16};
		CHECK(agent_vmreadv(ml, mr, 40) == 30 * 16);
	}
	munmap(m, (size_t)page * 2);
}

/* The loader's list and the walk's, after each change (linkmap.c reads the
 * last walk's nodes all at once, then follows the list from wherever it
 * leaves them): a name longer than a piece, a node removed in the middle,
 * one removed at the end. */
static int walk_matches(const char *what)
{
	static struct list loader, walk;
	int ok;

	memset(&loader, 0, sizeof(loader));
	memset(&walk, 0, sizeof(walk));
	dl_iterate_phdr(keep, &loader);
	ok = linkmap_walk(keep, NULL, &walk) == 0 && same_lists(&loader, &walk);
	if (!ok)
		fprintf(stderr, "test_linkmap: the walk %s differs\n", what);
	return ok;
}

static void test_batch(void)
{
	char dir[] = "/tmp/cbn-linkmap.XXXXXX", path[1024], real[512];
	struct link_map *lm = NULL;
	void *a, *b;
	size_t n;

	a = dlopen("libutil.so.1", RTLD_NOW);
	REQUIRE(a != NULL);
	REQUIRE(dlinfo(a, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0] == '/');
	snprintf(real, sizeof(real), "%s", lm->l_name);
	dlclose(a);
	REQUIRE(mkdtemp(dir) != NULL);
	/* two directories of 150 bytes each: the library's name is longer
	 * than the 256 bytes read with its node */
	n = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	memset(path + n, 'd', 150);
	path[n + 150] = '\0';
	REQUIRE(mkdir(path, 0700) == 0);
	n = strlen(path);
	path[n] = '/';
	memset(path + n + 1, 'e', 150);
	path[n + 151] = '\0';
	REQUIRE(mkdir(path, 0700) == 0);
	strcat(path, "/libutil.so.1");
	REQUIRE(symlink(real, path) == 0);

	CHECK(walk_matches("before"));
	CHECK(walk_matches("again"));
	a = dlopen(path, RTLD_NOW);
	REQUIRE(a != NULL);
	REQUIRE(dlinfo(a, RTLD_DI_LINKMAP, &lm) == 0 && strlen(lm->l_name) > 256);
	b = dlopen("libresolv.so.2", RTLD_NOW);
	REQUIRE(b != NULL);
	CHECK(walk_matches("after two loads"));
	CHECK(walk_matches("after two loads, again"));
	dlclose(a);
	CHECK(walk_matches("without the middle one"));
	dlclose(b);
	CHECK(walk_matches("without the last one"));
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
	rmdir(dir);
}

static volatile int mark = 1;

static void test_fork(void)
{
	int v = 0, st = 0;
	pid_t pid;

	CHECK(agent_vmread(&v, (uintptr_t)&mark, sizeof(v)) == 0 && v == 1);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		/* the parent still holds 1 here: a read of the parent's pid
		 * would see that */
		mark = 2;
		v = 0;
		_exit(agent_vmread(&v, (uintptr_t)&mark, sizeof(v)) == 0 && v == 2 ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(mark == 1);
}

int main(void)
{
	agent_pid_init();
	test_pieces();
	test_fork();
	test_walks();
	test_batch();
	return test_result();
}
