/*
 * annotate.c — uses include/cbottleneck.h: nested ranges, steps and a mark,
 * then exits with status 3 (the profile must record exit code 3).  Without the
 * agent the calls are no-ops and the program behaves the same.
 */
#include <stdio.h>

#include "cbottleneck.h"

int main(void)
{
	int i, d0, d1;

	for (i = 0; i < 3; i++) {
		d0 = CBN_RANGE_PUSH("epoch");
		d1 = CBN_RANGE_PUSH("batch");
		CBN_RANGE_POP();
		CBN_RANGE_POP();
		CBN_STEP();
	}
	CBN_MARK("done");
	/* -1 without the agent, 0 and 1 with it: same output either way. */
	printf("annotate: %s\n", (d0 == -1 && d1 == -1) || (d0 == 0 && d1 == 1) ? "ok" : "bad depths");
	return 3;
}
