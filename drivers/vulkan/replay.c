/* SPDX-License-Identifier: MIT */
/* replay.c: recorded once, submitted again (README, "Recorded once"):
 * the command buffers of the last RVK_CACHED_CBS works recorded, keyed by
 * what record.c reads of each part, and submitted again when the same
 * work comes back and its last run is done; and the open's spare command
 * buffers. Every function here runs with the open's qlock held. */
#include <stdlib.h>
#include <string.h>

#include "vulkan_private.h"

static int get_cb(rvk_dev *v, VkCommandBuffer *out, rig_edge_error *err) {
  if (v->nspare) {
    *out = v->spare[--v->nspare];
    return RIG_EDGE_OK;
  }
  VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = v->pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  VkResult r = vkAllocateCommandBuffers(v->dev, &ai, out);
  return r == VK_SUCCESS ? RIG_EDGE_OK : rvk_fail(err, r, "vkAllocateCommandBuffers", v->name);
}

/* Keeps cb for later work; without memory for it, frees it. */
bool rvk_put_spare(rvk_dev *v, VkCommandBuffer cb) {
  if (v->nspare == v->capspare) {
    size_t cap = v->capspare ? 2 * v->capspare : 16;
    VkCommandBuffer *s = realloc(v->spare, cap * sizeof *s);
    if (!s) {
      vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
      return false;
    }
    v->spare = s;
    v->capspare = cap;
  }
  v->spare[v->nspare++] = cb;
  return true;
}

/* Appends n bytes to the key; false without memory. */
static bool key_add(rvk_dev *v, const void *bytes, size_t n) {
  if (v->nkey + n > v->capkey) {
    size_t cap = (v->nkey + n) * 2;
    uint8_t *k = realloc(v->key, cap);
    if (!k)
      return false;
    v->key = k;
    v->capkey = cap;
  }
  memcpy(v->key + v->nkey, bytes, n);
  v->nkey += n;
  return true;
}

/* A range as recorded: the VkBuffer and the offset in it. */
static bool key_range(rvk_dev *v, const rig_edge_range *r) {
  const rvk_mem *m = r->alloc->handle;
  uint64_t at[3] = {(uint64_t)(uintptr_t)m->buf, m->base + r->offset, r->bytes};
  return key_add(v, at, sizeof at);
}

/* The key of w into v->key: what rvk_record_cb reads of each part. False
 * without memory, and the work is not cached. */
static bool make_key(rvk_dev *v, const rig_edge_work *w) {
  bool ok = true;
  v->nkey = 0;
  for (uint32_t i = 0; i < w->nparts && ok; i++) {
    const rig_edge_part *p = &w->parts[i];
    ok = key_add(v, &p->kind, sizeof p->kind);
    if (p->kind == RIG_EDGE_PART_COPY)
      ok = ok && key_range(v, &p->u.copy.src) && key_range(v, &p->u.copy.dst);
    else if (p->kind == RIG_EDGE_PART_FILL)
      ok = ok && key_range(v, &p->u.fill.dst) &&
           key_add(v, &p->u.fill.pattern, 2 * sizeof p->u.fill.pattern);
    else if (p->kind == RIG_EDGE_PART_WORDS) /* packets name their buffers by address */
      ok = ok && key_add(v, &p->u.words.count, sizeof p->u.words.count) &&
           key_add(v, p->u.words.words, 4ull * p->u.words.count);
    else /* a launch: the function, the grid, then the parameter block */
      ok = ok && key_add(v, &p->u.launch.function, sizeof p->u.launch.function) &&
           key_add(v, &p->u.launch.params_bytes, 2 * sizeof(uint32_t) + 6 * sizeof(uint64_t)) &&
           key_add(v, p->u.launch.params, p->u.launch.params_bytes);
  }
  return ok;
}

/* Whether the run of value last is done. */
static bool done(rvk_dev *v, uint64_t last) {
  uint64_t now;
  if (last <= __atomic_load_n(&v->reached, __ATOMIC_ACQUIRE))
    return true;
  if (rvk_counter(v, &now) != VK_SUCCESS)
    return false;
  rvk_note_reached(v, now);
  return last <= now;
}

/* The entry of v->key recorded since gen, or NULL. */
static rvk_cached *cache_find(rvk_dev *v, uint64_t gen) {
  for (int i = 0; i < RVK_CACHED_CBS; i++) {
    rvk_cached *c = &v->cache[i];
    if (c->cb && c->gen == gen && c->nkey == v->nkey && memcmp(c->key, v->key, v->nkey) == 0)
      return c;
  }
  return NULL;
}

/* An entry to record new work into: an empty one, else the one whose last
 * run is oldest, once it is done; its command buffer goes back to the
 * spares. NULL where every entry's work still runs. */
