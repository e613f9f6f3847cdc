/*
 * test_layer.c — libcbottleneck_cuda.so end to end inside one process, against
 * the simulated CUPTI: this program plays the agent (it exports the
 * cbn_agent_* API and collects the records the layer writes), loads the layer
 * the way the driver does (fakecuda_init → InitializeInjection), runs a
 * workload with known truth and checks the records after the layer's own exit
 * flush, from an atexit handler registered before CUDA started (so it runs
 * last).  Usage: test_layer MODE, modes listed in main().
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include <dirent.h>

#include "convert.h"
#include "dump.h"
#include "fakecuda.h"
#include "format/cbn_format.h"
#include "testlib.h"
#include "workload.h"

#define EXPORT __attribute__((visibility("default")))

/* --- the agent, as the layer sees it ------------------------------------------------ */

static pthread_mutex_t col_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cbn_rec **col;
static size_t ncol, capcol;

/* A keyed stack record's key (CBN_CSTACK_KEYED), else 0. */
static uint64_t stack_key(const struct cbn_rec_cuda_stack *s)
{
	uint64_t k = 0;

	if (s->h.flags & CBN_CSTACK_KEYED)
		memcpy(&k, &s->pc[s->nframes], sizeof(k));
	return k;
}

/* The record holding the frames of stack s: s itself, or for a reference
 * (keyed, no frames) the earlier record of the same thread that defined its
 * key; NULL when none did. */
static const struct cbn_rec_cuda_stack *stack_def(const struct cbn_rec_cuda_stack *s)
{
	uint64_t k = stack_key(s);

	if (s->nframes || !k)
		return s;
	for (size_t i = 0; i < ncol && (const void *)col[i] != (const void *)s; i++) {
		const struct cbn_rec_cuda_stack *d = (const void *)col[i];

		if (col[i]->type == CBN_REC_CUDA_STACK && d->nframes && d->tid == s->tid &&
		    stack_key(d) == k)
			return d;
	}
	return NULL;
}
static atomic_int bad_writes, enters, leaves;
static _Thread_local int depth;

EXPORT int cbn_agent_write(const void *rec, size_t size)
{
	const struct cbn_rec *h = rec;
	void *copy;

	if (size % 8 || size < sizeof(*h) || h->size != size || size > 60 * 1024) {
		atomic_fetch_add(&bad_writes, 1);
		return -1;
	}
	copy = malloc(size);
	if (!copy)
		return -1;
	memcpy(copy, rec, size);
	pthread_mutex_lock(&col_lock);
	if (ncol == capcol) {
		capcol = capcol ? capcol * 2 : 1024;
		col = realloc(col, capcol * sizeof(*col));
	}
	col[ncol++] = copy;
	pthread_mutex_unlock(&col_lock);
	return 0;
}

EXPORT int cbn_agent_backtrace(uint64_t *pcs, int max, int skip)
{
	void *b[CBN_MAX_FRAMES + 8];
	int n = backtrace(b, CBN_MAX_FRAMES + 8), i, k = 0;

	for (i = skip + 1; i < n && k < max; i++)
		pcs[k++] = (uint64_t)(uintptr_t)b[i];
	return k;
}

EXPORT uint64_t cbn_agent_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT void cbn_agent_enter(void)
{
	depth++;
	atomic_fetch_add(&enters, 1);
}

EXPORT void cbn_agent_leave(void)
{
	depth--;
	atomic_fetch_add(&leaves, 1);
}

EXPORT int cbn_agent_forked_child(void)
{
	return 0;
}

/* --- helpers over the collected records ---------------------------------------------- */

static size_t count_type(uint16_t type)
{
	size_t i, n = 0;

	for (i = 0; i < ncol; i++)
		n += col[i]->type == type;
	return n;
}

