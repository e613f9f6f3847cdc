/*
 * mem_text.c — the memory part of the text report: for each space (a host
 * process, a GPU) a summary and the peak view; for the host and for each GPU
 * the allocation-sites table (--sort mem, allocs, leaked, peak, avg_size) and
 * the leaks table; then the memory recommendations.  Generic over host and
 * GPU spaces; formats struct mem_analysis only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "fmt.h"
#include "mem_report.h"
#include "memory.h"
#include "names.h"
#include "util.h"

#define MEM_TEXT_SITE_MAX 100    /* columns of a site */

static int o_quiet(const struct report_opts *o)
{
	return o && o->quiet;
}

/* Bytes as an estimate: "~" before sampled figures. */
static char *bytes_d(char *buf, size_t len, double b, int estimate)
{
	char tmp[48];

	fmt_bytes(tmp, sizeof(tmp), b > 0 ? (uint64_t)(b + 0.5) : 0);
	snprintf(buf, len, "%s%s", estimate && b > 0 ? "~" : "", tmp);
	return buf;
}

/* The sites a table left out: "(N more sites: BYTES[how], PCT of OF; use
 * --limit)", their bytes as an estimate when est. */
static void more_bytes(FILE *out, size_t nmore, const char *how, double rest, double whole,
		       const char *of, int est)
{
	char b[64], pct[32], detail[160];

	snprintf(detail, sizeof(detail), "%s%s, %s of %s", bytes_d(b, sizeof(b), rest, est), how,
		 fmt_pct(pct, sizeof(pct), rest, whole), of);
	fmt_more_line(out, nmore, "sites", detail);
}

static char *count_d(char *buf, size_t len, double n, int estimate)
{
	snprintf(buf, len, "%s%.0f", estimate && n > 0 ? "~" : "", n);
	return buf;
}

/* "file:line(function)" of a site, " [inlined]" when its frame was. */
static char *site_label(char *buf, size_t len, const struct profile *p, const struct mem_site *s)
{
	char name[MEM_TEXT_SITE_MAX * 4 + 8], path[MEM_TEXT_SITE_MAX * 4 + 8];
	const struct prof_func *f;

	if (s->func >= p->nfuncs) {
		snprintf(buf, len, "[no stack]");
		return buf;
	}
	f = &p->funcs[s->func];
	names_bare_copy(path, sizeof(path), f->name ? f->name : "?");   /* no parameters */
	fmt_trunc(name, sizeof(name), path, MEM_TEXT_SITE_MAX / 2, 0);
	if (s->inlined)
		strcat(name, " [inlined]");
	fmt_trunc(path, sizeof(path),
		  fmt_rel_path(s->file && *s->file ? s->file : f->file ? f->file : ""),
		  MEM_TEXT_SITE_MAX / 2, 1);
	fmt_func(buf, len, name, path, s->file && *s->file ? s->line : f->line, f->module);
	/* the allocation wrapper it was found past (mem_wrap.c) */
	if (s->kind == MEM_SPACE_HOST && s->via < p->nfuncs) {
		size_t n = strlen(buf);

		names_bare_copy(path, sizeof(path), p->funcs[s->via].name ? p->funcs[s->via].name
									   : "?");
		fmt_trunc(name, sizeof(name), path, MEM_TEXT_SITE_MAX / 3, 0);
		snprintf(buf + n, len - n, " via %s", name);
	}
	return buf;
}

/* Sampled estimates on the host unless every allocation was recorded. */
static int space_estimates(const struct mem_analysis *m, uint32_t kind)
{
	return kind == MEM_SPACE_HOST && !m->exact;
}

