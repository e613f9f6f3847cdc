/*
 * html.c — --html FILE: the self-contained page.  Writes the embedded style
 * and scripts (html_assets.c, generated from src/report/html/ by
 * tools/html_embed.c) around one data element: the --json document and
 * html_data.c's aggregates, gzip-compressed and base64-encoded when large,
 * the scripts then too (the page inflates both with the browser's
 * DecompressionStream).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#ifdef CBN_HAVE_ZLIB
#include <zlib.h>
#endif

#include "analysis.h"
#include "html.h"
#include "outfile.h"
#include "report.h"

#ifndef CBN_VERSION
#define CBN_VERSION "0.1.0"
#endif

/* Data larger than this is compressed: below it, the page stays greppable. */
#define HTML_GZIP_MIN (16 << 10)

extern const char html_asset_css[];
extern const char html_asset_js[];

/* Text for an HTML element or attribute: the five specials escaped. */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

#ifdef CBN_HAVE_ZLIB
/* gzip of s[0..n) into a malloc'd buffer; NULL when memory is short. */
static unsigned char *html_gzip(const char *s, size_t n, size_t *outlen)
{
	z_stream z;
	unsigned char *out;
	size_t cap;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	cap = deflateBound(&z, (uLong)n) + 64;
	out = malloc(cap);
	if (!out) {
		deflateEnd(&z);
		return NULL;
	}
	z.next_in = (Bytef *)s;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(out);
		return NULL;
	}
	*outlen = z.total_out;
	deflateEnd(&z);
	return out;
}
#endif

static void html_base64(FILE *f, const unsigned char *b, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		fputc(tab[b[i] >> 2], f);
		fputc(tab[(b[i] & 3) << 4 | b[i + 1] >> 4], f);
		fputc(tab[(b[i + 1] & 15) << 2 | b[i + 2] >> 6], f);
		fputc(tab[b[i + 2] & 63], f);
	}
	if (i + 1 == n) {
		fputc(tab[b[i] >> 2], f);
		fputc(tab[(b[i] & 3) << 4], f);
		fputs("==", f);
	} else if (i + 2 == n) {
		fputc(tab[b[i] >> 2], f);
		fputc(tab[(b[i] & 3) << 4 | b[i + 1] >> 4], f);
		fputc(tab[(b[i + 1] & 15) << 2], f);
		fputc('=', f);
	}
}

/* Whether the page's data and scripts are compressed: above HTML_GZIP_MIN of
 * data, or as CBN_HTML_GZIP=0/1 forces (tests, bench). */
static int html_want_gzip(size_t datalen)
{
	const char *force = getenv("CBN_HTML_GZIP");

	return force && *force ? *force == '1' : datalen >= HTML_GZIP_MIN;
}

#ifdef CBN_HAVE_ZLIB
/* An element <script id=ID type=application/octet-stream> of s gzipped and
 * in base64.  0, or -1 when memory is short (nothing written then). */
static int html_gzip_element(FILE *f, const char *id, const char *s)
{
	size_t zn;
	unsigned char *z = html_gzip(s, strlen(s), &zn);

	if (!z)
		return -1;
	fprintf(f, "<script id=\"%s\" type=\"application/octet-stream\" "
		   "data-encoding=\"gzip+base64\">", id);
	html_base64(f, z, zn);
	fputs("</script>\n", f);
	free(z);
	return 0;
}
#endif

/*
 * The data element.  Plain JSON has every '<' written as \u003c (only strings
 * can hold one), so no name or source line can close the element.  The
 * environment variable CBN_HTML_GZIP=0/1 forces either form (tests, bench).
 */
static void html_data(FILE *f, const char *json, int gz)
{
#ifdef CBN_HAVE_ZLIB
	if (gz && html_gzip_element(f, "cbn-data", json) == 0)
		return;
#else
	(void)gz;
#endif
	fputs("<script id=\"cbn-data\" type=\"application/json\" data-encoding=\"json\">", f);
	for (; *json; json++) {
		if (*json == '<')
			fputs("\\u003c", f);
		else
			fputc(*json, f);
	}
	fputs("</script>\n", f);
}

/*
 * The page's scripts.  With the data compressed they are too: 150 KiB of
 * commented source, most of a page's bytes up to 100 k samples, are 40 KiB
 * gzipped.  A loader of a few lines inflates them as app.js inflates the
 * data and runs them; a browser without DecompressionStream gets the
 * sentence app.js would give.
 */
