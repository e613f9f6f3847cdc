/*
 * test_export_pprof.c — export_pprof(): the file is gzip; a small protobuf
 * decoder written here reads profile.proto back and checks the string table,
 * sample types, period, values, leaf-first location ids, inline lines
 * (callee first), function and mapping links and the thread labels.
 */
#include "analysed.h"
#include "testlib.h"
#include "test_export_fixture.h"

#ifndef EX_HAVE_ZLIB
int main(void)
{
	fprintf(stderr, "zlib.h not available: cannot gunzip the profile to check it\n");
	return TEST_SKIP;
}
#else

/* --- a minimal protobuf reader ------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

/* Next field: 1 and its number, wire type, and value or sub-reader; 0 at
 * the end or on malformed input (r->bad). */
static int rd_field(struct rd *r, unsigned *field, unsigned *wt, uint64_t *v, struct rd *sub)
{
	uint64_t key;

	if (r->p >= r->end || r->bad)
		return 0;
	key = rd_varint(r);
	*field = (unsigned)(key >> 3);
	*wt = (unsigned)(key & 7);
	if (*wt == 0) {
		*v = rd_varint(r);
	} else if (*wt == 2) {
		uint64_t len = rd_varint(r);

		if (len > (uint64_t)(r->end - r->p)) {
			r->bad = 1;
			return 0;
		}
		sub->p = r->p;
		sub->end = r->p + len;
		sub->bad = 0;
		r->p += len;
	} else {
		r->bad = 1; /* profile.proto uses varints and length-delimited only */
		return 0;
	}
	return !r->bad;
}

/* Repeated varint field: packed (wire type 2) or not. */
static int rd_repeated(unsigned wt, uint64_t v, struct rd *sub, uint64_t *out, int max)
{
	int n = 0;

	if (wt == 0) {
		out[0] = v;
		return 1;
	}
	while (sub->p < sub->end && n < max)
		out[n++] = rd_varint(sub);
	return sub->bad ? -1 : n;
}

#define MAXN 64

struct sample {
	uint64_t loc[MAXN];
	int nloc;
	uint64_t val[4];
	int nval;
	int64_t tid, pid;
	char thread[64];
};

struct line {
	uint64_t func;
	int64_t line;
};

struct location {
	uint64_t id, mapping, addr;
	struct line lines[8];
	int nlines;
};

struct function {
	uint64_t id, name, system_name, filename;
	int64_t start_line;
};

struct mapping {
	uint64_t id, filename, has_functions;
};

struct prof {
	char *strings[256];
	int nstrings;
	uint64_t sample_type[4][2];
	int nsample_type;
	uint64_t period_type[2], period, time_nanos, duration, default_sample_type, comment;
	struct sample samples[MAXN];
	int nsamples;
	struct location locs[MAXN];
	int nlocs;
	struct function funcs[MAXN];
	int nfuncs;
	struct mapping maps[8];
	int nmaps;
};

