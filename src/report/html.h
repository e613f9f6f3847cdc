/*
 * html.h — --html FILE: one self-contained HTML page (style, scripts and data
 * inlined, gzip+base64 when large) with the report's views: overview, CPU
 * table and flame graph, source, CUDA, timeline, memory, steps, waiting; and
 * the same page for `compare BASE.json NEW.json --html FILE`.  The data is the
 * --json document plus the bounded aggregates the views draw (html_data.c).
 * Launcher side only; docs/html.md.
 */
#ifndef CBN_HTML_H
#define CBN_HTML_H

#include <stddef.h>
#include <stdint.h>

struct analysis;
struct profile;
struct report_opts;
struct cJSON;

struct html_opts {
	const char *source_root;   /* --source-root: where to look for sources whose
				    * recorded path does not open; NULL = as recorded */
};

/* The page of a run.  Returns 0, or -1 with a one-line message in err. */
int report_html_write(const struct analysis *a, const struct report_opts *o,
		      const struct html_opts *ho, const char *path, char *err, size_t errlen);

/* The page of a comparison: both JSON reports as written by --json, the
 * gate's table as printed and its exit status (CMP_*).  0, or -1 and err. */
int report_html_compare(const char *base_json, const char *new_json, const char *gate_table,
			int gate_status, const char *path, char *err, size_t errlen);

/* html_data.c: what the views need that the JSON report lacks: "names" (the
 * functions and GPU operations the others index), "tree" (the merged call
 * tree, its heaviest nodes), "timeline" (per-thread and per-stream slices,
 * binned) and "sources" (the hottest files' lines with per-line self and
 * total).  Each is bounded whatever the number of samples.  NULL on OOM. */
struct cJSON *html_data_build(const struct analysis *a, const struct html_opts *ho);
/* html_cores.c: the CPU in use over the run by program, and the run's time
 * split as a step's in bins, for the overview (NULL on OOM); the span the
 * page's timeline covers (the earliest process start to the
 * last end, sample or GPU operation). */
struct cJSON *html_cores_json(const struct analysis *a);
struct cJSON *html_breakdown_json(const struct analysis *a);
void html_span(const struct analysis *a, uint64_t *t0, uint64_t *t1);

/* json.c: the --json document, built (cJSON_Delete it); NULL on OOM. */
struct cJSON *report_json_build(const struct analysis *a, const struct report_opts *o);

#endif
