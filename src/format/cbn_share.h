/*
 * cbn_share.h — a sample's stack written as what changed since the chunk's
 * latest full sample (CBN_SAMPLE_SHARED, struct cbn_sample_share): the plan
 * the agent makes in its handler and the expansion readers make.  Pure
 * functions on arrays of stack words, signal-safe.
 *
 * A stack is its native frames, leaf first, then its Python words
 * (CBN_PYW), leaf first; each part shares its outermost frames with the
 * same part of the base.  Expanding a plan gives back the stack word for
 * word, whatever the words are.
 */
#ifndef CBN_SHARE_H
#define CBN_SHARE_H

#include <stdint.h>

#include "cbn_format.h"

/* The native frames of a stack: the words before its first Python word. */
static inline int cbn_share_native(const uint64_t *pc, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (CBN_PYW_IS(pc[i]))
			break;
	return i;
}

/* How many words a and b (na and nb of them) have in common at their ends. */
static inline int cbn_share_suffix(const uint64_t *a, int na, const uint64_t *b, int nb)
{
	int k = 0;

	while (k < na && k < nb && a[na - 1 - k] == b[nb - 1 - k])
		k++;
	return k;
}

/*
 * The plan for stack cur (n words, nn native) against base (bn words, bnn
 * native): *kn native and *kp Python words shared.  Returns 1 when the
 * sample is worth writing shared: at least 4 words saved, and what is left
 * of it at most a quarter of the stack or 8 words, so a stack that has moved
 * away from its base is written whole and becomes the next base.
 */
static inline int cbn_share_plan(const uint64_t *base, int bn, int bnn, const uint64_t *cur,
				 int n, int nn, int *kn, int *kp)
{
	int own;

	*kn = cbn_share_suffix(cur, nn, base, bnn);
	*kp = cbn_share_suffix(cur + nn, n - nn, base + bnn, bn - bnn);
	own = n - *kn - *kp;
	return *kn + *kp >= 4 && (own <= 8 || own <= n / 4);
}

/*
 * Write in place the shared form of cur (n words, nn native) by plan kn, kp:
 * the own native words stay, the own Python words move down after them.
 * Returns the own words left.
 */
static inline int cbn_share_pack(uint64_t *cur, int n, int nn, int kn, int kp)
{
	int i, on = nn - kn, op = n - nn - kp;

	for (i = 0; i < op; i++)
		cur[on + i] = cur[nn + i];
	return on + op;
}

/*
 * The whole stack of a shared sample into out (room for CBN_MAX_FRAMES):
 * own (n words) with kn native and kp Python words of base (bn words, bnn
 * native) put back.  The caller has checked kn <= bnn, kp <= bn - bnn and
 * n + kn + kp <= CBN_MAX_FRAMES.  Returns the stack's words.
 */
static inline int cbn_share_expand(const uint64_t *own, int n, const uint64_t *base, int bn,
				   int bnn, int kn, int kp, uint64_t *out)
{
	int on = cbn_share_native(own, n), m = 0, i;

	for (i = 0; i < on; i++)
		out[m++] = own[i];
	for (i = bnn - kn; i < bnn; i++)
		out[m++] = base[i];
	for (i = on; i < n; i++)
		out[m++] = own[i];
	for (i = bn - kp; i < bn; i++)
		out[m++] = base[i];
	return m;
}

#endif
