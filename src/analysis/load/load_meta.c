/*
 * load_meta.c — session.json: the launcher's own record of a run, written once
 * the target has ended (before the files are read) and read back by
 * prof_load(), so `cbottleneck report DIR` reproduces the report of the run.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "load_int.h"
#include "load_meta.h"

#define META_NAME "session.json"
#define META_MAX (4u << 20)

int session_meta_write(const char *session_dir, const struct session_meta *m)
{
	char path[4096], tmp[4096];
	cJSON *root = cJSON_CreateObject(), *argv;
	char *text = NULL;
	FILE *f = NULL;
	int ret = 0;
	size_t i;

	if (!root)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/%s", session_dir, META_NAME);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", session_dir, META_NAME);
	cJSON_AddNumberToObject(root, "cbottleneck_session", 1);
	argv = cJSON_AddArrayToObject(root, "argv");
	for (i = 0; m->argv && m->argv[i]; i++)
		cJSON_AddItemToArray(argv, cJSON_CreateString(m->argv[i]));
	cJSON_AddNumberToObject(root, "exit_status", m->exit_status);
	cJSON_AddNumberToObject(root, "exit_signal", m->exit_signal);
	cJSON_AddNumberToObject(root, "start_mono_ns", (double)m->start_mono_ns);
	cJSON_AddNumberToObject(root, "end_mono_ns", (double)m->end_mono_ns);
	cJSON_AddNumberToObject(root, "wall_ns", (double)(m->end_mono_ns > m->start_mono_ns ?
							  m->end_mono_ns - m->start_mono_ns : 0));
	cJSON_AddNumberToObject(root, "frequency_hz", m->frequency_hz);
	if (m->user_ns || m->sys_ns) {
		cJSON_AddNumberToObject(root, "user_ns", (double)m->user_ns);
		cJSON_AddNumberToObject(root, "sys_ns", (double)m->sys_ns);
	}
	if (m->launcher_ns)
		cJSON_AddNumberToObject(root, "launcher_cpu_ns", (double)m->launcher_ns);
	if (m->attached_pid)
		cJSON_AddNumberToObject(root, "attached_pid", m->attached_pid);
	if (m->nrunning) {
		cJSON *r = cJSON_AddArrayToObject(root, "running_at_end");

		for (i = 0; r && i < m->nrunning; i++)
			cJSON_AddItemToArray(r, cJSON_CreateNumber(m->running[i]));
	}
	if (m->env.kernel[0]) {
		cJSON *e = cJSON_AddObjectToObject(root, "environment"), *l;

		cJSON_AddStringToObject(e, "kernel", m->env.kernel);
		cJSON_AddStringToObject(e, "cpu_model", m->env.cpu_model);
		cJSON_AddNumberToObject(e, "cpus", m->env.cpus);
		cJSON_AddStringToObject(e, "governor", m->env.governor);
		l = cJSON_AddArrayToObject(e, "load");
		for (i = 0; l && i < 3; i++)
			cJSON_AddItemToArray(l, cJSON_CreateNumber(m->env.load[i]));
		cJSON_AddStringToObject(e, "libc", m->env.libc);
		cJSON_AddStringToObject(e, "libunwind", m->env.libunwind);
		cJSON_AddStringToObject(e, "elfutils", m->env.elfutils);
	}
	text = cJSON_Print(root);
	if (!text) {
		ret = -ENOMEM;
		goto out;
	}
	f = fopen(tmp, "w");
	if (!f) {
		ret = -errno;
		goto out;
	}
	if (fputs(text, f) < 0 || fputc('\n', f) < 0) {
		ret = -EIO;
		goto out;
	}
	if (fclose(f) != 0) {
		f = NULL;
		ret = -errno;
		goto out;
	}
	f = NULL;
	if (rename(tmp, path) < 0)
		ret = -errno;
out:
	if (f)
		fclose(f);
	if (ret < 0)
		unlink(tmp);
	free(text);
	cJSON_Delete(root);
	return ret;
}

/* A number in [lo, hi], else dflt: casting an out-of-range double is undefined. */
static double num(const cJSON *o, const char *key, double dflt, double lo, double hi)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi))
		return dflt;
	return v->valuedouble;
}

