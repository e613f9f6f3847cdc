/*
 * trace_emit.c — the trace's JSON: one event formatted per type, the
 * process and thread names and sort orders (metadata events), and the
 * memory spaces as counter tracks.
 */
#include "cbn_mpi.h"
#include "memory.h"
#include "ops.h"
#include "steps.h"
#include "steps_json.h"
#include "util.h"
#include "wait.h"
#include "wait_report.h"
#include "trace_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* --- writing ------------------------------------------------------------- */

static const char *gpu_cat(uint32_t kind)
{
	switch (kind) {
	case PROF_GPU_MEMCPY:
		return "gpu_memcpy";
	case PROF_GPU_MEMSET:
		return "gpu_memset";
	default:
		return "kernel";
	}
}

static const struct prof_cuda_device *trace_device(const struct profile *p, uint32_t proc,
                                                   uint32_t id)
{
	for (size_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].process == proc && p->devices[i].id == id)
			return &p->devices[i];
	for (size_t i = 0; i < p->ndevices; i++)
		if (p->devices[i].id == id)
			return &p->devices[i];
	return NULL;
}

/* ,"op":"aten::addmm": the operator innermost on API call api's launch
 * stack (ops.h), nothing when there is none. */
static void trace_op_arg(const struct tctx *c, struct sbuf *b, uint32_t api)
{
	if (!c->ops || api >= c->p->ncuda_api || c->ops->api_op[api] == OPS_NONE)
		return;
	sb_puts(b, ",\"op\":");
	sb_json_str(b, c->ops->rows[c->ops->api_op[api]].name);
}

static void trace_gpu_args(const struct tctx *c, struct sbuf *b, const struct prof_gpu_op *g)
{
	const struct profile *p = c->p;

	sb_printf(b,
	          ",\"args\":{\"device\":%" PRIu32 ",\"context\":%" PRIu32 ",\"stream\":%" PRIu32
	          ",\"correlation\":%" PRIu32,
	          g->device, g->context, g->stream, g->correlation);
	if (g->kind == PROF_GPU_KERNEL) {
		const struct prof_cuda_device *d = trace_device(p, g->process, g->device);
		double blocks = (double)g->grid[0] * g->grid[1] * g->grid[2];
		double threads = (double)g->block[0] * g->block[1] * g->block[2];

		sb_printf(b,
		          ",\"registers per thread\":%" PRIu32 ",\"shared memory\":%" PRId64
		          ",\"grid\":[%" PRId32 ",%" PRId32 ",%" PRId32 "],\"block\":[%" PRId32
		          ",%" PRId32 ",%" PRId32 "]",
		          g->registers, (int64_t)g->static_smem + g->dynamic_smem, g->grid[0],
		          g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2]);
		if (d && d->sm_count) {
			double warps = blocks * (double)((uint64_t)(threads + 31) / 32);

			sb_printf(b, ",\"blocks per SM\":%.2f,\"warps per SM\":%.2f",
			          blocks / d->sm_count, warps / d->sm_count);
		}
		if (g->graph_id)
			sb_printf(b, ",\"graph id\":%" PRIu32 ",\"graph node id\":%" PRIu64,
			          g->graph_id, g->graph_node_id);
	} else {
		uint64_t dur = g->end > g->start ? g->end - g->start : 0;

		sb_printf(b, ",\"bytes\":%" PRIu64, g->bytes);
		if (dur)
			sb_printf(b, ",\"memory bandwidth (GB/s)\":%.3f",
			          (double)g->bytes / (double)dur);
		if (g->kind == PROF_GPU_MEMSET)
			sb_printf(b, ",\"value\":%" PRIu32, g->value);
	}
	trace_op_arg(c, b, g->api);
	sb_puts(b, "}");
}

