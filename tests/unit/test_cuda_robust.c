/*
 * test_cuda_robust.c — the CUDA analysis and both reports, and the wait
 * analysis (off-CPU stretches, spin flags), on random profiles with odd data
 * a damaged session could produce: indices out of range or PROF_NONE, end
 * before start, zero-length and overlapping intervals, missing names, empty
 * stacks.  Nothing may crash (run it under ASan/UBSan with CBN_SANITIZE=ON),
 * and a few invariants must hold whatever the input.
 *
 * ctest-labels: fuzz
 */
#include <cjson/cJSON.h>

#include "wait.h"
#include "report/cuda_report.h"
#include "test_cuda_build.h"
#include "analysed.h"
#include "testlib.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

static uint32_t idx(size_t n)
{
	switch (rnd(8)) {
	case 0: return PROF_NONE;
	case 1: return (uint32_t)n + rnd(3);   /* out of range */
	default: return n ? rnd((uint32_t)n) : PROF_NONE;
	}
}

static uint64_t ts(void)
{
	return rnd(4) == 0 ? 0 : (uint64_t)rnd(50) * 100 * US;
}

static const char *const names[] = { "cudaLaunchKernel", "cudaMemcpy", "cuLaunchKernel",
				     "cudaDeviceSynchronize", "cudaStreamSynchronize_v3020", "",
				     NULL, "k", "[CUDA memcpy DtoD]" };

static const char *const wait_modules[] = {
	"/usr/lib/libgomp.so.1", "/lib/libc.so.6", "/lib64/ld-linux-x86-64.so.2", "libiomp5.so",
	"", "/bin/app", "kernel"
};

static const char *const wait_names[] = { "pthread_mutex_lock", "__lll_lock_wait", "main",
					  "malloc", "__memmove_avx_unaligned_erms", "sched_yield",
					  "void std::mutex::lock()", "(" };

