/*
 * nvtx.c — NVTX injection (NVTX_INJECTION64_PATH points at this library):
 * filled in when the nvtx3 headers are available at build time.
 */
#include "agent.h"
