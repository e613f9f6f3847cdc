/*
 * trace.c — --trace FILE[.gz]: the Chrome trace-event JSON that Perfetto and
 * chrome://tracing open.  CPU lanes are rebuilt from samples; CUDA API calls,
 * annotations and GPU work get lanes of their own; every lane strictly nests.
 * Memory spaces (host per process, GPU per device) become counter tracks.
 * Steps become ProfilerStep#N slices on a "Steps" lane of their process, and
 * capture windows slices on a "Capture" lane, when the run used controls.
 * Layout, flows and the size cap are documented in docs/outputs.md.
 *
 * This file writes the events under the size cap; trace_int.h names the
 * others: trace_collect.c and trace_cpu.c gather the events, trace_lanes.c
 * places them on lanes and adds the flows, trace_emit.c formats them,
 * trace_ids.c says where each goes, trace_buf.c holds the buffers.
 */
#include "analysis.h"
#include "trace_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int trace_write(struct tctx *c, const char *path, const struct trace_opts *o,
                       struct tvec *cuda, struct tvec *cpu, char *err, size_t errlen)
{
	const struct profile *p = c->p;
	uint64_t cap = o && o->max_bytes ? o->max_bytes : TRACE_DEFAULT_CAP;
	const struct tvec *all[2] = {cuda, cpu};
	struct gz_file *f = NULL;
	struct sbuf b = {0};
	size_t written_cpu = 0;
	/* slices the run has: those built, or the counting pass's total */
	size_t total_cpu = c->cpu_total > cpu->n ? c->cpu_total : cpu->n;
	int64_t cut_ts = -1;
	int rc, first = 1;

	rc = gz_open(&f, path, gz_path_wants_gzip(path));
	if (rc) {
		snprintf(err, errlen,
		         "cannot create trace %s: %s; check the directory exists and is writable",
		         path, strerror(-rc));
		return -1;
	}
	gz_puts(f, "{\"traceEvents\":[\n");
	rc = trace_write_meta(c, f, &b);
	if (!rc)
		rc = trace_write_counters(c, f, &b, &first);
	for (int k = 0; k < 2 && !rc; k++) {
		for (size_t i = 0; i < all[k]->n && !rc; i++) {
			trace_format(c, &b, &all[k]->v[i]);
			if (b.oom) {
				rc = -ENOMEM;
				break;
			}
			/* the cap drops CPU sample slices only; everything else is
			 * small next to them and needed for the CUDA views */
			if (k == 1 && gz_count(f) + b.n + 2 > cap) {
				cut_ts = all[k]->v[i].ts;
				break;
			}
			if (!first)
				gz_puts(f, ",\n");
			first = 0;
			rc = gz_write(f, b.p, b.n);
			written_cpu += k == 1;
		}
	}
	if (!rc) {
		gz_puts(
		    f,
		    "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"tool\":\"cbottleneck\"");
		b.n = 0;
		sb_puts(&b, ",\"command\":");
		{
			struct sbuf cmd = {0};

			for (char **a = p->argv; a && *a; a++) {
				if (a != p->argv)
					sb_puts(&cmd, " ");
				sb_puts(&cmd, *a);
			}
			sb_json_str(&b, cmd.p ? cmd.p : "");
			free(cmd.p);
		}
		sb_printf(
		    &b,
		    ",\"start_monotonic_ns\":%" PRIu64 ",\"period_ns\":%" PRIu64
		    ",\"frequency_hz\":%.3f,\"time_unit\":\"us, relative to start_monotonic_ns\"",
		    p->start_ns, p->period_ns, p->frequency_hz);
		sb_printf(&b, ",\"window_start_ns\":%" PRId64, c->ws);
		if (c->we != INT64_MAX)
			sb_printf(&b, ",\"window_end_ns\":%" PRId64, c->we);
		sb_printf(
		    &b,
		    ",\"cpu_slices\":%zu,\"cpu_slices_dropped\":%zu,\"size_cap_bytes\":%" PRIu64
		    "}\n}\n",
		    total_cpu, total_cpu - written_cpu, cap);
		rc = b.oom ? -ENOMEM : gz_write(f, b.p, b.n);
	}
	{
		int crc = gz_close(f);

		if (!rc)
			rc = crc;
	}
	free(b.p);
	if (rc) {
		snprintf(err, errlen, "cannot write trace %s: %s", path, strerror(-rc));
		return -1;
	}
	if (total_cpu > written_cpu && !(o && o->quiet)) {
		double at = (double)(cut_ts >= 0 ? cut_ts : c->cpu_cut) / 1e9;

		fprintf(stderr,
		        "cbottleneck: trace %s reached its size cap (%" PRIu64 " MiB): "
		        "CPU sample slices after %.3fs were left out (%zu of %zu); "
		        "narrow it with --trace-window START:END\n",
		        path, cap >> 20, at, total_cpu - written_cpu, total_cpu);
	}
	return 0;
}