/* An event's "ph", "cat" and "name". */
static void trace_format_name(const struct tctx *c, struct sbuf *b, const struct tev *e)
{
	const struct profile *p = c->p;

	switch (e->type) {
	case TEV_SAMPLE:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"cpu_sample\",\"name\":");
		if (e->inlined && e->ref < p->nfuncs) {
			char name[1024];

			snprintf(name, sizeof(name), "%s [inlined]", p->funcs[e->ref].name);
			sb_json_str(b, name);
			break;
		}
		sb_json_str(b, e->ref < p->nfuncs               ? p->funcs[e->ref].name
		               : e->ref == CPU_LANE_TRUNCATED ? "[truncated]"
		                                                : "[unknown]");
		break;
	case TEV_API: {
		const struct prof_cuda_api *a = &p->cuda_api[e->ref];

		sb_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":",
		          a->domain == CBN_CUDA_DRIVER ? "cuda_driver" : "cuda_runtime");
		sb_json_str(b, a->name);
		break;
	}
	case TEV_RANGE:
	case TEV_MARK:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"user_annotation\",\"name\":",
		          e->type == TEV_MARK ? "i\",\"s\":\"t" : "X");
		sb_json_str(b, p->ranges[e->ref].name);
		break;
	case TEV_GPU: {
		const struct prof_gpu_op *g = &p->gpu_ops[e->ref];

		sb_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", gpu_cat(g->kind));
		sb_json_str(b, g->name);
		break;
	}
	case TEV_STEP: {
		char name[48];

		snprintf(name, sizeof(name), "ProfilerStep#%" PRIu64, c->steps->steps[e->ref].number);
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		sb_json_str(b, name);
		break;
	}
	case TEV_CAPTURE:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"capture\",\"name\":\"Capture\"");
		break;
	case TEV_FLOW_S:
	case TEV_FLOW_F:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":%" PRIu64,
		          e->type == TEV_FLOW_S ? "s" : "f\",\"bp\":\"e", e->flow);
		break;
	case TEV_OFFCPU: {
		const struct wait_stretch *o = &c->wait->stretches[e->ref];
		char name[1024];

		wait_offcpu_label(name, sizeof(name), o->kind,
				  o->call < p->nfuncs ? p->funcs[o->call].name : NULL);
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"off_cpu\",\"name\":");
		sb_json_str(b, name);
		break;
	}
	case TEV_MPI:
		sb_puts(b, "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":");
		sb_json_str(b, cbn_mpi_call_name(p->mpi_calls[e->ref].call));
		break;
	case TEV_LOCK_S:
	case TEV_LOCK_F:
		sb_printf(b, "{\"ph\":\"%s\",\"cat\":\"lock\",\"name\":\"lock wait\",\"id\":%" PRIu64,
		          e->type == TEV_LOCK_S ? "s" : "f\",\"bp\":\"e", e->flow);
		break;
	}
}

