/*
 * cfi.c — a pc's frame rule read straight from the module's unwind tables:
 * the .eh_frame_hdr search table to the FDE, then the CIE's and the FDE's
 * call frame instructions run up to the pc (DWARF 4 §6.4, the LSB's
 * .eh_frame).  What libunwind does for a step, without its accessors, its
 * locks or its caches: the handler's walk (fastwalk.c) keeps the answers.
 * Only what the walk follows is kept (the CFA on rsp or rbp, the return
 * address at CFA - 8, rbp same or saved); any other rule that matters makes
 * the answer CFI_COMPLEX, and the caller unwinds with libunwind instead.
 * SIGNAL-SAFE: no allocation, no call out, every read bounded by the span.
 */
#include <string.h>

#include "cfi.h"

/* DW_EH_PE_* pointer encodings */
#define PE_OMIT 0xff
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

#define RA_COL 16
#define REMEMBER_MAX 8

struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t rd_u(struct cur *c, int n)
{
	uint64_t v = 0;

	if (c->bad || c->end - c->p < n) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, (size_t)n); /* little-endian */
	c->p += n;
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	int shift = 0;

	while (!c->bad) {
		unsigned char b;

		if (c->p >= c->end || shift > 63) {
			c->bad = 1;
			break;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	int shift = 0;
	unsigned char b = 0;

	while (!c->bad) {
		if (c->p >= c->end || shift > 63) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* An encoded pointer (no indirection: the tables the walk reads never
 * need one); rel: apply the application bits (pc-relative), else the
 * value alone (an FDE's pc range). */
static uint64_t rd_enc(struct cur *c, unsigned enc, int rel)
{
	const unsigned char *at = c->p;
	uint64_t v;

	if (enc == PE_OMIT || (enc & PE_INDIRECT)) {
		c->bad = 1;
		return 0;
	}
	switch (enc & 0x0f) {
	case PE_ABSPTR: v = rd_u(c, 8); break;
	case PE_ULEB128: v = rd_uleb(c); break;
	case PE_UDATA2: v = rd_u(c, 2); break;
	case PE_UDATA4: v = rd_u(c, 4); break;
	case PE_UDATA8: v = rd_u(c, 8); break;
	case PE_SLEB128: v = (uint64_t)rd_sleb(c); break;
	case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)rd_u(c, 2); break;
	case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)rd_u(c, 4); break;
	case PE_SDATA8: v = rd_u(c, 8); break;
	default: c->bad = 1; return 0;
	}
	if (!rel)
		return v;
	switch (enc & 0x70) {
	case 0: return v;
	case PE_PCREL: return v + (uint64_t)(uintptr_t)at;
	default: c->bad = 1; return 0;
	}
}

static size_t enc_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: return 8;
	case PE_UDATA4: case PE_SDATA4: return 4;
	case PE_UDATA2: case PE_SDATA2: return 2;
	default: return 0;
	}
}

/* v times the CIE's alignment factor, wrapping as the hardware does: a
 * malformed table's huge factor gives a huge offset, refused later, never
 * signed overflow. */
static int64_t scaled(uint64_t v, int64_t align)
{
	return (int64_t)(v * (uint64_t)align);
}

/* The rules the walk follows, for the registers it follows. */
enum how { H_SAME, H_UNDEF, H_OFFSET, H_OTHER };

struct state {
	uint8_t cfa_reg;
	uint8_t cfa_complex;
	int64_t cfa_off;
	uint8_t ra_how, rbp_how;
	int64_t ra_off, rbp_off;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	unsigned fde_enc;
	int has_z, signal;
	const unsigned char *insn, *insn_end;
};

static void set_reg(struct state *s, uint64_t reg, enum how h, int64_t off)
{
	if (reg == RA_COL) {
		s->ra_how = (uint8_t)h;
		s->ra_off = off;
	} else if (reg == CFI_REG_RBP) {
		s->rbp_how = (uint8_t)h;
		s->rbp_off = off;
	} else if (reg == CFI_REG_RSP && h != H_SAME && h != H_UNDEF) {
		/* rsp saved somewhere: the CFA is the caller's rsp on
		 * x86-64, a rule for rsp itself is out of the usual */
		s->cfa_complex = 1;
	}
}

static void restore_reg(struct state *s, const struct state *init, uint64_t reg)
{
	if (reg == RA_COL) {
		s->ra_how = init->ra_how;
		s->ra_off = init->ra_off;
	} else if (reg == CFI_REG_RBP) {
		s->rbp_how = init->rbp_how;
		s->rbp_off = init->rbp_off;
	}
}

