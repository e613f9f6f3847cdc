/*
 * test_steps_fixture.h — a hand-built steps view (analysis/steps/steps.h) for the
 * writers' unit tests (JSON, trace, gate): the memory fixture's profile (one
 * process, pid SF_PID) with two capture windows of a schedule, and a struct
 * analysis whose steps are SF_NSTEPS steps numbered from 2 (the schedule
 * skipped two), the first one slow and cold.  Static storage: one fixture at
 * a time.
 */
#ifndef CBN_TEST_STEPS_FIXTURE_H
#define CBN_TEST_STEPS_FIXTURE_H

#include "steps.h"
#include "test_mem_fixture.h"

#define SF_PID MF_PID
#define SF_NSTEPS 4
#define SF_MEDIAN (10 * EX_MS)
#define SF_P90 (40 * EX_MS)

static struct step sf_steps[SF_NSTEPS];
static struct step_slow sf_slow[1];
static struct prof_window sf_windows[2];
static struct step_analysis sf_sa;

/* p: the memory fixture's profile; with windows: controlled capture (two
 * windows, schedule then exit), else none (mode ALL). */
static inline void sf_profile(struct profile *p, int with_windows)
{
	mf_profile(p);
	if (!with_windows)
		return;
	p->processes[0].capture.mode = CBN_CAPTURE_CONTROLLED;
	p->processes[0].capture.windows = 2;
	sf_windows[0] = (struct prof_window){EX_T0 + 5 * EX_MS, EX_T0 + 55 * EX_MS, 0,
					     CBN_CAUSE_SCHEDULE, CBN_CAUSE_SCHEDULE, 2};
	sf_windows[1] = (struct prof_window){EX_T0 + 60 * EX_MS, EX_T0 + 100 * EX_MS, 0,
					     CBN_CAUSE_CTL, CBN_CAUSE_EXIT, 4};
	p->windows = sf_windows;
	p->nwindows = 2;
}

/* The windows are this fixture's static rows: pb_profile_free leaves them. */
static inline void sf_free(struct profile *p)
{
	pb_profile_free(p);
}

/* The analysis of p with the steps view (NULL steps when !with_steps). */
static inline struct analysis sf_analysis(const struct profile *p, int with_steps)
{
	struct analysis a = *analysed(p);

	a.memory = NULL;
	if (!with_steps) {
		a.steps = NULL;
		return a;
	}
	/* step 2 (40 ms, cold), 3 and 4 (10 ms), 5 (10 ms, in the 2nd window) */
	sf_steps[0] = (struct step){2, 0, EX_T0 + 5 * EX_MS, EX_T0 + 45 * EX_MS,
				    38 * EX_MS, 20 * EX_MS, 3 * EX_MS, 7, 2, 3000000};
	sf_steps[1] = (struct step){3, 0, EX_T0 + 45 * EX_MS, EX_T0 + 55 * EX_MS,
				    9 * EX_MS, 5 * EX_MS, EX_MS, 3, 1, 0};
	sf_steps[2] = (struct step){4, 0, EX_T0 + 60 * EX_MS, EX_T0 + 70 * EX_MS,
				    9 * EX_MS, 5 * EX_MS, EX_MS, 3, 1, 0};
	sf_steps[3] = (struct step){5, 0, EX_T0 + 70 * EX_MS, EX_T0 + 80 * EX_MS,
				    9 * EX_MS, 5 * EX_MS, EX_MS, 3, 1, 0};
	memset(sf_slow, 0, sizeof(sf_slow));
	sf_slow[0].step = 0;
	sf_slow[0].ratio = 4.0;
	sf_slow[0].grew[0] = (struct step_growth){"grow_buffer", 0, 30 * EX_MS, 2 * EX_MS};
	sf_slow[0].grew[1] = (struct step_growth){"gemm_kernel", 1, 15 * EX_MS, 5 * EX_MS};
	sf_slow[0].ngrew = 2;
	memset(&sf_sa, 0, sizeof(sf_sa));
	sf_sa.source = STEP_SRC_MARKER;
	sf_sa.what = "cbn_step()";
	sf_sa.precision = NULL;
	sf_sa.steps = sf_steps;
	sf_sa.nsteps = SF_NSTEPS;
	sf_sa.min_ns = 10 * EX_MS;
	sf_sa.median_ns = SF_MEDIAN;
	sf_sa.p90_ns = SF_P90;
	sf_sa.max_ns = 40 * EX_MS;
	sf_sa.mean_ns = 17500 * EX_US;
	sf_sa.total_ns = 70 * EX_MS;
	sf_sa.slow = sf_slow;
	sf_sa.nslow = 1;
	sf_sa.cold = 1;
	sf_sa.cold_ratio = 4.0;
	sf_sa.controlled = p->nwindows > 0;
	sf_sa.window_ns = 90 * EX_MS;
	a.steps = &sf_sa;
	return a;
}

#endif
