// thrower.cc — libthrower.so: C++ code that throws through a few frames and
// catches, loaded at run time by cxx_host.c.  Returns how many were caught.
#include <stdexcept>

static int depth(int n)
{
	if (n == 0)
		throw std::runtime_error("deep");
	return depth(n - 1) + 1;
}

extern "C" int thrower_run(int times)
{
	int caught = 0;

	for (int i = 0; i < times; i++) {
		try {
			depth(8);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	return caught;
}