/* Skip a DWARF expression block (the rule it gives is not followed). */
static int skip_block(struct cur *c)
{
	uint64_t n = rd_uleb(c);

	if (c->bad || (uint64_t)(c->end - c->p) < n)
		return -1;
	c->p += n;
	return 0;
}

struct remember {
	struct state stack[REMEMBER_MAX];
	int depth;
};

/* One instruction that does not move the location (op: its first byte,
 * not one of the packed forms).  0, or -1 on an unknown or malformed one. */
static int run_op(struct cur *c, const struct cie *ci, struct state *s, const struct state *init,
		  struct remember *rem, unsigned op)
{
	uint64_t reg;

	switch (op) {
	case 0x00: /* nop */
		return 0;
	case 0x05: /* offset_extended */
		reg = rd_uleb(c);
		set_reg(s, reg, H_OFFSET, scaled(rd_uleb(c), ci->data_align));
		return 0;
	case 0x06: /* restore_extended */
		restore_reg(s, init, rd_uleb(c));
		return 0;
	case 0x07: /* undefined */
		set_reg(s, rd_uleb(c), H_UNDEF, 0);
		return 0;
	case 0x08: /* same_value */
		set_reg(s, rd_uleb(c), H_SAME, 0);
		return 0;
	case 0x09: /* register */
	case 0x14: /* val_offset */
		reg = rd_uleb(c);
		(void)rd_uleb(c);
		set_reg(s, reg, H_OTHER, 0);
		return 0;
	case 0x15: /* val_offset_sf */
		reg = rd_uleb(c);
		(void)rd_sleb(c);
		set_reg(s, reg, H_OTHER, 0);
		return 0;
	case 0x0a: /* remember_state */
		if (rem->depth >= REMEMBER_MAX)
			return -1;
		rem->stack[rem->depth++] = *s;
		return 0;
	case 0x0b: /* restore_state */
		if (rem->depth <= 0)
			return -1;
		*s = rem->stack[--rem->depth];
		return 0;
	case 0x0c: /* def_cfa */
		s->cfa_reg = (uint8_t)rd_uleb(c);
		s->cfa_off = (int64_t)rd_uleb(c);
		s->cfa_complex = 0;
		return 0;
	case 0x0d: /* def_cfa_register */
		s->cfa_reg = (uint8_t)rd_uleb(c);
		return 0;
	case 0x0e: /* def_cfa_offset */
		s->cfa_off = (int64_t)rd_uleb(c);
		return 0;
	case 0x0f: /* def_cfa_expression */
		s->cfa_complex = 1;
		return skip_block(c);
	case 0x10: /* expression */
	case 0x16: /* val_expression */
		set_reg(s, rd_uleb(c), H_OTHER, 0);
		return skip_block(c);
	case 0x11: /* offset_extended_sf */
		reg = rd_uleb(c);
		set_reg(s, reg, H_OFFSET, scaled((uint64_t)rd_sleb(c), ci->data_align));
		return 0;
	case 0x12: /* def_cfa_sf */
		s->cfa_reg = (uint8_t)rd_uleb(c);
		s->cfa_off = scaled((uint64_t)rd_sleb(c), ci->data_align);
		s->cfa_complex = 0;
		return 0;
	case 0x13: /* def_cfa_offset_sf */
		s->cfa_off = scaled((uint64_t)rd_sleb(c), ci->data_align);
		return 0;
	case 0x2e: /* GNU_args_size */
		(void)rd_uleb(c);
		return 0;
	case 0x2f: /* GNU_negative_offset_extended */
		reg = rd_uleb(c);
		set_reg(s, reg, H_OFFSET, scaled(0 - rd_uleb(c), ci->data_align));
		return 0;
	default:
		return -1;
	}
}

/*
 * Run instructions [c) until the row that covers target: *loc, the row's
 * start, advanced as the program goes.  init: the CIE's state, for
 * DW_CFA_restore.  Returns 0 at the program's end, 1 at the first row past
 * target (stop there; *next: that row's start), -1 on a malformed program.
 */
