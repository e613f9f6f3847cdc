/*
 * cbn_time.h — the one conversion of kernel time structures to the format's
 * unit, nanoseconds (every timestamp in a session is CLOCK_MONOTONIC ns).
 * Header-only and async-signal-safe: the agent's handler, the CUDA layer and
 * the launcher all include it (src/util does not: it is libc only).
 */
#ifndef CBN_TIME_H
#define CBN_TIME_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

static inline uint64_t cbn_ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static inline uint64_t cbn_tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/* clock_gettime(clk) in ns (the vDSO for the real-time and monotonic clocks,
 * a plain system call for CPU clocks); 0 when the clock cannot be read. */
static inline uint64_t cbn_clock_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return cbn_ts_ns(&ts);
}

#endif
