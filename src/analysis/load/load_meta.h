/*
 * load_meta.h — session.json, the launcher's record of a run (argv, exit
 * status, wall clock, frequency): written by session_meta_write() (load.h),
 * read back by the loader.  Launcher side only.
 */
#ifndef CBN_LOAD_META_H
#define CBN_LOAD_META_H

#include <stdint.h>

struct load;

struct load_meta {
	int found;                /* session.json was there and parsed */
	int exit_status, exit_signal;
	uint64_t start_mono_ns, end_mono_ns;
	double frequency_hz;
	uint64_t user_ns, sys_ns;
	uint64_t launcher_ns;     /* session_meta.launcher_ns */
	/* pids still running when the program ended (session_meta.running) */
	uint32_t running[64];
	size_t nrunning;          /* may exceed 64: only the first 64 are kept */
	uint32_t attached_pid;    /* session_meta.attached_pid */
};

/* Fill m (found = 0 when absent or unreadable) and L->p->argv when present. */
void load_meta_read(struct load *L, const char *dir, struct load_meta *m);
/* The agents' notes (DIR/notes, CBN_NOTES_FILE): one data-quality warning per
 * distinct text, with the count and first pids of the processes that wrote
 * it.  Absent file: nothing. */
void load_notes_read(struct load *L, const char *dir);

#endif
