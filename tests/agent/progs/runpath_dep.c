/* runpath_dep.c — librunpath_dep.so, found only via dlopen_runpath's RUNPATH. */
int runpath_dep_value(void)
{
	return 42;
}