/* An event's "args", for the types that have some. */
static void trace_format_args(const struct tctx *c, struct sbuf *b, const struct tev *e)
{
	const struct profile *p = c->p;

	switch (e->type) {
	case TEV_API: {
		const struct prof_cuda_api *a = &p->cuda_api[e->ref];

		sb_printf(b, ",\"args\":{\"cbid\":%" PRIu32 ",\"correlation\":%" PRIu32, a->cbid,
		          a->correlation);
		if (a->ret)
			sb_printf(b, ",\"return\":%" PRId32, a->ret);
		trace_op_arg(c, b, e->ref);
		sb_puts(b, "}");
		break;
	}
	case TEV_RANGE:
	case TEV_MARK: {
		const struct prof_range *r = &p->ranges[e->ref];

		sb_printf(b, ",\"args\":{\"source\":\"%s\"",
		          r->source == CBN_SRC_NVTX ? "nvtx" : "annotation");
		if (r->domain && *r->domain) {
			sb_puts(b, ",\"domain\":");
			sb_json_str(b, r->domain);
		}
		if (r->kind == CBN_RANGE_STEP)
			sb_puts(b, ",\"step\":true");
		sb_puts(b, "}");
		break;
	}
	case TEV_GPU:
		trace_gpu_args(c, b, &p->gpu_ops[e->ref]);
		break;
	case TEV_MPI: {
		const struct prof_mpi_call *m = &p->mpi_calls[e->ref];

		sb_printf(b, ",\"args\":{\"bytes_sent\":%" PRIu64 ",\"bytes_recv\":%" PRIu64
		          ",\"peer\":%" PRId32 ",\"comm\":%" PRIu32 ",\"seq\":%" PRIu32 "}",
		          m->bytes_sent, m->bytes_recv, m->peer, m->comm, m->seq);
		break;
	}
	case TEV_STEP: {
		const struct step *st = &c->steps->steps[e->ref];

		sb_printf(b, ",\"args\":{\"step\":%" PRIu64 ",\"cpu_ns\":%" PRIu64
		          ",\"gpu_busy_ns\":%" PRIu64 ",\"sync_ns\":%" PRIu64 ",\"kernels\":%" PRIu32
		          ",\"copies\":%" PRIu32 "}",
		          st->number, st->cpu_ns, st->gpu_busy_ns, st->sync_ns, st->kernels,
		          st->copies);
		break;
	}
	case TEV_OFFCPU: {
		const struct wait_stretch *o = &c->wait->stretches[e->ref];
		uint32_t site = o->site;

		sb_printf(b, ",\"args\":{\"kind\":\"%s\",\"syscall\":%" PRId32
		          ",\"weight_ns\":%" PRIu64, wait_kind_name((int)o->kind), o->syscall,
		          o->weight_ns);
		if (site < p->nfuncs) {
			sb_puts(b, ",\"site\":");
			sb_json_str(b, p->funcs[site].name ? p->funcs[site].name : "");
		}
		if (o->addr)
			sb_printf(b, ",\"addr\":\"0x%" PRIx64 "\"", o->addr);
		if (o->holder != PROF_NONE)
			sb_printf(b, ",\"holder_tid\":%" PRIu32, p->threads[o->holder].tid);
		sb_puts(b, "}");
		break;
	}
	case TEV_CAPTURE: {
		const struct prof_window *w = &p->windows[e->ref];

		sb_printf(b, ",\"args\":{\"open_cause\":\"%s\",\"close_cause\":\"%s\""
		          ",\"first_step\":%" PRIu64 "}",
		          steps_cause_name(w->open_cause), steps_cause_name(w->close_cause),
		          w->first_step);
		break;
	}
	default:
		break;
	}
}

void trace_format(const struct tctx *c, struct sbuf *b, const struct tev *e)
{
	b->n = 0;
	trace_format_name(c, b, e);
	sb_puts(b, ",\"pid\":");
	sb_u64(b, e->pid);
	sb_puts(b, ",\"tid\":");
	sb_u64(b, trace_lane_tid(e));
	sb_puts(b, ",\"ts\":");
	sb_us(b, e->ts);
	if (e->type != TEV_MARK && e->type < TEV_FLOW_S) {
		sb_puts(b, ",\"dur\":");
		sb_us(b, e->dur);
	}
	trace_format_args(c, b, e);
	sb_puts(b, "}");
}

/* Emit one metadata event. */
static int trace_meta(struct gz_file *f, struct sbuf *b, const char *what, uint32_t pid,
                      uint32_t tid, int with_tid, const char *name, int64_t sort)
{
	b->n = 0;
	sb_printf(b, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRIu32, what, pid);
	if (with_tid)
		sb_printf(b, ",\"tid\":%" PRIu32, tid);
	if (name) {
		sb_puts(b, ",\"args\":{\"name\":");
		sb_json_str(b, name);
		sb_puts(b, "}},\n");
	} else {
		sb_printf(b, ",\"args\":{\"sort_index\":%" PRId64 "}},\n", sort);
	}
	return b->oom ? -ENOMEM : gz_write(f, b->p, b->n);
}

/* The process_name and sort index of the synthetic process of one GPU. */
static int trace_meta_gpu(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                          const struct lane *l)
{
	const struct profile *p = c->p;
	size_t k = l->pid - TRACE_GPU_PID_BASE;
	uint32_t proc = c->gpu_pid_proc[k], dev = c->gpu_pid_dev[k];
	const struct prof_cuda_device *d = trace_device(p, proc, dev);
	char name[512];
	int rc;

	snprintf(name, sizeof(name), "GPU %" PRIu32 "%s%s (pid %" PRIu32 ")", dev,
	         d && d->name && *d->name ? ": " : "", d && d->name ? d->name : "",
	         proc < p->nprocesses ? p->processes[proc].pid : 0);
	rc = trace_meta(f, b, "process_name", l->pid, 0, 0, name, 0);
	if (!rc)
		rc = trace_meta(f, b, "process_sort_index", l->pid, 0, 0, NULL,
		                (int64_t)(1 << 20) + (int64_t)k);
	return rc;
}

