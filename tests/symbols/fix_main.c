/*
 * fix_main.c — executable fixture for the symbolizer tests (built -O2 -g as a
 * PIE, then copied stripped / with split debug info).  Run, it prints one
 * MARK line per call site (see fix_mark.h) and its own build-id, which the
 * tests resolve and compare with the MARK: comments in this file.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr1, dl_iterate_phdr */
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fix_mark.h"

void lib_exported_fn(fix_mark_fn mark, int n);
void lib_dispatch(fix_mark_fn mark, const unsigned char *ops);
#ifdef FIX_ASM
void fix_asm_fn(fix_mark_fn mark); /* fix_asm.S */
#endif

static volatile int fix_sink;

#ifdef FIX_CHANGED
/* The "rebuilt" binary: code before everything else shifts all addresses. */
__attribute__((noinline, used)) static int fix_changed_pad(int n)
{
	for (int i = 0; i < n; i++)
		fix_sink += i * i + n;
	return fix_sink;
}
#endif

__attribute__((noinline)) static void fix_mark(const char *tag)
{
	void *ra = __builtin_return_address(0);
	Dl_info info;
	struct link_map *lm = NULL;
	char exe[4096];

	if (!dladdr1(ra, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return;
	const char *path = lm->l_name;
	if (!path || !path[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		path = exe;
	}
	printf("MARK %s %s 0x%lx\n", tag, path,
	       (unsigned long)((unsigned long)ra - 1 - lm->l_addr));
}

static inline __attribute__((always_inline)) void leaf_inl(int x)
{
	fix_sink += x;
	if (fix_sink != -12345)
		fix_mark("inl"); /* MARK:inl */
	fix_sink += x;
}

static inline __attribute__((always_inline)) void mid_inl(int x)
{
	fix_sink += x;
	leaf_inl(x + 1); /* MARK:mid_call */
	fix_sink += x;
}

__attribute__((noinline)) void outer_fn(int x)
{
	fix_sink += x;
	mid_inl(x * 3); /* MARK:outer_call */
	fix_sink += x;
}

__attribute__((noinline)) int plain_fn(int n)
{
	int r = n * 7;
	fix_sink += r;
	fix_mark("plain"); /* MARK:plain */
	return r + fix_sink;
}

static int fix_note_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0; /* only the main program */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const unsigned char *desc =
				(const unsigned char *)p + sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0) {
				printf("BUILDID ");
				for (unsigned j = 0; j < nh->n_descsz; j++)
					printf("%02x", desc[j]);
				printf("\n");
				return 1;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	(void)argv;
	dl_iterate_phdr(fix_note_cb, NULL);
	outer_fn(argc);
	plain_fn(argc);
	lib_exported_fn(fix_mark, argc);
	lib_dispatch(fix_mark, (const unsigned char[]){1, 5, 2, 0});
#ifdef FIX_ASM
	fix_asm_fn(fix_mark);
#endif
	return 0;
}
