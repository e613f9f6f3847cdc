/*
 * cuda_rules_int.h — what the CUDA rule tests share (cuda_rules*.c): the
 * context each test looks at, and the tests that live outside cuda_rules.c,
 * whose table cuda_rules[] lists them all.  Private to the CUDA rules.
 */
#ifndef CBN_CUDA_RULES_INT_H
#define CBN_CUDA_RULES_INT_H

#include "cuda_int.h"
#include "rules.h"

/* What a test looks at. */
struct cuda_rule_ctx {
	const struct cuda_analysis *a;   /* tables and overview, complete */
	const struct profile *p;
	const char **range_names;        /* row name of range i, NULL for instants */
	uint64_t *scratch;               /* room for nranges durations, any test's to use */
	const struct op_analysis *ops;   /* operators (ops.h), NULL when none */
	const struct mem_analysis *mem;  /* the memory view (memory.h), analysed before the
					  * CUDA one; NULL when none */
};

/* cuda_rules_mem.c: the memory rules. */
int cuda_rule_malloc_churn(const void *ctx, struct rules_pass *pass);
int cuda_rule_pinned_memory(const void *ctx, struct rules_pass *pass);
int cuda_rule_gpu_memory_full(const void *ctx, struct rules_pass *pass);

/* cuda_rules_fw.c: the framework-aware rules. */
int cuda_rule_channels_last(const void *ctx, struct rules_pass *pass);
int cuda_rule_fp32_math(const void *ctx, struct rules_pass *pass);
int cuda_rule_fuse_elementwise(const void *ctx, struct rules_pass *pass);

#endif
