/*
 * load_cuda.c — the CUDA and range records of a session file turned into the
 * profile's CUDA arrays: API calls with their host stacks (joined by
 * correlation id), GPU kernels/copies/sets linked to the API call that
 * launched them, syncs, overheads, devices, contexts, memory (joined to its
 * API call the same way), memory pools and status.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "load_int.h"

static const char *copy_name(unsigned kind, int peer)
{
	if (peer)
		return "[CUDA memcpy PtoP]";
	switch (kind) {
	case CBN_COPY_HTOD: return "[CUDA memcpy HtoD]";
	case CBN_COPY_DTOH: return "[CUDA memcpy DtoH]";
	case CBN_COPY_HTOA: return "[CUDA memcpy HtoA]";
	case CBN_COPY_ATOH: return "[CUDA memcpy AtoH]";
	case CBN_COPY_ATOA: return "[CUDA memcpy AtoA]";
	case CBN_COPY_ATOD: return "[CUDA memcpy AtoD]";
	case CBN_COPY_DTOA: return "[CUDA memcpy DtoA]";
	case CBN_COPY_DTOD: return "[CUDA memcpy DtoD]";
	case CBN_COPY_HTOH: return "[CUDA memcpy HtoH]";
	case CBN_COPY_PTOP: return "[CUDA memcpy PtoP]";
	}
	return "[CUDA memcpy]";
}

static const char *str(struct load *L, const char *s)
{
	return load_intern(L, s);
}

struct corr_probe {
	const struct profile *p;
	uint32_t correlation;
};

static int corr_eq(const void *ctx, uint32_t v)
{
	const struct corr_probe *c = ctx;

	return c->p->cuda_api[v].correlation == c->correlation;
}

static uint32_t api_of(struct load *L, uint32_t correlation)
{
	struct corr_probe probe = {L->p, correlation};

	if (correlation == 0)
		return PROF_NONE;
	return util_map_find(&L->corrmap, util_mix64(correlation), corr_eq, &probe);
}

static struct prof_gpu_op *gpu_op(struct load *L, uint32_t kind, uint64_t start, uint64_t end)
{
	struct profile *p = L->p;
	struct prof_gpu_op *g = LOAD_PUSH(L, p->gpu_ops, p->ngpu_ops, L->capgpu);

	if (!g)
		return NULL;
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->process = L->f->proc;
	g->start = start;
	g->end = end;
	g->api = PROF_NONE;
	return g;
}

static void note_ts(struct load *L, uint64_t ts)
{
	if (ts > L->f->last_ts)
		L->f->last_ts = ts;
}

static void load_cuda_share(struct load *L, uint32_t proc, uint32_t state, uint32_t what,
			    uint64_t ts, const char *msg);

static void cuda_range(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_range *s = (const void *)r->raw;
	struct prof_range *g = LOAD_PUSH(L, p->ranges, p->nranges, L->capranges);

	if (!g)
		return;
	g->start = s->start;
	g->end = s->end;
	g->process = proc;
	g->thread = s->tid ? load_thread(L, proc, s->tid) : PROF_NONE;
	g->kind = s->kind;
	g->source = s->source;
	g->depth = s->depth;
	g->domain = str(L, r->str2);
	g->name = str(L, r->str);
	note_ts(L, s->end);
}

static void cuda_api(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_api *s = (const void *)r->raw;
	struct prof_cuda_api *a = LOAD_PUSH(L, p->cuda_api, p->ncuda_api, L->capapi);

	if (!a)
		return;
	a->start = s->start;
	a->end = s->end;
	a->thread = load_thread(L, proc, s->tid);
	a->process = proc;
	a->correlation = s->correlation;
	a->cbid = s->cbid;
	a->domain = s->domain;
	a->ret = s->ret;
	a->name = str(L, r->str);
	a->stack = PROF_NONE;
	if (s->correlation && api_of(L, s->correlation) == PROF_NONE)
		load_map_put(L, &L->corrmap, util_mix64(s->correlation),
			     (uint32_t)(p->ncuda_api - 1));
	note_ts(L, s->end);
}

static void cuda_stack(struct load *L, const struct reader_rec *r)
{
	struct load_file *F = L->f;
	const struct cbn_rec_cuda_stack *s = (const void *)r->raw;
	struct load_cstack *c = LOAD_PUSH(L, F->cstacks, F->ncstacks, F->capcstacks);

	if (!c)
		return;
	c->correlation = s->correlation;
	c->pcs = r->pcs;
	c->nframes = r->nframes;
	c->key = r->stack_key;
}

static void cuda_kernel(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_cuda_kernel *s = (const void *)r->raw;
	struct prof_gpu_op *g = gpu_op(L, PROF_GPU_KERNEL, s->start, s->end);

	if (!g)
		return;
	g->device = s->device;
	g->context = s->context;
	g->stream = s->stream;
	g->correlation = s->correlation;
	g->name = str(L, sym_demangle(L->sym, r->str));
	memcpy(g->grid, s->grid, sizeof(g->grid));
	memcpy(g->block, s->block, sizeof(g->block));
	g->registers = s->registers;
	g->static_smem = s->static_smem;
	g->dynamic_smem = s->dynamic_smem;
	g->shmem_limit_optin = s->shmem_limit_optin;
	g->graph_id = s->graph_id;
	g->graph_node_id = s->graph_node_id;
	note_ts(L, s->end);
}

static void cuda_memcpy(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_cuda_memcpy *s = (const void *)r->raw;
	struct prof_gpu_op *g = gpu_op(L, PROF_GPU_MEMCPY, s->start, s->end);

	if (!g)
		return;
	g->device = s->device;
	g->context = s->context;
	g->stream = s->stream;
	g->correlation = s->correlation;
	g->name = copy_name(s->copy_kind, (r->flags & CBN_GPU_PEER) != 0);
	g->bytes = s->bytes;
	g->copy_kind = s->copy_kind;
	g->src_kind = s->src_kind;
	g->dst_kind = s->dst_kind;
	g->async = (r->flags & CBN_GPU_ASYNC) != 0;
	g->graph_id = s->graph_id;
	note_ts(L, s->end);
}

static void cuda_memset(struct load *L, const struct reader_rec *r)
{
	const struct cbn_rec_cuda_memset *s = (const void *)r->raw;
	struct prof_gpu_op *g = gpu_op(L, PROF_GPU_MEMSET, s->start, s->end);

	if (!g)
		return;
	g->device = s->device;
	g->context = s->context;
	g->stream = s->stream;
	g->correlation = s->correlation;
	g->name = "[CUDA memset]";
	g->bytes = s->bytes;
	g->value = s->value;
	g->dst_kind = s->mem_kind;
	g->async = (r->flags & CBN_GPU_ASYNC) != 0;
	note_ts(L, s->end);
}

static void cuda_sync(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_sync *s = (const void *)r->raw;
	struct prof_cuda_sync *y = LOAD_PUSH(L, p->syncs, p->nsyncs, L->capsyncs);

	if (!y)
		return;
	y->start = s->start;
	y->end = s->end;
	y->process = proc;
	y->type = s->type;
	y->correlation = s->correlation;
	y->context = s->context;
	y->stream = s->stream;
}

static void cuda_overhead(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_overhead *s = (const void *)r->raw;
	struct prof_cuda_overhead *o = LOAD_PUSH(L, p->overheads, p->noverheads, L->capover);

	if (!o)
		return;
	o->start = s->start;
	o->end = s->end;
	o->process = proc;
	o->kind = s->kind;
	o->correlation = s->correlation;
}

static void cuda_device(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_device *s = (const void *)r->raw;
	struct prof_cuda_device *d = LOAD_PUSH(L, p->devices, p->ndevices, L->capdev);

	if (!d)
		return;
	d->process = proc;
	d->id = s->id;
	d->name = str(L, r->str);
	d->global_mem = s->global_mem;
	d->sm_count = s->sm_count;
	d->cc_major = s->cc_major;
	d->cc_minor = s->cc_minor;
	d->max_threads_per_block = s->max_threads_per_block;
	d->max_warps_per_sm = s->max_warps_per_sm;
	d->threads_per_warp = s->threads_per_warp;
	d->max_blocks_per_sm = s->max_blocks_per_sm;
	d->regs_per_sm = s->regs_per_sm;
	d->regs_per_block = s->regs_per_block;
	d->smem_per_sm = s->smem_per_sm;
	d->smem_per_block = s->smem_per_block;
	d->smem_per_block_optin = s->smem_per_block_optin;
	d->reserved_smem_per_block = s->reserved_smem_per_block;
	if ((s->flags & CBN_DEVICE_UUID) &&
	    (uint64_t)CBN_DEVICE_UUID_OFF(s->name_len) + sizeof(d->uuid) <= r->size) {
		memcpy(d->uuid, (const char *)s + CBN_DEVICE_UUID_OFF(s->name_len),
		       sizeof(d->uuid));
		d->has_uuid = 1;
	}
}

static void cuda_context(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_context *s = (const void *)r->raw;
	struct prof_cuda_context *c = LOAD_PUSH(L, p->contexts, p->ncontexts, L->capctx);

	if (!c)
		return;
	c->process = proc;
	c->context = s->context;
	c->device = s->device;
	c->null_stream = s->null_stream;
	c->sm_count = s->sm_count;
}

static void cuda_memory(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_memory *s = (const void *)r->raw;
	struct prof_cuda_memory *m = LOAD_PUSH(L, p->memory, p->nmemory, L->capmem);

	if (!m)
		return;
	memset(m, 0, sizeof(*m)); /* the extension's fields stay 0 without it */
	m->ts = s->ts;
	m->address = s->address;
	m->bytes = s->bytes;
	m->process = proc;
	m->device = s->device;
	m->context = s->context;
	m->stream = s->stream;
	m->correlation = s->correlation;
	m->mem_kind = s->mem_kind;
	m->alloc = (r->flags & 1) != 0;
	m->api = PROF_NONE;
	/* The Memory4 extension, in files that have it (h.size says). */
	if (r->size >= sizeof(*s) + offsetof(struct cbn_rec_cuda_memory_ext, pool_size)) {
		const struct cbn_rec_cuda_memory_ext *x = (const void *)(s + 1);
		m->pool_address = x->pool_address;
		m->pool_release_threshold = x->pool_release_threshold;
		m->pool_utilized = x->pool_utilized;
		m->pc = x->pc;
		m->is_async = x->is_async;
		m->pool_type = x->pool_type;
		if (r->size >= sizeof(*s) + sizeof(*x))
			m->pool_size = x->pool_size;
	}
	note_ts(L, s->ts);
}

