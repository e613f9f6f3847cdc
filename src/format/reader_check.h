/*
 * reader_check.h — per-record validation, inside the reader (reader_check.c).
 */
#ifndef CBN_READER_CHECK_H
#define CBN_READER_CHECK_H

#include <stdint.h>

#include "reader.h"

/*
 * Check one record's type-specific layout and fill the typed views of r.
 * Returns 0 when valid, 1 for an unknown type (skip it), -1 when invalid
 * (*why says what).  p points at the record; its size is already known to be
 * >= 8, a multiple of 8 and inside the chunk.
 */
int reader_rec_check(const unsigned char *p, uint32_t size, uint16_t chunk_kind,
		     struct reader_rec *r, const char **why);

#endif
