/*
 * unwind.c — loads libunwind with dlopen(RTLD_LOCAL) and warms it up per thread.
 * Never a DT_NEEDED: libunwind.so.8 exports _Unwind_RaiseException & co., which
 * would then take over C++ exception handling in the target (cpu-sampling.md §3.1).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "agent.h"

int (*unwind_backtrace)(void **buf, int size);

int unwind_init(void)
{
	void *h;

	if (unwind_backtrace)
		return 0;
	h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	unwind_backtrace = (int (*)(void **, int))dlsym(h, "unw_backtrace");
	return unwind_backtrace ? 0 : -1;
}

/*
 * The first unw_backtrace in a thread mallocs libunwind's TLS block and its
 * trace cache (libunwind is dlopened, so its TLS is dynamic), and the first
 * call in the process runs tdep_init under a mutex (libunwind #331).  Neither
 * may happen inside the signal handler, so every thread calls this before its
 * timer is armed.
 */
__attribute__((noinline)) void unwind_warm(void)
{
	void *buf[32];

	if (unwind_backtrace) {
		agent_tls.in_agent++;
		unwind_backtrace(buf, 32);
		agent_tls.in_agent--;
	}
}
