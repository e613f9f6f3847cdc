/*
 * fix_lib.c — shared-library fixture for the symbolizer tests: an exported
 * and a static function, each calling the marker on a line tagged MARK:.
 * Lines matter: tests find them by the MARK: comments, so edit freely.
 */
#include "fix_mark.h"

static volatile int fix_lib_sink;

__attribute__((noinline)) static void lib_static_fn(fix_mark_fn mark, int n)
{
	fix_lib_sink += n;
	mark("lib_static"); /* MARK:lib_static */
	fix_lib_sink += n;
}

__attribute__((noinline)) void lib_exported_fn(fix_mark_fn mark, int n)
{
	fix_lib_sink += n;
	lib_static_fn(mark, n + 1);
	mark("lib_exported"); /* MARK:lib_exported */
	fix_lib_sink += n;
}

/* A loop written as labelled cases, as CPython's evaluation loop is (one
 * TARGET_<op> label per instruction's code): sym_label_lines reads a case's
 * lines from the labels' DWARF. */
__attribute__((noinline)) void lib_dispatch(fix_mark_fn mark, const unsigned char *ops)
{
	int pc = 0;

	for (;;) {
		switch (ops[pc++]) {
		case 1:
			goto TARGET_ADD;
		case 2:
			goto TARGET_CALL;
		default:
			goto TARGET_HALT;
		}
TARGET_ADD: /* LABEL:add */
		fix_lib_sink += ops[pc];
		pc++;
		continue;
TARGET_CALL: /* LABEL:call */
		fix_lib_sink++;
		mark("lib_dispatch"); /* MARK:lib_dispatch */
		fix_lib_sink += pc;
		continue;
TARGET_HALT: /* LABEL:halt */
		return;
	}
}