/* The process_name and sort index of a process's group: an exec chain's
 * images by name, a rank of a distributed run by rank. */
static int trace_meta_process(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                              const struct lane *l)
{
	const struct profile *p = c->p;
	char name[512];
	size_t len = 0;
	int64_t order = -1, rq = -1;
	int rc;

	/* exec chains share a pid: "forkexec -> split" */
	name[0] = '\0';
	for (size_t q = 0; q < p->nprocesses; q++) {
		if (trace_pid(c, (uint32_t)q) != l->pid)
			continue;
		if (order < 0)
			order = (int64_t)q;
		/* under mpirun a rank is the exec'd image of a launcher's
		 * fork child: any image may be it */
		if (p->processes[q].rank.rank >= 0)
			rq = (int64_t)q;
		len += (size_t)snprintf(name + len, sizeof(name) - len, "%s%s", len ? " -> " : "",
		                        util_base_name(p->processes[q].exe));
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
	}
	if (!name[0])
		snprintf(name, sizeof(name), "process %" PRIu32, l->pid);
	/* a rank of a distributed run: its group is named and sorted by rank,
	 * ahead of the processes that are none */
	if (rq >= 0) {
		const struct prof_rank_proc *rk = &p->processes[rq].rank;

		snprintf(name, sizeof(name), "rank %" PRId32 " (%s, pid %" PRIu32 ")", rk->rank,
		         rk->host && *rk->host ? rk->host : "?", p->processes[rq].pid);
		order = rk->rank;
	} else if (order >= 0 && c->has_ranks) {
		order += (int64_t)1 << 19;
	}
	rc = trace_meta(f, b, "process_name", l->pid, 0, 0, name, 0);
	if (!rc)
		rc = trace_meta(f, b, "process_sort_index", l->pid, 0, 0, NULL,
		                order < 0 ? 0 : order);
	return rc;
}

/* The thread_name and sort index of one lane. */
static int trace_meta_lane(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                           const struct lane *l)
{
	const struct profile *p = c->p;
	struct tev e = {.pid = l->pid, .tid = l->tid, .kind = l->kind, .slot = l->slot};
	const char *tname = l->thr < p->nthreads ? p->threads[l->thr].name : NULL;
	char name[512], tbuf[64];
	int64_t sort = 0;
	int rc;

	if (!tname || !*tname) {
		if (l->kind != LANE_GPU && l->thr == PROF_NONE)
			tname = "unknown thread";
		else
			tname = tbuf;
		snprintf(tbuf, sizeof(tbuf), "thread %" PRIu32, l->tid);
	}
	switch (l->kind) {
	case LANE_GPU:
		snprintf(name, sizeof(name), "stream %" PRIu32, l->tid);
		sort = (int64_t)l->tid * TRACE_MAX_SLOTS + l->slot;
		break;
	case LANE_API:
		snprintf(name, sizeof(name), "%s cuda api", tname);
		break;
	case LANE_RANGE:
		snprintf(name, sizeof(name), "%s annotations", tname);
		break;
	case LANE_STEP:
		snprintf(name, sizeof(name), "Steps");
		break;
	case LANE_CAPTURE:
		snprintf(name, sizeof(name), "Capture");
		break;
	default:
		snprintf(name, sizeof(name), "%s", tname);
		break;
	}
	if (l->kind == LANE_STEP || l->kind == LANE_CAPTURE) {
		/* above every thread of the process, Steps first */
		sort = (l->kind == LANE_STEP ? -2 : -1) * (int64_t)TRACE_MAX_SLOTS + l->slot;
	} else if (l->kind != LANE_GPU) {
		/* a thread's lanes sit together; the main thread (tid == pid) first */
		int64_t rank = l->thr < p->nthreads ? (int64_t)l->thr + 1 : 0;

		if (l->tid == l->pid)
			rank = 0;
		sort = rank * 3 * TRACE_MAX_SLOTS + trace_lane_index(l->kind, l->slot);
	}
	if (l->slot) {
		size_t len = strlen(name);

		snprintf(name + len, sizeof(name) - len, " (overlap %u)", (unsigned)l->slot);
	}
	rc = trace_meta(f, b, "thread_name", l->pid, trace_lane_tid(&e), 1, name, 0);
	if (!rc)
		rc = trace_meta(f, b, "thread_sort_index", l->pid, trace_lane_tid(&e), 1, NULL,
		                sort);
	return rc;
}