static const char html_loader_js[] =
	"(function () {\n"
	"\tvar code = document.getElementById('cbn-code');\n"
	"\tfunction fail(m) {\n"
	"\t\tvar st = document.getElementById('cbn-status');\n"
	"\t\tdocument.getElementById('view').textContent = 'Cannot start the report: ' + m;\n"
	"\t\tst.textContent = 'error load: ' + m;\n"
	"\t\tst.setAttribute('data-errors', '1');\n"
	"\t}\n"
	"\tif (typeof DecompressionStream === 'undefined')\n"
	"\t\treturn fail('this browser lacks DecompressionStream: open the report in a '\n"
	"\t\t\t+ 'current Chrome, Firefox or Safari');\n"
	"\tvar bin = atob(code.textContent.trim()), bytes = new Uint8Array(bin.length), i;\n"
	"\tfor (i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);\n"
	"\tnew Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip')))\n"
	"\t\t.text().then(function (text) {\n"
	"\t\t\tvar s = document.createElement('script');\n"
	"\t\t\ts.textContent = text;\n"
	"\t\t\tdocument.body.appendChild(s);\n"
	"\t\t}).catch(function (e) { fail(e.message); });\n"
	"})();\n";

static void html_scripts(FILE *f, int gz)
{
#ifdef CBN_HAVE_ZLIB
	if (gz && html_gzip_element(f, "cbn-code", html_asset_js) == 0) {
		fputs("<script>\n", f);
		fputs(html_loader_js, f);
		fputs("</script>\n", f);
		return;
	}
#else
	(void)gz;
#endif
	fputs("<script>\n", f);
	fputs(html_asset_js, f);
	fputs("</script>\n", f);
}

struct html_doc {
	const char *title, *json;
};

/* The page: head, styles, the report's data, the scripts (outfile_write's
 * fill). */
static void html_fill(FILE *f, const void *ctx)
{
	const struct html_doc *d = ctx;
	int gz;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"cbottleneck " CBN_VERSION "\">\n<title>", f);
	html_text(f, d->title);
	fputs("</title>\n<style>\n", f);
	fputs(html_asset_css, f);
	fputs("</style>\n</head>\n<body>\n"
	      "<header id=\"top\"><span class=\"brand\">cbottleneck</span>"
	      "<span id=\"cmd\"></span><nav id=\"tabs\"></nav></header>\n"
	      "<main id=\"view\"><p class=\"loading\">Loading the report&hellip; "
	      "(this page needs JavaScript)</p></main>\n"
	      "<div id=\"cbn-status\" hidden></div>\n", f);
	gz = html_want_gzip(strlen(d->json));
	html_data(f, d->json, gz);
	html_scripts(f, gz);
	fputs("</body>\n</html>\n", f);
}

static int html_page(const char *path, const char *title, cJSON *doc, char *err, size_t errlen)
{
	struct html_doc d = { title, cJSON_PrintUnformatted(doc) };
	int ret;

	if (!d.json) {
		snprintf(err, errlen, "cannot format the page's data: out of memory");
		return -1;
	}
	ret = outfile_write(path, "--html", html_fill, &d, err, errlen);
	cJSON_free((char *)d.json);
	return ret;
}

/* Rows of the report's function and line tables the page keeps. */
#define HTML_MAX_ROWS 5000

struct html_row {
	double v;
	int idx;
};

static int html_cmp_desc(const void *a, const void *b)
{
	const struct html_row *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? 1 : -1;
	return x->idx - y->idx;
}

/* keep[i] = 1 for the HTML_MAX_ROWS heaviest rows of arr by key (ties: the
 * earlier row), so that the bound holds when many rows weigh the same. */
static int html_mark(cJSON *arr, const char *key, int n, char *keep)
{
	struct html_row *r = malloc((size_t)n * sizeof(*r));
	cJSON *it;
	int i = 0;

	if (!r)
		return -1;
	cJSON_ArrayForEach(it, arr) {
		r[i].v = cJSON_GetNumberValue(cJSON_GetObjectItem(it, key));
		r[i].idx = i;
		i++;
	}
	qsort(r, (size_t)n, sizeof(*r), html_cmp_desc);
	for (i = 0; i < HTML_MAX_ROWS && i < n; i++)
		keep[r[i].idx] = 1;
	free(r);
	return 0;
}

/*
 * A program with tens of thousands of functions would make a page of many
 * megabytes: past HTML_MAX_ROWS, the page keeps the HTML_MAX_ROWS heaviest
 * functions by self time and those by total time, and the heaviest lines,
 * and says in html.left_out how many rows it left out.  The --json file is
 * unchanged.
 */