static int run(struct cur *c, const struct cie *ci, struct state *s, const struct state *init,
	       uint64_t *loc, uint64_t target, uint64_t *next)
{
	struct remember rem;

	rem.depth = 0;
	while (c->p < c->end && !c->bad) {
		unsigned op = *c->p++, lo = op & 0x3f;
		uint64_t adv;

		switch (op & 0xc0) {
		case 0x40:
			adv = lo * ci->code_align;
			break;
		case 0x80:
			set_reg(s, lo, H_OFFSET, scaled(rd_uleb(c), ci->data_align));
			continue;
		case 0xc0:
			restore_reg(s, init, lo);
			continue;
		default:
			if (op == 0x01) { /* set_loc */
				uint64_t to = rd_enc(c, ci->fde_enc, 1);

				if (c->bad)
					return -1;
				if (to > target) {
					*next = to;
					return 1;
				}
				*loc = to;
				continue;
			}
			if (op >= 0x02 && op <= 0x04) { /* advance_loc1, 2, 4 */
				adv = rd_u(c, op == 0x02 ? 1 : op == 0x03 ? 2 : 4) * ci->code_align;
				break;
			}
			if (run_op(c, ci, s, init, &rem, op) < 0)
				return -1;
			continue;
		}
		if (c->bad)
			return -1;
		if (*loc + adv > target) {
			*next = *loc + adv;
			return 1;
		}
		*loc += adv;
	}
	return c->bad ? -1 : 0;
}

/* The CIE at p (its length field), within span. */
static int read_cie(const unsigned char *p, const struct cfi_span *sp, struct cie *ci)
{
	struct cur c = {p, (const unsigned char *)sp->hi, 0};
	uint64_t len = rd_u(&c, 4), id, aug_len = 0;
	const char *aug;
	unsigned version;
	const unsigned char *aug_end = NULL;

	if (len == 0xffffffffu || len == 0 || c.bad || (uint64_t)(c.end - c.p) < len)
		return -1;
	c.end = c.p + len;
	id = rd_u(&c, 4);
	version = (unsigned)rd_u(&c, 1);
	if (c.bad || id != 0 || (version != 1 && version != 3))
		return -1;
	aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -1;
	c.p++;
	memset(ci, 0, sizeof(*ci));
	ci->fde_enc = PE_ABSPTR;
	if (aug[0] == 'e' && aug[1] == 'h')
		return -1; /* the old GCC "eh" form: not in today's binaries */
	ci->code_align = rd_uleb(&c);
	ci->data_align = rd_sleb(&c);
	ci->ra_reg = version == 1 ? rd_u(&c, 1) : rd_uleb(&c);
	if (aug[0] == 'z') {
		ci->has_z = 1;
		aug_len = rd_uleb(&c);
		if (c.bad || (uint64_t)(c.end - c.p) < aug_len)
			return -1;
		aug_end = c.p + aug_len;
		for (aug++; *aug; aug++) {
			unsigned enc;
			size_t n;

			if (*aug == 'L') {
				(void)rd_u(&c, 1);
			} else if (*aug == 'R') {
				ci->fde_enc = (unsigned)rd_u(&c, 1);
			} else if (*aug == 'S') {
				ci->signal = 1;
			} else if (*aug == 'P') {
				enc = (unsigned)rd_u(&c, 1);
				n = enc_size(enc);
				if (n && (size_t)(aug_end - c.p) >= n)
					c.p += n;
				else if ((enc & 0x0f) == PE_ULEB128)
					(void)rd_uleb(&c);
				else if ((enc & 0x0f) == PE_SLEB128)
					(void)rd_sleb(&c);
				else
					c.bad = 1;
			} else {
				return -1; /* a letter read before 'R' must be known */
			}
			if (c.bad || c.p > aug_end)
				return -1;
		}
		c.p = aug_end;
	} else if (aug[0]) {
		return -1;
	}
	if (c.bad || !ci->code_align || !ci->data_align)
		return -1;
	ci->insn = c.p;
	ci->insn_end = c.end;
	return 0;
}

/* The search table of a .eh_frame_hdr: *tab, *count entries of two
 * datarel sdata4 words (code start, FDE), sorted by start. */