static void print_summary(FILE *out, const struct analysis *an, const struct mem_space *sp)
{
	const struct mem_analysis *m = an->memory;
	const struct profile *p = an->profile;
	char b1[64], b2[64], b3[64];

	if (sp->kind == MEM_SPACE_HOST) {
		fprintf(out, "Memory: %s", sp->name);
		if (m->rate > 1)
			fprintf(out, " (allocations sampled every %s on average: site figures "
				     "marked ~ are sampled estimates)\n",
				fmt_bytes(b1, sizeof(b1), m->rate));
		else
			fprintf(out, " (every allocation recorded)\n");
	} else {
		fprintf(out, "Memory: %s", sp->name);
		if (sp->total)
			fprintf(out, " (%s of device memory)", fmt_bytes(b1, sizeof(b1), sp->total));
		fputc('\n', out);
	}
	fprintf(out, "  Peak:            %s%s", sp->peak_exact ? "" : "~",
		fmt_bytes(b1, sizeof(b1), sp->peak));
	fprintf(out, " (%s%s)", sp->peak_exact ? "exact" : "estimated from sampled allocations",
		sp->windowed ? ", inside the capture windows" : "");
	if (sp->peak_ts)
		fprintf(out, " at %s since start",
			util_fmt_time(b2, sizeof(b2),
				      sp->peak_ts > p->start_ns ? sp->peak_ts - p->start_ns : 0));
	if (sp->peak_range < p->nranges)
		fprintf(out, ", during range \"%s\"", p->ranges[sp->peak_range].name);
	fputc('\n', out);
	if (sp->kind == MEM_SPACE_HOST && sp->rss_peak)
		fprintf(out, "  RSS peak:        %s (includes profiler overhead)\n",
			fmt_bytes(b1, sizeof(b1), sp->rss_peak));
	if (sp->kind == MEM_SPACE_HOST && sp->address_peak)
		fprintf(out, "  Address space:   %s reserved at most (PROT_NONE mappings, such as "
			"libcuda's): not memory, in no figure here\n",
			fmt_bytes(b1, sizeof(b1), sp->address_peak));
	if (sp->kind == MEM_SPACE_GPU && sp->reserved_peak)
		fprintf(out, "  Reserved peak:   %s (pools and allocations outside them)\n",
			fmt_bytes(b1, sizeof(b1), sp->reserved_peak));
	fprintf(out, "  Allocations:     %" PRIu64 " calls, %s allocated, %" PRIu64 " frees\n",
		sp->allocs, fmt_bytes(b1, sizeof(b1), sp->alloc_bytes), sp->frees);
	fprintf(out, "  Live at exit:    %s%s\n", sp->peak_exact ? "" : "~",
		fmt_bytes(b3, sizeof(b3), sp->live_end > 0 ? (uint64_t)sp->live_end : 0));
	if (sp->kind == MEM_SPACE_GPU && sp->cached_end)
		fprintf(out, "  Cached at exit:  %s of it held by a caching allocator for reuse "
			"(PyTorch's, cub's, RMM's): its pool, not a leak\n",
			fmt_bytes(b3, sizeof(b3), sp->cached_end));
	if (sp->kind == MEM_SPACE_HOST && sp->process < p->nprocesses) {
		const struct prof_mem_proc *pm = &p->processes[sp->process].mem;

		fprintf(out, "  Sampled:         %" PRIu64 " allocation records", pm->sampled);
		if (pm->lost || pm->untracked || pm->no_stack)
			fprintf(out, " (%" PRIu64 " lost: file full; %" PRIu64
				     " untracked: frees not seen; %" PRIu64 " without a stack)",
				pm->lost, pm->untracked, pm->no_stack);
		fputc('\n', out);
		if (pm->flags & CBN_MEMF_REPLACED)
			fprintf(out, "  Note:            the program defines malloc itself: only "
				     "allocations through libc were seen\n");
		if (pm->flags & CBN_MEMF_FOREIGN)
			fprintf(out, "  Note:            malloc came from another preloaded allocator; "
				     "it was measured in front of it\n");
	}
}

