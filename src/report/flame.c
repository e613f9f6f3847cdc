/*
 * flame.c — --flamegraph FILE.svg: a self-contained interactive flame graph
 * (root at the bottom, width proportional to samples, click to zoom, search,
 * hover details).  The boxes merge the stacks that analysis/cpu/stackw.h weighs,
 * by name (an operator's entry frame shows the operator); the script is
 * flame_js.h.
 * Width is CPU samples, or with --sample-type the host allocations' bytes or
 * objects (estimates, rounded per stack), or wall-clock ns (wall, offcpu),
 * where off-CPU stacks end in a "[off-CPU: KIND]" frame and frames that are
 * mostly off-CPU time are drawn blue.
 */
#include "util.h"
#include "analysis.h"
#include "export.h"
#include "flame_js.h"
#include "gz.h"
#include "ops_report.h"
#include "wait_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLAME_WIDTH 1200.0
#define FLAME_PAD 10.0 /* left and right margin */
#define FLAME_FRAME_H 16
#define FLAME_TOP 56          /* title, subtitle, buttons */
#define FLAME_BOTTOM 32       /* details line */
#define FLAME_MIN_FRAC 0.0005 /* frames under 0.05% of the total are left out */
#define FLAME_ROW_MIN_PX 2.0  /* the graph is as tall as its frames this wide */
#define FLAME_CHAR_W 7.2      /* 12px monospace, also assumed by the script */

/* One node of the merged tree: a function name at one depth under one parent. */
struct fnode {
	const char *name;
	int inlined;                  /* an inlined frame: drawn as "name [inlined]" */
	uint32_t parent, child, next; /* first child, next sibling; 0 = none */
	uint32_t depth;
	uint64_t total;
	uint64_t off;                 /* of total, off-CPU time (wall types) */
};

struct ftree {
	struct fnode *n;
	size_t len, cap;
	struct util_map index;        /* (parent, name, inlined) -> node */
	uint32_t maxdepth;
};

struct fnode_probe {
	const struct ftree *t;
	uint32_t parent;
	const char *name;
	int inlined;
};

static int fnode_eq(const void *ctx, uint32_t v)
{
	const struct fnode_probe *k = ctx;
	const struct fnode *c = &k->t->n[v];

	return c->parent == k->parent && c->inlined == k->inlined && !strcmp(c->name, k->name);
}

/* The child of parent named name, created when missing; 0 on OOM. */
static uint32_t flame_child(struct ftree *t, uint32_t parent, const char *name, int inlined)
{
	struct fnode_probe k = {t, parent, name, inlined};
	uint64_t h = util_mix64(util_fnv1a_str(name, UTIL_FNV_INIT) ^
				((uint64_t)parent << 1 | (uint64_t)(inlined != 0)));
	uint32_t v = util_map_find(&t->index, h, fnode_eq, &k);

	if (v != UINT32_MAX)
		return v;
	if (t->len >= UINT32_MAX - 1 || util_grow((void **)&t->n, &t->cap, t->len, sizeof(*t->n)) < 0 ||
	    util_map_put(&t->index, h, (uint32_t)t->len) < 0)
		return 0;
	uint32_t id = (uint32_t)t->len++;
	struct fnode *c = &t->n[id];

	memset(c, 0, sizeof(*c));
	c->name = name;
	c->inlined = inlined;
	c->parent = parent;
	c->depth = t->n[parent].depth + 1;
	c->next = t->n[parent].child;
	t->n[parent].child = id;
	if (c->depth > t->maxdepth)
		t->maxdepth = c->depth;
	return id;
}

/* The boxes of the stacks weighed under type, merged by name from the
 * root; weights rounded per slot to whole units. */
