/* sha256.h: SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the
 * remote driver's challenge (docs/remote.md). No library of the project's
 * dependencies has them, so this small implementation carries them; its
 * test checks the FIPS and RFC 4231 vectors. */
#ifndef RIG_REMOTE_SHA256_H
#define RIG_REMOTE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define RIG_SHA256_BYTES 32u

/* out = SHA-256(data[0..n)). Thread-safe; allocates nothing. */
void rig_remote_sha256(const void *data, size_t n, uint8_t out[RIG_SHA256_BYTES]);
/* out = HMAC-SHA256(key, msg). Thread-safe; allocates nothing. */
void rig_remote_hmac(const void *key, size_t key_n, const void *msg, size_t msg_n,
                     uint8_t out[RIG_SHA256_BYTES]);
/* Whether a and b hold the same n bytes, in time that depends on n alone,
 * so that a peer learns nothing from how long a refusal takes. */
int rig_remote_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
