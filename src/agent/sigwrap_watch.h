/*
 * sigwrap_watch.h — the signal APIs the agent only watches (sigwrap_watch.c:
 * waits for the sampling signal, SIGIO requests).
 */
#ifndef CBN_AGENT_SIGWRAP_WATCH_H
#define CBN_AGENT_SIGWRAP_WATCH_H

#include "agent.h"

/* SIGNAL-SAFE.  The program asked for SIGIO of its own (O_ASYNC, F_SETSIG). */
int sigwrap_app_async(void) AGENT_HIDDEN;

#endif