int export_trace(const struct analysis *a, const char *path, const struct trace_opts *o,
                 char *err, size_t errlen)
{
	const struct profile *p = a->profile;
	struct tctx c = {.p = p, .mem = a->memory, .steps = a->steps, .ops = a->ops,
			 .wait = a->wait};
	struct tvec cuda = {0}, cpu = {0};
	uint64_t cap = o && o->max_bytes ? o->max_bytes : TRACE_DEFAULT_CAP;
	int rc;

	for (size_t q = 0; q < p->nprocesses && !c.has_ranks; q++)
		c.has_ranks = p->processes[q].rank.rank >= 0;
	c.ws = o ? (int64_t)o->window_start_ns : 0;
	c.we = o && o->window_end_ns ? (int64_t)o->window_end_ns : INT64_MAX;
	/* a CPU slice takes at least 79 bytes of JSON, so no more than cap/79
	 * can be written: building many more only costs memory and sorting.
	 * trace_plan_cpu() picks the time before which at most this many start. */
	c.cpu_limit = (size_t)(cap / 64) + 4096;
	if (c.we <= c.ws) {
		snprintf(err, errlen, "trace window is empty: its end must come after its start");
		return -1;
	}
	rc = trace_pids(&c);
	if (!rc)
		rc = trace_gpu_pids(&c);
	if (!rc)
		rc = trace_collect_cuda(&c, &cuda);
	if (!rc)
		rc = trace_collect_steps(&c, &cuda);
	if (!rc)
		rc = trace_collect_mpi(&c, &cuda);
	if (!rc)
		rc = trace_plan_cpu(&c);
	if (!rc)
		rc = trace_collect_cpu(&c, &cpu);
	if (!rc)
		rc = trace_collect_offcpu(&c, &cpu);
	if (!rc)
		rc = trace_assign_slots(&c, &cuda);
	if (!rc)
		rc = trace_assign_slots(&c, &cpu);
	if (!rc)
		rc = trace_add_flows(&c, &cuda);
	if (!rc)
		rc = trace_add_lock_flows(&c, &cpu);
	if (!rc) {
		if (cuda.n)
			qsort(cuda.v, cuda.n, sizeof(*cuda.v), trace_cmp_emit);
		if (cpu.n)
			qsort(cpu.v, cpu.n, sizeof(*cpu.v), trace_cmp_emit);
		rc = trace_write(&c, path, o, &cuda, &cpu, err, errlen) ? 1 : 0;
	} else {
		snprintf(err, errlen, "cannot build trace %s: %s", path, strerror(-rc));
	}
	free(cuda.v);
	free(cpu.v);
	free(c.lanes);
	free(c.gpu_pid_proc);
	free(c.gpu_pid_dev);
	free(c.pid_of);
	return rc ? -1 : 0;
}

/* One bound of --trace-window: a number with an optional unit (s, ms, us,
 * ns; seconds when none). */
static int trace_window_bound(const char *s, size_t len, uint64_t *ns)
{
	char buf[64], *end;
	double v, mult = 1e9;

	*ns = 0;
	if (len == 0)
		return 0;
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!(buf[0] >= '0' && buf[0] <= '9') && buf[0] != '.')
		return -1;
	v = strtod(buf, &end);
	if (end == buf || !(v >= 0) || v > 1e12)
		return -1;
	if (!strcmp(end, "s") || !*end)
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (!strcmp(end, "ns"))
		mult = 1;
	else
		return -1;
	*ns = (uint64_t)(v * mult + 0.5);
	return 0;
}

int trace_window_parse(const char *s, uint64_t *start_ns, uint64_t *end_ns)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	uint64_t a, b;

	if (!colon || strchr(colon + 1, ':'))
		return -1;
	if (trace_window_bound(s, (size_t)(colon - s), &a) ||
	    trace_window_bound(colon + 1, strlen(colon + 1), &b))
		return -1;
	if (colon[1] && b <= a)
		return -1;
	*start_ns = a;
	*end_ns = b;
	return 0;
}
