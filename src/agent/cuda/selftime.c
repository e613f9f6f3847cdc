/*
 * selftime.c — measuring settings of the CUDA layer, for finding where a
 * launch's added host time goes on a machine with a GPU (docs/performance.md,
 * "CUPTI's own cost"); neither is meant for a user's run.
 *
 * CBN_CUDA_SELFTIME=FILE sums the time of the layer's own parts (the whole
 * callback, the stack capture, the stack and API record writes, the buffer
 * conversions) and counts the callbacks, nested driver calls, captures and
 * the agent's call-path cache misses; at exit it writes them to FILE, one
 * line a part.  Each part costs two clock reads while it is on.
 *
 * CBN_CUDA_SPLIT takes a part of the layer away, so that differences of runs
 * give each part's cost: "nocb" enables no API callbacks (the activity
 * buffers alone), "empty" enables them but each returns at once (CUPTI's
 * dispatch), "norec" does a callback's bookkeeping without records or stacks,
 * "locked" writes the callbacks' records through the agent's shared, locked
 * events chunk rather than each thread's own.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "layer.h"
#include "../../format/cbn_time.h"

int selftime_on;
int layer_split;

static const char *selftime_file;
static _Atomic uint64_t selftime_ns[ST_NPARTS], selftime_n[ST_NPARTS];
static const char *const selftime_names[ST_NPARTS] = {
	[ST_CALLBACK] = "callback (all of ours)",
	[ST_RUNTIME] = "runtime callbacks",
	[ST_DRIVER] = "driver callbacks (not nested)",
	[ST_NESTED] = "driver callbacks inside a runtime call",
	[ST_STACK] = "stack capture",
	[ST_STACK_WRITE] = "stack record write",
	[ST_STACK_FULL] = "stack records written in full",
	[ST_API_WRITE] = "API record write",
	[ST_BUFFER] = "activity buffer conversion",
};

uint64_t selftime_now(void)
{
	return cbn_clock_ns(CLOCK_MONOTONIC);
}

void selftime_add(enum selftime_part part, uint64_t ns)
{
	atomic_fetch_add_explicit(&selftime_n[part], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&selftime_ns[part], ns, memory_order_relaxed);
}

void selftime_setup(void)
{
	const char *s = layer_getenv("CBN_CUDA_SPLIT");

	if (s && strcmp(s, "nocb") == 0)
		layer_split = SPLIT_NOCB;
	else if (s && strcmp(s, "empty") == 0)
		layer_split = SPLIT_EMPTY;
	else if (s && strcmp(s, "norec") == 0)
		layer_split = SPLIT_NOREC;
	else if (s && strcmp(s, "locked") == 0) /* records through the shared chunk */
		layer_agent.write_own = layer_agent.write;
	s = layer_getenv("CBN_CUDA_SELFTIME");
	if (s && *s) {
		selftime_file = s;
		selftime_on = 1;
	}
}

/* At exit (layer_atexit), normal context. */
void selftime_dump(void)
{
	uint64_t (*misses)(void);
	FILE *f;
	int i;

	if (!selftime_file || !(f = fopen(selftime_file, "w")))
		return;
	fprintf(f, "# part\tcount\ttotal_ns\tns_each\n");
	for (i = 0; i < ST_NPARTS; i++) {
		uint64_t n = atomic_load(&selftime_n[i]), ns = atomic_load(&selftime_ns[i]);

		fprintf(f, "%s\t%llu\t%llu\t%.1f\n", selftime_names[i], (unsigned long long)n,
			(unsigned long long)ns, n ? (double)ns / (double)n : 0.0);
	}
	*(void **)&misses = dlsym(RTLD_DEFAULT, "cbn_agent_pathcache_misses");
	if (misses)
		fprintf(f, "call-path cache misses (unwound)\t%llu\n",
			(unsigned long long)misses());
	fclose(f);
}