static int hdr_table(uintptr_t hdr, const struct cfi_span *sp, const unsigned char **tab,
		     size_t *count)
{
	struct cur c = {(const unsigned char *)hdr, (const unsigned char *)sp->hi, 0};
	unsigned version, ptr_enc, cnt_enc, tab_enc;
	uint64_t n;

	if (hdr < sp->lo || hdr >= sp->hi)
		return CFI_BAD;
	version = (unsigned)rd_u(&c, 1);
	ptr_enc = (unsigned)rd_u(&c, 1);
	cnt_enc = (unsigned)rd_u(&c, 1);
	tab_enc = (unsigned)rd_u(&c, 1);
	if (c.bad || version != 1)
		return CFI_BAD;
	(void)rd_enc(&c, ptr_enc, 1);
	/* the table libgcc and the linkers write: datarel sdata4 pairs */
	if (cnt_enc == PE_OMIT || tab_enc != (PE_DATAREL | PE_SDATA4))
		return CFI_NONE;
	n = rd_enc(&c, cnt_enc, 0);
	if (c.bad || !n || n > (uint64_t)(c.end - c.p) / 8 || n > UINT32_MAX)
		return c.bad ? CFI_BAD : CFI_NONE;
	*tab = c.p;
	*count = (size_t)n;
	return CFI_OK;
}

static inline int32_t tab_start(const unsigned char *tab, size_t i)
{
	int32_t v;

	memcpy(&v, tab + i * 8, 4);
	return v;
}

/* The last entry in [lo, hi) whose start is at or below want, given that
 * entry lo's is. */
static size_t tab_search(const unsigned char *tab, size_t lo, size_t hi, int64_t want)
{
	size_t a = lo + 1;

	while (a < hi) {
		size_t mid = a + (hi - a) / 2;

		if (tab_start(tab, mid) <= want)
			a = mid + 1;
		else
			hi = mid;
	}
	return a - 1;
}

/* The FDE of entry i; fde: its length field. */
static int tab_fde(uintptr_t hdr, const struct cfi_span *sp, const unsigned char *tab, size_t i,
		   const unsigned char **fde)
{
	int32_t off;
	uintptr_t f;

	memcpy(&off, tab + i * 8 + 4, 4);
	f = hdr + (uintptr_t)(intptr_t)off;
	if (f < sp->lo || f >= sp->hi || sp->hi - f < 8)
		return CFI_BAD;
	*fde = (const unsigned char *)f;
	return CFI_OK;
}

/* The FDE covering target, by the search table; fde: its length field.
 * near, when not NULL: as cfi_find_near's. */
static int find_fde(uintptr_t hdr, const struct cfi_span *sp, uintptr_t target, uintptr_t pg_lo,
		    uintptr_t pg_hi, struct cfi_near *near, const unsigned char **fde)
{
	const unsigned char *tab;
	size_t count, i, j, k;
	int64_t want;
	int r = hdr_table(hdr, sp, &tab, &count);

	if (r != CFI_OK)
		return r;
	want = (int64_t)(target - hdr);
	if (want != (int64_t)(int32_t)want)
		return CFI_NONE;
	/* Entries [lo, hi) hold the answer when lo's start is at or below
	 * want and hi's above it: checked here, against the table itself,
	 * so that a bracket from anywhere gives the same answer as the
	 * whole table. */
	if (near && near->lo < near->hi && near->hi <= count &&
	    tab_start(tab, near->lo) <= want &&
	    (near->hi == count || tab_start(tab, near->hi) > want))
		return tab_fde(hdr, sp, tab, tab_search(tab, near->lo, near->hi, want), fde);
	if (tab_start(tab, 0) > want)
		return CFI_NONE;
	i = tab_search(tab, 0, count, want);
	if (near) {
		/* the entries of target's page of code, from i outwards (a few
		 * lines the search just read); at most CFI_NEAR_SCAN each way,
		 * a page of tiny functions then bracketing only part of it */
		int64_t plo = (int64_t)(pg_lo - hdr), phi = (int64_t)(pg_hi - hdr);

		for (j = i; j > 0 && i - j < CFI_NEAR_SCAN && tab_start(tab, j) > plo; j--)
			;
		for (k = i + 1; k < count && k - i < CFI_NEAR_SCAN && tab_start(tab, k) < phi; k++)
			;
		near->lo = (uint32_t)j;
		near->hi = (uint32_t)k;
	}
	return tab_fde(hdr, sp, tab, i, fde);
}

int cfi_find(uintptr_t hdr, const struct cfi_span *sp, uintptr_t target, uintptr_t *fde)
{
	const unsigned char *f = NULL;
	int k = find_fde(hdr, sp, target, 0, 0, NULL, &f);

	*fde = (uintptr_t)f;
	return k;
}