static int flame_build(const struct analysis *a, enum export_sample type, struct ftree *t)
{
	const struct profile *p = a->profile;
	const struct stackw *sw = a->stackw;
	/* slots per stack: (whole, truncated), and with the wall types the
	 * off-CPU kinds after those two */
	enum stackw_type st = (enum stackw_type)type;
	size_t per = stackw_per(st), nslots = stackw_nslots(sw, st);

	t->cap = 1024;
	t->n = calloc(t->cap, sizeof(*t->n));
	if (!t->n)
		return -ENOMEM;
	t->len = 1;
	t->n[0].name = "all";
	for (size_t i = 0; i < nslots; i++) {
		double dw = stackw_get(sw, st, i);
		uint64_t w = dw > 0 ? (uint64_t)llround(dw) : 0;
		uint64_t off = i % per >= 2 ? w : 0;
		uint32_t nf, cur = 0;
		const struct prof_frame *fr = stackw_frames(p, (uint32_t)(i / per), &nf);

		if (!w)
			continue;
		t->n[0].total += w;
		t->n[0].off += off;
		/* a stack cut at max depth lacks its root: keep it under one
		 * "[truncated]" frame rather than as towers of their own */
		if (i % per == 1 && nf) {
			cur = flame_child(t, 0, "[truncated]", 0);
			if (!cur)
				return -ENOMEM;
			t->n[cur].total += w;
		}
		for (size_t d = nf; d-- > 0;) {
			uint32_t fn = fr[d].func;
			/* a frame entering an operator shows the operator */
			const char *name = fn < p->nfuncs
				? report_frame_name(a->ops, fn, p->funcs[fn].name) : NULL;

			/* an inlined frame: its own box, named so (flamegraph.pl's "_[i]") */
			cur = flame_child(t, cur, name && *name ? name : "[unknown]", fr[d].inlined);
			if (!cur)
				return -ENOMEM;
			t->n[cur].total += w;
			t->n[cur].off += off;
		}
		/* the off-CPU kind as a leaf frame of its own, as perf's off-CPU
		 * flame graphs end a blocked stack */
		if (off) {
			cur = flame_child(t, cur, wait_offcpu_frame((uint32_t)(i % per - 2)), 0);
			if (!cur)
				return -ENOMEM;
			t->n[cur].total += w;
			t->n[cur].off += off;
		}
	}
	return 0;
}

/* XML text: the five specials escaped; bytes XML 1.0 forbids (control
 * characters, invalid UTF-8) become '?', so any name keeps the file well-formed. */
static void flame_xml(struct gz_file *f, const char *s, size_t maxchars)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t chars = 0;

	for (; *u && chars < maxchars; chars++) {
		switch (*u) {
		case '&':
			gz_puts(f, "&amp;");
			u++;
			continue;
		case '<':
			gz_puts(f, "&lt;");
			u++;
			continue;
		case '>':
			gz_puts(f, "&gt;");
			u++;
			continue;
		case '"':
			gz_puts(f, "&quot;");
			u++;
			continue;
		case '\'':
			gz_puts(f, "&apos;");
			u++;
			continue;
		default:
			break;
		}
		if (*u < 0x20 || *u == 0x7f) {
			gz_puts(f, "?");
			u++;
			continue;
		}
		if (*u < 0x80) {
			gz_write(f, u++, 1);
			continue;
		}
		size_t n = (*u >= 0xc2 && *u <= 0xdf)   ? 2
		           : (*u >= 0xe0 && *u <= 0xef) ? 3
		           : (*u >= 0xf0 && *u <= 0xf4) ? 4
		                                        : 0;
		uint32_t cp = n == 2 ? (*u & 0x1fu) : n == 3 ? (*u & 0x0fu) : (*u & 0x07u);
		size_t k;

		for (k = 1; k < n && (u[k] & 0xc0) == 0x80; k++)
			cp = (cp << 6) | (u[k] & 0x3fu);
		if (!n || k != n || (n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) || cp == 0xfffe || cp == 0xffff) {
			gz_puts(f, "?");
			u++;
			continue;
		}
		gz_write(f, u, n);
		u += n;
	}
}

/* Warm colours from the name, so a function has the same colour everywhere
 * and from run to run. */
static void flame_colour(const char *name, unsigned rgb[3])
{
	uint32_t h = util_fnv1a32_str(name);

	rgb[0] = 205 + (h % 51);
	rgb[1] = 40 + ((h >> 8) % 181);
	rgb[2] = (h >> 20) % 56;
}

/* Cold colours for off-CPU frames, from the name as the warm ones. */
static void flame_blue(const char *name, unsigned rgb[3])
{
	uint32_t h = util_fnv1a32_str(name);

	rgb[0] = 40 + (h % 60);
	rgb[1] = 90 + ((h >> 8) % 90);
	rgb[2] = 200 + ((h >> 20) % 56);
}