static const char *str(struct load *L, const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v) || !v->valuestring)
		return "";
	return load_strndup(L, v->valuestring, strnlen(v->valuestring, 512));
}

/* session.json's "environment" into the profile. */
static void env_read(struct load *L, const cJSON *e)
{
	struct prof_env *pe = &L->p->env;
	const cJSON *l, *x;
	int i = 0;

	if (!cJSON_IsObject(e))
		return;
	pe->found = 1;
	pe->kernel = str(L, e, "kernel");
	pe->cpu_model = str(L, e, "cpu_model");
	pe->cpus = (int)num(e, "cpus", 0, 0, 1e6);
	pe->governor = str(L, e, "governor");
	pe->libc = str(L, e, "libc");
	pe->libunwind = str(L, e, "libunwind");
	pe->elfutils = str(L, e, "elfutils");
	pe->load[0] = pe->load[1] = pe->load[2] = -1;
	l = cJSON_GetObjectItemCaseSensitive(e, "load");
	cJSON_ArrayForEach(x, l)
	{
		if (i < 3 && cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble < 1e6)
			pe->load[i] = x->valuedouble;
		i++;
	}
}

void load_meta_read(struct load *L, const char *dir, struct load_meta *m)
{
	char path[4096];
	char *text = NULL;
	cJSON *root = NULL;
	const cJSON *argv, *a;
	FILE *f;
	long len;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%s/%s", dir, META_NAME);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || len > (long)META_MAX ||
	    fseek(f, 0, SEEK_SET) < 0)
		goto bad;
	text = load_realloc(L, NULL, (size_t)len + 1);
	if (!text)
		goto out;
	if (fread(text, 1, (size_t)len, f) != (size_t)len)
		goto bad;
	text[len] = '\0';
	root = cJSON_Parse(text);
	if (!cJSON_IsObject(root))
		goto bad;
	m->found = 1;
	m->exit_status = (int)num(root, "exit_status", -1, -1, 255);
	m->exit_signal = (int)num(root, "exit_signal", 0, 0, 128);
	m->start_mono_ns = (uint64_t)num(root, "start_mono_ns", 0, 0, 1.8e19);
	m->end_mono_ns = (uint64_t)num(root, "end_mono_ns", 0, 0, 1.8e19);
	m->frequency_hz = num(root, "frequency_hz", 0, 0, 1e9);
	m->user_ns = (uint64_t)num(root, "user_ns", 0, 0, 1.8e19);
	m->sys_ns = (uint64_t)num(root, "sys_ns", 0, 0, 1.8e19);
	m->launcher_ns = (uint64_t)num(root, "launcher_cpu_ns", 0, 0, 1.8e19);
	m->attached_pid = (uint32_t)num(root, "attached_pid", 0, 0, 4194304);
	env_read(L, cJSON_GetObjectItemCaseSensitive(root, "environment"));
	a = cJSON_GetObjectItemCaseSensitive(root, "running_at_end");
	if (cJSON_IsArray(a)) {
		const cJSON *r;

		cJSON_ArrayForEach(r, a)
		{
			if (!cJSON_IsNumber(r) || r->valuedouble < 1 || r->valuedouble > 4194304)
				continue;
			if (m->nrunning < sizeof(m->running) / sizeof(m->running[0]))
				m->running[m->nrunning] = (uint32_t)r->valuedouble;
			m->nrunning++;
		}
	}
	argv = cJSON_GetObjectItemCaseSensitive(root, "argv");
	if (cJSON_IsArray(argv)) {
		size_t n = 0, cap = 0;
		char **slot;

		cJSON_ArrayForEach(a, argv)
		{
			char *copy;

			if (!cJSON_IsString(a))
				continue;
			copy = load_strndup(L, a->valuestring, strlen(a->valuestring));
			if (!copy || !(slot = LOAD_PUSH(L, L->p->argv, n, cap)))
				goto out;
			*slot = copy;
		}
		if ((slot = LOAD_PUSH(L, L->p->argv, n, cap)))
			*slot = NULL;
	}
	goto out;
