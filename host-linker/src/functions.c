/* SPDX-License-Identifier: MIT */
/* functions.c: step 5 of a load, the image's tables of names: its
 * functions (HOST-3), checked (LINK-3) and listed with their offsets, and
 * its stubs; and their lookup by rig_link_resolve and rig_link_stub. Names
 * are indexed by a hash at their first lookup, not sorted, as most images
 * are resolved by a few names or none (bench P5 loads and frees). */
#include <inttypes.h>
#include <stdlib.h>

#include "load.h"

/* The hash index of a table, built by its first lookup (as most images are
 * resolved by a few names or none: bench P5 loads and frees): open
 * addressing, slot[h & mask] holding an entry's index plus one (0 where
 * free) and its hash; a taken slot sends the search to the next. Never
 * full: it has at least twice as many slots as entries. */
typedef struct rig__link_index {
  size_t mask;
  uint32_t slot[][2];
} name_index;

static bool mapping_symbol(const rig__link_state *l, const char *n) {
  /* arm64's $x and $d mark code and data; they name no function. */
  return l->machine == EM_AARCH64 && n[0] == '$' && (n[1] == 'x' || n[1] == 'd') &&
         (n[2] == 0 || n[2] == '.');
}

/* FNV-1a: names are short, and a table lookup then costs one strcmp. */
static uint32_t name_hash(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

/* The index of t over names: of equal names, the first in resolve's order,
 * a lower rank or else an earlier symbol, holds the slot. NULL where
 * malloc refuses. */
static name_index *index_build(const rig__link_table *t, const char *names) {
  size_t slots = 4;
  while (slots < 2 * t->n)
    slots *= 2;
  name_index *x = calloc(1, sizeof *x + slots * sizeof x->slot[0]);
  if (!x)
    return NULL;
  x->mask = slots - 1;
  for (size_t k = 0; k < t->n; k++) {
    const char *name = names + t->v[k].name;
    uint32_t h = name_hash(name);
    size_t i = h & x->mask;
    for (; x->slot[i][0]; i = (i + 1) & x->mask)
      if (x->slot[i][1] == h && strcmp(names + t->v[x->slot[i][0] - 1].name, name) == 0)
        break;
    if (!x->slot[i][0] || t->v[k].rank < t->v[x->slot[i][0] - 1].rank)
      x->slot[i][0] = (uint32_t)(k + 1), x->slot[i][1] = h;
  }
  return x;
}

/* The same answer without an index: a scan. */
static const rig__link_entry *table_scan(const rig__link_table *t, const char *names,
                                         const char *name) {
  const rig__link_entry *best = NULL;
  for (size_t k = 0; k < t->n; k++)
    if (strcmp(names + t->v[k].name, name) == 0 && (!best || t->v[k].rank < best->rank))
      best = &t->v[k];
  return best;
}

/* The entry named name, or NULL. The first lookup builds the index; two at
 * once may both build it, and one copy is kept: no lookup waits. */
static const rig__link_entry *table_lookup(const rig__link_table *ct, const char *names,
                                           const char *name) {
  rig__link_table *t = (rig__link_table *)ct; /* only its index changes, once */
  name_index *x = atomic_load_explicit(&t->index, memory_order_acquire);
  if (!x) {
    name_index *none = NULL;
    if (!(x = index_build(t, names)))
      return table_scan(t, names, name);
    if (!atomic_compare_exchange_strong_explicit(&t->index, &none, x, memory_order_acq_rel,
                                                 memory_order_acquire)) {
      free(x);
      x = none;
    }
  }
  uint32_t h = name_hash(name);
  for (size_t i = h & x->mask; x->slot[i][0]; i = (i + 1) & x->mask)
    if (x->slot[i][1] == h && strcmp(names + t->v[x->slot[i][0] - 1].name, name) == 0)
      return &t->v[x->slot[i][0] - 1];
  return NULL;
}

/* Refuses function symbol i, named n, whose value lies past its section. */
static __attribute__((cold, noinline)) rig_link_status past_section(rig__link_state *l, size_t i,
                                                                    const char *n, size_t shndx) {
  if (!n)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "symbol #%zu: its name lies outside its string table "
                          "(LINK-3)",
                          i);
  return rig__link_fail(l, RIG_LINK_REFUSED,
                        "symbol %.80s: its value 0x%" PRIx64
                        " lies outside its section %s (LINK-3)",
                        n, (uint64_t)l->symv[i].st_value, rig__link_sec_label(l, shndx).s);
}

/* Refuses symbol i, an indirect function (STT_GNU_IFUNC): its value is a
 * resolver, to be run at link time, that returns the function. rig runs
 * none, and offered as the function, the resolver would be launched and
 * compute nothing (LINK-7: what the name stands for is not in the image). */