static int print_peak(FILE *out, const struct analysis *an, const struct mem_space *sp,
		      const struct report_opts *o)
{
	const struct mem_analysis *m = an->memory;
	int est = space_estimates(m, sp->kind);
	struct fmt_table *t;
	size_t i, n = report_limit(o, sp->nat_peak);
	char b[64], site[MEM_TEXT_SITE_MAX * 8 + 64];

	if (!sp->nat_peak && !sp->nat_peak_other)
		return 0;
	if (!(t = fmt_table_new()))
		return -ENOMEM;
	fprintf(out, "\n  Live at the peak (%s), by site\n", sp->name);
	fmt_table_col(t, "Live at peak", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "% of peak", FMT_RIGHT, 9, 0);
	fmt_table_col(t, "Site", FMT_LEFT, 4, MEM_TEXT_SITE_MAX);
	for (i = 0; i < n; i++) {
		const struct mem_peak_site *ps = &sp->at_peak[i];

		if (ps->site >= m->nsites)
			continue;
		fmt_table_row(t);
		fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), ps->bytes, est));
		fmt_table_cell(t, "%s", fmt_pct(b, sizeof(b), ps->bytes, (double)sp->peak));
		fmt_table_cell(t, "%s", site_label(site, sizeof(site), an->profile, &m->sites[ps->site]));
	}
	if (n)
		fmt_table_print(t, out, FMT_PLAIN, 2);
	fmt_table_free(t);
	/* what the rows leave out, and its share of the peak */
	if (n < sp->nat_peak || sp->nat_peak_rest) {
		double rest = sp->at_peak_rest;

		for (i = n; i < sp->nat_peak; i++)
			rest += sp->at_peak[i].bytes;
		more_bytes(out, sp->nat_peak - n + sp->nat_peak_rest, "", rest, (double)sp->peak,
			   "the peak", est);
	}
	if (sp->nat_peak_other)
		fprintf(out, "   (%u site%s of one or two samples each: %s together, %s of the peak; "
			"no figure per site)\n", sp->nat_peak_other, sp->nat_peak_other == 1 ? "" : "s",
			bytes_d(b, sizeof(b), sp->at_peak_other, est),
			fmt_pct(site, sizeof(site), sp->at_peak_other, (double)sp->peak));
	return 0;
}

/* The sites of one group: every host site, or one device's. */
static long group_sites(const struct mem_analysis *m, uint32_t kind, uint32_t device,
			const char *key, uint32_t **idx)
{
	long n = mem_sorted_sites(m, kind, key, idx), i, k = 0;

	for (i = 0; i < n; i++)
		if (kind == MEM_SPACE_HOST || m->sites[(*idx)[i]].device == device)
			(*idx)[k++] = (*idx)[i];
	return n < 0 ? n : k;
}

static const char *sort_desc(const char *key)
{
	if (!key || !mem_sort_key_valid(key) || strcmp(key, "mem") == 0)
		return "bytes allocated (mem)";
	if (strcmp(key, "allocs") == 0)
		return "allocations (allocs)";
	if (strcmp(key, "leaked") == 0)
		return "live at exit (leaked)";
	if (strcmp(key, "peak") == 0)
		return "peak live (peak)";
	return "average size (avg_size)";
}

