/*
 * api.c — the CUPTI callback API side: which runtime/driver functions we
 * subscribe to (chosen by name once at init), the ENTER/EXIT handler that
 * writes CUDA_API records and, for launches, copies and synchronizations, the
 * host stack as a CUDA_STACK record joined by correlation id.
 *
 * Threading: api_callback runs on the application's threads, inside CUDA
 * calls, never in signal context.  Tables are built before the first callback
 * is enabled and read-only afterwards.
 */
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "layer.h"

enum {
	API_ON = 1,      /* write a CUDA_API record */
	API_STACK = 2,   /* capture the host stack at ENTER */
	API_RESET = 4,   /* cudaDeviceReset: flush while the driver is healthy */
	API_PROF_START = 8, /* cudaProfilerStart: opens a window (--capture-range api) */
	API_PROF_STOP = 16, /* cudaProfilerStop: closes it */
};

struct api_table {
	unsigned size;
	uint8_t *cls;
	char **name;     /* stripped names, "cudaMemcpy" */
};

static struct api_table api_rt, api_drv;

/* Runtime calls in progress on this thread.  cudart calls the driver entry
 * points underneath, so a driver callback nested in a runtime one is the same
 * user call seen twice: skipped.  Driver-only programs (Triton, NVRTC) still get
 * their cuLaunchKernel records. */
static _Thread_local int api_rt_depth;
static _Atomic unsigned api_gen;         /* subscriptions so far */
static _Thread_local unsigned api_tgen;  /* the one api_rt_depth counts under */

struct api_rule {
	const char *prefix;
	uint8_t cls;
};

static const struct api_rule api_rules[] = {
	/* runtime: launches (incl. nvcc 13's __cudaLaunchKernel, shown without "__") */
	{ "cudaProfilerStart", API_ON | API_PROF_START },
	{ "cudaProfilerStop", API_ON | API_PROF_STOP },
	{ "cuProfilerStart", API_ON | API_PROF_START },
	{ "cuProfilerStop", API_ON | API_PROF_STOP },
	{ "cudaLaunch", API_ON | API_STACK },
	{ "cudaGraphLaunch", API_ON | API_STACK },
	{ "cudaMemcpy", API_ON | API_STACK },
	{ "cudaMemset", API_ON | API_STACK },
	{ "cudaDeviceSynchronize", API_ON | API_STACK },
	{ "cudaThreadSynchronize", API_ON | API_STACK },
	{ "cudaStreamSynchronize", API_ON | API_STACK },
	{ "cudaEventSynchronize", API_ON | API_STACK },
	{ "cudaStreamWaitEvent", API_ON | API_STACK },
	/* allocations (cudaMalloc{,Async,Host,Managed,FromPoolAsync,Pitch,...}):
	 * the stack is the GPU memory view's allocation site */
	{ "cudaMalloc", API_ON | API_STACK },
	{ "cudaFree", API_ON | API_STACK },
	{ "cudaHostAlloc", API_ON | API_STACK },
	{ "cudaMemPool", API_ON },
	{ "cudaDeviceReset", API_ON | API_RESET },
	/* driver */
	{ "cuLaunch", API_ON | API_STACK },
	{ "cuGraphLaunch", API_ON | API_STACK },
	{ "cuMemcpy", API_ON | API_STACK },
	{ "cuMemset", API_ON | API_STACK },
	{ "cuCtxSynchronize", API_ON | API_STACK },
	{ "cuStreamSynchronize", API_ON | API_STACK },
	{ "cuEventSynchronize", API_ON | API_STACK },
	{ "cuStreamWaitEvent", API_ON | API_STACK },
	{ "cuMemAlloc", API_ON | API_STACK },
	{ "cuMemFree", API_ON | API_STACK },
	{ "cuMemHostAlloc", API_ON | API_STACK },
	{ "cuMemPool", API_ON },
};

static uint8_t api_classify(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(api_rules) / sizeof(api_rules[0]); i++) {
		size_t n = strlen(api_rules[i].prefix);

		if (strncmp(name, api_rules[i].prefix, n) == 0)
			return api_rules[i].cls;
	}
	return 0;
}