static int decode(const uint8_t *buf, size_t len, struct prof *pr)
{
	struct rd r = {buf, buf + len, 0}, s, s2, s3;
	unsigned f, wt, f2, wt2, f3, wt3;
	uint64_t v, v2, v3;

	memset(pr, 0, sizeof(*pr));
	while (rd_field(&r, &f, &wt, &v, &s)) {
		if (wt != 2 && f != 9 && f != 10 && f != 12 && f != 13 && f != 14)
			return -1;
		switch (f) {
		case 1: /* sample_type */
			while (rd_field(&s, &f2, &wt2, &v2, &s2))
				if (f2 <= 2 && pr->nsample_type < 4)
					pr->sample_type[pr->nsample_type][f2 - 1] = v2;
			pr->nsample_type++;
			break;
		case 2: { /* sample */
			struct sample *sm =
			    &pr->samples[pr->nsamples < MAXN ? pr->nsamples++ : MAXN - 1];

			sm->tid = sm->pid = -1;
			while (rd_field(&s, &f2, &wt2, &v2, &s2)) {
				if (f2 == 1) {
					sm->nloc = rd_repeated(wt2, v2, &s2, sm->loc, MAXN);
				} else if (f2 == 2) {
					sm->nval = rd_repeated(wt2, v2, &s2, sm->val, 4);
				} else if (f2 == 3) {
					uint64_t key = 0, str = 0, num = 0;

					while (rd_field(&s2, &f3, &wt3, &v3, &s3)) {
						if (f3 == 1)
							key = v3;
						if (f3 == 2)
							str = v3;
						if (f3 == 3)
							num = v3;
					}
					/* the string table comes later: keep indexes;
					 * numeric labels are written tid, then pid */
					if (str)
						snprintf(sm->thread, sizeof(sm->thread),
						         "#%llu:%llu", (unsigned long long)key,
						         (unsigned long long)str);
					else if (sm->tid < 0)
						sm->tid = (int64_t)(key << 32 | num);
					else
						sm->pid = (int64_t)(key << 32 | num);
				}
			}
			break;
		}
		case 3: { /* mapping */
			struct mapping *m = &pr->maps[pr->nmaps < 8 ? pr->nmaps++ : 7];

			while (rd_field(&s, &f2, &wt2, &v2, &s2)) {
				if (f2 == 1)
					m->id = v2;
				if (f2 == 5)
					m->filename = v2;
				if (f2 == 7)
					m->has_functions = v2;
			}
			break;
		}
		case 4: { /* location */
			struct location *l = &pr->locs[pr->nlocs < MAXN ? pr->nlocs++ : MAXN - 1];

			while (rd_field(&s, &f2, &wt2, &v2, &s2)) {
				if (f2 == 1)
					l->id = v2;
				if (f2 == 2)
					l->mapping = v2;
				if (f2 == 3)
					l->addr = v2;
				if (f2 == 4 && l->nlines < 8) {
					struct line *ln = &l->lines[l->nlines++];

					while (rd_field(&s2, &f3, &wt3, &v3, &s3)) {
						if (f3 == 1)
							ln->func = v3;
						if (f3 == 2)
							ln->line = (int64_t)v3;
					}
				}
			}
			break;
		}
		case 5: { /* function */
			struct function *fn =
			    &pr->funcs[pr->nfuncs < MAXN ? pr->nfuncs++ : MAXN - 1];

			while (rd_field(&s, &f2, &wt2, &v2, &s2)) {
				if (f2 == 1)
					fn->id = v2;
				if (f2 == 2)
					fn->name = v2;
				if (f2 == 3)
					fn->system_name = v2;
				if (f2 == 4)
					fn->filename = v2;
				if (f2 == 5)
					fn->start_line = (int64_t)v2;
			}
			break;
		}
		case 6: /* string_table */
			if (pr->nstrings < 256) {
				char *str = malloc((size_t)(s.end - s.p) + 1);

				memcpy(str, s.p, (size_t)(s.end - s.p));
				str[s.end - s.p] = '\0';
				pr->strings[pr->nstrings++] = str;
			}
			break;
		case 9:
			pr->time_nanos = v;
			break;
		case 10:
			pr->duration = v;
			break;
		case 11:
			while (rd_field(&s, &f2, &wt2, &v2, &s2))
				if (f2 <= 2)
					pr->period_type[f2 - 1] = v2;
			break;
		case 12:
			pr->period = v;
			break;
		case 13:
			pr->comment = v;
			break;
		case 14:
			pr->default_sample_type = v;
			break;
		default:
			break;
		}
	}
	return r.bad ? -1 : 0;
}

static const char *S(const struct prof *pr, uint64_t i)
{
	return i < (uint64_t)pr->nstrings ? pr->strings[i] : "(bad string index)";
}

static const struct location *loc_by_id(const struct prof *pr, uint64_t id)
{
	for (int i = 0; i < pr->nlocs; i++)
		if (pr->locs[i].id == id)
			return &pr->locs[i];
	return NULL;
}

static const struct function *func_by_id(const struct prof *pr, uint64_t id)
{
	for (int i = 0; i < pr->nfuncs; i++)
		if (pr->funcs[i].id == id)
			return &pr->funcs[i];
	return NULL;
}

/* "leaf<-caller<-..." of a sample, inline frames included (callee first). */
static void sample_names(const struct prof *pr, const struct sample *sm, char *out, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (int i = 0; i < sm->nloc; i++) {
		const struct location *l = loc_by_id(pr, sm->loc[i]);

		for (int k = 0; l && k < l->nlines; k++) {
			const struct function *fn = func_by_id(pr, l->lines[k].func);

			n += (size_t)snprintf(out + n, len - n, "%s%s", n ? "<-" : "",
			                      fn ? S(pr, fn->name) : "?");
			if (n >= len)
				return;
		}
	}
}

