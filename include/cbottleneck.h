/*
 * cbottleneck.h — optional annotations for programs profiled with cbottleneck.
 * Header-only and free when the program runs without cbottleneck: the cbn_*
 * functions are weak references that only the preloaded agent defines, and the
 * CBN_* wrappers call them only when they resolved.  No library to link.
 *
 *   CBN_RANGE_PUSH("load batch"); ... CBN_RANGE_POP();   nested ranges, per thread
 *   CBN_STEP();                                            one iteration of the main loop
 *   CBN_MARK("checkpoint");                                an instant event
 *   CBN_START(); ... CBN_STOP();                           record only in between
 *                                      (with `cbottleneck --capture-range api`;
 *                                      without it, CBN_STOP pauses and CBN_START
 *                                      resumes a recording that began at start)
 *
 * Ranges appear in the reports next to NVTX ranges (code annotated for Nsight
 * needs nothing else).  Names are copied; nesting deeper than 64 is counted
 * but not recorded.  The functions may not be called from signal handlers.
 */
#ifndef CBOTTLENECK_H
#define CBOTTLENECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Defined by libcbottleneck.so; null without it.  Return values: the range
 * depth (push: before the push; pop: of the closed range), or -1 when the
 * agent is not recording. */
extern int cbn_range_push(const char *name) __attribute__((weak));
extern int cbn_range_pop(void) __attribute__((weak));
extern void cbn_step(void) __attribute__((weak));
extern void cbn_mark(const char *name) __attribute__((weak));
/* 1 when recording after the call, 0 when not, -1 without the agent. */
extern int cbn_start(void) __attribute__((weak));
extern int cbn_stop(void) __attribute__((weak));

static inline int cbn_annotate_push(const char *name)
{
	return cbn_range_push ? cbn_range_push(name) : -1;
}

static inline int cbn_annotate_pop(void)
{
	return cbn_range_pop ? cbn_range_pop() : -1;
}

static inline void cbn_annotate_step(void)
{
	if (cbn_step)
		cbn_step();
}

static inline void cbn_annotate_mark(const char *name)
{
	if (cbn_mark)
		cbn_mark(name);
}

static inline int cbn_annotate_start(void)
{
	return cbn_start ? cbn_start() : -1;
}

static inline int cbn_annotate_stop(void)
{
	return cbn_stop ? cbn_stop() : -1;
}

#define CBN_RANGE_PUSH(name) cbn_annotate_push(name)
#define CBN_START() cbn_annotate_start()
#define CBN_STOP() cbn_annotate_stop()
#define CBN_RANGE_POP() cbn_annotate_pop()
#define CBN_STEP() cbn_annotate_step()
#define CBN_MARK(name) cbn_annotate_mark(name)

#ifdef __cplusplus
}
#endif

#endif
