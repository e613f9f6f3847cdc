/*
 * folded.c — --folded FILE: folded stacks ("main;work;leaf 42"), one line per
 * distinct stack, root first, counts in timer periods (sum of sample weights),
 * or with --sample-type the host allocations' bytes or objects (estimates,
 * rounded), or wall-clock ns (wall: on and off the CPU; offcpu: off only), an
 * off-CPU stack ending in a "[off-CPU: KIND]" frame.  What flamegraph.pl,
 * inferno, speedscope and difffolded.pl read.
 */
#include "analysis.h"
#include "export.h"
#include "gz.h"
#include "ops_report.h"
#include "wait_report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
	char *text;
	double weight;
};

/* Append name with ';' and whitespace (and other control bytes) turned into
 * '_', as torch's export_stacks does, so a line splits unambiguously. */
static size_t folded_put_name(char *dst, const char *name)
{
	size_t n = 0;

	if (!name || !*name)
		name = "[unknown]";
	for (const unsigned char *u = (const unsigned char *)name; *u; u++)
		dst[n++] = (*u == ';' || *u <= ' ' || *u == 0x7f) ? '_' : (char)*u;
	return n;
}

/* The folded text of stack k (root first), malloc'd.  A stack cut at the
 * agent's max depth lacks its root frames; it gets a "[truncated]" root so
 * it does not pose as a call tree of its own.  An inlined frame gets the
 * "_[i]" suffix flamegraph.pl colours as inlined. */
static char *folded_stack_text(const struct analysis *a, uint32_t k, int truncated)
{
	const struct profile *p = a->profile;
	static const char trunc[] = "[truncated];";
	uint32_t n;
	const struct prof_frame *fr = stackw_frames(p, k, &n);
	size_t len = sizeof(trunc);
	char *s, *d;

	if (!n)
		return strdup("[no-stack]");
	for (size_t i = 0; i < n; i++) {
		uint32_t fn = fr[i].func;
		const char *name = fn < p->nfuncs
			? report_frame_name(a->ops, fn, p->funcs[fn].name) : NULL;

		len += (name && *name ? strlen(name) : 9) + 1 + 4;
	}
	s = d = malloc(len + 1);
	if (!s)
		return NULL;
	if (truncated)
		d += sprintf(d, "%s", trunc);
	for (size_t i = n; i-- > 0;) {
		uint32_t fn = fr[i].func;

		/* a frame entering an operator shows the operator */
		d += folded_put_name(d, fn < p->nfuncs
					 ? report_frame_name(a->ops, fn, p->funcs[fn].name) : NULL);
		if (fr[i].inlined)
			d += sprintf(d, "_[i]");
		if (i)
			*d++ = ';';
	}
	*d = '\0';
	return s;
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

int export_folded(const struct analysis *a, const char *path, char *err, size_t errlen)
{
	return export_folded_as(a, path, EXPORT_CPU, err, errlen);
}

int export_folded_as(const struct analysis *a, const char *path, enum export_sample t, char *err,
		     size_t errlen)
{
	const struct stackw *sw = a->stackw;
	struct folded_line *lines = NULL;
	size_t nlines = 0;
	struct gz_file *f = NULL;
	int rc = 0, wall = export_sample_is_wall(t);
	/* slots per stack: (on-CPU, truncated), and with wall types one per
	 * off-CPU kind (analysis/cpu/stackw.h) */
	enum stackw_type st = (enum stackw_type)t;
	size_t per = stackw_per(st), nslots = stackw_nslots(sw, st);

	if (wall && !export_has_offcpu(a)) {
		snprintf(err, errlen, "cannot weigh %s by %s: the run has no off-CPU data; "
			 "profile with --off-cpu", path, export_sample_name(t));
		return -1;
	}
	if (!wall && t != EXPORT_CPU && !export_has_memory(a)) {
		snprintf(err, errlen, "cannot weigh %s by %s: the run has no memory data; "
			 "profile with --memory", path, export_sample_name(t));
		return -1;
	}
	lines = calloc(nslots, sizeof(*lines));
	if (!lines) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nslots; i++) {
		size_t k = i / per, j = i % per;
		double w = stackw_get(sw, st, i);
		char *text;

		if (!w)
			continue;
		text = folded_stack_text(a, (uint32_t)k, j == 1);
		if (text && j >= 2) {
			const char *leaf = wait_offcpu_frame((uint32_t)(j - 2));
			char *both = malloc(strlen(text) + strlen(leaf) + 2);

			if (both)
				sprintf(both, "%s;%s", text, leaf);
			free(text);
			text = both;
		}
		if (!(lines[nlines].text = text)) {
			rc = -ENOMEM;
			goto out;
		}
		lines[nlines++].weight = w;
	}
	/* different pcs of the same functions fold into one line */
	qsort(lines, nlines, sizeof(*lines), cmp_line);

	rc = gz_open(&f, path, gz_path_wants_gzip(path));
	if (rc) {
		snprintf(err, errlen,
		         "cannot create %s: %s; check the directory exists and is writable", path,
		         strerror(-rc));
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < nlines; i++) {
		double sum = lines[i].weight;

		while (i + 1 < nlines && !strcmp(lines[i].text, lines[i + 1].text))
			sum += lines[++i].weight;
		/* CPU weights are whole periods; memory estimates round, and a
		 * stack that rounds to nothing is left out */
		if (llround(sum) > 0)
			gz_printf(f, "%s %" PRIu64 "\n", lines[i].text, (uint64_t)llround(sum));
	}
	rc = gz_close(f);
	if (rc) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-rc));
		rc = -1;
	}
out:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "cannot write %s: out of memory", path);
	for (size_t i = 0; i < nlines; i++)
		free(lines[i].text);
	free(lines);
	return rc ? -1 : 0;
}
