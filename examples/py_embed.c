/*
 * py_embed — a C program that embeds CPython, as an application with a
 * scripting layer does: it loads the interpreter's shared library at run
 * time (no Python headers needed to build it), starts it with or without
 * its signal handlers (Py_InitializeEx's argument), runs a few Python
 * functions and stops it.
 *
 * Usage: py_embed LIBPYTHON HANDLERS   e.g. py_embed libpython3.11.so.1.0 0
 * Prints "embed: done" on success; exits 2 when the library or one of its
 * functions cannot be had.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static const char script[] =
	"def tiny(x):\n"
	"    return x + 1\n"
	"def fib(n):\n"
	"    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
	"s = 0\n"
	"for i in range(300000):\n"
	"    s = tiny(s)\n"
	"fib(22)\n";

int main(int argc, char **argv)
{
	void (*init)(int);
	int (*run)(const char *);
	int (*fin)(void);
	void *lib;

	if (argc != 3) {
		fprintf(stderr, "usage: py_embed LIBPYTHON HANDLERS(0|1)\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "py_embed: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(lib, "Py_InitializeEx");
	*(void **)&run = dlsym(lib, "PyRun_SimpleString");
	*(void **)&fin = dlsym(lib, "Py_FinalizeEx");
	if (!init || !run || !fin) {
		fprintf(stderr, "py_embed: %s lacks the embedding API\n", argv[1]);
		return 2;
	}
	init(atoi(argv[2]));
	if (run(script) != 0 || fin() != 0)
		return 1;
	printf("embed: done\n");
	return 0;
}