static void random_profile(struct profile *p)
{
	int i, n;

	cb_init(p);
	if (rnd(2))
		cb_h100(p, 0);
	if (p->ndevices && rnd(2))
		p->devices[0].sm_count = rnd(3);   /* tiny or zero SM counts */
	if (p->ndevices && rnd(3) == 0) {     /* fields a device record may lack */
		p->devices[0].regs_per_sm = rnd(2) * 65536;
		p->devices[0].smem_per_sm = rnd(2) * 1024;
		p->devices[0].cc_major = rnd(14);
		p->devices[0].threads_per_warp = rnd(2) * 32;
	}
	for (i = 0, n = (int)rnd(4); i < n; i++)
		cb_thread(p, 200 + i);
	for (i = 0, n = (int)rnd(4); i < n; i++)
		cb_func(p, rnd(2) ? wait_names[rnd(8)] : names[rnd(9)] ? names[rnd(6)] : "f",
			rnd(2) ? "a.c" : "", rnd(100), rnd(2) ? "libcudart.so.13" : "app");
	for (i = 0, n = (int)rnd(4); i < n; i++) {
		struct prof_stack s = { .first = rnd(10), .nframes = rnd(5) };
		struct prof_frame f = { .func = idx(p->nfuncs), .line = rnd(50), .file = "x.c" };

		PB_ADD(p->stacks, p->nstacks, s);
		PB_ADD(p->frames, p->nframes, f);
	}
	for (i = 0, n = (int)rnd(40); i < n; i++) {
		const char *nm = names[rnd(9)];
		uint32_t c = cb_api(p, nm ? nm : "x", idx(p->nthreads), ts(), ts());

		p->cuda_api[c].name = nm;
		p->cuda_api[c].stack = idx(p->nstacks);
	}
	for (i = 0, n = (int)rnd(60); i < n; i++) {
		struct prof_gpu_op op = { .kind = 1 + rnd(4), .start = ts(), .end = ts(),
					  .name = names[rnd(9)], .api = idx(p->ncuda_api),
					  .grid = { rnd(10) ? (int)rnd(300) - 5 : INT32_MAX, (int)rnd(3),
						    rnd(10) ? 1 : INT32_MAX },
					  .block = { (int)rnd(1100), 1, (int)rnd(2) },
					  .registers = rnd(300), .static_smem = (int)rnd(70000) - 100,
					  .dynamic_smem = (int)rnd(300000) - 100, .shmem_limit_optin = rnd(2),
					  .device = rnd(3), .context = rnd(3), .bytes = rnd(1 << 20),
					  .copy_kind = rnd(12), .src_kind = rnd(9), .dst_kind = rnd(9) };

		PB_ADD(p->gpu_ops, p->ngpu_ops, op);
	}
	for (i = 0, n = (int)rnd(10); i < n; i++) {
		cb_range(p, rnd(2) ? "r" : "s", idx(p->nthreads), ts(), ts());
		p->ranges[p->nranges - 1].kind = 1 + rnd(4);
		if (rnd(3) == 0)
			p->ranges[p->nranges - 1].domain = "dom";
		if (rnd(5) == 0)
			p->ranges[p->nranges - 1].name = NULL;
	}
	for (i = 0, n = (int)rnd(3); i < n; i++) {
		struct prof_cuda_sync s = { .start = ts(), .end = ts(), .correlation = rnd(50) };

		PB_ADD(p->syncs, p->nsyncs, s);
	}
	for (i = 0, n = (int)rnd(3); i < n; i++) {
		struct prof_cuda_status s = { .process = idx(p->nprocesses), .state = rnd(7),
					      .message = rnd(2) ? "m" : NULL, .dropped = rnd(3) };

		PB_ADD(p->cuda_status, p->ncuda_status, s);
	}
	for (i = 0, n = (int)rnd(30); i < n; i++) {
		struct prof_sample s = { .stack = idx(p->nstacks), .thread = idx(p->nthreads), .weight = 1 };

		PB_ADD(p->samples, p->nsamples, s);
	}
	p->wall_ns = rnd(2) ? 0 : 10 * MS;
	/* the wait analysis: modules it recognises, spin flags, off-CPU stretches
	 * with any kind, owner, stack and interval */
	for (i = 0; i < (int)p->nfuncs; i++)
		if (rnd(2))
			p->funcs[i].module = wait_modules[rnd(7)];
	for (i = 0, n = (int)rnd(12); i < n; i++) {   /* more of the stacks above valid */
		struct prof_frame f = { .func = idx(p->nfuncs), .line = rnd(50),
					.file = rnd(2) ? "x.c" : "", .inlined = rnd(2) };

		PB_ADD(p->frames, p->nframes, f);
	}
	for (i = 0; i < (int)p->nsamples; i++) {
		p->samples[i].ts = ts();
		p->samples[i].weight = rnd(3);
		p->samples[i].flags = rnd(2) * PROF_SAMPLE_SPIN | rnd(2) * PROF_SAMPLE_KERNEL |
				      rnd(2) * CBN_SAMPLE_TRUNCATED;
	}
	for (i = 0, n = (int)rnd(12); i < n; i++) {
		struct prof_offcpu r = { .start = ts(), .end = ts(), .weight_ns = rnd(4) * MS,
					 .addr = rnd(3) * 0x1000, .process = idx(p->nprocesses),
					 .thread = idx(p->nthreads), .stack = idx(p->nstacks),
					 .kind = rnd(2) ? CBN_OFF_FUTEX : rnd(CBN_OFF_NKINDS + 2),
					 .syscall = (int32_t)rnd(300) - 2,
					 .owner_thread = idx(p->nthreads), .flags = rnd(4) };

		PB_ADD(p->offcpu, p->noffcpu, r);
	}
	if (rnd(3) == 0)
		p->processes[0].offcpu.state = rnd(3);
	if (rnd(4) == 0) {     /* a process span that excludes everything, or none */
		p->processes[0].start = ts();
		p->processes[0].end = ts();
	}
	if (p->nthreads > 1 && rnd(3) == 0) {
		p->threads[1].start = ts();
		p->threads[1].end = ts();
	}
	if (p->nthreads > 1 && rnd(6) == 0)
		p->threads[1].process = rnd(3);   /* maybe out of range */
}

