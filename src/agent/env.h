/*
 * env.h — the agent's variables, out of the program's view (env.c), at the
 * bottom of the floor: it calls no other file of the agent.  capture: the
 * constructor's first step (CBN_*, our LD_PRELOAD part); scrub: its last
 * (out of environ and /proc/self/environ); agent_getenv: a captured
 * variable (NULL: none); set_seq: the exec counter a child image gets;
 * child_size and for_child: the environment a child gets (envp with our
 * variables back; out has child_size entries, preload cap bytes).  Normal
 * context only.
 */
#ifndef CBN_AGENT_ENV_H
#define CBN_AGENT_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

void env_capture(void) AGENT_HIDDEN;
void env_scrub(void) AGENT_HIDDEN;
const char *agent_getenv(const char *name) AGENT_HIDDEN;
void env_set_seq(uint32_t pid, uint32_t seq) AGENT_HIDDEN;
int env_child_size(char *const envp[]) AGENT_HIDDEN;
char *const *env_for_child(char *const envp[], char **out, char *preload, size_t cap,
			   int sandboxed) AGENT_HIDDEN;

#endif