bad:
	load_warn(L, "%s is unreadable; run details (command, exit status) come from the "
		     "session files", path);
out:
	cJSON_Delete(root);
	free(text);
	fclose(f);
}

/* --- the agents' notes (CBN_NOTES_FILE) ------------------------------------ */

#define NOTES_MAX (1u << 20)
#define NOTES_PIDS 4           /* pids named in a folded line */

struct note {
	const char *text;
	unsigned count;
	unsigned pid[NOTES_PIDS];
};

/* One line "pid N\tTEXT" (NUL-terminated, without its newline) into the
 * list, folded with the lines of the same text. */
static void note_add(struct load *L, struct note **v, size_t *n, size_t *cap, char *line)
{
	char *tab = strchr(line, '\t'), *end;
	unsigned long pid;
	size_t i;

	if (strncmp(line, "pid ", 4) != 0 || !tab || !tab[1])
		return;
	pid = strtoul(line + 4, &end, 10);
	if (end != tab || pid == 0 || pid > 0xffffffffu)
		return;
	for (i = 0; i < *n; i++)
		if (strcmp((*v)[i].text, tab + 1) == 0)
			break;
	if (i == *n) {
		struct note *x = LOAD_PUSH(L, *v, *n, *cap);

		if (!x)
			return;
		memset(x, 0, sizeof(*x));
		x->text = tab + 1;
	}
	if ((*v)[i].count < NOTES_PIDS)
		(*v)[i].pid[(*v)[i].count] = (unsigned)pid;
	(*v)[i].count++;
}

/* DIR/SUB/notes appended to the text buffer (*len bytes used, NOTES_MAX at
 * most in all). */
static void notes_file(const char *dir, const char *sub, char *text, size_t *len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s%s/%s", dir, *sub ? "/" : "", sub, CBN_NOTES_FILE);
	f = fopen(path, "r");
	if (!f)
		return;
	*len += fread(text + *len, 1, NOTES_MAX - *len, f);
	fclose(f);
}

void load_notes_read(struct load *L, const char *dir)
{
	char pids[96];
	struct note *v = NULL;
	size_t n = 0, cap = 0, i, len = 0;
	char *text, *line, *nl;
	struct dirent *e;
	DIR *d;

	text = load_realloc(L, NULL, NOTES_MAX + 1);
	if (!text)
		return;
	notes_file(dir, "", text, &len);
	/* rank mode: each rank's launcher had DIR/rank-NNNNN as its session */
	d = opendir(dir);
	while (d && (e = readdir(d)) != NULL)
		if (strncmp(e->d_name, "rank-", 5) == 0)
			notes_file(dir, e->d_name, text, &len);
	if (d)
		closedir(d);
	text[len] = '\0';
	for (line = text; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		if (!nl)
			break; /* a line cut short: an agent killed while writing it */
		*nl = '\0';
		note_add(L, &v, &n, &cap, line);
	}
	for (i = 0; i < n; i++) {
		size_t off = 0, k;

		for (k = 0; k < v[i].count && k < NOTES_PIDS; k++)
			off += (size_t)snprintf(pids + off, sizeof(pids) - off, "%s%u",
						k ? ", " : "", v[i].pid[k]);
		if (v[i].count > NOTES_PIDS)
			snprintf(pids + off, sizeof(pids) - off, ", ...");
		if (v[i].count == 1)
			load_warn(L, "pid %s: %s", pids, v[i].text);
		else
			load_warn(L, "%u processes (pids %s): %s", v[i].count, pids, v[i].text);
	}
	free(v);
	free(text);
}
