/*
 * test_export_flame.c — export_flamegraph(): the SVG is well-formed XML
 * (python3's xml.etree when present), embeds its script with zoom, search and
 * reset, has one frame per (parent, depth, name) with widths proportional to
 * samples, escapes names, and leaves out frames under the width cutoff.
 */
#include <math.h>

#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

/* python3 reads the SVG and prints one line per frame: "name<TAB>width";
 * the test compares widths.  Exit 3 when the file is not XML. */
static const char py_check[] = "import sys, xml.etree.ElementTree as ET\n"
                               "ns = '{http://www.w3.org/2000/svg}'\n"
                               "try:\n"
                               "    root = ET.parse(sys.argv[1]).getroot()\n"
                               "except ET.ParseError as e:\n"
                               "    print('parse error', e, file=sys.stderr); sys.exit(3)\n"
                               "assert root.tag == ns + 'svg', root.tag\n"
                               "assert root.find(ns + 'script') is not None\n"
                               "for g in root.iter(ns + 'g'):\n"
                               "    if g.get('class') != 'f': continue\n"
                               "    t = g.find(ns + 'title').text\n"
                               "    r = g.find(ns + 'rect')\n"
                               "    print('%s\\t%s\\t%s' % (t[:t.rindex(' (')].replace('\\n', ' "
                               "'), r.get('width'), r.get('y')))\n";

struct frame {
	char name[512];
	double width, y;
};

static int read_frames(const char *svg, const char *dir, struct frame *out, int max)
{
	char script[256], cmd[768], line[512];
	FILE *f;
	int n = 0, st;

	snprintf(script, sizeof(script), "%s/check.py", dir);
	f = fopen(script, "w");
	REQUIRE(f != NULL);
	fputs(py_check, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "python3 '%s' '%s'", script, svg);
	f = popen(cmd, "r");
	REQUIRE(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *tab2;

		if (!tab || n == max)
			continue;
		*tab = '\0';
		tab2 = strchr(tab + 1, '\t');
		if (!tab2)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", line);
		out[n].width = strtod(tab + 1, NULL);
		out[n].y = strtod(tab2 + 1, NULL);
		n++;
	}
	st = pclose(f);
	if (st != 0) {
		fprintf(stderr, "python3 check of %s failed (status %d)\n", svg, st);
		return -1;
	}
	return n;
}

static const struct frame *find(const struct frame *v, int n, const char *name, int nth)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name) && nth-- == 0)
			return &v[i];
	return NULL;
}