static int print_sites(FILE *out, const struct analysis *an, uint32_t kind, uint32_t device,
		       const char *name, const struct report_opts *o)
{
	const struct mem_analysis *m = an->memory;
	const char *key = o && mem_sort_key_valid(o->sort) ? o->sort : "mem";
	int est = space_estimates(m, kind);
	uint32_t *idx = NULL;
	long nsites = group_sites(m, kind, device, key, &idx);
	struct fmt_table *t;
	size_t i, n;
	char b[64], site[MEM_TEXT_SITE_MAX * 8 + 64];

	if (nsites <= 0) {
		free(idx);
		return (int)nsites;
	}
	if (!(t = fmt_table_new())) {
		free(idx);
		return -ENOMEM;
	}
	n = report_limit(o, (size_t)nsites);
	fprintf(out, "Allocation sites, %s (sorted by %s)\n", name, sort_desc(key));
	fmt_table_col(t, "Allocated", FMT_RIGHT, 10, 0);
	fmt_table_col(t, "Allocs", FMT_RIGHT, 8, 0);
	fmt_table_col(t, "Avg size", FMT_RIGHT, 9, 0);
	fmt_table_col(t, "Live at exit", FMT_RIGHT, 12, 0);
	fmt_table_col(t, "Peak live", FMT_RIGHT, 10, 0);
	fmt_table_col(t, "Site", FMT_LEFT, 4, MEM_TEXT_SITE_MAX);
	for (i = 0; i < n; i++) {
		const struct mem_site *s = &m->sites[idx[i]];

		fmt_table_row(t);
		fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), s->bytes, est));
		fmt_table_cell(t, "%s", count_d(b, sizeof(b), s->allocs, est));
		fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), s->allocs > 0 ? s->bytes / s->allocs : 0,
						0));
		fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), s->live_end_bytes, est));
		/* one sample's weight is no site's peak */
		if (s->max_live_known)
			fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), s->max_live, est));
		else
			fmt_table_cell(t, "-");
		fmt_table_cell(t, "%s", site_label(site, sizeof(site), an->profile, s));
	}
	fmt_table_print(t, out, FMT_RULES, 0);
	fmt_table_free(t);
	if (n < (size_t)nsites) {
		double rest = 0, all = 0;

		for (i = 0; i < (size_t)nsites; i++) {
			all += m->sites[idx[i]].bytes;
			if (i >= n)
				rest += m->sites[idx[i]].bytes;
		}
		more_bytes(out, (size_t)nsites - n, " allocated", rest, all, "the bytes", est);
	}
	if (est && !o_quiet(o))
		fprintf(out, "   Peak live \"-\": the site's highest live bytes rested on one or two "
			"samples, one sample's weight, not a measurement\n");
	free(idx);
	return 0;
}

static int print_leaks(FILE *out, const struct analysis *an, uint32_t kind, uint32_t device,
		       const char *name, const struct report_opts *o)
{
	const struct mem_analysis *m = an->memory;
	int est = space_estimates(m, kind);
	struct fmt_table *t;
	size_t i, k, n = 0, shown = 0, lim;
	double total = 0;
	char b[64], site[MEM_TEXT_SITE_MAX * 8 + 64];

	for (i = 0; i < m->nleaks; i++) {
		const struct mem_site *s = &m->sites[m->leaks[i]];

		if (s->kind == kind && (kind == MEM_SPACE_HOST || s->device == device)) {
			n++;
			total += s->live_end_bytes;
		}
	}
	/* what arena and GC allocators kept until exit on purpose: no leak */
	if (kind == MEM_SPACE_HOST && m->arena_end_bytes > 0 && m->arena_top) {
		names_bare_copy(site, sizeof(site), m->arena_top);
		fprintf(out, "\nKept until exit on purpose, not leaks: %s held by arena and GC "
			"allocators (most by %s)\n", bytes_d(b, sizeof(b), m->arena_end_bytes, est),
			site);
	}
	if (!n)
		return 0;
	if (!(t = fmt_table_new()))
		return -ENOMEM;
	lim = report_limit(o, n);
	fprintf(out, "\nLeaks, %s: %s %s, by site%s\n", name,
		kind == MEM_SPACE_HOST ? "still allocated at exit" : "not freed by the end",
		bytes_d(b, sizeof(b), total, est),
		est ? " (estimated from sampled allocations)" : "");
	fmt_table_col(t, "Leaked", FMT_RIGHT, 10, 0);
	fmt_table_col(t, "Blocks", FMT_RIGHT, 8, 0);
	fmt_table_col(t, "Site", FMT_LEFT, 4, MEM_TEXT_SITE_MAX);
	for (i = 0; i < m->nleaks && shown < lim; i++) {
		const struct mem_site *s = &m->sites[m->leaks[i]];

		if (s->kind != kind || (kind != MEM_SPACE_HOST && s->device != device))
			continue;
		shown++;
		fmt_table_row(t);
		fmt_table_cell(t, "%s", bytes_d(b, sizeof(b), s->live_end_bytes, est));
		fmt_table_cell(t, "%s", count_d(b, sizeof(b), s->live_end_blocks, est));
		fmt_table_cell(t, "%s", site_label(site, sizeof(site), an->profile, s));
	}
	fmt_table_print(t, out, FMT_PLAIN, 1);
	fmt_table_free(t);
	if (shown < n) {
		double rest = total;

		for (i = 0, k = 0; i < m->nleaks && k < shown; i++) {
			const struct mem_site *s = &m->sites[m->leaks[i]];

			if (s->kind != kind || (kind != MEM_SPACE_HOST && s->device != device))
				continue;
			rest -= s->live_end_bytes;
			k++;
		}
		fmt_more(out, shown, n, "sites", rest, total, "the leaked bytes");
	}
	return 0;
}