static const struct cbn_rec_cuda_status *last_status(void)
{
	const struct cbn_rec_cuda_status *s = NULL;
	size_t i;

	for (i = 0; i < ncol; i++)
		if (col[i]->type == CBN_REC_CUDA_STATUS)
			s = (const void *)col[i];
	return s;
}

static const struct cbn_rec_cuda_api *api_by_corr(uint32_t corr)
{
	size_t i;

	for (i = 0; i < ncol; i++)
		if (col[i]->type == CBN_REC_CUDA_API &&
		    ((const struct cbn_rec_cuda_api *)col[i])->correlation == corr)
			return (const void *)col[i];
	return NULL;
}

static const char *func_of(uint64_t pc)
{
	Dl_info di;

	if (dladdr((void *)(uintptr_t)(pc - 1), &di) && di.dli_sname)
		return di.dli_sname;
	return "?";
}

static void kernel_stats(const char *name, size_t *n, uint64_t *ns)
{
	size_t i;

	*n = 0;
	*ns = 0;
	for (i = 0; i < ncol; i++) {
		const struct cbn_rec_cuda_kernel *k = (const void *)col[i];

		if (col[i]->type != CBN_REC_CUDA_KERNEL || strcmp(k->name, name) != 0)
			continue;
		(*n)++;
		*ns += k->end - k->start;
	}
}

static size_t api_count(const char *name, uint16_t domain)
{
	size_t i, n = 0;

	for (i = 0; i < ncol; i++) {
		const struct cbn_rec_cuda_api *a = (const void *)col[i];

		if (col[i]->type == CBN_REC_CUDA_API && a->domain == domain &&
		    strcmp(a->name, name) == 0)
			n++;
	}
	return n;
}

/* --- checks per mode ------------------------------------------------------------------ */

static const char *mode;
static pid_t main_pid;

