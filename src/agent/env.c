/*
 * env.c — the agent's variables out of the program's view (docs/agent.md
 * section 12).  The launcher starts the program with LD_PRELOAD and the
 * CBN_* variables of cbn_format.h (and NVTX_INJECTION64_PATH /
 * CUDA_INJECTION64_PATH pointing at our libraries); the loader and the
 * agent's constructor need them, the program must not see them:
 *
 *   - env_capture (the constructor, first): every CBN_* variable, LD_PRELOAD
 *     and the injection variables are copied into the agent's own store,
 *     where every file of the agent (and the CUDA, memory and MPI layers,
 *     through cbn_agent_getenv) reads its configuration from then on;
 *   - env_scrub (the constructor, last): the launcher's variables leave
 *     environ, and their bytes in the process's initial environment block
 *     (what /proc/self/environ shows) are cleared; LD_PRELOAD keeps only the
 *     user's own part.  Only the strings are cleared in place, never moved:
 *     the loader keeps pointers into that block (LD_LIBRARY_PATH); and the
 *     array keeps its length, its NULL before the auxiliary vector;
 *   - every way the program starts another program gets them back
 *     (env_for_child), so the agent follows it: the exec family, posix_spawn
 *     and posix_spawnp (exec.c), system and popen (shell.c: glibc's own
 *     spawn with the environ they find inside libc);
 *   - getenv and secure_getenv still answer NVTX_INJECTION64_PATH and
 *     CUDA_INJECTION64_PATH with our libraries when the program's environ
 *     has no such variable: NVTX and the CUDA driver look them up when they
 *     load, long after start.
 *
 * Normal context only.  No allocation: the store is static, an environment
 * for a child is built on the caller's stack.  The bottom of the agent's
 * floor: it calls no other file of the agent (floor.c reads its store).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "env.h"

#define ENV_MAX 64                       /* variables kept */
#define ENV_BUF 32768                    /* their NAME=VALUE strings */
#define ENV_AGENT_LIB "libcbottleneck"   /* our libraries' names start so */

static struct {
	const char *str;                 /* "NAME=VALUE" in env.buf */
	size_t name_len;
	int ours;                        /* the launcher's: out of the program's view */
} env_tab[ENV_MAX];
static int env_n;
static struct {
	char buf[ENV_BUF];
	size_t used;
	char preload_ours[4096];         /* our part of LD_PRELOAD, "" when none */
	char seq[64];                    /* "CBN_EXEC_SEQ=pid:seq" for an exec */
	int scrubbed;
} env;

/* The launcher's variables (cbn_format.h): they go out of the program's
 * view.  The user's own CBN_* knobs (CBN_PERF_EVENTS, CBN_KERNEL_STACKS,
 * CBN_CTL...) are in the environment without us too: they stay. */
static const char *const env_launcher[] = {
	CBN_ENV_SESSION, CBN_ENV_FREQ, CBN_ENV_DEPTH, CBN_ENV_FILE_MB, CBN_ENV_EXEC_SEQ,
	CBN_ENV_QUIET, CBN_ENV_CUDA, CBN_ENV_SIGNAL, CBN_ENV_MEMORY, CBN_ENV_MEMORY_RATE,
	CBN_ENV_SCHEDULE, CBN_ENV_DELAY, CBN_ENV_DURATION, CBN_ENV_CAPTURE_RANGE,
	CBN_ENV_TOGGLE_SIGNAL, CBN_ENV_STEP, CBN_ENV_RING, CBN_ENV_OFFCPU, CBN_ENV_PYTHON,
	CBN_ENV_PYCALLS,
	CBN_ENV_SANDBOXED,
};