int trace_write_meta(const struct tctx *c, struct gz_file *f, struct sbuf *b)
{
	struct lane *ln = c->lanes;
	size_t n = c->nlanes;
	uint32_t last_pid = UINT32_MAX;
	int rc = 0;

	if (n)
		qsort(ln, n, sizeof(*ln), trace_cmp_lane);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct lane *l = &ln[i];

		if (i && !trace_cmp_lane(&ln[i - 1], l))
			continue;
		if (l->pid != last_pid) {
			last_pid = l->pid;
			rc = l->pid >= TRACE_GPU_PID_BASE ? trace_meta_gpu(c, f, b, l)
			                                  : trace_meta_process(c, f, b, l);
			if (rc)
				break;
		}
		rc = trace_meta_lane(c, f, b, l);
	}
	return rc;
}

/* The pid a memory space's counter track goes in: a host space's process;
 * a GPU's first process that allocated on it (the root process otherwise). */
static uint32_t trace_space_pid(const struct tctx *c, const struct mem_space *s)
{
	const struct profile *p = c->p;
	uint32_t proc = s->process;

	if (s->kind == MEM_SPACE_GPU) {
		proc = 0;
		for (size_t i = 0; i < p->nmemory; i++) {
			if (p->memory[i].device == s->device) {
				proc = p->memory[i].process;
				break;
			}
		}
	}
	return trace_pid(c, proc);
}

/* One counter event of space s at relative time rel with point pt. */
static void trace_counter(struct sbuf *b, const struct mem_space *s, uint32_t pid, uint32_t tid,
                          const char *name, int64_t rel, const struct mem_point *pt)
{
	b->n = 0;
	sb_puts(b, "{\"ph\":\"C\",\"cat\":\"memory\",\"name\":");
	sb_json_str(b, name);
	sb_printf(b, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":", pid, tid);
	sb_us(b, rel);
	if (s->kind == MEM_SPACE_GPU)
		sb_printf(b, ",\"args\":{\"allocated\":%" PRId64 ",\"reserved\":%" PRIu64 "}}",
		          pt->live, pt->rss);
	else
		sb_printf(b, ",\"args\":{\"live\":%" PRId64 ",\"rss\":%" PRIu64 "}}", pt->live,
		          pt->rss);
}

int trace_write_counters(const struct tctx *c, struct gz_file *f, struct sbuf *b,
                         int *first)
{
	for (size_t k = 0; c->mem && k < c->mem->nspaces; k++) {
		const struct mem_space *s = &c->mem->spaces[k];
		uint32_t pid = trace_space_pid(c, s);
		char name[64];
		size_t i = 0;

		if (s->kind == MEM_SPACE_GPU)
			snprintf(name, sizeof(name), "GPU %" PRIu32 " memory", s->device);
		else
			snprintf(name, sizeof(name), "Host memory");
		while (i < s->ntimeline && trace_rel(c, PROF_NONE, s->timeline[i].ts) < c->ws)
			i++;
		if (i > 0 && (i == s->ntimeline || trace_rel(c, PROF_NONE, s->timeline[i].ts) > c->ws))
			i--; /* the last point before the window, drawn at its start */
		for (; i < s->ntimeline; i++) {
			int64_t rel = trace_rel(c, PROF_NONE, s->timeline[i].ts);
			int rc;

			if (rel > c->we)
				break;
			/* a tid per track: each is in time order on its own */
			trace_counter(b, s, pid, TRACE_COUNTER_TID + (uint32_t)k, name,
			              rel < c->ws ? c->ws : rel, &s->timeline[i]);
			if (b->oom)
				return -ENOMEM;
			if (!*first)
				gz_puts(f, ",\n");
			*first = 0;
			if ((rc = gz_write(f, b->p, b->n)) != 0)
				return rc;
		}
	}
	return 0;
}
