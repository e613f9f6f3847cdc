/*
 * env.c — the environment summary the report opens with, collected by the
 * launcher just before it runs the program: kernel, CPU model and count,
 * frequency governor, load, and the versions of libc, libunwind and elfutils
 * that recorded and read the profile.  Kept in session.json.
 */
#include <elfutils/libdwfl.h>
#include <gnu/libc-version.h>
#include <libunwind.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cli.h"
#include "load.h"

/* The first line of path, without its newline; "" when unreadable. */
static void env_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void env_cpu_model(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/cpuinfo", "re");

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) != 0 || !c)
			continue;
		for (c++; *c == ' ' || *c == '\t'; c++)
			;
		snprintf(buf, len, "%.*s", (int)strcspn(c, "\n"), c);
		break;
	}
	fclose(f);
}

void env_collect(struct session_env *e)
{
	struct utsname u;
	char line[256];

	memset(e, 0, sizeof(*e));
	if (uname(&u) == 0)
		snprintf(e->kernel, sizeof(e->kernel), "%s %s %s", u.sysname, u.release, u.machine);
	env_cpu_model(e->cpu_model, sizeof(e->cpu_model));
	e->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	env_read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", e->governor,
		      sizeof(e->governor));
	env_read_line("/proc/loadavg", line, sizeof(line));
	if (sscanf(line, "%lf %lf %lf", &e->load[0], &e->load[1], &e->load[2]) != 3)
		e->load[0] = e->load[1] = e->load[2] = -1;
	snprintf(e->libc, sizeof(e->libc), "%s", gnu_get_libc_version());
	snprintf(e->libunwind, sizeof(e->libunwind), "%d.%d.%d", UNW_VERSION_MAJOR,
		 UNW_VERSION_MINOR, UNW_VERSION_EXTRA);
	snprintf(e->elfutils, sizeof(e->elfutils), "%s", dwfl_version(NULL));
}