static __attribute__((cold, noinline)) rig_link_status indirect_function(rig__link_state *l,
                                                                         size_t i) {
  return rig__link_fail(
      l, RIG_LINK_REFUSED,
      "symbol %s: an indirect function (STT_GNU_IFUNC), whose value is a resolver "
      "that returns the function at link time; rig runs no resolver (LINK-7)",
      rig__link_sym_label(l, i).s);
}

/* Symbol i's section where it may be a function of the image (HOST-3):
 * named, a function or of no type (an assembler's label), defined in an
 * executable section of the image; 0 where it is not one. Data (STT_OBJECT,
 * STT_COMMON), thread-local, section and file symbols, and the types of an
 * OS or a processor, name no code a launch may call. */
static inline size_t function_section(const rig__link_state *l, size_t i) {
  const Elf64_Sym *s = &l->symv[i];
  unsigned type = GELF_ST_TYPE(s->st_info);
  if ((type != STT_FUNC && type != STT_NOTYPE) || s->st_name == 0 || s->st_shndx == SHN_UNDEF ||
      (s->st_shndx >= SHN_LORESERVE && s->st_shndx != SHN_XINDEX))
    return 0;
  /* SHN_XINDEX without the table reads as 0, as gelf_getsymshndx leaves it. */
  size_t shndx = s->st_shndx != SHN_XINDEX ? s->st_shndx : l->xndx ? l->xndx[i] : 0;
  if (shndx >= l->nsec || !l->secs[shndx].in_image || !(l->secs[shndx].sh.sh_flags & SHF_EXECINSTR))
    return 0;
  return shndx;
}

/* The image's tables and names, after its code: the functions (checked
 * here) and the stubs, each with its offset in the image. */
rig_link_status rig__link_list_functions(rig__link_state *l) {
  rig_link_image *im = l->im;
  if (!im->base) /* an empty image: no tables */
    return RIG_LINK_OK;
  /* Written where the load writes (l->w), read where the image runs. */
  rig__link_entry *fv = (rig__link_entry *)(l->w + l->tables_off), *sv = fv + l->nsyms;
  size_t nf = 0;
  if (l->nstrs)
    memcpy(l->w + l->names_off, l->strs, l->nstrs);
  for (size_t i = 1; i < l->nsyms; i++) {
    /* Where the object has extended indexes, every symbol must have one. */
    if (l->xndx && i >= l->nxndx)
      return rig__link_sym_unreadable(l, i);
    if (__builtin_expect(GELF_ST_TYPE(l->symv[i].st_info) == STT_GNU_IFUNC, 0))
      return indirect_function(l, i);
    size_t shndx = function_section(l, i);
    if (!shndx)
      continue;
    const Elf64_Sym *s = &l->symv[i];
    const rig__link_section *sec = &l->secs[shndx];
    const char *n = rig__link_sym_name(l, s);
    if (!n)
      return past_section(l, i, NULL, shndx);
    if (mapping_symbol(l, n))
      continue;
    if (s->st_value > sec->sh.sh_size)
      return past_section(l, i, n, shndx);
    if (s->st_value == sec->sh.sh_size) /* a label at its end: no code of it */
      continue;
    unsigned bind = GELF_ST_BIND(s->st_info);
    fv[nf++] = (rig__link_entry){.name = s->st_name,
                                 .rank = bind == STB_GLOBAL ? 0
                                         : bind == STB_WEAK ? 1
                                                            : 2,
                                 .off = sec->off + s->st_value};
  }
  for (size_t i = 0; i < l->nstubs; i++)
    sv[i] = (rig__link_entry){.name = (uint32_t)(l->stubs[i].name - l->strs),
                              .off = l->stubs_off + i * RIG__LINK_STUB_BYTES};
  const rig__link_entry *runs = (const rig__link_entry *)(im->base + l->tables_off);
  im->funcs = (rig__link_table){.v = runs, .n = nf};
  im->stubs = (rig__link_table){.v = runs + l->nsyms, .n = l->nstubs};
  im->names = (const char *)im->base + l->names_off;
  return RIG_LINK_OK;
}

static void *find(const rig_link_image *im, const rig__link_table *t, const char *name) {
  if (!im || !name)
    return NULL;
  const rig__link_entry *e = table_lookup(t, im->names, name);
  return e ? im->base + e->off : NULL;
}

void *rig_link_resolve(const rig_link_image *image, const char *name) {
  return image ? find(image, &image->funcs, name) : NULL;
}

void *rig_link_stub(const rig_link_image *image, const char *name) {
  return image ? find(image, &image->stubs, name) : NULL;
}
