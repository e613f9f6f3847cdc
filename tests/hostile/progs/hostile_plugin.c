/*
 * hostile_plugin.c — libhostile_plugin.so, dlopened and dlclosed in a loop by
 * dlopen_loop.c.  Its constructor and destructor count, and its function
 * burns a little CPU inside the library's own code.
 */
#include <stdint.h>

int hostile_plugin_loads;

__attribute__((constructor)) static void plugin_init(void)
{
	hostile_plugin_loads++;
}

uint64_t hostile_plugin_compute(uint64_t x);
uint64_t hostile_plugin_compute(uint64_t x)
{
	volatile uint64_t v = x | 1;

	for (int i = 0; i < 200000; i++)
		v = v * 2862933555777941757ull + 3037000493ull;
	return v & 0xffff;
}
