/*
 * test_cfi.c — unit test of src/agent/cfi.c: the rule at each instruction
 * of assembly functions whose CFI says exactly what to expect (a frame on
 * rbp, a large stack, remember/restore state, the outermost frame, an
 * expression, a signal frame, code without CFI); every FDE of libc and of
 * this program read without a malformed answer; the search table searched
 * within a page's bracket (cfi_find_near) as over the whole; every pc of a
 * row (cfi_rule_row) with the same rule; and a copy of libc's
 * tables with bytes flipped at random, read within its bounds only (run
 * under the sanitizers, a read outside them fails).
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "testlib.h"
#include "cfi.h"

/* clang-format off */
__asm__(
	".text\n"
	".globl cfit_frame\n.type cfit_frame,@function\n"
	"cfit_frame:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"cfit_frame_1:\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"cfit_frame_2:\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	nop\n"
	"	.cfi_remember_state\n"
	"	popq %rbp\n"
	"cfit_frame_3:\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	.cfi_restore %rbp\n"
	"	ret\n"
	"cfit_frame_4:\n"
	"	.cfi_restore_state\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfit_frame, .-cfit_frame\n"

	".globl cfit_big\n.type cfit_big,@function\n"
	"cfit_big:\n"
	"	.cfi_startproc\n"
	"	subq $0x10000, %rsp\n"
	"cfit_big_1:\n"
	"	.cfi_def_cfa_offset 0x10008\n"
	"	addq $0x10000, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfit_big, .-cfit_big\n"

	".globl cfit_end\n.type cfit_end,@function\n"
	"cfit_end:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined %rip\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfit_end, .-cfit_end\n"

	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8, DW_OP_deref */
	".globl cfit_expr\n.type cfit_expr,@function\n"
	"cfit_expr:\n"
	"	.cfi_startproc\n"
	"	nop\n"
	"cfit_expr_1:\n"
	"	.cfi_escape 0x0f, 0x03, 0x77, 0x08, 0x06\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfit_expr, .-cfit_expr\n"

	".globl cfit_signal\n.type cfit_signal,@function\n"
	"cfit_signal:\n"
	"	.cfi_startproc\n"
	"	.cfi_signal_frame\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size cfit_signal, .-cfit_signal\n"

	".globl cfit_bare\n.type cfit_bare,@function\n"
	"cfit_bare:\n"
	"	nop\n"
	"	ret\n"
	".size cfit_bare, .-cfit_bare\n");
/* clang-format on */

extern char cfit_frame[], cfit_frame_1[], cfit_frame_2[], cfit_frame_3[], cfit_frame_4[];
extern char cfit_big[], cfit_big_1[], cfit_end[], cfit_expr[], cfit_expr_1[], cfit_signal[];
extern char cfit_bare[];

struct mod {
	const char *want;                /* "" the program, else a name's part */
	uintptr_t hdr;
	struct cfi_span span;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod *m = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	int i;

	(void)size;
	if (*m->want ? !strstr(name, m->want) : *name != 0)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			m->hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	for (i = 0; m->hdr && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && m->hdr >= a && m->hdr - a < ph->p_filesz) {
			m->span.lo = a;
			m->span.hi = a + ph->p_filesz;
		}
	}
	return 1;
}

static struct mod find(const char *want)
{
	struct mod m = {want, 0, {0, 0}};

	dl_iterate_phdr(find_cb, &m);
	return m;
}

static int rule_at(const struct mod *m, const void *pc, struct cfi_rule *r)
{
	memset(r, 0x5a, sizeof(*r));
	return cfi_lookup(m->hdr, &m->span, (uintptr_t)pc, r);
}

static void expect(const struct mod *m, const void *pc, int reg, int off, int rbp_where,
		   int rbp_off)
{
	struct cfi_rule r;
	int k = rule_at(m, pc, &r);

	CHECK(k == CFI_OK);
	if (k != CFI_OK)
		return;
	CHECK(r.cfa_reg == reg);
	CHECK(r.cfa_off == off);
	CHECK(r.rbp_where == rbp_where);
	if (rbp_where == CFI_RBP_SAVED)
		CHECK(r.rbp_off == rbp_off);
}

