/*
 * kernel.c — after a run, name the kernel functions that kernel stacks hit:
 * the kernel's addresses change with every boot (KASLR), so only the launcher
 * that watched the run can read them from /proc/kallsyms.  It writes the few
 * symbols the session needs into DIR/kernel-symbols, which every later
 * `cbottleneck report DIR` (on any machine) reads.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "../format/reader.h"
#include "../symbols/ksym.h"
#include "../util/util.h"

struct kpcs {
	uint64_t *v;
	size_t n, cap;
	int oom;
};

static int kpc_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void kpcs_unique(struct kpcs *k)
{
	size_t i, o = 0;

	if (k->n == 0)
		return; /* qsort's base must not be NULL, even for 0 elements */
	qsort(k->v, k->n, sizeof(*k->v), kpc_cmp);
	for (i = 0; i < k->n; i++)
		if (!o || k->v[o - 1] != k->v[i])
			k->v[o++] = k->v[i];
	k->n = o;
}

static int kpcs_cb(void *ctx, const struct reader_rec *r)
{
	struct kpcs *k = ctx;
	const struct cbn_kstack *s;
	uint32_t i, j;

	if (r->type != CBN_REC_SAMPLE || !r->kstacks)
		return 0;
	for (i = 0, s = reader_kstack_first(r->kstacks); i < r->kstacks->nstacks;
	     i++, s = reader_kstack_next(s)) {
		for (j = 0; j < s->nframes; j++) {
			if (k->n == k->cap) {
				size_t cap = k->cap ? k->cap * 2 : 4096;
				uint64_t *v;

				kpcs_unique(k); /* most pcs repeat: make room first */
				if (k->n * 2 < k->cap)
					goto push;
				v = util_reallocarray(k->v, cap, sizeof(*v));
				if (!v) {
					k->oom = 1;
					return 1;
				}
				k->v = v;
				k->cap = cap;
			}
push:
			k->v[k->n++] = s->pc[j];
		}
	}
	return 0;
}

/* The kernel pcs of every session file whose agent took kernel stacks. */
static void kernel_collect(const char *dir, struct kpcs *k)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while (!k->oom && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name), ext = strlen(CBN_FILE_EXT);
		struct reader_file f;
		struct reader_result res;
		char path[PATH_MAX + 256];

		if (len <= ext || strcmp(e->d_name + len - ext, CBN_FILE_EXT) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (reader_open(path, &f, &res) != 0)
			continue;
		if (f.hdr.kstack_state == CBN_KSTACK_TAKEN && f.hdr.kstack_samples)
			reader_walk(&f, kpcs_cb, k, &res);
		reader_close(&f);
	}
	closedir(d);
}

void kernel_symbols_write(const char *dir, int verbose)
{
	struct kpcs k = {NULL, 0, 0, 0};
	struct ksym_table t;
	struct utsname u;
	char path[PATH_MAX + 64], note[256];
	int n;

	kernel_collect(dir, &k);
	if (k.n == 0 || k.oom)
		goto out;
	kpcs_unique(&k);
	n = ksym_read_kernel(&t);
	if (n == -ENOMEM)
		goto out;
	if (n < 0) {
		if (verbose)
			fprintf(stderr, "cbottleneck: cannot read /proc/kallsyms: kernel frames "
				"will show addresses only\n");
		goto out;
	}
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	snprintf(path, sizeof(path), "%s/%s", dir, CBN_KSYMS_FILE);
	if (t.hidden || t.n == 0)
		snprintf(note, sizeof(note), "cbottleneck kernel symbols, kernel %s: none (the kernel "
			 "hides its addresses: kptr_restrict; run as root or set "
			 "kernel.kptr_restrict=0)", u.release);
	else
		snprintf(note, sizeof(note), "cbottleneck kernel symbols, kernel %s: START END NAME",
			 u.release);
	n = ksym_write_file(&t, k.v, k.n, path, note);
	if (n < 0 && verbose)
		fprintf(stderr, "cbottleneck: cannot write %s: kernel frames will show addresses "
			"only\n", path);
	ksym_free(&t);
out:
	free(k.v);
}
