/*
 * cbn_schedule.h — the one parser of --schedule / CBN_SCHEDULE, shared by the
 * launcher (which checks it) and the agent (which follows it), and the
 * schedule's decision per step with torch.profiler.schedule's meaning:
 *
 *   "wait=1,warmup=1,active=3,repeat=2,skip_first=0"   (any order; active > 0)
 *
 * Steps are numbered as torch numbers ProfilerStep#N: step 0 runs from the
 * start of the process to the first cbn_step() call, step n from the n-th
 * call to the next (so a loop that calls cbn_step() at the end of each
 * iteration, as torch's prof.step(), has iteration n as step n).  Steps below
 * skip_first are not recorded.  After them the steps go in cycles of
 * wait + warmup + active: the first `wait` are not recorded, the next
 * `warmup` neither (torch records them and throws them away; we have nothing
 * to warm up, but count them so that step numbers match), the last `active`
 * are.  The cycle repeats; after `repeat` cycles (0: no limit) nothing more
 * is.  A run that ends inside an active step keeps what it recorded, as
 * torch's profiler keeps its last trace at exit.
 * No state, no allocation.
 */
#ifndef CBN_SCHEDULE_H
#define CBN_SCHEDULE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct cbn_schedule {
	uint64_t wait, warmup, active, repeat, skip_first;
};

/* 0 and *s filled, or -1 (unknown word, bad number, active = 0). */
static inline int cbn_schedule_parse(const char *text, struct cbn_schedule *s)
{
	const char *p = text;

	memset(s, 0, sizeof(*s));
	if (!p || !*p)
		return -1;
	while (*p) {
		static const char *const words[] = {"wait", "warmup", "active", "repeat", "skip_first"};
		uint64_t *slots[] = {&s->wait, &s->warmup, &s->active, &s->repeat, &s->skip_first};
		const char *eq = strchr(p, '=');
		char *end;
		size_t i, n;
		unsigned long long v;

		if (!eq)
			return -1;
		n = (size_t)(eq - p);
		for (i = 0; i < 5; i++)
			if (strlen(words[i]) == n && !strncmp(p, words[i], n))
				break;
		if (i == 5 || eq[1] < '0' || eq[1] > '9')
			return -1;
		v = strtoull(eq + 1, &end, 10);
		if ((*end != ',' && *end != 0) || (*end == ',' && !end[1]))
			return -1;
		*slots[i] = v;
		p = *end ? end + 1 : end;
	}
	return s->active ? 0 : -1;
}

/* 1 when step n (ProfilerStep#n) is recorded. */
static inline int cbn_schedule_active(const struct cbn_schedule *s, uint64_t n)
{
	uint64_t cycle = s->wait + s->warmup + s->active, k;

	if (n < s->skip_first || !cycle)
		return 0;
	k = n - s->skip_first;
	if (s->repeat && k / cycle >= s->repeat)
		return 0;
	return k % cycle >= s->wait + s->warmup;
}

/* 1 when no step from n on can be recorded (the schedule is over). */
static inline int cbn_schedule_done(const struct cbn_schedule *s, uint64_t n)
{
	uint64_t cycle = s->wait + s->warmup + s->active;

	return s->repeat && cycle && n >= s->skip_first && (n - s->skip_first) / cycle >= s->repeat;
}

#endif