static void cuda_mempool(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	uint32_t proc = L->f->proc;
	const struct cbn_rec_cuda_mempool *s = (const void *)r->raw;
	struct prof_cuda_mempool *q = LOAD_PUSH(L, p->mempools, p->nmempools, L->capmempool);

	if (!q)
		return;
	q->ts = s->ts;
	q->address = s->address;
	q->size = s->size;
	q->utilized = s->utilized;
	q->release_threshold = s->release_threshold;
	q->min_bytes_to_keep = s->min_bytes_to_keep;
	q->process = proc;
	q->device = s->device;
	q->correlation = s->correlation;
	q->op = r->flags;
	q->pool_type = s->pool_type;
	q->managed = s->managed;
	note_ts(L, s->ts);
}

static void cuda_status(struct load *L, const struct reader_rec *r)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	uint32_t proc = F->proc;
	const struct cbn_rec_cuda_status *s = (const void *)r->raw;
	struct prof_cuda_status *st;

	if (s->state == CBN_CUDA_YIELDED || s->state == CBN_CUDA_RESUMED) {
		load_cuda_share(L, proc, s->state, r->raw->flags, s->ts, str(L, r->str));
		note_ts(L, s->ts);
		return;
	}
	if (F->status_idx == PROF_NONE) {
		st = LOAD_PUSH(L, p->cuda_status, p->ncuda_status, L->capstatus);
		if (!st)
			return;
		memset(st, 0, sizeof(*st));
		F->status_idx = (uint32_t)(p->ncuda_status - 1);
	}
	/* The last one written wins: counters only grow, FINISHED comes last. */
	st = &p->cuda_status[F->status_idx];
	st->process = proc;
	st->state = s->state;
	st->cupti_error = s->cupti_error;
	st->cupti_version = s->cupti_version;
	st->driver_version = s->driver_version;
	st->flush_timed_out = s->flush_timed_out;
	st->dropped = s->dropped;
	st->zero_ts = s->zero_ts;
	st->buffers = s->buffers;
	st->records = s->records;
	st->message = str(L, r->str);
	if (s->state == CBN_CUDA_STARTED)
		st->note = st->message;
	else if (!st->note)
		st->note = "";
}

