/* GNU build-ids as text: the hex of a note, and the path a distribution
 * links a debug file (or its object) under, as gdb and debuginfod look them
 * up.  Both programs name files by build-id, so both use these. */
#ifndef MT_SHARED_BUILD_ID_H
#define MT_SHARED_BUILD_ID_H

#include <stddef.h>
#include <stdint.h>

/* The lower-case hex of id[0..len) in out, NUL-terminated; stops early
 * (whole bytes only) when out is too small.  The characters written. */
size_t build_id_hex(char *out, size_t outlen, const uint8_t *id, size_t len);

/* "/usr/lib/debug/.build-id/NN/REST" followed by suffix (".debug" for the
 * debug file, "" for the object); len must be at least 2.  The length
 * snprintf would give: at least outlen means the path did not fit. */
size_t build_id_link_path(char *out, size_t outlen, const uint8_t *id, size_t len,
                          const char *suffix);

#endif