static void test_asm(void)
{
	struct mod m = find("");
	struct cfi_rule r;

	REQUIRE(m.hdr && m.span.hi);
	expect(&m, cfit_frame, CFI_REG_RSP, 8, CFI_RBP_SAME, 0);
	expect(&m, (const void *)((uintptr_t)cfit_frame_1 - 1), CFI_REG_RSP, 8, CFI_RBP_SAME, 0);
	expect(&m, cfit_frame_1, CFI_REG_RSP, 16, CFI_RBP_SAVED, -16);
	expect(&m, (const void *)((uintptr_t)cfit_frame_2 - 1), CFI_REG_RSP, 16, CFI_RBP_SAVED, -16);
	expect(&m, cfit_frame_2, CFI_REG_RBP, 16, CFI_RBP_SAVED, -16);
	expect(&m, cfit_frame_3, CFI_REG_RSP, 8, CFI_RBP_SAME, 0);
	expect(&m, cfit_frame_4, CFI_REG_RBP, 16, CFI_RBP_SAVED, -16);
	expect(&m, cfit_big, CFI_REG_RSP, 8, CFI_RBP_SAME, 0);
	expect(&m, cfit_big_1, CFI_REG_RSP, 0x10008, CFI_RBP_SAME, 0);
	CHECK(rule_at(&m, cfit_end, &r) == CFI_END && r.kind == CFI_END);
	expect(&m, cfit_expr, CFI_REG_RSP, 8, CFI_RBP_SAME, 0);
	CHECK(rule_at(&m, cfit_expr_1, &r) == CFI_COMPLEX);
	CHECK(rule_at(&m, cfit_signal, &r) == CFI_COMPLEX);
	CHECK(rule_at(&m, cfit_bare, &r) == CFI_NONE);
	CHECK(rule_at(&m, (const void *)8, &r) == CFI_NONE);
	/* a span that ends before the tables: nothing read past it */
	{
		struct mod cut = m;

		cut.span.hi = cut.hdr + 2;
		CHECK(rule_at(&cut, cfit_frame, &r) == CFI_BAD);
		cut.span.lo = cut.hdr + 1;
		CHECK(rule_at(&cut, cfit_frame, &r) == CFI_BAD);
	}
}

/* Every FDE of a module's search table, at its first byte and one past:
 * never CFI_BAD; returns how many gave CFI_OK. */
static long all_fdes(const struct mod *m, long *total)
{
	const unsigned char *h = (const unsigned char *)m->hdr;
	uint32_t count;
	long ok = 0, i;

	REQUIRE(h[0] == 1 && h[2] == 0x03 && h[3] == 0x3b); /* udata4 count, datarel sdata4 */
	memcpy(&count, h + 8, 4);
	*total = count;
	for (i = 0; i < (long)count; i++) {
		int32_t start;
		struct cfi_rule r;
		int k1, k2;

		memcpy(&start, h + 12 + i * 8, 4);
		k1 = rule_at(m, (const void *)(m->hdr + (intptr_t)start), &r);
		k2 = rule_at(m, (const void *)(m->hdr + (intptr_t)start + 1), &r);
		if (k1 == CFI_BAD || k2 == CFI_BAD) {
			fprintf(stderr, "FDE %ld of %ld: %d %d\n", i, (long)count, k1, k2);
			CHECK(k1 != CFI_BAD && k2 != CFI_BAD);
		}
		ok += k1 == CFI_OK;
	}
	return ok;
}

static void test_modules(void)
{
	struct mod libc = find("libc.so"), self = find("");
	long total, ok;

	REQUIRE(libc.hdr && libc.span.hi);
	ok = all_fdes(&libc, &total);
	printf("libc: %ld of %ld FDEs followed at their first instruction\n", ok, total);
	CHECK(total > 1000 && ok > total * 9 / 10);
	ok = all_fdes(&self, &total);
	CHECK(total > 5 && ok > 0);
}

/* The code span libc's search table covers: its first and last entries'
 * starts, relative to the table's header. */
static struct mod libc_span(int32_t *first, int32_t *last)
{
	struct mod libc = find("libc.so");
	const unsigned char *h = (const unsigned char *)libc.hdr;
	uint32_t count;

	REQUIRE(libc.hdr && h[0] == 1 && h[2] == 0x03 && h[3] == 0x3b);
	memcpy(&count, h + 8, 4);
	memcpy(first, h + 12, 4);
	memcpy(last, h + 12 + (size_t)(count - 1) * 8, 4);
	return libc;
}

/* cfi_find_near gives cfi_find's answer for every pc, whatever bracket it
 * is handed: the one it set for the pc's page (used, not searched again,
 * in most pages' later lookups), none, or garbage. */
