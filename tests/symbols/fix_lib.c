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
