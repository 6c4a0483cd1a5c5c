/* SPDX-License-Identifier: MIT */
/* message_fit.h: fits a message into a fixed field (rig_error.message,
 * rig_edge_error.message) without losing what it tells the user to do.
 * Shared by librig-edge (rig_edge_fail) and librig-core (rig__fail), which
 * are built and installed together; no driver sees it.
 *
 * A message too long for its field is almost always so because of the
 * absolute paths it names (a build under a CI runner's work folder, a
 * meson subproject): the sentence that follows them, the advice, was what
 * a plain cut lost. So the paths give way first: each path longer than
 * the others is cut in its middle ("/work/ci/ru...rs/memory"), keeping its
 * start and its end, until the whole fits; the text around them is kept
 * whole. Only a message whose words alone overflow the field loses its
 * end (docs/decisions.md, "Long messages"). No allocation.
 */
#ifndef RIG_EDGE_MESSAGE_FIT_H
#define RIG_EDGE_MESSAGE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* A path keeps at least this many bytes, its "..." included. */
#define RIG__FIT_PATH_MIN 24
/* The most paths one message has shortened; more are left whole. */
#define RIG__FIT_PATHS 16
/* The scratch a caller formats the whole message into first: one PATH_MAX. */
#define RIG__FIT_SCRATCH 4096

/* Whether c ends a path: a blank, a quote, a bracket, or a separator of a
 * sentence. A ':' ends one only before a blank ("path: reason"). */
static inline bool rig__fit_path_end(const char *c) {
  return !*c || strchr(" \t\n'\"()[],;", *c) || (*c == ':' && (!c[1] || c[1] == ' '));
}

/* Finds the absolute paths of s: where each starts and how long it is.
 * Returns their count (at most RIG__FIT_PATHS). */
static inline int rig__fit_paths(const char *s, size_t start[], size_t len[]) {
  int k = 0;
  for (size_t i = 0; s[i] && k < RIG__FIT_PATHS; i++) {
    bool opens = s[i] == '/' && (i == 0 || strchr(" \t'\"(=[", s[i - 1]));
    if (!opens)
      continue;
    size_t e = i;
    while (!rig__fit_path_end(s + e))
      e++;
    start[k] = i;
    len[k++] = e - i;
    i = e - 1;
  }
  return k;
}

/* The longest length L that every path may keep such that cutting each
 * path longer than L down to L saves at least excess bytes; or
 * RIG__FIT_PATH_MIN where even that saves too little. */
static inline size_t rig__fit_level(const size_t len[], int k, size_t excess) {
  size_t top = 0;
  for (int j = 0; j < k; j++)
    top = len[j] > top ? len[j] : top;
  for (size_t level = top; level > RIG__FIT_PATH_MIN; level--) {
    size_t saved = 0;
    for (int j = 0; j < k; j++)
      saved += len[j] > level ? len[j] - level : 0;
    if (saved >= excess)
      return level;
  }
  return RIG__FIT_PATH_MIN;
}

/* Appends at most n - *at - 1 bytes of s[0..len) to out. */
static inline void rig__fit_put(char *out, size_t n, size_t *at, const char *s, size_t len) {
  size_t room = n - 1 - *at;
  len = len < room ? len : room;
  memcpy(out + *at, s, len);
  *at += len;
}

/* Writes full into out (n bytes, n > RIG__FIT_PATH_MIN), its paths cut in
 * their middles as far as needed for the whole to fit; what still does not
 * fit is cut at the end. Always NUL-terminates out. full and out must not
 * overlap. */
static inline void rig__message_fit(char *out, size_t n, const char *full) {
  size_t total = strlen(full), start[RIG__FIT_PATHS], len[RIG__FIT_PATHS], at = 0, from = 0;
  int k = total < n ? 0 : rig__fit_paths(full, start, len);
  size_t level = k ? rig__fit_level(len, k, total - (n - 1)) : 0;
  for (int j = 0; j < k; j++) {
    if (len[j] <= level)
      continue;
    size_t head = (level - 3) / 2, tail = level - 3 - head;
    rig__fit_put(out, n, &at, full + from, start[j] + head - from);
    rig__fit_put(out, n, &at, "...", 3);
    from = start[j] + len[j] - tail;
  }
  rig__fit_put(out, n, &at, full + from, total - from);
  out[at] = 0;
}

#endif
