/*
 * programs.h — a run's CPU by program image and module, as `perf report
 * --sort comm,dso` gives it: a build of 127 processes reads "82 % in cc1"
 * before any process row.  A program is every process image of one
 * executable (by its file's base name: "cc1", "as", "python3.11"); a module
 * is the ELF file of a sample's innermost frame ("[kernel]" for the kernel's
 * share, "[python]" for time in Python functions).  Filled by
 * programs_analyze() from analysis_run for every run with CPU samples; the
 * writers show the table when the run has more than one program.  Launcher
 * side only.
 */
#ifndef CBN_PROGRAMS_H
#define CBN_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define PROG_MODULES_MAX 8       /* modules kept per program, by CPU; the rest summed */

struct prog_module {
	const char *name;        /* the module's file base name, "[kernel]", "[python]",
				  * "[unknown]" (profile strings or static) */
	uint64_t cpu_ns;
};

struct program {
	const char *name;        /* the image's file base name (profile string), "?" */
	const char *exe;         /* the path of its first image, "" */
	uint32_t images;         /* process images of this executable */
	uint32_t threads;        /* their threads */
	uint64_t samples;        /* sample records */
	uint64_t cpu_ns;         /* sampled CPU (weight x period) */
	uint64_t wall_ns;        /* the union of its images' lives, inside the span */
	uint64_t kernel_ns;      /* of cpu_ns: the kernel's share */
	uint32_t top_func;       /* its hottest function by self time, not the kernel's
				  * (prof.funcs), PROF_NONE */
	uint64_t top_func_ns;
	struct prog_module mods[PROG_MODULES_MAX];
	size_t nmods;            /* by cpu_ns, most first */
	uint64_t other_mods_ns;  /* the modules past PROG_MODULES_MAX */
	uint32_t other_mods;
};

#define PROG_TL_BINS 60           /* bins of the CPU-in-use timeline, at most */
#define PROG_TL_SERIES 5         /* its series: the 4 programs of most CPU, then the rest */

struct prog_analysis {
	struct program *v;       /* by cpu_ns, most first (then name) */
	size_t n;
	uint64_t cpu_ns;         /* all programs' */
	uint32_t with_cpu;       /* programs with samples */
	/* The CPU in use over the run, by program: bins of bin_ns from t0
	 * (a round width: 1, 2 or 5 times a power of ten ns), each with the
	 * sampled CPU ns of v[0..PROG_TL_SERIES-2] and of the others together
	 * (cpu[bin * PROG_TL_SERIES + series]): a build's 2 CPUs busy are 2
	 * CPUs of it, not one bin of wall time. */
	uint64_t tl_t0, tl_bin_ns;
	size_t tl_nbins;
	uint64_t *tl_cpu;
};

/* p's programs into *out (NULL when p has no samples).  0, or -ENOMEM. */
int programs_analyze(const struct profile *p, struct prog_analysis **out);
void programs_free(struct prog_analysis *g);
/* The program of process image pi: "cc1" (a profile string), "?" unknown. */
const char *programs_name_of(const struct profile *p, uint32_t pi);

#endif