static const char *const env_injection[] = {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"};

static size_t env_name_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

static int env_is(const char *s, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(s, name, n) && s[n] == '=';
}

/* A path of one of our libraries. */
static int env_agent_lib(const char *path, size_t len)
{
	const char *b = path + len;

	while (b > path && b[-1] != '/')
		b--;
	return (size_t)(path + len - b) > strlen(ENV_AGENT_LIB) &&
	       !strncmp(b, ENV_AGENT_LIB, strlen(ENV_AGENT_LIB));
}

static void env_keep(const char *s, int ours)
{
	size_t n = strlen(s) + 1;

	if (env_n == ENV_MAX || env.used + n > sizeof(env.buf))
		return;
	memcpy(env.buf + env.used, s, n);
	env_tab[env_n].str = env.buf + env.used;
	env_tab[env_n].name_len = env_name_len(s);
	env_tab[env_n].ours = ours;
	env.used += n;
	env_n++;
}

static int env_launchers(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(env_launcher) / sizeof(env_launcher[0]); i++)
		if (env_is(s, env_launcher[i]))
			return 1;
	return 0;
}

/* An injection variable naming one of our libraries (the launcher set it;
 * the user's own stays theirs). */
static int env_our_injection(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(env_injection) / sizeof(env_injection[0]); i++)
		if (env_is(s, env_injection[i])) {
			const char *v = strchr(s, '=') + 1;

			return env_agent_lib(v, strlen(v));
		}
	return 0;
}

/* Our part of LD_PRELOAD ("a:b" of our libraries, in their order). */
static void env_preload_split(const char *v)
{
	size_t used = 0, len;

	while (*v) {
		len = strcspn(v, ": ");
		if (len && env_agent_lib(v, len) && used + len + 2 < sizeof(env.preload_ours)) {
			if (used)
				env.preload_ours[used++] = ':';
			memcpy(env.preload_ours + used, v, len);
			used += len;
		}
		v += len;
		v += strspn(v, ": ");
	}
	env.preload_ours[used] = '\0';
}

void env_capture(void)
{
	char **e;

	if (env_n)
		return;
	for (e = environ; e && *e; e++) {
		if (!strncmp(*e, "CBN_", 4))
			env_keep(*e, env_launchers(*e));
		else if (env_our_injection(*e))
			env_keep(*e, 1);
		else if (env_is(*e, "LD_PRELOAD"))
			env_preload_split(*e + strlen("LD_PRELOAD="));
	}
}

const char *agent_getenv(const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < env_n; i++)
		if (env_tab[i].name_len == n && !strncmp(env_tab[i].str, name, n))
			return env_tab[i].str + n + 1;
	return NULL;
}

/* The layers (libcbottleneck_cuda.so, _mem, _mpi) read their settings here:
 * the environment no longer has them once the agent has started. */
__attribute__((visibility("default"))) const char *cbn_agent_getenv(const char *name)
{
	const char *v = agent_getenv(name);

	return v ? v : getenv(name);
}

/* The next exec's image is this one's successor (agent.c's exec counter). */
void env_set_seq(uint32_t pid, uint32_t seq)
{
	snprintf(env.seq, sizeof(env.seq), "%s=%u:%u", CBN_ENV_EXEC_SEQ, pid, seq);
}

/* LD_PRELOAD's value without our libraries, written over the old one in
 * place (NUL-padded); 0 when nothing of the user's is left. */
static int env_preload_user(char *s)
{
	char *v = strchr(s, '=') + 1, *out = v;
	const char *p = v;
	size_t len, end = strlen(v);

	while (*p) {
		len = strcspn(p, ": ");
		if (len && !env_agent_lib(p, len)) {
			if (out != v)
				*out++ = ':';
			memmove(out, p, len);
			out += len;
		}
		p += len;
		p += strspn(p, ": ");
	}
	memset(out, 0, (size_t)(v + end - out));
	return out != v;
}

/*
 * Our variables out of environ.  The kept entries move to the array's end,
 * its NULL where it was, and environ starts at the first of them: the
 * initial array sits right before the auxiliary vector, and a runtime that
 * finds that vector by walking past the environment's NULL (Go's, in a cgo
 * program: "failed to get system page size") must find it where the kernel
 * put it.  The slots left before environ point at a cleared string (""), as
 * the environment a later constructor was handed now reads: Go's runtime
 * and os.Environ() pass empty entries over.
 */
