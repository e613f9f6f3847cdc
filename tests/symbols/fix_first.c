/*
 * fix_first.c — the unit linked before fix_main.c in symfix_partaranges,
 * whose .debug_aranges are kept while fix_main.c's are removed: the shape
 * of a Go program built with cgo, whose linker writes aranges for the C
 * part only.
 */
volatile int fix_first_sink;

__attribute__((noinline, used)) int fix_first_fn(int n)
{
	for (int i = 0; i < n; i++)
		fix_first_sink += i;
	return fix_first_sink;
}
