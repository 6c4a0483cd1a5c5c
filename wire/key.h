/* SPDX-License-Identifier: MIT */
/* key.h: the shared secret of rig's machines (docs/remote.md,
 * "Authentication"): its file, read by the remote driver and `rig serve`
 * alike, and the proofs of holding it. */
#ifndef RIG_REMOTE_KEY_H
#define RIG_REMOTE_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIG_KEY_MAX 4096u /* bytes a key file may hold */

/* Reads the key file at path into key (RIG_KEY_MAX bytes), its length to
 * *n: 1 to RIG_KEY_MAX bytes, whatever they are. Refuses, as ssh does a
 * private key's, a file that its group or others may read or write
 * ("chmod 600 FILE"), and one that is not a regular file. Returns true,
 * or false with why ("key file PATH: ..."). Blocks on the file. */
bool rig_key_read(const char *path, uint8_t *key, size_t *n, char *why, size_t why_n);

#define RIG_KEY_PROOF 32u /* bytes of a proof: HMAC-SHA256 */

/* What each side MACs before the two nonces (docs/remote.md,
 * "Authentication"): labels of different lengths, so that no proof of one
 * side is ever a proof of the other (a reflection). */
#define RIG_KEY_SERVER_LABEL "rig serve holds the key, protocol 1"
#define RIG_KEY_CLIENT_LABEL "a rig client holds the key, protocol 1"

/* out = HMAC-SHA256(key, label || a || b) (nettle's). Allocates nothing;
 * thread-safe. */
void rig_key_mac(const uint8_t *key, size_t key_n, const char *label, const uint8_t *a, size_t a_n,
                 const uint8_t *b, size_t b_n, uint8_t out[RIG_KEY_PROOF]);
/* Whether the proofs a and b are equal, in time that does not depend on
 * where they differ (nettle's memeql_sec). */
bool rig_key_equal(const uint8_t a[RIG_KEY_PROOF], const uint8_t b[RIG_KEY_PROOF]);

#endif
