/*
 * text_int.h — what the text report's files share (text.c: the tables,
 * text_head.c: the header and the environment): the state of one report
 * and the helpers both use.  Launcher side only.
 */
#ifndef CBN_TEXT_INT_H
#define CBN_TEXT_INT_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"
#include "report.h"

struct analysis;
struct cpu_profile;

struct text_ctx {
	FILE *out;
	const struct analysis *a;
	const struct profile *p;
	const struct report_opts *o;
	const struct cpu_profile *c;
	int verbose;             /* -v: the sampler's inner workings too */
};

/* text_head.c: "0", "killed by signal 9 (SIGKILL)"; whether process image
 * idx was replaced by exec; the threads as the user counts them (an exec
 * keeps the tid), counting stops at 2; the header, and with -v the
 * environment block before it. */
void text_exit_desc(char *buf, size_t len, int status, int signo);
int text_execd(const struct profile *p, size_t idx);
size_t text_distinct_tids(const struct profile *p);
void text_environment(struct text_ctx *t);
void text_header(struct text_ctx *t);

#endif
