/*
 * json_put.h — the JSON writers' one way to add a number or a string to an
 * object (json.c and the views' *_json.c): 0, or -ENOMEM when cJSON could
 * not allocate (the writers OR the results and fail once).
 */
#ifndef CBN_JSON_PUT_H
#define CBN_JSON_PUT_H

#include <cjson/cJSON.h>

/* key: v (NaN and infinities are written as null, as cJSON does). */
int json_put_num(cJSON *o, const char *key, double v);
/* key: v, or 0 when v is not finite (the views whose figures are sums and
 * ratios that may divide by zero: memory, steps, waiting). */
int json_put_fnum(cJSON *o, const char *key, double v);
/* key: v, or "" when v is NULL. */
int json_put_str(cJSON *o, const char *key, const char *v);

#endif
