/*
 * sym_pkg.c — which Debian package installed a file, from dpkg's file lists
 * (/var/lib/dpkg/info/PKG[:ARCH].list): what a user installs to get a
 * module's debug info (PKG-dbgsym, from the debug archive).  One pass over
 * the lists for every file asked about.  Launcher side only.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"

#define SYM_DPKG_INFO "/var/lib/dpkg/info"

/* A path as the lists and the loader may both write it: usrmerge makes /lib
 * and /usr/lib (/bin, /sbin) the same directory, and the lists keep
 * whichever the package shipped. */
static const char *unmerged(const char *path)
{
	if (!strncmp(path, "/usr/lib/", 9) || !strncmp(path, "/usr/bin/", 9) ||
	    !strncmp(path, "/usr/sbin/", 10) || !strncmp(path, "/usr/lib64/", 11) ||
	    !strncmp(path, "/usr/lib32/", 11))
		return path + 4;
	return path;
}

int sym_packages_of(const char *const *paths, size_t n, char **pkgs)
{
	const char *dir = getenv("CBN_DPKG_INFO_DIR");
	struct dirent *de;
	size_t i, left = 0;
	char line[4096];
	DIR *d;

	for (i = 0; i < n; i++) {
		pkgs[i] = NULL;
		left += paths[i] && *paths[i] == '/';
	}
	if (!left || !(d = opendir(dir && *dir ? dir : SYM_DPKG_INFO)))
		return 0; /* not a Debian system: no names, not an error */
	while (left && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[4096];
		FILE *f;

		if (len < 6 || strcmp(de->d_name + len - 5, ".list"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : SYM_DPKG_INFO,
			 de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (left && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			for (i = 0; i < n; i++) {
				char *pkg;
				size_t pl;

				if (pkgs[i] || !paths[i] || *paths[i] != '/' ||
				    strcmp(unmerged(paths[i]), unmerged(line)))
					continue;
				/* "liblzma5:amd64.list" -> "liblzma5" */
				pl = strcspn(de->d_name, ":");
				if (pl > len - 5)
					pl = len - 5;
				if (!(pkg = strndup(de->d_name, pl))) {
					fclose(f);
					closedir(d);
					return -ENOMEM;
				}
				pkgs[i] = pkg;
				left--;
			}
		}
		fclose(f);
	}
	closedir(d);
	return 0;
}
