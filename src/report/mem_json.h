/*
 * mem_json.h — the JSON report's "memory" object (mem_json.c): the memory
 * view (analysis/mem/memory.h) of a run that recorded host or GPU memory.
 * Launcher side only.
 */
#ifndef CBN_MEM_JSON_H
#define CBN_MEM_JSON_H

struct analysis;
struct cJSON;

/* Add "memory" to root when a->memory is set; nothing otherwise.  0 or
 * -ENOMEM. */
int report_mem_json(const struct analysis *a, struct cJSON *root);

#endif