int main(void)
{
	struct profile p;
	struct prof pr;
	char *dir = ex_tmpdir(), path[256], err[256], names[512];
	uint32_t t_main, t_w, f_main, f_work, f_inl, f_leaf, f_lib;
	uint64_t total_w = 0, total_ns = 0, sum_c = 0, sum_ns = 0;
	uint8_t *buf;
	size_t len;

	ex_init(&p, "./app");
	ex_process(&p, 4242, 0, "/usr/bin/app");
	t_main = ex_thread(&p, 4242, 0, "app");
	t_w = ex_thread(&p, 4243, 0, "worker-1");
	f_main = ex_func(&p, "main", "app.c", 3, "app");
	f_work = ex_func(&p, "work", "app.c", 30, "app");
	f_inl = ex_func(&p, "inlined_helper", "util.h", 12, "app");
	f_leaf = ex_func(&p, "leaf", "app.c", 50, "app");
	f_lib = ex_func(&p, "memcpy", "", 0, "libc.so.6");
	/* main -> work -> inlined_helper (inlined into work) -> memcpy */
	uint32_t s1 = ex_stack_inl(&p, 4, (uint32_t[]){f_main, f_work, f_inl, f_lib}, 1u << 2);
	uint32_t s2 = ex_stack(&p, 3, (uint32_t[]){f_main, f_work, f_leaf});

	for (int k = 0; k < 20; k++)
		ex_sample(&p, k % 4 ? t_main : t_w, EX_T0 + (uint64_t)k * EX_MS, k % 3 ? s1 : s2,
		          1 + (k % 2));
	p.processes[0].period_ns = 2 * EX_MS; /* per-process period wins */
	p.start_real_ns = 1763800000123456789ull; /* 2025-11-22, wall clock */
	for (size_t i = 0; i < p.nsamples; i++) {
		total_w += p.samples[i].weight;
		total_ns += p.samples[i].weight * 2 * EX_MS;
	}

	snprintf(path, sizeof(path), "%s/cpu.pb.gz", dir);
	CHECK_EQ_INT(export_pprof(analysed(&p), path, err, sizeof(err)), 0);
	{
		FILE *f = fopen(path, "rb");
		unsigned char m[2] = {0, 0};

		REQUIRE(f != NULL);
		CHECK(fread(m, 1, 2, f) == 2 && m[0] == 0x1f && m[1] == 0x8b);
		fclose(f);
	}
	buf = (uint8_t *)ex_slurp(path, &len);
	REQUIRE(buf != NULL && len > 0);
	REQUIRE(decode(buf, len, &pr) == 0);

	/* string table, types, period */
	REQUIRE(pr.nstrings > 5);
	CHECK_STR(pr.strings[0], "");
	CHECK_EQ_INT(pr.nsample_type, 2);
	CHECK_STR(S(&pr, pr.sample_type[0][0]), "samples");
	CHECK_STR(S(&pr, pr.sample_type[0][1]), "count");
	CHECK_STR(S(&pr, pr.sample_type[1][0]), "cpu");
	CHECK_STR(S(&pr, pr.sample_type[1][1]), "nanoseconds");
	CHECK_STR(S(&pr, pr.period_type[0]), "cpu");
	CHECK_STR(S(&pr, pr.period_type[1]), "nanoseconds");
	CHECK_STR(S(&pr, pr.default_sample_type), "cpu");
	CHECK_EQ_INT(pr.period, EX_MS);
	CHECK_EQ_INT(pr.duration, 100 * EX_MS);
	CHECK(pr.time_nanos == 1763800000123456789ull);
	CHECK_STR(S(&pr, pr.comment), "./app --flag");

	/* samples merged per (stack, thread): 2 stacks x 2 threads */
	CHECK_EQ_INT(pr.nsamples, 4);
	for (int i = 0; i < pr.nsamples; i++) {
		const struct sample *sm = &pr.samples[i];

		CHECK_EQ_INT(sm->nval, 2);
		sum_c += sm->val[0];
		sum_ns += sm->val[1];
		CHECK_EQ_INT(sm->val[1], sm->val[0] * 2 * EX_MS);
		for (int k = 0; k < sm->nloc; k++)
			CHECK(loc_by_id(&pr, sm->loc[k]) != NULL);
		sample_names(&pr, sm, names, sizeof(names));
		CHECK(!strcmp(names, "memcpy<-inlined_helper<-work<-main") ||
		      !strcmp(names, "leaf<-work<-main"));
		/* labels: thread name, tid, pid */
		CHECK(sm->thread[0] != '\0');
		CHECK((sm->tid & 0xffffffff) == 4242 || (sm->tid & 0xffffffff) == 4243);
		CHECK_STR(S(&pr, (uint64_t)sm->tid >> 32), "tid");
		CHECK_EQ_INT(sm->pid & 0xffffffff, 4242);
		CHECK_STR(S(&pr, (uint64_t)sm->pid >> 32), "pid");
		{
			unsigned long long k, v;

			CHECK(sscanf(sm->thread, "#%llu:%llu", &k, &v) == 2);
			CHECK_STR(S(&pr, k), "thread");
			CHECK(!strcmp(S(&pr, v), "app") || !strcmp(S(&pr, v), "worker-1"));
		}
	}
	CHECK_EQ_INT(sum_c, total_w);
	CHECK_EQ_INT(sum_ns, total_ns);

	/* locations: one per pc; the inlined pair is one location, callee first */
	CHECK_EQ_INT(pr.nlocs, 5); /* memcpy, helper+work, main, leaf, work (other pc) */
	{
		int inl = 0;

		for (int i = 0; i < pr.nlocs; i++) {
			const struct location *l = &pr.locs[i];

			CHECK(l->id != 0);
			CHECK(l->mapping != 0);
			for (int k = 0; k < l->nlines; k++)
				CHECK(func_by_id(&pr, l->lines[k].func) != NULL);
			if (l->nlines == 2) {
				inl++;
				CHECK_STR(S(&pr, func_by_id(&pr, l->lines[0].func)->name),
				          "inlined_helper");
				CHECK_STR(S(&pr, func_by_id(&pr, l->lines[1].func)->name), "work");
			}
		}
		CHECK_EQ_INT(inl, 1);
	}
	/* functions: names, files, start lines; ids unique */
	CHECK_EQ_INT(pr.nfuncs, 5);
	for (int i = 0; i < pr.nfuncs; i++) {
		const struct function *fn = &pr.funcs[i];

		CHECK(fn->id != 0);
		for (int k = 0; k < i; k++)
			CHECK(pr.funcs[k].id != fn->id);
		CHECK_STR(S(&pr, fn->system_name), S(&pr, fn->name));
		if (!strcmp(S(&pr, fn->name), "work")) {
			CHECK_STR(S(&pr, fn->filename), "app.c");
			CHECK_EQ_INT(fn->start_line, 30);
		}
	}
	/* mappings: the executable first, then libc; symbolized */
	CHECK_EQ_INT(pr.nmaps, 2);
	CHECK_STR(S(&pr, pr.maps[0].filename), "app");
	CHECK_STR(S(&pr, pr.maps[1].filename), "libc.so.6");
	CHECK_EQ_INT(pr.maps[0].has_functions, 1);
	for (int i = 0; i < pr.nlocs; i++) {
		const struct location *l = &pr.locs[i];
		const struct function *fn = func_by_id(&pr, l->lines[l->nlines - 1].func);

		if (fn && !strcmp(S(&pr, fn->name), "memcpy"))
			CHECK_EQ_INT(l->mapping, pr.maps[1].id);
		else
			CHECK_EQ_INT(l->mapping, pr.maps[0].id);
	}

	for (int i = 0; i < pr.nstrings; i++)
		free(pr.strings[i]);
	free(buf);

	/* an empty profile is still a valid profile */
	{
		struct profile e;

		ex_init(&e, "true");
		snprintf(path, sizeof(path), "%s/empty.pb.gz", dir);
		CHECK_EQ_INT(export_pprof(analysed(&e), path, err, sizeof(err)), 0);
		buf = (uint8_t *)ex_slurp(path, &len);
		REQUIRE(buf != NULL);
		CHECK_EQ_INT(decode(buf, len, &pr), 0);
		CHECK_EQ_INT(pr.nsamples, 0);
		CHECK_STR(pr.strings[0], "");
		CHECK(pr.time_nanos == 0); /* start unknown: left out */
		for (int i = 0; i < pr.nstrings; i++)
			free(pr.strings[i]);
		free(buf);
	}
	CHECK(export_pprof(analysed(&p), "/nonexistent-dir/x.pb.gz", err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent-dir/x.pb.gz") != NULL);

	pb_profile_free(&p);
	if (!getenv("KEEP"))
		ex_rmdir(dir);
	else
		fprintf(stderr, "kept %s\n", dir);
	return test_result();
}
#endif