static void check_main(void)
{
	const struct cbn_rec_cuda_status *st = last_status();
	size_t n, i, stacks = 0, stacks_ok = 0, htod = 0, dtoh = 0;
	uint64_t ns;

	REQUIRE(st);
	CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
	CHECK_EQ_INT(st->flush_timed_out, 0);
	CHECK_EQ_INT(st->dropped, 0);
	CHECK_EQ_INT(st->zero_ts, 0);
	CHECK_EQ_INT(st->cupti_version, 130001);
	CHECK(st->buffers >= 1);
	CHECK_EQ_INT(((const struct cbn_rec_cuda_status *)col[0])->state, CBN_CUDA_STARTED);
	CHECK(atomic_load(&enters) > 0);

	kernel_stats(WL_A_NAME, &n, &ns);
	CHECK_EQ_INT(n, WL_A_COUNT);
	CHECK_EQ_INT(ns, WL_A_COUNT * WL_A_NS);
	kernel_stats(WL_B_NAME, &n, &ns);
	CHECK_EQ_INT(n, WL_B_COUNT);
	CHECK_EQ_INT(ns, WL_B_COUNT * WL_B_NS);
	kernel_stats(WL_C_NAME, &n, &ns);
	CHECK_EQ_INT(n, WL_C_THREADS * WL_C_PER_THREAD);
	kernel_stats(WL_D_NAME, &n, &ns);
	CHECK_EQ_INT(n, WL_D_COUNT);
	kernel_stats(WL_E_NAME, &n, &ns);
	CHECK_EQ_INT(n, WL_E_COUNT);
	CHECK_EQ_INT(ns, WL_E_COUNT * WL_E_NS);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_KERNEL), WL_A_COUNT + WL_B_COUNT +
							     WL_C_THREADS * WL_C_PER_THREAD +
							     WL_D_COUNT + WL_E_COUNT);
	CHECK_EQ_INT(st->records, count_type(CBN_REC_CUDA_KERNEL) + count_type(CBN_REC_CUDA_MEMCPY) +
					   count_type(CBN_REC_CUDA_MEMSET) +
					   count_type(CBN_REC_CUDA_SYNC) +
					   count_type(CBN_REC_CUDA_DEVICE) +
					   count_type(CBN_REC_CUDA_CONTEXT) +
					   count_type(CBN_REC_CUDA_MEMORY) +
					   count_type(CBN_REC_CUDA_OVERHEAD));

	/* API records: runtime names without suffix; nested driver calls skipped. */
	CHECK_EQ_INT(api_count("cudaLaunchKernel", CBN_CUDA_RUNTIME), WL_LAUNCH_CALLS + WL_E_COUNT);
	CHECK_EQ_INT(api_count("cuLaunchKernel", CBN_CUDA_DRIVER), WL_D_COUNT);
	CHECK_EQ_INT(api_count("cudaMemcpy", CBN_CUDA_RUNTIME), WL_MEMCPY_CALLS);
	CHECK_EQ_INT(api_count("cudaMemset", CBN_CUDA_RUNTIME), 1);
	CHECK_EQ_INT(api_count("cudaDeviceSynchronize", CBN_CUDA_RUNTIME), WL_DEVSYNC_CALLS + 1);
	CHECK_EQ_INT(api_count("cudaStreamSynchronize", CBN_CUDA_RUNTIME), WL_STREAMSYNC_CALLS);
	CHECK_EQ_INT(api_count("cudaMalloc", CBN_CUDA_RUNTIME), WL_MALLOCS);
	CHECK_EQ_INT(api_count("cudaFree", CBN_CUDA_RUNTIME), WL_MALLOCS);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_API),
		     WL_LAUNCH_CALLS + WL_E_COUNT + WL_D_COUNT + WL_MEMCPY_CALLS + 1 +
			     WL_DEVSYNC_CALLS + 1 + WL_STREAMSYNC_CALLS + 2 * WL_MALLOCS);

	for (i = 0; i < ncol; i++) {
		const struct cbn_rec_cuda_api *a = (const void *)col[i];
		const struct cbn_rec_cuda_kernel *k = (const void *)col[i];
		const struct cbn_rec_cuda_memcpy *m = (const void *)col[i];
		const struct cbn_rec_cuda_stack *s = (const void *)col[i];

		if (col[i]->type == CBN_REC_CUDA_STACK) {
			s = stack_def(s); /* a reference: the frames defined earlier */
			REQUIRE(s);
		}
		switch (col[i]->type) {
		case CBN_REC_CUDA_API:
			CHECK(a->end >= a->start && a->start > 0);
			CHECK(a->tid > 0);
			CHECK_EQ_INT(a->ret, 0);
			if (strcmp(a->name, "cudaLaunchKernel") == 0)
				CHECK_EQ_INT(a->cbid, 505);
			break;
		case CBN_REC_CUDA_KERNEL: {
			const struct cbn_rec_cuda_api *la = api_by_corr(k->correlation);

			/* One clock: the kernel starts after its launch call began. */
			REQUIRE(la);
			CHECK(k->start >= la->start);
			CHECK(k->start - la->start < 5ull * 1000 * 1000 * 1000);
			if (strcmp(k->name, WL_B_NAME) == 0) {
				CHECK_EQ_INT(k->shmem_limit_optin, 1);
				CHECK_EQ_INT(k->dynamic_smem, 100 * 1024);
				CHECK_EQ_INT(k->registers, 64);
				CHECK_EQ_INT(k->block[0], 1024);
			}
			break;
		}
		case CBN_REC_CUDA_MEMCPY:
			if (m->copy_kind == CBN_COPY_HTOD) {
				htod++;
				CHECK_EQ_INT(m->bytes, WL_HTOD_BYTES);
				CHECK_EQ_INT(m->src_kind, CBN_MEM_PAGEABLE);
				CHECK_EQ_INT(m->end - m->start, WL_HTOD_NS);
			} else if (m->copy_kind == CBN_COPY_DTOH) {
				dtoh++;
				CHECK_EQ_INT(m->dst_kind, CBN_MEM_PINNED);
				CHECK_EQ_INT(m->bytes, WL_DTOH_BYTES);
			}
			CHECK(api_by_corr(m->correlation) != NULL);
			break;
		case CBN_REC_CUDA_STACK:
			stacks++;
			a = api_by_corr(s->correlation);
			REQUIRE(a);
			CHECK(s->nframes > 0);
			if (s->nframes && strcmp(a->name, "cudaLaunchKernel") == 0 &&
			    a->tid == (uint32_t)main_pid) {
				/* Leading frames inside libcupti (the fake) are cut:
				 * the stack starts in the launching function. */
				const char *f = func_of(s->pc[0]);

				if (strcmp(f, "launch_a") == 0 || strcmp(f, "launch_b") == 0)
					stacks_ok++;
				else if (strcmp(f, "__device_stub__Z7kernelEPf") == 0 &&
					 s->nframes >= 3 &&
					 strcmp(func_of(s->pc[1]), "_Z7kernelEPf") == 0 &&
					 strcmp(func_of(s->pc[2]), "launch_e_like_nvcc") == 0)
					stacks_ok++;   /* the nvcc-shaped chain, intact */
				else
					fprintf(stderr, "launch stack starts in %s\n", f);
			}
			if (s->nframes && strcmp(a->name, "cudaMemcpy") == 0 &&
			    strcmp(func_of(s->pc[0]), "copy_input") == 0)
				stacks_ok++;
			break;
		default:
			break;
		}
	}
	CHECK_EQ_INT(htod, WL_HTOD_COUNT);
	CHECK_EQ_INT(dtoh, WL_DTOH_COUNT);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_MEMSET), 1);
	/* launch, copy, set, sync, malloc and free calls carry stacks */
	CHECK_EQ_INT(stacks, WL_LAUNCH_CALLS + WL_E_COUNT + WL_D_COUNT + WL_MEMCPY_CALLS + 1 +
				     WL_DEVSYNC_CALLS + 1 + WL_STREAMSYNC_CALLS + 2 * WL_MALLOCS);
	CHECK_EQ_INT(stacks_ok, WL_A_COUNT + WL_B_COUNT + WL_E_COUNT + WL_HTOD_COUNT);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_SYNC), WL_DEVSYNC_CALLS + 1 + WL_STREAMSYNC_CALLS);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_MEMORY), 2 * WL_MALLOCS);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_DEVICE), 1);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_CONTEXT), 1);
	for (i = 0; i < ncol; i++) {
		if (col[i]->type == CBN_REC_CUDA_DEVICE) {
			const struct cbn_rec_cuda_device *d = (const void *)col[i];

			CHECK_EQ_INT(d->sm_count, 132);
			CHECK_EQ_INT(d->cc_major, 9);
			CHECK_EQ_INT(d->smem_per_block_optin, 227 * 1024);
			CHECK_EQ_INT(d->reserved_smem_per_block, 1024);
			CHECK_STR(d->name, "NVIDIA H100 80GB HBM3 (simulated)");
		}
	}
}