void load_cuda_rec(struct load *L, const struct reader_rec *r)
{
	switch (r->type) {
	case CBN_REC_RANGE:
		cuda_range(L, r);
		break;
	case CBN_REC_CUDA_API:
		cuda_api(L, r);
		break;
	case CBN_REC_CUDA_STACK:
		cuda_stack(L, r);
		break;
	case CBN_REC_CUDA_KERNEL:
		cuda_kernel(L, r);
		break;
	case CBN_REC_CUDA_MEMCPY:
		cuda_memcpy(L, r);
		break;
	case CBN_REC_CUDA_MEMSET:
		cuda_memset(L, r);
		break;
	case CBN_REC_CUDA_SYNC:
		cuda_sync(L, r);
		break;
	case CBN_REC_CUDA_OVERHEAD:
		cuda_overhead(L, r);
		break;
	case CBN_REC_CUDA_DEVICE:
		cuda_device(L, r);
		break;
	case CBN_REC_CUDA_CONTEXT:
		cuda_context(L, r);
		break;
	case CBN_REC_CUDA_MEMORY:
		cuda_memory(L, r);
		break;
	case CBN_REC_CUDA_MEMPOOL:
		cuda_mempool(L, r);
		break;
	case CBN_REC_CUDA_STATUS:
		cuda_status(L, r);
		break;
	default:
		break;
	}
}

