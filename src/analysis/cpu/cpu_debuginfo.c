/*
 * cpu_debuginfo.c — the data-quality line about modules without debug info,
 * said as what to install: the modules are weighed by the samples whose
 * innermost frame lies in them, the ones that matter are named with the
 * Debian -dbgsym package that has their debug info (where dpkg knows the
 * file), and the rest is counted, not listed (a torch.compile run listed 48
 * libraries).  Launcher side only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "sym.h"
#include "util.h"

#define DBG_NAMED_MIN 0.01       /* a module named: at least this share of the samples */
#define DBG_NAMED_MAX 8          /* ... and at most this many */

struct dbg_mod {
	const char *name;        /* basename, as prof_func.module */
	const char *path;        /* as the agent recorded it, for dpkg */
	uint64_t w;              /* self weight of samples whose leaf is in it */
	char *pkg;               /* its Debian package, NULL */
};

static int dbg_cmp(const void *a, const void *b)
{
	const struct dbg_mod *x = a, *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The path a module was loaded from, from the modules frames landed in. */
static const char *path_of(const struct profile *p, const char *name)
{
	size_t i;

	for (i = 0; i < p->nhitmods; i++)
		if (!strcmp(util_base_name(p->hitmods[i].file), name) ||
		    !strcmp(util_base_name(p->hitmods[i].path), name))
			return p->hitmods[i].path && *p->hitmods[i].path ? p->hitmods[i].path
									 : p->hitmods[i].file;
	return NULL;
}

int cpu_debuginfo_line(const struct profile *p, const struct cpu_profile *c, char **out)
{
	struct dbg_mod *m = calloc(p->nnodebug_modules ? p->nnodebug_modules : 1, sizeof(*m));
	const char **paths = calloc(p->nnodebug_modules ? p->nnodebug_modules : 1, sizeof(*paths));
	char **pkgs = calloc(p->nnodebug_modules ? p->nnodebug_modules : 1, sizeof(*pkgs));
	size_t i, k, n = p->nnodebug_modules, named = 0, rest = 0, len = 0, cap = 2048;
	uint64_t all = 0, rest_w = 0;
	char *s = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (!n) {
		ret = 0;
		goto out;
	}
	if (!m || !paths || !pkgs || !(s = malloc(cap)))
		goto out;
	for (i = 0; i < n; i++) {
		m[i].name = p->nodebug_modules[i];
		m[i].path = path_of(p, m[i].name);
	}
	for (k = 0; k < c->nfuncs; k++) {
		const struct prof_func *f = &p->funcs[c->funcs[k].func];

		for (i = 0; f->module && i < n; i++)
			if (!strcmp(util_base_name(f->module), m[i].name)) {
				m[i].w += c->funcs[k].self_w;
				all += c->funcs[k].self_w;
				break;
			}
	}
	if (!all) {
		ret = 0; /* no sample lies there: nothing worth a line */
		goto out;
	}
	qsort(m, n, sizeof(*m), dbg_cmp);
	for (i = 0; i < n; i++)
		paths[i] = m[i].path;
	if (sym_packages_of(paths, n, pkgs) < 0)
		goto out;
	for (i = 0; i < n; i++)
		m[i].pkg = pkgs[i];

#define PUT(...)                                                                        \
	do {                                                                            \
		int w_ = snprintf(s + len, cap - len, __VA_ARGS__);                     \
		len = w_ < 0 ? len : len + (size_t)w_ < cap ? len + (size_t)w_ : cap - 1; \
	} while (0)
	PUT("no debug info where %.1f%% of the samples are (no file:line there, inlined "
	    "functions not shown): ", c->weight ? 100.0 * (double)all / (double)c->weight : 0.0);
	/* the packages to install, each once, then the modules no package has */
	for (i = 0; i < n; i++) {
		double sh = c->weight ? (double)m[i].w / (double)c->weight : 0.0;

		if (named >= DBG_NAMED_MAX || sh < DBG_NAMED_MIN || !m[i].w) {
			rest++;
			rest_w += m[i].w;
			continue;
		}
		if (m[i].pkg) {
			for (k = 0; k < i; k++)
				if (m[k].pkg && !strcmp(m[k].pkg, m[i].pkg) && m[k].w &&
				    (double)m[k].w >= DBG_NAMED_MIN * (double)c->weight)
					break;
			if (k == i)
				PUT("%s%s-dbgsym (%s, %.1f%%)", named ? ", " : "install ", m[i].pkg,
				    m[i].name, 100.0 * sh);
		} else {
			PUT("%s%s (%.1f%%: no package has it; build it with -g)",
			    named ? ", " : "", m[i].name, 100.0 * sh);
		}
		named++;
	}
	if (named)
		PUT(" (Debian's debug archive: docs/symbols.md)");
	if (rest)
		PUT("%s%zu more module%s without debug info hold%s %.1f%% of the samples",
		    named ? "; " : "", rest, rest == 1 ? "" : "s", rest == 1 ? "s" : "",
		    c->weight ? 100.0 * (double)rest_w / (double)c->weight : 0.0);
#undef PUT
	*out = s;
	s = NULL;
	ret = 0;
out:
	for (i = 0; pkgs && i < n; i++)
		free(pkgs[i]);
	free(pkgs);
	free(paths);
	free(m);
	free(s);
	return ret;
}