static void test_near(void)
{
	int32_t first, last;
	struct mod libc = libc_span(&first, &last);
	uint32_t count;
	struct {
		uintptr_t page;
		struct cfi_near near;
	} pages[256];
	uint64_t rng = 0xfeedbeef;
	long i, used = 0, again = 0, differ = 0;

	memcpy(&count, (const unsigned char *)libc.hdr + 8, 4);
	memset(pages, 0, sizeof(pages));
	for (i = 0; i < 200000; i++) {
		/* a pc in the table's span, within 1 MiB, so that pages repeat */
		uintptr_t pc = libc.hdr + (uintptr_t)(intptr_t)first +
			       test_xorshift(&rng) % ((uint64_t)(last - first) < (1u << 20)
							      ? (uint64_t)(last - first) + 64
							      : (1u << 20));
		uintptr_t page = pc & ~(uintptr_t)4095, want = 0, got = 0;
		unsigned slot = (unsigned)(page >> 12) & 255;
		struct cfi_near n, garbage;
		int k1 = cfi_find(libc.hdr, &libc.span, pc, &want), k2, k3;

		if (pages[slot].page == page) {
			n = pages[slot].near;
			again++;
		} else {
			n.lo = n.hi = 0;
		}
		k2 = cfi_find_near(libc.hdr, &libc.span, pc, page, page + 4096, &n, &got);
		if (pages[slot].page == page && n.lo == pages[slot].near.lo && n.hi == pages[slot].near.hi)
			used++;
		pages[slot].page = page;
		pages[slot].near = n;
		differ += k1 != k2 || (k1 == CFI_OK && want != got);
		garbage.lo = (uint32_t)(test_xorshift(&rng) % (count + 2u));
		garbage.hi = (uint32_t)(test_xorshift(&rng) % (count + 2u));
		k3 = cfi_find_near(libc.hdr, &libc.span, pc, page, page + 4096, &garbage, &got);
		differ += k1 != k3 || (k1 == CFI_OK && want != got);
	}
	printf("near: %ld of %ld lookups in a page seen before searched its bracket alone; "
	       "%ld answers differed\n", used, again, differ);
	CHECK(differ == 0);
	CHECK(again > 1000 && used > again * 8 / 10);
}

/* cfi_rule_row's row: every pc in it has the target's rule (the walk keeps
 * a page's last row and gives its rule to any pc in it, unread). */
static void test_rows(void)
{
	int32_t first, last;
	struct mod libc = libc_span(&first, &last);
	uint64_t rng = 0xabcdef12;
	long i, rows = 0, wide = 0, differ = 0;

	for (i = 0; i < 20000; i++) {
		uintptr_t pc = libc.hdr + (uintptr_t)(intptr_t)first +
			       test_xorshift(&rng) % (uint64_t)(last - first), fde;
		struct cfi_rule r, q;
		uint64_t lo = 0, hi = 0, at[3];
		int k, j;

		if (cfi_find(libc.hdr, &libc.span, pc, &fde) != CFI_OK)
			continue;
		k = cfi_rule_row(fde, &libc.span, pc, &r, &lo, &hi);
		if (k != CFI_OK && k != CFI_END)
			continue;
		rows++;
		CHECK(lo <= pc && pc < hi);
		wide += hi - lo > 16;
		at[0] = lo;
		at[1] = hi - 1;
		at[2] = lo + test_xorshift(&rng) % (hi - lo);
		for (j = 0; j < 3; j++) {
			memset(&q, 0, sizeof(q));
			if (cfi_rule_at(fde, &libc.span, (uintptr_t)at[j], &q) != k ||
			    memcmp(&q, &r, sizeof(q)) != 0)
				differ++;
		}
	}
	printf("rows: %ld read, %ld wider than 16 bytes, %ld pcs in them with another rule\n",
	       rows, wide, differ);
	CHECK(rows > 10000 && wide > rows / 2);
	CHECK(differ == 0);
}

/* libc's tables copied, bytes flipped: every answer within the copy. */
static void test_flipped(void)
{
	struct mod libc = find("libc.so"), m;
	size_t len = libc.span.hi - libc.span.lo, off = libc.hdr - libc.span.lo;
	unsigned char *copy = malloc(len);
	uint64_t rng = 0x1234567;
	int round, i, bad = 0;

	REQUIRE(copy);
	for (round = 0; round < 40; round++) {
		memcpy(copy, (const void *)libc.span.lo, len);
		for (i = 0; i < 64; i++) {
			size_t at = off + test_xorshift(&rng) % (len - off);

			copy[at] ^= (unsigned char)(1u << (test_xorshift(&rng) & 7));
		}
		m.want = "";
		m.hdr = (uintptr_t)copy + off;
		m.span.lo = (uintptr_t)copy;
		m.span.hi = (uintptr_t)copy + len;
		for (i = 0; i < 2000; i++) {
			struct cfi_rule r;
			struct cfi_near n;
			uintptr_t pc = m.hdr + test_xorshift(&rng) % (len * 4) - len, f;
			int k = rule_at(&m, (const void *)pc, &r);

			bad += k == CFI_BAD;
			/* a bracket from anywhere: reads stay in the copy */
			n.lo = (uint32_t)test_xorshift(&rng);
			n.hi = (uint32_t)test_xorshift(&rng) % 4 ? n.lo + 8 : (uint32_t)-1;
			(void)cfi_find_near(m.hdr, &m.span, pc, pc & ~(uintptr_t)4095,
					    (pc & ~(uintptr_t)4095) + 4096, &n, &f);
		}
	}
	printf("flipped tables: %d malformed answers of 80000\n", bad);
	free(copy);
}

int main(void)
{
	test_asm();
	test_modules();
	test_near();
	test_rows();
	test_flipped();
	return test_result();
}
