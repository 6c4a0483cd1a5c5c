/* rig_ml_pace.c: how a buffer's bytes pace the OCaml collector (the
 * reference's Reclamation section).
 *
 * caml_alloc_custom_mem paces by the major heap alone: in a program with
 * a small heap, each 64 KiB buffer was a fifth of a major cycle's work, so
 * that a Buffer.create from the cache cost microseconds of marking. rig's
 * rule is a bound of its own:
 *   - custom_major_ratio / 150 of the major heap and the bytes live in the
 *     budget the buffer counts in, or half the host's last-level cache if
 *     that is more, and at least 4 MiB;
 *   - or sooner, for a device with a budget, at that share of its room
 *     (budget less allocated), at least a page, so that a device nearing
 *     its budget collects in time; for a buffer of at most
 *     custom_minor_max_size bytes, at least the minor heap's bytes.
 * A buffer starts in the minor heap unless it holds more than
 * custom_minor_max_size bytes and is as large as the bound (or that
 * parameter is 0). Its bytes bring a minor collection once the young
 * buffers' reach the bound, and count against the major bound once
 * promoted; one larger than custom_minor_max_size counts an eighth of its
 * bytes at birth as well, so buffers that die young still bring a cycle
 * per eight bounds of them.
 * Not done: the reference's bound also counts the buffers live at the last
 * cycle. Neither runtime says which were; rig's allocated bytes hold the
 * dropped buffers too until the collector finalises them, so counting
 * those made the bound grow with the garbage (to 250 MiB in bench/). */
#include <stdatomic.h>

#include <caml/version.h>

#include "rig_ml.h"

/* The runtime's parameters (Gc.control's custom_major_ratio and
 * custom_minor_max_size), read at each allocation since Gc.set may change
 * them. Both runtimes export them; 4.13's headers do not declare them. */
extern uintnat caml_custom_major_ratio;
extern uintnat caml_custom_minor_max_bsz;

#define PACE_FLOOR (4u << 20)
#define PACE_PAGE 4096u

/* custom_major_ratio / 150 of the major heap's bytes. */
static uintnat heap_share(void) {
#if OCAML_VERSION_MAJOR >= 5
  return caml_custom_get_max_major();
#else
  return Bsize_wsize(Caml_state_field(stat_heap_wsz)) / 150 * caml_custom_major_ratio;
#endif
}

/* Half the host's last-level cache, a fact set at start: domains that
 * race to read it first store the same value. */
static uintnat half_cache(void) {
  static _Atomic uintnat half = 1; /* 1: not read yet */
  uintnat h = atomic_load_explicit(&half, memory_order_relaxed);
  if (h == 1) {
    uint64_t n = 0;
    h = rig_device_cache_bytes(rig_device_host(), &n) ? (uintnat)(n / 2) : 0;
    atomic_store_explicit(&half, h, memory_order_relaxed);
  }
  return h;
}

/* The bound, in bytes, for mem bytes counted in the budget of acct. A
 * budget's room is what it has left: the garbage not yet collected holds
 * some, so the nearer the budget the sooner the next collection. */
static uintnat pace_bound(const rig_device *acct, uintnat mem) {
  uint64_t held = rig_device_allocated(acct), budget = rig_device_budget(acct);
  uintnat ratio = caml_custom_major_ratio;
  uintnat bound = heap_share();
  uintnat half = half_cache();
  if (bound < half)
    bound = half;
  if (bound < PACE_FLOOR)
    bound = PACE_FLOOR;
  if (budget < (uint64_t)INT64_MAX) { /* a device with a budget: its room too */
    uint64_t room = budget > held ? budget - held : 0;
    uintnat by_room = (uintnat)(room / 150 * ratio);
    uintnat floor = PACE_PAGE;
    if (mem <= caml_custom_minor_max_bsz)
      floor = (uintnat)Bsize_wsize(Caml_state_field(minor_heap_wsz));
    if (by_room < floor)
      by_room = floor;
    if (by_room < bound)
      bound = by_room;
  }
  return bound;
}

/* A buffer in the major heap from the start: as caml_alloc_custom does
 * for a block too large for the minor heap. */
static value alloc_major(struct custom_operations *ops, uintnat mem, uintnat bound) {
  value v = caml_alloc_shr(1 + Wsize_bsize(sizeof(rig_buffer *)), Custom_tag);
  Custom_ops_val(v) = ops;
  caml_adjust_gc_speed(mem, bound);
  return caml_check_urgent_gc(v);
}

value rig_ml_alloc_paced(struct custom_operations *ops, rig_buffer *b) {
  uintnat mem = (uintnat)(rig_buffer_length(b) + RIG_WORD - 1) / RIG_WORD * RIG_WORD;
  if (mem == 0)
    return caml_alloc_custom(ops, sizeof b, 0, 1);
  const rig_device *acct =
      rig_buffer_kind(b) == RIG_KIND_PINNED ? rig_device_host() : rig_buffer_device(b);
  uintnat bound = pace_bound(acct, mem), small = caml_custom_minor_max_bsz;
  if (small == 0 || (mem > small && mem >= bound))
    return alloc_major(ops, mem, bound);
  /* caml_alloc_custom keeps a block young only up to custom_minor_max_size
   * bytes (OCaml 5): it is told min(mem, that) against a bound scaled
   * alike, the same share of a cycle, which is all the collector reads. */
  uintnat young = mem < small ? mem : small;
  uintnat scaled = (uintnat)((double)bound * (double)young / (double)mem);
  value v = caml_alloc_custom(ops, sizeof b, young, scaled ? scaled : 1);
  if (mem > small)
    caml_adjust_gc_speed(mem / 8, bound); /* requests a slice; collects nothing here */
  return v;
}