/* wl_memory(): every allocation call traced with its stack and its MEMORY2
 * record (with the pool extension for cudaMallocAsync), the pool's
 * MEMORY_POOL records, pinned host memory, and the failed cudaHostAlloc as an
 * API call with an error and no record. */
static void check_memory(void)
{
	const struct cbn_rec_cuda_status *st = last_status();
	size_t i, allocs = 0, frees = 0, pinned = 0, managed = 0, async = 0, pools = 0;
	size_t failed = 0, alloc_stacks = 0;
	uint64_t pool_size_max = 0;

	REQUIRE(st);
	CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
	CHECK_EQ_INT(st->dropped, 0);
	for (i = 0; i < ncol; i++) {
		if (col[i]->type == CBN_REC_CUDA_MEMORY) {
			const struct cbn_rec_cuda_memory *m = (const void *)col[i];
			const struct cbn_rec_cuda_memory_ext *x = (const void *)(m + 1);

			REQUIRE(m->h.size >= sizeof(*m) + sizeof(*x));
			allocs += m->h.flags == 1;
			frees += m->h.flags == 2;
			pinned += m->mem_kind == CBN_MEM_PINNED && m->h.flags == 1;
			managed += m->mem_kind == CBN_MEM_MANAGED && m->h.flags == 1;
			if (x->is_async) {
				async++;
				CHECK_EQ_INT(x->pool_type, 1);
				CHECK(x->pool_address != 0);
				CHECK(x->pc != 0);
				if (x->pool_size > pool_size_max)
					pool_size_max = x->pool_size;
			} else {
				CHECK_EQ_INT(x->pool_address, 0);
			}
			CHECK(api_by_corr(m->correlation) != NULL);
		} else if (col[i]->type == CBN_REC_CUDA_MEMPOOL) {
			pools++;
		} else if (col[i]->type == CBN_REC_CUDA_API) {
			const struct cbn_rec_cuda_api *a = (const void *)col[i];

			failed += a->ret != 0;
		} else if (col[i]->type == CBN_REC_CUDA_STACK) {
			const struct cbn_rec_cuda_stack *s = stack_def((const void *)col[i]);
			const struct cbn_rec_cuda_api *a = s ? api_by_corr(((const struct cbn_rec_cuda_stack *)col[i])->correlation) : NULL;

			if (a && s->nframes && strncmp(a->name, "cudaMalloc", 10) == 0 &&
			    strncmp(func_of(s->pc[0]), "alloc_", 6) == 0)
				alloc_stacks++;
		}
	}
	/* leak + steps + async + peak + 2 pinned + managed */
	CHECK_EQ_INT(allocs, 1 + WL_MEM_STEPS + WL_MEM_ASYNC + 1 + 2 + 1);
	CHECK_EQ_INT(frees, WL_MEM_STEPS + WL_MEM_ASYNC + 1 + 2 + 1);
	CHECK_EQ_INT(pinned, 2);
	CHECK_EQ_INT(managed, 1);
	CHECK_EQ_INT(async, 2 * WL_MEM_ASYNC);
	CHECK_EQ_INT(pool_size_max, 64ull << 20);
	CHECK_EQ_INT(pools, 2); /* created, trimmed */
	CHECK_EQ_INT(failed, 1);
	CHECK_EQ_INT(api_count("cudaMallocAsync", CBN_CUDA_RUNTIME), WL_MEM_ASYNC);
	CHECK_EQ_INT(api_count("cudaFreeAsync", CBN_CUDA_RUNTIME), WL_MEM_ASYNC);
	CHECK_EQ_INT(api_count("cudaMallocHost", CBN_CUDA_RUNTIME), 1);
	CHECK_EQ_INT(api_count("cudaHostAlloc", CBN_CUDA_RUNTIME), 2);
	CHECK_EQ_INT(api_count("cudaMallocManaged", CBN_CUDA_RUNTIME), 1);
	CHECK_EQ_INT(api_count("cudaMemPoolTrimTo", CBN_CUDA_RUNTIME), 1);
	/* the alloc_* functions' cudaMalloc / cudaMallocAsync calls */
	CHECK_EQ_INT(alloc_stacks, 1 + WL_MEM_STEPS + WL_MEM_ASYNC + 1);
}