/* YIELDED opens a span per part the program's client took (flags:
 * CBN_CUPTI_*); RESUMED closes the process's open span of each part. */
static void load_cuda_share(struct load *L, uint32_t proc, uint32_t state, uint32_t what,
			    uint64_t ts, const char *msg)
{
	struct profile *p = L->p;
	uint32_t bit;
	size_t i;

	for (bit = CBN_CUPTI_API; bit <= CBN_CUPTI_ACTIVITY; bit <<= 1) {
		if (!(what & bit))
			continue;
		if (state == CBN_CUDA_YIELDED) {
			struct prof_cuda_share *sh =
				LOAD_PUSH(L, p->cuda_shares, p->ncuda_shares, L->capshares);

			if (!sh)
				return;
			*sh = (struct prof_cuda_share){ .process = proc, .what = bit, .start = ts,
							.holder = msg, .note = "" };
			continue;
		}
		for (i = p->ncuda_shares; i-- > 0;) {
			struct prof_cuda_share *sh = &p->cuda_shares[i];

			if (sh->process == proc && sh->what == bit && !sh->end) {
				sh->end = ts > sh->start ? ts : sh->start + 1;
				sh->note = msg;
				break;
			}
		}
	}
}

struct cstack_probe {
	const struct load_file *F;
	uint64_t key;
};

static int cstack_def_eq(const void *ctx, uint32_t v)
{
	const struct cstack_probe *pr = ctx;

	return pr->F->cstacks[v].key == pr->key;
}

/* Keyed CUDA stacks: a record without frames takes the frames of the one of
 * this file that defined its key (CBN_CSTACK_KEYED), wherever it lies in the
 * file (each thread writes its records into chunks of its own).  A key whose
 * definition was lost (file full) leaves the call without a stack. */
static void cstacks_resolve(struct load *L)
{
	struct load_file *F = L->f;
	struct util_map m = {0};
	size_t i;

	for (i = 0; i < F->ncstacks; i++) {
		const struct load_cstack *c = &F->cstacks[i];

		if (!c->key || !c->nframes ||
		    util_map_find(&m, c->key, cstack_def_eq, &(struct cstack_probe){ F, c->key }) !=
			    UINT32_MAX)
			continue;
		if (util_map_put(&m, c->key, (uint32_t)i) < 0) {
			load_nomem(L);
			break;
		}
	}
	for (i = 0; i < F->ncstacks && !L->nomem; i++) {
		struct load_cstack *c = &F->cstacks[i];
		uint32_t v;

		if (!c->key || c->nframes)
			continue;
		v = util_map_find(&m, c->key, cstack_def_eq, &(struct cstack_probe){ F, c->key });
		if (v != UINT32_MAX) {
			c->pcs = F->cstacks[v].pcs;
			c->nframes = F->cstacks[v].nframes;
		}
	}
	util_map_free(&m);
}

void load_cuda_finish(struct load *L)
{
	struct profile *p = L->p;
	struct load_file *F = L->f;
	size_t i;

	cstacks_resolve(L);
	if (L->nomem)
		return;
	/* Every pc of a CUDA stack is a return address (captured at API enter). */
	for (i = 0; i < F->ncstacks; i++) {
		const struct load_cstack *c = &F->cstacks[i];
		uint32_t a = api_of(L, c->correlation);
		if (a == PROF_NONE || p->cuda_api[a].stack != PROF_NONE || c->nframes == 0)
			continue;
		p->cuda_api[a].stack = load_stack(L, c->pcs, c->nframes, p->cuda_api[a].start, 1);
		if (L->nomem)
			return;
	}
	for (i = F->gpu_first; i < p->ngpu_ops; i++)
		p->gpu_ops[i].api = api_of(L, p->gpu_ops[i].correlation);
	/* This file's memory records are the tail of the array (files are read
	 * one after another): joined to their API calls the same way. */
	for (i = p->nmemory; i > 0 && p->memory[i - 1].process == F->proc; i--)
		p->memory[i - 1].api = api_of(L, p->memory[i - 1].correlation);
}