/* How often the random profiles reached the wait analysis's parts. */
static unsigned wait_seen, wait_sites, wait_locks, wait_critical, wait_findings;

/* What must hold of any wait analysis. */
static int wait_ok(const struct profile *p)
{
	struct wait_analysis *w = NULL;
	uint64_t cpu = 0, act = 0;
	size_t i;
	int ok = 1;

	if (wait_analyze(p, &w) != 0)
		return 0;
	if (!w)
		return !p->nsamples && !p->noffcpu;
	for (i = 0; i < w->nthreads_v; i++)
		cpu += w->threads_v[i].cpu_ns;
	for (i = 0; i < WAIT_ACT_N; i++)
		act += w->act_ns[i];
	ok &= cpu == w->cpu_ns && act == w->cpu_ns;
	ok &= w->efficiency >= 0 && w->efficiency <= 1.0;
	ok &= w->critical_share >= 0 && w->critical_share <= 1.0;
	ok &= w->critical == PROF_NONE || w->critical < p->nthreads;
	ok &= w->busy_threads >= 1;
	ok &= (w->verdict == WAIT_V_NONE) == (w->verdict_text == NULL);
	for (i = 0; i < w->nlocks; i++)
		ok &= w->locks[i].holder_share <= 1.0 + 1e-9 && w->locks[i].waiters >= 1;
	for (i = 0; i < w->nfindings; i++)
		ok &= w->findings[i].message && w->findings[i].evidence;
	wait_seen++;
	wait_sites += w->nsites > 0;
	wait_locks += w->nlocks > 0;
	wait_critical += w->critical != PROF_NONE;
	wait_findings += w->nfindings > 0;
	wait_free(w);
	return ok;
}

int main(void)
{
	struct report_opts o = { .limit = 3, .sort = "count" };
	const char *env = getenv("CBN_FUZZ_ROUNDS");   /* longer runs on demand */
	int iter, ok = 1, rounds = env ? atoi(env) : 1000;

	for (iter = 0; iter < rounds; iter++) {
		struct profile p;
		struct cuda_analysis *a = NULL;
		char *buf = NULL;
		size_t len = 0, i;
		FILE *f;
		cJSON *j;

		random_profile(&p);
		if (cuda_analyze(&p, &a) != 0) {
			ok = 0;
			break;
		}
		if (a) {
			uint64_t self = 0;

			for (i = 0; i < a->nops; i++) {
				self += a->ops[i].self_cuda_ns;
				if (a->ops[i].self_cpu_ns > a->ops[i].cpu_total_ns)
					ok = 0;
			}
			if (self != a->self_cuda_total_ns)
				ok = 0;
			if (a->ov.gpu_utilization > 1.0 + 1e-9 || a->ov.est_sm_efficiency > 1.0 + 1e-9)
				ok = 0;
			cuda_analysis_free(a);
		}
		f = open_memstream(&buf, &len);
		REQUIRE(f);
		if (report_cuda_text(f, analysed(&p), &o) != 0)
			ok = 0;
		fclose(f);
		free(buf);
		j = report_cuda_json(analysed(&p), &o);
		cJSON_Delete(j);
		if (!wait_ok(&p))
			ok = 0;
		pb_drop(p.offcpu);
		pb_profile_free(&p);
		if (!ok) {
			fprintf(stderr, "invariant broken at iteration %d\n", iter);
			break;
		}
	}
	CHECK(ok);
	fprintf(stderr, "wait analysis: %u runs, %u with sites, %u with locks, %u with a critical "
		"thread, %u with findings\n", wait_seen, wait_sites, wait_locks, wait_critical,
		wait_findings);
	CHECK(rounds < 1000 || (wait_sites && wait_locks && wait_findings));
	return test_result();
}
