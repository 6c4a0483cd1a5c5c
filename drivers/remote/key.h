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

#endif