/* The cbids the layer must trace (CUDA 13.0 ids, cupti.md §1), and some it
 * must leave alone because every callback costs the application time. */
static void check_enabled(void)
{
	static const unsigned rt_on[] = { 505, 506, 211, 214, 430, 431, 269, 270, 272, 311, 312,
					  31 /* cudaMemcpy */, 41 /* cudaMemcpyAsync */,
					  49 /* cudaMemset */, 165 /* cudaDeviceSynchronize */,
					  131 /* cudaStreamSynchronize */, 20 /* cudaMalloc */,
					  22 /* cudaFree */, 164 /* cudaDeviceReset */ };
	static const unsigned drv_on[] = { 307, 442, 652, 653, 477, 514, 17 /* cuCtxSynchronize */,
					   276 /* cuMemcpyHtoD_v2 */ };
	static const unsigned rt_off[] = { 3 /* cudaGetDeviceCount */, 4 /* cudaGetDeviceProperties */,
					   10 /* cudaGetLastError */, 17 /* cudaGetDevice */ };
	size_t i;

	test_checks += (int)(sizeof(rt_on) / sizeof(rt_on[0]) + sizeof(drv_on) / sizeof(drv_on[0]));
	for (i = 0; i < sizeof(rt_on) / sizeof(rt_on[0]); i++)
		if (!fakecuda_callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, rt_on[i])) {
			fprintf(stderr, "runtime cbid %u not enabled\n", rt_on[i]);
			test_failures++;
		}
	for (i = 0; i < sizeof(drv_on) / sizeof(drv_on[0]); i++)
		if (!fakecuda_callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, drv_on[i])) {
			fprintf(stderr, "driver cbid %u not enabled\n", drv_on[i]);
			test_failures++;
		}
	for (i = 0; i < sizeof(rt_off) / sizeof(rt_off[0]); i++)
		CHECK(!fakecuda_callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, rt_off[i]));
	CHECK(fakecuda_callback_enabled(CUPTI_CB_DOMAIN_STATE, CUPTI_CBID_STATE_FATAL_ERROR));
	CHECK(fakecuda_callback_enabled(CUPTI_CB_DOMAIN_RESOURCE,
					CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
}

static void check_unavailable(int err)
{
	const struct cbn_rec_cuda_status *st = last_status();

	REQUIRE(st);
	CHECK_EQ_INT(st->state, CBN_CUDA_UNAVAILABLE);
	CHECK_EQ_INT(st->cupti_error, err);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_STATUS), 1);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_API), 0);
	CHECK_EQ_INT(count_type(CBN_REC_CUDA_KERNEL), 0);
	if (err == 39)
		CHECK(strstr(st->message, "nsys") != NULL);
}