static rvk_cached *cache_slot(rvk_dev *v) {
  rvk_cached *best = NULL;
  for (int i = 0; i < RVK_CACHED_CBS; i++) {
    rvk_cached *c = &v->cache[i];
    if (!c->cb)
      return c;
    if (!best || c->last < best->last)
      best = c;
  }
  if (!done(v, best->last))
    return NULL;
  rvk_put_spare(v, best->cb);
  best->cb = VK_NULL_HANDLE;
  return best;
}

/* Keeps cb in c for the work of value, under v->key. */
static bool cache_keep(rvk_dev *v, rvk_cached *c, VkCommandBuffer cb, uint64_t gen,
                       uint64_t value) {
  if (v->nkey > c->capkey) {
    uint8_t *k = realloc(c->key, v->nkey);
    if (!k)
      return false;
    c->key = k;
    c->capkey = v->nkey;
  }
  memcpy(c->key, v->key, v->nkey);
  c->nkey = v->nkey;
  c->cb = cb;
  c->gen = gen;
  c->last = value;
  return true;
}

/* The cache's command buffers go back to the spares (the stop). */
void rvk_cache_clear(rvk_dev *v) {
  for (int i = 0; i < RVK_CACHED_CBS; i++) {
    if (v->cache[i].cb)
      rvk_put_spare(v, v->cache[i].cb);
    v->cache[i].cb = VK_NULL_HANDLE;
  }
}

/* Whether w records anything (*any); a part kind the open does not run
 * refuses the work. */
static int parts_run(const rvk_dev *v, const rig_edge_work *w, bool *any, rig_edge_error *err) {
  *any = false;
  for (uint32_t i = 0; i < w->nparts; i++) {
    const rig_edge_part *p = &w->parts[i];
    if (p->kind != RIG_EDGE_PART_COPY && p->kind != RIG_EDGE_PART_FILL &&
        p->kind != RIG_EDGE_PART_WORDS && (p->kind != RIG_EDGE_PART_LAUNCH || !v->launches))
      return rig_edge_fail(err, RIG_EDGE_UNSUPPORTED, "%s: part kind %u is not run here",
                           v->name, p->kind);
    *any |= rvk_part_runs(p);
  }
  return RIG_EDGE_OK;
}

/* Work timed for a profile (profile.c): recorded anew each time, since
 * each run writes queries of its own, and run once. */
static int record_timed(rvk_dev *v, const rig_edge_work *w, const rvk_stamps *stamps,
                        rvk_held *out, rig_edge_error *err) {
  VkCommandBuffer cb;
  int r = get_cb(v, &cb, err);
  if (r == RIG_EDGE_OK && (r = rvk_record_cb(v, w, true, stamps, cb, err)) != RIG_EDGE_OK)
    rvk_put_spare(v, cb);
  if (r == RIG_EDGE_OK)
    *out = (rvk_held){w->value, cb, false, NULL};
  return r;
}

/* The work's command buffer into out: none for work of no bytes; the
 * cache's where the same work ran before and is done, as each run of a
 * submission is (no recording, as a hand-written program records once);
 * else a new one, which the cache keeps where it has room. */
int rvk_record(rvk_dev *v, const rig_edge_work *w, rvk_held *out, rig_edge_error *err) {
  bool any;
  int r = parts_run(v, w, &any, err);
  if (r != RIG_EDGE_OK)
    return r;
  *out = (rvk_held){w->value, VK_NULL_HANDLE, false, NULL};
  if (!any)
    return RIG_EDGE_OK; /* the signal alone follows every earlier submission */
  rvk_stamps stamps = {rvk_profile_pool(v), 0};
  if (rvk_profile_pairs(v, w, rvk_count_runs(w), &stamps.first))
    return record_timed(v, w, &stamps, out, err);
  /* Read before recording: memory released meanwhile is none of this
   * work's, and makes the entry stale at once. */
  uint64_t gen = __atomic_load_n(&v->gen, __ATOMIC_ACQUIRE);
  bool keyed = make_key(v, w);
  rvk_cached *c = keyed ? cache_find(v, gen) : NULL;
  if (c && done(v, c->last)) {
    c->last = w->value;
    *out = (rvk_held){w->value, c->cb, true, NULL};
    return RIG_EDGE_OK;
  }
  c = keyed && !c ? cache_slot(v) : NULL; /* the same work still runs: record it once */
  VkCommandBuffer cb;
  r = get_cb(v, &cb, err);
  if (r == RIG_EDGE_OK && (r = rvk_record_cb(v, w, !c, NULL, cb, err)) != RIG_EDGE_OK)
    rvk_put_spare(v, cb);
  if (r != RIG_EDGE_OK)
    return r;
  *out = (rvk_held){w->value, cb, c && cache_keep(v, c, cb, gen, w->value), NULL};
  return RIG_EDGE_OK;
}