int cfi_find_near(uintptr_t hdr, const struct cfi_span *sp, uintptr_t target, uintptr_t pg_lo,
		  uintptr_t pg_hi, struct cfi_near *near, uintptr_t *fde)
{
	const unsigned char *f = NULL;
	int k = find_fde(hdr, sp, target, pg_lo, pg_hi, near, &f);

	*fde = (uintptr_t)f;
	return k;
}

int cfi_lookup(uintptr_t hdr, const struct cfi_span *sp, uintptr_t target, struct cfi_rule *out)
{
	uintptr_t fde;
	int k = cfi_find(hdr, sp, target, &fde);

	return k != CFI_OK ? k : cfi_rule_at(fde, sp, target, out);
}

int cfi_rule_at(uintptr_t fde_at, const struct cfi_span *sp, uintptr_t target, struct cfi_rule *out)
{
	uint64_t lo, hi;

	return cfi_rule_row(fde_at, sp, target, out, &lo, &hi);
}

int cfi_rule_row(uintptr_t fde_at, const struct cfi_span *sp, uintptr_t target,
		 struct cfi_rule *out, uint64_t *row_lo, uint64_t *row_hi)
{
	const unsigned char *fde = (const unsigned char *)fde_at, *cie_p;
	struct cur c;
	struct cie ci;
	struct state s, init;
	uint64_t len, cie_off, start, range, loc, next;
	int k;

	if (fde_at < sp->lo || fde_at >= sp->hi)
		return CFI_BAD;
	c.p = fde;
	c.end = (const unsigned char *)sp->hi;
	c.bad = 0;
	len = rd_u(&c, 4);
	if (len == 0xffffffffu || len < 8 || (uint64_t)(c.end - c.p) < len)
		return CFI_BAD;
	c.end = c.p + len;
	cie_off = rd_u(&c, 4);
	if (!cie_off || cie_off > (uint64_t)(c.p - 4 - (const unsigned char *)sp->lo))
		return CFI_BAD;
	cie_p = c.p - 4 - cie_off;
	if (read_cie(cie_p, sp, &ci) < 0)
		return CFI_BAD;
	start = rd_enc(&c, ci.fde_enc, 1);
	range = rd_enc(&c, ci.fde_enc & 0x0f, 0);
	if (c.bad)
		return CFI_BAD;
	if (target < start || target - start >= range)
		return CFI_NONE;
	if (ci.signal || ci.ra_reg != RA_COL)
		return CFI_COMPLEX;
	if (ci.has_z) {
		uint64_t n = rd_uleb(&c);

		if (c.bad || (uint64_t)(c.end - c.p) < n)
			return CFI_BAD;
		c.p += n;
	}
	/* the CIE's initial rules, then the FDE's up to target */
	memset(&s, 0, sizeof(s));
	s.ra_how = H_SAME;
	s.rbp_how = H_SAME;
	loc = start;
	{
		struct cur ic = {ci.insn, ci.insn_end, 0};

		if (run(&ic, &ci, &s, &s, &loc, UINT64_MAX, &next) != 0)
			return CFI_BAD;
	}
	init = s;
	loc = start;
	next = start + range;
	k = run(&c, &ci, &s, &init, &loc, target, &next);
	if (k < 0)
		return CFI_BAD;
	/* the row: from the last location the program reached at or below
	 * target to the next one past it (the FDE's end at the program's) */
	*row_lo = loc;
	*row_hi = k == 0 || next > start + range ? start + range : next;
	memset(out, 0, sizeof(*out));
	if (s.ra_how == H_UNDEF) {
		out->kind = CFI_END;
		return CFI_END;
	}
	if (s.cfa_complex || (s.cfa_reg != CFI_REG_RSP && s.cfa_reg != CFI_REG_RBP) ||
	    s.ra_how != H_OFFSET || s.ra_off != -8 || s.rbp_how == H_OTHER ||
	    s.cfa_off != (int64_t)(int32_t)s.cfa_off || s.rbp_off != (int64_t)(int32_t)s.rbp_off)
		return CFI_COMPLEX;
	out->kind = CFI_OK;
	out->cfa_reg = s.cfa_reg;
	out->cfa_off = (int32_t)s.cfa_off;
	out->rbp_where = s.rbp_how == H_OFFSET ? CFI_RBP_SAVED
			 : s.rbp_how == H_UNDEF ? CFI_RBP_LOST : CFI_RBP_SAME;
	out->rbp_off = (int32_t)s.rbp_off;
	return CFI_OK;
}