#define MEM_TEXT_HOSTS_ALL 4        /* up to this many host processes: every one shown */
#define MEM_TEXT_SMALL_SHARE 0.01    /* beyond: a process under 1 % of the largest peak
				      * is counted, not shown */

static int host_small(const struct mem_analysis *m, const struct mem_space *sp, uint64_t top)
{
	size_t i, n = 0;

	for (i = 0; i < m->nspaces; i++)
		n += m->spaces[i].kind == MEM_SPACE_HOST;
	return n > MEM_TEXT_HOSTS_ALL && (double)sp->peak < MEM_TEXT_SMALL_SHARE * (double)top;
}

int report_mem_text(FILE *out, const struct analysis *an, const struct report_opts *o)
{
	const struct mem_analysis *m = an->memory;
	size_t i, nhost = 0;
	int ret;

	uint64_t top = 0, small_peak = 0;
	size_t nsmall = 0;

	if (!m)
		return 0;
	if (m->refused)
		fprintf(out, "Host memory: not recorded: %s\n", m->refused);
	for (i = 0; i < m->nspaces; i++)
		if (m->spaces[i].kind == MEM_SPACE_HOST && m->spaces[i].peak > top)
			top = m->spaces[i].peak;
	for (i = 0; i < m->nspaces; i++) {
		const struct mem_space *sp = &m->spaces[i];

		nhost += sp->kind == MEM_SPACE_HOST;
		/* quiet: a run of many processes (a shell script, a pyenv shim)
		 * shows the ones that held memory; the others are one line */
		if (sp->kind == MEM_SPACE_HOST && host_small(m, sp, top)) {
			nsmall++;
			if (sp->peak > small_peak)
				small_peak = sp->peak;
			continue;
		}
		print_summary(out, an, sp);
		if ((ret = print_peak(out, an, sp, o)) < 0)
			return ret;
		fputc('\n', out);
	}
	if (nsmall) {
		char b[32];

		fprintf(out, "Memory: %zu more process%s with host memory, each with a peak of at "
			"most %s (under 1%% of the largest): in the JSON\n\n", nsmall,
			nsmall == 1 ? "" : "es", fmt_bytes(b, sizeof(b), small_peak));
	}
	if (nhost && ((ret = print_sites(out, an, MEM_SPACE_HOST, 0, "host", o)) < 0 ||
		      (ret = print_leaks(out, an, MEM_SPACE_HOST, 0, "host", o)) < 0))
		return ret;
	for (i = 0; i < m->nspaces; i++) {
		const struct mem_space *sp = &m->spaces[i];

		if (sp->kind != MEM_SPACE_GPU)
			continue;
		fputc('\n', out);
		if ((ret = print_sites(out, an, MEM_SPACE_GPU, sp->device, sp->name, o)) < 0 ||
		    (ret = print_leaks(out, an, MEM_SPACE_GPU, sp->device, sp->name, o)) < 0)
			return ret;
	}
	if (m->nrecos)
		fputc('\n', out);
	fmt_recos(out, "Memory recommendations", m->recos, m->nrecos);
	fputc('\n', out);
	return 0;
}