/* Classify the domain's cbids by name (once) and enable the callbacks of the
 * ones we record for sub (again after the layer took CUPTI back from the
 * program: cupti_guard.c). */
static int api_fill(struct api_table *t, CUpti_SubscriberHandle sub, CUpti_CallbackDomain dom,
		    unsigned size)
{
	unsigned cbid;
	int enabled = 0;

	if (!t->cls) {
		t->cls = calloc(size, 1);
		t->name = calloc(size, sizeof(char *));
		if (!t->cls || !t->name)
			return CUPTI_ERROR_OUT_OF_MEMORY;
		t->size = size;
		for (cbid = 1; cbid < size; cbid++) {
			const char *raw = NULL;
			char name[256];
			uint8_t cls;

			if (cuptiGetCallbackName(dom, cbid, &raw) != CUPTI_SUCCESS || !raw)
				continue;
			convert_api_name(name, sizeof(name), raw);
			cls = api_classify(name);
			if (!cls)
				continue;
			t->name[cbid] = strdup(name);
			if (!t->name[cbid])
				return CUPTI_ERROR_OUT_OF_MEMORY;
			t->cls[cbid] = cls;
		}
	}
	for (cbid = 1; cbid < t->size; cbid++) {
		CUptiResult st;

		if (!t->cls[cbid])
			continue;
		st = cuptiEnableCallback(1, sub, dom, cbid);
		if (st != CUPTI_SUCCESS)
			return st;
		enabled++;
	}
	return enabled ? CUPTI_SUCCESS : CUPTI_ERROR_UNKNOWN;
}

/* Lighter tracing, for runs where the per-launch cost matters more than what
 * it buys (docs/cuda-collection.md, "Cost"): CBN_CUDA_STACKS=0 captures no
 * host stacks (no launch sites), CBN_CUDA_DRIVER=0 enables no driver-API
 * callbacks (launches made through the driver API alone are then not seen). */
static int api_stacks = 1;

static int api_env_off(const char *name)
{
	const char *v = layer_getenv(name);

	return v && strcmp(v, "0") == 0;
}

