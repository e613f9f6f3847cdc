/*
 * json_put.c — see json_put.h.
 */
#include <errno.h>
#include <math.h>

#include "json_put.h"

int json_put_num(cJSON *o, const char *key, double v)
{
	return cJSON_AddNumberToObject(o, key, v) ? 0 : -ENOMEM;
}

int json_put_fnum(cJSON *o, const char *key, double v)
{
	return json_put_num(o, key, isfinite(v) ? v : 0);
}

int json_put_str(cJSON *o, const char *key, const char *v)
{
	return cJSON_AddStringToObject(o, key, v ? v : "") ? 0 : -ENOMEM;
}