static void html_trim(cJSON *rep, cJSON *views)
{
	cJSON *fn = cJSON_GetObjectItem(rep, "functions"), *ln = cJSON_GetObjectItem(rep, "lines");
	cJSON *left = cJSON_AddObjectToObject(views, "left_out");
	int n = cJSON_GetArraySize(fn), dropped = 0;
	char *keep = n > HTML_MAX_ROWS ? calloc((size_t)n, 1) : NULL;

	if (keep && html_mark(fn, "self_ns", n, keep) == 0 &&
	    html_mark(fn, "total_ns", n, keep) == 0) {
		int i = 0;

		/* detached by pointer: deleting by index walks the list each time */
		for (cJSON *it = fn->child, *next; it; it = next, i++) {
			next = it->next;
			if (!keep[i]) {
				cJSON_Delete(cJSON_DetachItemViaPointer(fn, it));
				dropped++;
			}
		}
	}
	free(keep);
	if (left)
		cJSON_AddNumberToObject(left, "functions", dropped);
	dropped = 0;
	/* lines come by self time, heaviest first: keep the head */
	if (cJSON_GetArraySize(ln) > HTML_MAX_ROWS) {
		cJSON *it = cJSON_GetArrayItem(ln, HTML_MAX_ROWS), *next;

		for (; it; it = next) {
			next = it->next;
			cJSON_Delete(cJSON_DetachItemViaPointer(ln, it));
			dropped++;
		}
	}
	if (left)
		cJSON_AddNumberToObject(left, "lines", dropped);
}

int report_html_write(const struct analysis *a, const struct report_opts *o,
		      const struct html_opts *ho, const char *path, char *err, size_t errlen)
{
	const struct profile *p = a->profile;
	cJSON *doc = cJSON_CreateObject(), *rep = NULL, *views = NULL;
	char title[256];
	int ret;

	if (doc) {
		rep = report_json_build(a, o);
		views = html_data_build(a, ho);
	}
	if (!doc || !rep || !views) {
		cJSON_Delete(doc);
		cJSON_Delete(rep);
		cJSON_Delete(views);
		snprintf(err, errlen, "cannot build the page's data: out of memory");
		return -1;
	}
	html_trim(rep, views);
	cJSON_AddStringToObject(doc, "kind", "run");
	cJSON_AddItemToObject(doc, "report", rep);
	cJSON_AddItemToObject(doc, "html", views);
	snprintf(title, sizeof(title), "cbottleneck: %s",
		 p->argv && p->argv[0] ? p->argv[0] : "profile");
	ret = html_page(path, title, doc, err, errlen);
	cJSON_Delete(doc);
	return ret;
}

/* A --json report read back: parsed, so a broken file fails here and not
 * in the browser.  NULL with err set. */
static cJSON *html_read_json(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;
	cJSON *j = NULL;

	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		if (n + 65536 + 1 > cap) {
			char *nb = realloc(buf, cap = 2 * cap + 65536 + 1);

			if (!nb) {
				snprintf(err, errlen, "cannot read %s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, 65536, f);
		n += r;
	} while (r == 65536);
	buf[n] = '\0';
	j = cJSON_Parse(buf);
	if (!j || !cJSON_IsObject(j))
		snprintf(err, errlen, "%s is not a JSON report (write it with --json FILE)", path);
out:
	fclose(f);
	free(buf);
	if (j && !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		j = NULL;
	}
	return j;
}

int report_html_compare(const char *base_json, const char *new_json, const char *gate_table,
			int gate_status, const char *path, char *err, size_t errlen)
{
	cJSON *doc = NULL, *base = NULL, *cur = NULL, *gate;
	char title[256];
	int ret = -1;

	if (!(base = html_read_json(base_json, err, errlen)) ||
	    !(cur = html_read_json(new_json, err, errlen)))
		goto out;
	doc = cJSON_CreateObject();
	if (!doc)
		goto nomem;
	cJSON_AddStringToObject(doc, "kind", "compare");
	cJSON_AddStringToObject(doc, "base_file", base_json);
	cJSON_AddStringToObject(doc, "new_file", new_json);
	cJSON_AddItemToObject(doc, "base", base);
	base = NULL;
	cJSON_AddItemToObject(doc, "report", cur);
	cur = NULL;
	gate = cJSON_AddObjectToObject(doc, "gate");
	if (!gate || !cJSON_AddNumberToObject(gate, "status", gate_status) ||
	    !cJSON_AddStringToObject(gate, "table", gate_table ? gate_table : ""))
		goto nomem;
	snprintf(title, sizeof(title), "cbottleneck compare: %s vs %s", base_json, new_json);
	ret = html_page(path, title, doc, err, errlen);
	goto out;
nomem:
	snprintf(err, errlen, "cannot build the page's data: out of memory");
out:
	cJSON_Delete(doc);
	cJSON_Delete(base);
	cJSON_Delete(cur);
	return ret;
}