int api_setup(CUpti_SubscriberHandle sub)
{
	int st;

	api_stacks = !api_env_off("CBN_CUDA_STACKS");
	/* A call whose ENTER came before an earlier unsubscribe never sees its
	 * EXIT: each thread's depth starts over with this subscription. */
	atomic_fetch_add(&api_gen, 1);
	if (layer_split == SPLIT_NOCB) /* measuring: the activity buffers alone */
		goto resource;
	st = api_fill(&api_rt, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	if (st != CUPTI_SUCCESS)
		return st;
	if (!api_env_off("CBN_CUDA_DRIVER")) {
		st = api_fill(&api_drv, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
		if (st != CUPTI_SUCCESS)
			return st;
	}
resource:
	st = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE,
				 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
	return st;
}

/* Executable ranges of the CUDA stack's own libraries and of cbottleneck's:
 * leading frames inside them are cut so a launch stack starts at the caller's
 * code.  Scanned once at init: libcuda, libcudart (when shared) and libcupti
 * are all loaded by the time cuInit calls InitializeInjection. */
#define API_MAX_RANGES 32
static struct {
	uintptr_t lo, hi;
} api_ranges[API_MAX_RANGES];
static int api_nranges;

static int api_is_cuda_module(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, "libcuda.so", 10) == 0 || strncmp(base, "libcudart.so", 12) == 0 ||
	       strncmp(base, "libcupti.so", 11) == 0 || strncmp(base, "libcbottleneck", 14) == 0;
}

static int api_scan_one(struct dl_phdr_info *info, size_t sz, void *arg)
{
	int i;

	(void)sz;
	(void)arg;
	if (!info->dlpi_name || !api_is_cuda_module(info->dlpi_name))
		return 0;
	for (i = 0; i < info->dlpi_phnum && api_nranges < API_MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		api_ranges[api_nranges].lo = info->dlpi_addr + ph->p_vaddr;
		api_ranges[api_nranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		api_nranges++;
	}
	return 0;
}

void api_scan_modules(void)
{
	api_nranges = 0;
	dl_iterate_phdr(api_scan_one, NULL);
}

static int api_in_cuda(uint64_t pc)
{
	int i;

	/* Return addresses: the call instruction lies just before. */
	pc -= 1;
	for (i = 0; i < api_nranges; i++)
		if (pc >= api_ranges[i].lo && pc < api_ranges[i].hi)
			return 1;
	return 0;
}

/* Stacks this thread has written in full, by key (four ways a set, the
 * newest first): a launch from a call path seen before writes its key alone
 * (CBN_CSTACK_KEYED).  A training step under Python has a few hundred launch
 * stacks a thread (each Python line its own): 256 slots direct-mapped
 * rewrote 1930 of 10151 stacks in full on a ResNet-18 run, and 5433 of 6000
 * launches from 600 Python lines; with 1024 sets of four, 418 on that run,
 * and 600-695 of 3000-12000 from the 600 lines (each once, and a few sets of
 * four that overflow). */
#define API_SEEN_SETS 1024
#define API_SEEN_WAYS 4
static _Thread_local uint64_t api_seen[API_SEEN_SETS][API_SEEN_WAYS];

/* 1 when this thread wrote key's stack in full already; else it is noted
 * (the set's oldest goes). */
static int api_seen_before(uint64_t key)
{
	uint64_t *set = api_seen[(key * 0x9e3779b97f4a7c15ull) >> 54];
	int i, found;

	for (i = 0; i < API_SEEN_WAYS - 1 && set[i] != key; i++)
		;
	found = set[i] == key;
	for (; i > 0; i--)
		set[i] = set[i - 1];
	set[0] = key;
	return found;
}

/* A stack's key without the agent's (a 64-bit hash of its pcs, never 0). */
static uint64_t api_stack_key(const uint64_t *pcs, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
	int i;

	for (i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

static void api_write_stack(uint32_t correlation)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];
	uint64_t own[CBN_MAX_FRAMES], key = 0;
	const uint64_t *pcs = NULL;
	int n = 0, first = 0;
	uint64_t t0 = selftime_on ? selftime_now() : 0, t1 = 0;

	/* A call path seen before comes back from the agent's cache with its
	 * key, without unwinding (pathcache.c); only a thread's first capture
	 * of a path writes its frames. */
	if (layer_agent.backtrace_cached)
		pcs = layer_agent.backtrace_cached(&n, &key);
	if (!pcs && layer_agent.backtrace) {
		n = layer_agent.backtrace(own, CBN_MAX_FRAMES, 0);
		pcs = own;
		key = n > 0 ? api_stack_key(own, n) : 0;
	}
	if (selftime_on) {
		t1 = selftime_now();
		selftime_add(ST_STACK, t1 - t0);
	}
	if (!pcs || n <= 0)
		return;
	if (api_seen_before(key)) {
		layer_write_own(buf, convert_stack(buf, correlation, layer_tid(), NULL, 0, key));
		if (selftime_on)
			selftime_add(ST_STACK_WRITE, selftime_now() - t1);
		return;
	}
	while (first < n && api_in_cuda(pcs[first]))
		first++;
	if (first == n)
		first = 0;  /* all inside CUDA libraries: keep everything */
	layer_write_own(buf, convert_stack(buf, correlation, layer_tid(), pcs + first, n - first, key));
	if (selftime_on) {
		uint64_t t2 = selftime_now();

		selftime_add(ST_STACK_WRITE, t2 - t1);
		selftime_add(ST_STACK_FULL, t2 - t1);
	}
}

static void api_on_call(const struct api_table *t, uint16_t domain, CUpti_CallbackId cbid,
			const CUpti_CallbackData *cd)
{
	_Alignas(8) unsigned char buf[CONVERT_REC_MAX];
	uint8_t cls;
	uint64_t start, end;
	int32_t ret = 0;

	if (cbid >= t->size || !(cls = t->cls[cbid]))
		return;
	if (selftime_on)
		selftime_add(domain == CBN_CUDA_RUNTIME ? ST_RUNTIME : ST_DRIVER, 0);
	if (api_tgen != atomic_load_explicit(&api_gen, memory_order_relaxed)) {
		api_tgen = atomic_load_explicit(&api_gen, memory_order_relaxed);
		api_rt_depth = 0;
	}
	if (cd->callbackSite == CUPTI_API_ENTER) {
		if (domain == CBN_CUDA_RUNTIME)
			api_rt_depth++;
		else if (api_rt_depth > 0)
			return;
		if (cls & API_RESET)
			layer_flush_soft();
		/* correlationData is CUPTI's per-call slot shared by ENTER and EXIT. */
		*cd->correlationData = layer_agent.now();
		if (layer_split == SPLIT_NOREC)
			return;
		if ((cls & API_STACK) && api_stacks && layer_agent.capture_active())
			api_write_stack(cd->correlationId);
		return;
	}
	if (domain == CBN_CUDA_RUNTIME) {
		if (api_rt_depth > 0)
			api_rt_depth--;
	} else if (api_rt_depth > 0) {
		return;
	}
	end = layer_agent.now();
	start = *cd->correlationData;
	if (!start || start > end)
		start = end;
	/* cudaError_t and CUresult are both int-sized enums. */
	if (cd->functionReturnValue)
		memcpy(&ret, cd->functionReturnValue, sizeof(ret));
	if (layer_split == SPLIT_NOREC)
		return;
	/*
	 * --capture-range cudaProfilerApi: cudaProfilerStart opens a window
	 * (its own record is the first in it), cudaProfilerStop closes it (its
	 * record the last).  Outside windows no API record is written.
	 */
	if ((cls & API_PROF_START) && ret == 0 && layer_agent.capture_api())
		layer_agent.capture_set(1, CBN_CAUSE_CUDA_PROFILER);
	if (layer_agent.capture_active()) {
		uint64_t t0 = selftime_on ? selftime_now() : 0;

		layer_write_own(buf, convert_api(buf, start, end, layer_tid(), cd->correlationId, cbid,
					     domain, ret, t->name[cbid]));
		if (selftime_on)
			selftime_add(ST_API_WRITE, selftime_now() - t0);
	}
	if ((cls & API_PROF_STOP) && layer_agent.capture_api())
		layer_agent.capture_set(0, CBN_CAUSE_CUDA_PROFILER);
}

void CUPTIAPI api_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			   const void *data)
{
	uint64_t t0;

	(void)userdata;
	if (layer_split == SPLIT_EMPTY || atomic_load_explicit(&layer.off, memory_order_relaxed) ||
	    !data)
		return;
	/* The driver call a runtime call makes underneath: nothing to do, so
	 * done before anything else (two of a launch's four callbacks). */
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API && api_rt_depth > 0 &&
	    api_tgen == atomic_load_explicit(&api_gen, memory_order_relaxed)) {
		if (selftime_on)
			selftime_add(ST_NESTED, 0);
		return;
	}
	t0 = selftime_on ? selftime_now() : 0;
	layer_agent.enter();
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		api_on_call(&api_rt, CBN_CUDA_RUNTIME, cbid, data);
		break;
	case CUPTI_CB_DOMAIN_DRIVER_API:
		api_on_call(&api_drv, CBN_CUDA_DRIVER, cbid, data);
		break;
	case CUPTI_CB_DOMAIN_RESOURCE:
		/* Context teardown: the last moment its records can be flushed
		 * while the driver is healthy (cupti.md §2, exit rules). */
		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING)
			layer_flush_soft();
		break;
	case CUPTI_CB_DOMAIN_STATE:
		if (cbid == CUPTI_CBID_STATE_FATAL_ERROR) {
			const CUpti_StateData *sd = data;

			layer_fatal(sd->notification.message ? sd->notification.message
							     : "CUPTI reported a fatal error");
		}
		break;
	default:
		break;
	}
	layer_agent.leave();
	if (selftime_on)
		selftime_add(ST_CALLBACK, selftime_now() - t0);
}