static int cmp_child_name(const void *a, const void *b)
{
	const struct fnode *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

struct flame_out {
	struct gz_file *f;
	const struct ftree *t;
	uint64_t total;
	double ybase; /* y of the root frame */
	double period_ms;
	const char *unit; /* "samples", "bytes", "allocations", "blocks" */
	uint32_t depth;   /* frames deeper than this are not drawn */
};

/* Write node i at sample offset off, then its children in name order. */
static int flame_emit(struct flame_out *o, uint32_t i, uint64_t off)
{
	const struct fnode *n = &o->t->n[i];
	double full = FLAME_WIDTH - 2 * FLAME_PAD;
	double x = FLAME_PAD + full * (double)off / (double)o->total;
	double w = full * (double)n->total / (double)o->total;
	double y = o->ybase - (double)n->depth * FLAME_FRAME_H;
	unsigned rgb[3];
	size_t nkids = 0, k = 0, fit;
	const struct fnode **kids = NULL;

	flame_colour(n->name, rgb);
	/* mostly off-CPU: blue, as off-CPU flame graphs draw waiting */
	if (2 * n->off > n->total)
		flame_blue(n->name, rgb);
	gz_puts(o->f, "<g class=\"f\"><title>");
	flame_xml(o->f, n->name, SIZE_MAX);
	if (n->inlined)
		gz_puts(o->f, " [inlined]");
	gz_printf(o->f, " (%" PRIu64 " %s, %.2f%%)</title>", n->total, o->unit,
	          100.0 * (double)n->total / (double)o->total);
	gz_printf(o->f,
	          "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" "
	          "rx=\"2\"/>",
	          x, y, w, FLAME_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	gz_printf(o->f, "<text x=\"%.2f\" y=\"%.0f\">", x + 3, y + 11.5);
	fit = w > 6 ? (size_t)((w - 6) / FLAME_CHAR_W) : 0;
	if (fit >= 3) {
		size_t len = strlen(n->name) + (n->inlined ? 10 : 0);

		/* counted in bytes; a cut inside a UTF-8 sequence becomes '?' */
		if (len <= fit) {
			flame_xml(o->f, n->name, SIZE_MAX);
			if (n->inlined)
				gz_puts(o->f, " [inlined]");
		} else {
			flame_xml(o->f, n->name, fit - 2);
			gz_puts(o->f, "..");
		}
	}
	gz_puts(o->f, "</text></g>\n");

	for (uint32_t c = n->child; c; c = o->t->n[c].next)
		nkids++;
	if (!nkids)
		return 0;
	kids = util_reallocarray(NULL, nkids, sizeof(*kids));
	if (!kids)
		return -ENOMEM;
	for (uint32_t c = n->child; c; c = o->t->n[c].next)
		kids[k++] = &o->t->n[c];
	qsort(kids, nkids, sizeof(*kids), cmp_child_name);
	for (k = 0; k < nkids; k++) {
		uint32_t ci = (uint32_t)(kids[k] - o->t->n);

		if ((double)kids[k]->total >= FLAME_MIN_FRAC * (double)o->total &&
		    kids[k]->depth <= o->depth) {
			int rc = flame_emit(o, ci, off);

			if (rc) {
				free(kids);
				return rc;
			}
		}
		off += kids[k]->total;
	}
	free(kids);
	return 0;
}

/* Depth of the deepest frame FLAME_ROW_MIN_PX wide or more (a parent is
 * always at least as wide as its children, so the width alone decides): a
 * thin deep tower (one 129-frame recursion of a few samples) would make the
 * graph thousands of pixels tall with its top blank, so that the SVG opened
 * on nothing but slivers. */
static uint32_t flame_drawn_depth(const struct ftree *t, uint64_t total)
{
	double px = (FLAME_WIDTH - 2 * FLAME_PAD) / (double)total;
	uint32_t d = 0;

	for (size_t i = 1; i < t->len; i++)
		if ((double)t->n[i].total * px >= FLAME_ROW_MIN_PX && t->n[i].depth > d)
			d = t->n[i].depth;
	return d;
}

int export_flamegraph(const struct analysis *a, const char *path, char *err, size_t errlen)
{
	return export_flamegraph_as(a, path, EXPORT_CPU, err, errlen);
}

int export_flamegraph_as(const struct analysis *a, const char *path, enum export_sample type,
			 char *err, size_t errlen)
{
	static const char *const units[] = {
		[EXPORT_CPU] = "samples",
		[EXPORT_ALLOC_SPACE] = "bytes allocated",
		[EXPORT_ALLOC_OBJECTS] = "allocations",
		[EXPORT_INUSE_SPACE] = "bytes in use at exit",
		[EXPORT_INUSE_OBJECTS] = "blocks in use at exit",
		[EXPORT_WALL] = "ns on and off CPU",
		[EXPORT_OFFCPU] = "ns off CPU",
	};
	const struct profile *p = a->profile;
	struct ftree t = {0};
	struct flame_out o = {0};
	uint32_t depth;
	double height;
	char cmd[512] = "";
	size_t cl = 0;
	int rc;

	if (export_sample_is_wall(type) && !export_has_offcpu(a)) {
		snprintf(err, errlen, "cannot weigh %s by %s: the run has no off-CPU data; "
			 "profile with --off-cpu", path, export_sample_name(type));
		return -1;
	}
	if (!export_sample_is_wall(type) && type != EXPORT_CPU && !export_has_memory(a)) {
		snprintf(err, errlen, "cannot weigh %s by %s: the run has no memory data; "
			 "profile with --memory", path, export_sample_name(type));
		return -1;
	}
	o.unit = (unsigned)type < sizeof(units) / sizeof(units[0]) ? units[type] : "samples";
	rc = flame_build(a, type, &t);
	if (rc) {
		snprintf(err, errlen, "cannot build flame graph %s: out of memory", path);
		goto out;
	}
	for (char **a = p->argv; a && *a && cl < sizeof(cmd) - 1; a++) {
		cl += (size_t)snprintf(cmd + cl, sizeof(cmd) - cl, "%s%s", cl ? " " : "", *a);
		if (cl >= sizeof(cmd))
			cl = sizeof(cmd) - 1;
	}
	o.total = t.n[0].total;
	o.t = &t;
	depth = o.depth = o.total ? flame_drawn_depth(&t, o.total) : 0;
	height = FLAME_TOP + (depth + 1) * FLAME_FRAME_H + FLAME_BOTTOM;
	o.ybase = FLAME_TOP + depth * FLAME_FRAME_H;

	rc = gz_open(&o.f, path, gz_path_wants_gzip(path));
	if (rc) {
		snprintf(err, errlen,
		         "cannot create %s: %s; check the directory exists and is writable", path,
		         strerror(-rc));
		goto out;
	}
	gz_printf(o.f,
	          "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	          "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
	          "height=\"%.0f\" "
	          "viewBox=\"0 0 %.0f %.0f\" data-full=\"%.2f\" data-pad=\"%.2f\">\n",
	          FLAME_WIDTH, height, FLAME_WIDTH, height, FLAME_WIDTH - 2 * FLAME_PAD, FLAME_PAD);
	gz_puts(o.f, "<style>\n"
	             "text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
	             "g.f { cursor: pointer; }\n"
	             "g.f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	             "g.f text { pointer-events: none; }\n"
	             ".button { fill: rgb(40,40,160); cursor: pointer; }\n"
	             "#title { font-size: 17px; text-anchor: middle; }\n"
	             "#subtitle { fill: rgb(90,90,90); text-anchor: middle; }\n"
	             "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n");
	gz_puts(o.f, flame_js);
	gz_puts(o.f, "]]></script>\n");
	gz_printf(
	    o.f,
	    "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(250,250,240)\"/>\n",
	    FLAME_WIDTH, height);
	gz_printf(o.f, "<text id=\"title\" x=\"%.0f\" y=\"22\">cbottleneck flame graph</text>\n",
	          FLAME_WIDTH / 2);
	gz_printf(o.f, "<text id=\"subtitle\" x=\"%.0f\" y=\"40\">", FLAME_WIDTH / 2);
	flame_xml(o.f, cmd, 120);
	if (type == EXPORT_CPU)
		gz_printf(o.f,
		          " (%" PRIu64
		          " samples of %.3f ms; click a frame to zoom, Ctrl-F or / to search)</text>\n",
		          o.total, (double)p->period_ns / 1e6);
	else
		gz_printf(o.f,
		          " (%" PRIu64 " %s, %s; click a frame to zoom, Ctrl-F or / to search)</text>\n",
		          o.total, o.unit, export_sample_name(type));
	gz_puts(o.f, "<text id=\"reset\" class=\"button\" x=\"10\" y=\"22\" "
	             "style=\"display:none\">Reset Zoom</text>\n");
	gz_printf(o.f,
	          "<text id=\"search\" class=\"button\" x=\"%.0f\" y=\"22\" "
	          "text-anchor=\"end\">Search</text>\n",
	          FLAME_WIDTH - FLAME_PAD);
	gz_printf(o.f, "<text id=\"details\" x=\"10\" y=\"%.0f\"> </text>\n", height - 12);
	gz_printf(o.f, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"> </text>\n",
	          FLAME_WIDTH - FLAME_PAD, height - 12);
	if (o.total) {
		rc = flame_emit(&o, 0, 0);
	} else {
		gz_printf(o.f,
		          "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no %s were "
		          "recorded</text>\n",
		          FLAME_WIDTH / 2, o.ybase + 12, o.unit);
	}
	gz_puts(o.f, "</svg>\n");
	{
		int crc = gz_close(o.f);

		if (!rc)
			rc = crc;
	}
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
out:
	free(t.n);
	util_map_free(&t.index);
	return rc ? -1 : 0;
}