int main(void)
{
	struct profile p;
	struct frame fr[64];
	char *dir = ex_tmpdir(), path[256], err[256];
	uint32_t t, f_main, f_heavy, f_light, f_dup1, f_dup2, f_odd, f_tiny;
	char *svg;
	int n, have_py;

	ex_init(&p, "./split <3>");
	ex_process(&p, 10, 0, "/bin/split");
	t = ex_thread(&p, 10, 0, "split");
	f_main = ex_func(&p, "main", "s.c", 1, "split");
	f_heavy = ex_func(&p, "heavy", "s.c", 10, "split");
	f_light = ex_func(&p, "light", "s.c", 20, "split");
	f_dup1 = ex_func(&p, "spin", "a.c", 5, "split");
	f_dup2 = ex_func(&p, "spin", "b.c", 7, "libb.so"); /* same name, other function */
	f_odd = ex_func(&p, "op<&\"'> \x01\xff", "o.cc", 3, "split");
	f_tiny = ex_func(&p, "tiny", "t.c", 1, "split");
	uint32_t s_heavy = ex_stack(&p, 3, (uint32_t[]){f_main, f_heavy, f_dup1});
	uint32_t s_heavy2 = ex_stack(&p, 3, (uint32_t[]){f_main, f_heavy, f_dup2});
	uint32_t s_light = ex_stack(&p, 3, (uint32_t[]){f_main, f_light, f_dup1});
	uint32_t s_odd = ex_stack(&p, 2, (uint32_t[]){f_main, f_odd});
	uint32_t s_tiny = ex_stack(&p, 2, (uint32_t[]){f_main, f_tiny});
	uint64_t ts = EX_T0;

	/* heavy:light = 3:1 over 4000 samples, heavy split over two "spin"s */
	for (int k = 0; k < 1500; k++)
		ex_sample(&p, t, ts += EX_MS, s_heavy, 1);
	for (int k = 0; k < 1500; k++)
		ex_sample(&p, t, ts += EX_MS, s_heavy2, 1);
	for (int k = 0; k < 1000; k++)
		ex_sample(&p, t, ts += EX_MS, s_light, 1);
	for (int k = 0; k < 40; k++)
		ex_sample(&p, t, ts += EX_MS, s_odd, 1);
	ex_sample(&p, t, ts += EX_MS, s_tiny, 1); /* 1/4041: under the cutoff */
	uint32_t f_deep = ex_func(&p, "deep", "d.c", 1, "split");
	uint32_t s_deep = ex_stack(&p, 2, (uint32_t[]){f_deep, f_deep});

	for (int k = 0; k < 10; k++) { /* cut at max depth */
		ex_sample(&p, t, ts += EX_MS, s_deep, 1);
		p.samples[p.nsamples - 1].flags = CBN_SAMPLE_TRUNCATED;
	}

	snprintf(path, sizeof(path), "%s/f.svg", dir);
	CHECK_EQ_INT(export_flamegraph(analysed(&p), path, err, sizeof(err)), 0);
	svg = ex_slurp(path, NULL);
	REQUIRE(svg != NULL);
	CHECK(!strncmp(svg, "<?xml", 5));
	CHECK(strstr(svg, "<script") != NULL);
	CHECK(strstr(svg, "<![CDATA[") != NULL);
	CHECK(strstr(svg, "function zoom(") != NULL);
	CHECK(strstr(svg, "function unzoom(") != NULL);
	CHECK(strstr(svg, "function search(") != NULL);
	CHECK(strstr(svg, "keydown") != NULL);
	CHECK(strstr(svg, ">Search<") != NULL);
	CHECK(strstr(svg, ">Reset Zoom<") != NULL);
	CHECK(strstr(svg, "id=\"details\"") != NULL);
	CHECK(strstr(svg, "http://") ==
	      strstr(svg, "http://www.w3.org/2000/svg")); /* no external refs */
	CHECK(strstr(svg, "href") == NULL);
	CHECK(strstr(svg, "main (4041 samples, 99.75%)") != NULL);
	CHECK(strstr(svg, "heavy (3000 samples, 74.06%)") != NULL);
	CHECK(strstr(svg, "op&lt;&amp;&quot;&apos;&gt; ??") != NULL);
	CHECK(strstr(svg, "&lt;3&gt;") != NULL); /* command line escaped */
	CHECK(strstr(svg, ">tiny") == NULL && strstr(svg, "tiny (") == NULL);
	CHECK(strstr(svg, "[truncated] (10 samples, 0.25%)") != NULL);
	free(svg);

	have_py = system("python3 -c 'import xml.etree.ElementTree' 2>/dev/null") == 0;
	if (!have_py)
		fprintf(stderr, "python3 missing: XML well-formedness not checked\n");
	n = have_py ? read_frames(path, dir, fr, 64) : 0;
	if (have_py) {
		const struct frame *all = find(fr, n, "all", 0), *heavy = find(fr, n, "heavy", 0);
		const struct frame *light = find(fr, n, "light", 0),
		                   *mainf = find(fr, n, "main", 0);
		int spins = 0;

		CHECK(n > 0);
		REQUIRE(all && heavy && light && mainf);
		/* all, main, heavy, light, spin under heavy (merged), spin under
		 * light, the odd one; [truncated] with deep and deep above it */
		CHECK_EQ_INT(n, 10);
		for (int i = 0; i < n; i++)
			spins += !strcmp(fr[i].name, "spin");
		CHECK_EQ_INT(spins, 2);
		CHECK(fabs(heavy->width / light->width - 3.0) < 0.01);
		CHECK(fabs(mainf->width - all->width * 4041 / 4051) < 0.01);
		CHECK(fabs(find(fr, n, "spin", 0)->width + find(fr, n, "spin", 1)->width -
		           (heavy->width + light->width)) < 0.02);
		/* flame orientation: the root at the bottom, callees above */
		CHECK(all->y > mainf->y && mainf->y > heavy->y);
		CHECK(heavy->y == light->y);
	}

	/* the embedded script itself, against a fake DOM, when node is there */
	if (system("node --version >/dev/null 2>&1") == 0) {
		char js[512], cmd[1024];
		const char *src = getenv("CBN_SOURCE_DIR");

		if (src)
			snprintf(js, sizeof(js), "%s/tests/unit/test_export_flame_dom.js", src);
		else
			snprintf(
			    js, sizeof(js), "%.*s/test_export_flame_dom.js",
			    (int)(strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') - __FILE__ : 1),
			    strrchr(__FILE__, '/') ? __FILE__ : ".");
		snprintf(cmd, sizeof(cmd), "node '%s' '%s'", js, path);
		CHECK_EQ_INT(system(cmd), 0);
	} else {
		fprintf(stderr, "node not installed: the flame graph script was not exercised\n");
	}

	/* an empty profile: still a valid SVG that says so */
	{
		struct profile e;

		ex_init(&e, "true");
		snprintf(path, sizeof(path), "%s/empty.svg", dir);
		CHECK_EQ_INT(export_flamegraph(analysed(&e), path, err, sizeof(err)), 0);
		svg = ex_slurp(path, NULL);
		CHECK(svg && strstr(svg, "no samples") && strstr(svg, "</svg>"));
		free(svg);
		if (have_py)
			CHECK_EQ_INT(read_frames(path, dir, fr, 64), 0);
	}
	CHECK(export_flamegraph(analysed(&p), "/nonexistent-dir/f.svg", err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent-dir/f.svg") != NULL);

	pb_profile_free(&p);
	ex_rmdir(dir);
	return test_result();
}