void env_scrub(void)
{
	char **e, **keep, *cleared = NULL;
	size_t n = 0;

	if (env.scrubbed || !environ)
		return;
	env.scrubbed = 1;
	while (environ[n])
		n++;
	for (e = keep = environ + n; e > environ;) {
		char *s = *--e;

		if ((!strncmp(s, "CBN_", 4) && env_launchers(s)) || env_our_injection(s) ||
		    (env_is(s, "LD_PRELOAD") && !env_preload_user(s))) {
			memset(s, 0, strlen(s)); /* out of /proc/self/environ too */
			cleared = s;
			continue;
		}
		*--keep = s;
	}
	for (e = environ; e < keep; e++)
		*e = cleared;
	environ = keep;
}

/* How many entries env_for_child may write (its out array's size). */
int env_child_size(char *const envp[])
{
	int n = 0;

	while (envp && envp[n])
		n++;
	return n + env_n + 4;
}

/*
 * The environment a child of ours gets (out: env_child_size entries;
 * preload: a buffer for the merged LD_PRELOAD): envp, less any variable of
 * ours it has, plus our variables again, LD_PRELOAD with our libraries first,
 * the exec counter, and CBN_SANDBOXED=1 when sandboxed.  Without an agent
 * session (inert) envp itself.
 */
char *const *env_for_child(char *const envp[], char **out, char *preload, size_t cap,
			   int sandboxed)
{
	static const char sandbox_var[] = CBN_ENV_SANDBOXED "=1";
	const char *user_preload = NULL;
	int i, k = 0;

	if (!env.scrubbed || !agent_getenv(CBN_ENV_SESSION))
		return envp;
	for (i = 0; envp && envp[i]; i++) {
		int j, ours = 0;

		if (env_is(envp[i], "LD_PRELOAD")) {
			user_preload = envp[i] + strlen("LD_PRELOAD=");
			continue;
		}
		for (j = 0; j < env_n && !ours; j++)
			ours = env_tab[j].ours && !strncmp(envp[i], env_tab[j].str,
							   env_tab[j].name_len + 1);
		if (!ours && !env_is(envp[i], CBN_ENV_EXEC_SEQ))
			out[k++] = envp[i];
	}
	for (i = 0; i < env_n; i++)
		if (env_tab[i].ours && !env_is(env_tab[i].str, CBN_ENV_EXEC_SEQ) &&
		    !env_is(env_tab[i].str, CBN_ENV_SANDBOXED))
			out[k++] = (char *)env_tab[i].str;
	if (env.preload_ours[0] || (user_preload && *user_preload)) {
		snprintf(preload, cap, "LD_PRELOAD=%s%s%s", env.preload_ours,
			 env.preload_ours[0] && user_preload && *user_preload ? ":" : "",
			 user_preload ? user_preload : "");
		out[k++] = preload;
	}
	if (env.seq[0])
		out[k++] = env.seq;
	if (sandboxed)
		out[k++] = (char *)sandbox_var;
	out[k] = NULL;
	return out;
}

/* --- getenv: the injection variables NVTX and the CUDA driver look up ----- */

__attribute__((visibility("default"))) char *getenv(const char *name)
{
	size_t n = strlen(name);
	size_t i;
	char **e;

	for (e = environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	if (!env.scrubbed)
		return NULL;
	for (i = 0; i < sizeof(env_injection) / sizeof(env_injection[0]); i++)
		if (!strcmp(name, env_injection[i]))
			return (char *)agent_getenv(name);
	return NULL;
}

__attribute__((visibility("default"))) char *secure_getenv(const char *name)
{
	return getauxval(AT_SECURE) ? NULL : getenv(name);
}