/* Replay the raw buffers the layer dumped: the same records must come out. */
static size_t replay_count[64];
static size_t replay_kernels_named;

static int replay_emit(void *arg, const void *rec, size_t size)
{
	const struct cbn_rec *h = rec;

	(void)arg;
	(void)size;
	if (h->type < 64)
		replay_count[h->type]++;
	if (h->type == CBN_REC_CUDA_KERNEL &&
	    strncmp(((const struct cbn_rec_cuda_kernel *)rec)->name, "_Z7kernel", 9) == 0)
		replay_kernels_named++;
	return 0;
}

static void check_dump(const char *dir)
{
	struct convert_ctx c = { .emit = replay_emit };
	struct dirent *e;
	size_t files = 0, named = 0, i;
	DIR *dp = opendir(dir);
	char path[4096];

	REQUIRE(dp);
	while ((e = readdir(dp))) {
		struct dump d;

		if (strncmp(e->d_name, "cupti.", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		REQUIRE(dump_load(path, &d) == 0);
		CHECK_EQ_INT(d.cupti_version, 130001);
		CHECK(convert_buffer(&c, d.buf, d.valid) > 0);
		dump_free(&d);
		unlink(path);
		files++;
	}
	closedir(dp);
	rmdir(dir);
	CHECK(files >= 1);
	for (i = 0; i < ncol; i++)
		if (col[i]->type == CBN_REC_CUDA_KERNEL &&
		    strncmp(((const struct cbn_rec_cuda_kernel *)col[i])->name, "_Z7kernel", 9) == 0)
			named++;
	CHECK_EQ_INT(replay_kernels_named, named);
	for (uint16_t t = CBN_REC_CUDA_KERNEL; t <= CBN_REC_CUDA_MEMORY; t++)
		CHECK_EQ_INT(replay_count[t], count_type(t));
}

static char dump_dir[64];

static void at_exit_check(void)
{
	const struct cbn_rec_cuda_status *st;
	int rc;

	if (getpid() != main_pid)
		return;
	pthread_mutex_lock(&col_lock);
	CHECK_EQ_INT(atomic_load(&bad_writes), 0);
	/* The flush that never returns (hang) stays inside the layer. */
	CHECK_EQ_INT(atomic_load(&enters),
		     atomic_load(&leaves) + (strcmp(mode, "hang") == 0 ? 1 : 0));
	if (strcmp(mode, "main") == 0) {
		check_main();
	} else if (strcmp(mode, "memory") == 0) {
		check_memory();
	} else if (strcmp(mode, "dump") == 0) {
		check_dump(dump_dir);
	} else if (strcmp(mode, "fail999") == 0) {
		check_unavailable(999);
	} else if (strcmp(mode, "fail39") == 0) {
		check_unavailable(39);
	} else if (strcmp(mode, "fail35") == 0) {
		check_unavailable(35);
	} else if (strcmp(mode, "hang") == 0) {
		st = last_status();
		REQUIRE(st);
		CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
		CHECK_EQ_INT(st->flush_timed_out, 1);
		CHECK(strstr(st->message, "did not return") != NULL);
	} else if (strcmp(mode, "periodic") == 0) {
		st = last_status();
		REQUIRE(st);
		CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
		CHECK(st->buffers >= 1);
	} else if (strcmp(mode, "drop") == 0) {
		st = last_status();
		REQUIRE(st);
		CHECK_EQ_INT(st->dropped, 7);
	} else if (strcmp(mode, "nosync") == 0) {
		st = last_status();
		REQUIRE(st);
		CHECK_EQ_INT(st->state, CBN_CUDA_FINISHED);
		CHECK_EQ_INT(st->zero_ts, 5);
		CHECK_EQ_INT(count_type(CBN_REC_CUDA_KERNEL), 0);
		CHECK_EQ_INT(count_type(CBN_REC_CUDA_API), 5);
	} else if (strcmp(mode, "tsfail") == 0) {
		size_t n;
		uint64_t ns;

		/* The layer registers no timestamp callback (a program's own
		 * client may): CUPTI keeps CLOCK_REALTIME, mapped onto ours. */
		st = last_status();
		REQUIRE(st);
		kernel_stats(WL_A_NAME, &n, &ns);
		CHECK_EQ_INT(n, WL_A_COUNT);
		for (size_t i = 0; i < ncol; i++) {
			const struct cbn_rec_cuda_kernel *k = (const void *)col[i];
			const struct cbn_rec_cuda_api *la;

			if (col[i]->type != CBN_REC_CUDA_KERNEL)
				continue;
			la = api_by_corr(k->correlation);
			REQUIRE(la);
			/* within 50 ms of the launch, on the monotonic clock */
			CHECK(k->start + 50000000ull > la->start && k->start < la->end + 50000000ull);
		}
	}
	pthread_mutex_unlock(&col_lock);
	rc = test_result();
	fflush(stdout);
	_exit(rc);
}

static void fork_mode(void)
{
	const struct fakecuda_kernel k = { .name = "_Z5childv", .gpu_ns = 1000, .grid = { 1, 1, 1 },
					   .block = { 1, 1, 1 } };
	size_t before;
	pid_t pid;
	int status = 0;

	if (wl_nosync(0) != 0)
		exit(99);
	pid = fork();
	if (pid == 0) {
		pthread_mutex_lock(&col_lock);
		before = ncol;
		pthread_mutex_unlock(&col_lock);
		/* A forked child using CUDA: the layer must stay silent. */
		fakecuda_launch(&k, 0);
		fakecuda_device_sync();
		/* The atfork handler wrote FORK_CHILD before fork returned here. */
		REQUIRE(before > 0);
		CHECK_EQ_INT(ncol, before);
		CHECK_EQ_INT(col[before - 1]->type, CBN_REC_CUDA_STATUS);
		CHECK_EQ_INT(((const struct cbn_rec_cuda_status *)col[before - 1])->state,
			     CBN_CUDA_FORK_CHILD);
		fflush(stdout);
		exit(test_failures ? 3 : 0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: test_layer main|fail999|fail39|fail35|hang|drop|nosync|"
				"tsfail|fork|periodic|dump|memory\n");
		return 2;
	}
	mode = argv[1];
	main_pid = getpid();
	setenv("CUDA_INJECTION64_PATH", CBN_CUDA_LAYER, 1);
	setenv("CBN_QUIET", "1", 1);
	/* Only the periodic mode wants the periodic flush: the others count
	 * buffers and must see deterministic deliveries. */
	setenv("CBN_CUDA_FLUSH_PERIOD_MS", "0", 1);
	if (strcmp(mode, "fail999") == 0)
		setenv("FAKECUPTI_FAIL", "999", 1);
	else if (strcmp(mode, "fail39") == 0)
		setenv("FAKECUPTI_FAIL", "39", 1);
	else if (strcmp(mode, "fail35") == 0)
		setenv("FAKECUPTI_FAIL", "35", 1);
	else if (strcmp(mode, "hang") == 0) {
		setenv("FAKECUPTI_FLUSH_HANG", "1", 1);
		setenv("CBN_CUDA_FLUSH_TIMEOUT_MS", "300", 1);
	} else if (strcmp(mode, "drop") == 0)
		setenv("FAKECUPTI_DROP", "7", 1);
	else if (strcmp(mode, "tsfail") == 0)
		setenv("FAKECUPTI_TS_FAIL", "1", 1);
	else if (strcmp(mode, "dump") == 0) {
		strcpy(dump_dir, "/tmp/cbn-cupti-dump.XXXXXX");
		REQUIRE(mkdtemp(dump_dir));
		setenv("CBN_CUDA_DUMP_DIR", dump_dir, 1);
	}
	/* Registered before CUDA starts: runs after the layer's flush. */
	atexit(at_exit_check);
	if (strcmp(mode, "nosync") == 0)
		return wl_nosync(5);
	if (strcmp(mode, "fork") == 0) {
		fork_mode();
		return 0;
	}
	if (strcmp(mode, "periodic") == 0) {
		size_t n;
		uint64_t ns;

		/* Finished work reaches the agent while the program still runs. */
		setenv("CBN_CUDA_FLUSH_PERIOD_MS", "50", 1);
		if (fakecuda_init() != 0)
			return 99;
		for (int i = 0; i < WL_A_COUNT; i++)
			launch_a();
		fakecuda_device_sync();
		usleep(400 * 1000);
		pthread_mutex_lock(&col_lock);
		kernel_stats(WL_A_NAME, &n, &ns);
		CHECK_EQ_INT(n, WL_A_COUNT);
		CHECK_EQ_INT(count_type(CBN_REC_CUDA_SYNC), 1);
		pthread_mutex_unlock(&col_lock);
		return 0;
	}
	if (strcmp(mode, "tsfail") == 0 || strcmp(mode, "drop") == 0 || strcmp(mode, "hang") == 0) {
		if (fakecuda_init() != 0)
			return 99;
		for (int i = 0; i < WL_A_COUNT; i++)
			launch_a();
		fakecuda_device_sync();
		return 0;
	}
	if (fakecuda_init() != 0)
		return 99;
	if (strcmp(mode, "memory") == 0)
		return wl_memory();
	if (strcmp(mode, "main") == 0)
		check_enabled();
	/* the known-truth workload, then the nvcc-shaped launches */
	rc = wl_main();
	return rc ? rc : wl_nvcc();
}
