/*
 * test_cuda_occupancy.c — occupancy and blocks per SM against the values
 * verified with cuda_occupancy.h for H100-like properties (research/cupti.md
 * §4), the per-kernel duration-weighted means, and green-context SM counts.
 * Exits 77 when this build has no cuda_occupancy.h (no CUDA toolkit).
 */
#include "occupancy.h"
#include "test_cuda_build.h"
#include "testlib.h"

static struct prof_gpu_op launch(int threads, uint32_t regs, int dyn, int optin)
{
	struct prof_gpu_op k = { .kind = PROF_GPU_KERNEL, .grid = { 132 * 16, 1, 1 },
				 .block = { threads, 1, 1 }, .registers = regs,
				 .dynamic_smem = dyn, .shmem_limit_optin = (uint32_t)optin };
	return k;
}

int main(void)
{
	struct profile p;
	struct occ_result r;
	struct prof_gpu_op k;
	struct cuda_analysis *a;
	struct prof_cuda_context ctx = { .process = 0, .context = 1, .device = 0, .sm_count = 66 };

	if (!occ_available()) {
		fprintf(stderr, "skip: built without cuda_occupancy.h (no CUDA toolkit)\n");
		return TEST_SKIP;
	}
	cb_init(&p);
	cb_h100(&p, 0);

	k = launch(256, 32, 0, 0);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 8);
	CHECK_NEAR(r.occupancy, 1.0, 1e-12);
	CHECK_NEAR(r.blocks_per_sm, 16.0, 1e-12);

	k = launch(256, 64, 0, 0);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 4);
	CHECK_NEAR(r.occupancy, 0.5, 1e-12);

	/* C's {0} carveout would give 1 block here; the driver default gives 13 */
	k = launch(128, 32, 16 * 1024, 0);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 13);
	CHECK_NEAR(r.occupancy, 13 * 128 / 2048.0, 1e-12);

	/* 100 KiB dynamic smem: runs only with the opt-in limit */
	k = launch(128, 128, 100 * 1024, 1);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 2);
	k = launch(128, 128, 100 * 1024, 0);
	CHECK(occ_compute(&p.devices[0], 132, &k, &r) != 0 || r.active_blocks == 0);

	/* unknown reserved smem and opt-in limit: filled in for sm_80+ */
	p.devices[0].reserved_smem_per_block = 0;
	p.devices[0].smem_per_block_optin = 0;
	k = launch(128, 128, 100 * 1024, 1);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 2);
	k = launch(128, 32, 16 * 1024, 0);
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_EQ_INT(r.active_blocks, 13);

	/* small grid: occupancy is capped by blocks per SM */
	k = launch(256, 32, 0, 0);
	k.grid[0] = 66;
	REQUIRE(occ_compute(&p.devices[0], 132, &k, &r) == 0);
	CHECK_NEAR(r.blocks_per_sm, 0.5, 1e-12);
	CHECK_NEAR(r.occupancy, 0.5 * 256 / 2048.0, 1e-12);
	CHECK(occ_compute(&p.devices[0], 0, &k, &r) == -EINVAL);

	/* green context with fewer SMs; duration-weighted mean per kernel */
	CHECK_EQ_INT(occ_sm_count(&p.devices[0], &ctx), 66);
	CHECK_EQ_INT(occ_sm_count(&p.devices[0], NULL), 132);
	PB_ADD(p.contexts, p.ncontexts, ctx);
	cb_kernel(&p, "k", 0, 3 * MS, PROF_NONE, 132, 256, 32);      /* 2 blocks/SM, occ 0.25 */
	p.gpu_ops[0].context = 1;
	cb_kernel(&p, "k", 4 * MS, 5 * MS, PROF_NONE, 132, 256, 64);  /* ctx 0: 1 block/SM, occ 0.125 */
	REQUIRE(cuda_analyze(&p, &a) == 0 && a);
	CHECK_NEAR(a->kernels[0].blocks_per_sm, (2.0 * 3 + 1.0 * 1) / 4, 1e-12);
	CHECK_NEAR(a->kernels[0].est_occupancy, (0.25 * 3 + 0.125 * 1) / 4, 1e-12);
	CHECK_NEAR(a->ov.est_achieved_occupancy, (0.25 * 3 + 0.125 * 1) / 4, 1e-12);
	CHECK(a->kernels[0].config_varies);
	cuda_analysis_free(a);
	pb_profile_free(&p);
	return test_result();
}
