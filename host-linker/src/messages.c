/* SPDX-License-Identifier: MIT */
/* messages.c: the words of a refusal (LINK-1): every status but RIG_LINK_OK
 * comes with a message that names the section, symbol or relocation at
 * fault, cut to fit RIG_LINK_ERROR_BYTES. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "load.h"

rig_link_status(rig__link_fail)(rig__link_state *l, rig_link_status st, const char *fmt, ...) {
  if (l->err && l->errn) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->err, l->errn, fmt, ap);
    va_end(ap);
  }
  return st;
}

const char *rig__link_libelf_says(void) {
  const char *m = elf_errmsg(-1);
  return m ? m : "no reason given";
}

/* A section's name for a message: its name, or #index where it has none. */
rig__link_label rig__link_sec_label(const rig__link_state *l, size_t i) {
  rig__link_label b;
  if (i < l->nsec && l->secs[i].name && l->secs[i].name[0])
    snprintf(b.s, sizeof b.s, "%.60s", l->secs[i].name);
  else
    snprintf(b.s, sizeof b.s, "#%zu", i);
  return b;
}

/* A symbol for a message: its name, its section's for a section symbol. */
rig__link_label rig__link_sym_label(const rig__link_state *l, size_t i) {
  rig__link_label b;
  GElf_Sym s;
  Elf32_Word x = 0;
  const char *n = NULL;
  if (l->symdata && gelf_getsymshndx(l->symdata, l->xndxdata, (int)i, &s, &x)) {
    n = rig__link_sym_name(l, &s);
    if (n && !n[0] && GELF_ST_TYPE(s.st_info) == STT_SECTION) {
      size_t sh = s.st_shndx == SHN_XINDEX ? x : s.st_shndx;
      rig__link_label sl = rig__link_sec_label(l, sh);
      snprintf(b.s, sizeof b.s, "section %.60s", sl.s);
      return b;
    }
  }
  if (n && n[0])
    snprintf(b.s, sizeof b.s, "%.80s", n);
  else
    snprintf(b.s, sizeof b.s, "#%zu", i);
  return b;
}

/* A relocation for a message: "relocation 3 of .rela.text (R_X86_64_64 at
 * .text+0x1c, symbol gtab)". */
rig__link_label rig__link_rel_label(const rig__link_state *l, size_t rsec, size_t j,
                                    const GElf_Rela *r) {
  rig__link_label b, sl = rig__link_sec_label(l, rsec),
                     tl = rig__link_sec_label(l, l->secs[rsec].sh.sh_info),
                     yl = rig__link_sym_label(l, GELF_R_SYM(r->r_info));
  unsigned type = (unsigned)GELF_R_TYPE(r->r_info);
  const char *tn = rig__link_reloc_name(l->machine, type);
  char tbuf[24];
  if (!tn) {
    snprintf(tbuf, sizeof tbuf, "type %u", type);
    tn = tbuf;
  }
  snprintf(b.s, sizeof b.s, "relocation %zu of %.60s (%.40s at %.60s+0x%" PRIx64 ", symbol %.80s)",
           j, sl.s, tn, tl.s, (uint64_t)r->r_offset, yl.s);
  return b;
}

/* ---- what to change in the source ---------------------------------------------
 * The refusals a kernel's author meets first are the compiler's output of
 * ordinary C. Their messages say what to write instead, not only the rule. */

/* A relocation type that reaches its symbol through a GOT, which rig does
 * not build: the GOT types of either machine, but the thread-local ones
 * (GOTTPOFF, TLSDESC), whose message stays LINK-6's plain one. */
static bool through_got(const char *type_name) {
  return type_name && strstr(type_name, "GOT") && !strstr(type_name, "TPOFF") &&
         !strstr(type_name, "TPREL") && !strstr(type_name, "TLS");
}

rig_link_status rig__link_fail_type(rig__link_state *l, size_t rsec, size_t j, const GElf_Rela *r) {
  const char *tn = rig__link_reloc_name(l->machine, (unsigned)GELF_R_TYPE(r->r_info));
  rig__link_label rl = rig__link_rel_label(l, rsec, j, r);
  if (!through_got(tn))
    return rig__link_fail(l, RIG_LINK_REFUSED, "%s: a type not in the Relocations list (LINK-6)",
                          rl.s);
  size_t i = GELF_R_SYM(r->r_info);
  bool undefined = i < l->nsyms && l->symv[i].st_shndx == SHN_UNDEF;
  rig__link_label yl = rig__link_sym_label(l, i);
  if (undefined)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "%s: the process's variable %s, reached through a GOT, which rig "
                          "does not build: pass what the kernel needs in its parameters (LINK-6)",
                          rl.s, yl.s);
  return rig__link_fail(l, RIG_LINK_REFUSED,
                        "%s: a global read through a GOT, which rig does not build: make %s "
                        "static or __attribute__((visibility(\"hidden\"))) (LINK-6)",
                        rl.s, yl.s);
}

rig_link_status rig__link_fail_writable(rig__link_state *l, size_t i, uint64_t bytes) {
  rig__link_label sl = rig__link_sec_label(l, i);
  if (strncmp(sl.s, ".data.rel.ro", 12) == 0)
    return rig__link_fail(l, RIG_LINK_REFUSED,
                          "section %s: a table of pointers (%" PRIu64 " bytes) that a loader "
                          "would patch (relro), and an image is never written: hold indexes "
                          "or offsets instead of pointers, or pass them in the parameters "
                          "(LINK-4)",
                          sl.s, bytes);
  return rig__link_fail(l, RIG_LINK_REFUSED,
                        "section %s: writable and not empty (%" PRIu64 " bytes); a kernel "
                        "takes mutable state through its parameters (LINK-4)",
                        sl.s, bytes);
}

/* The first undefined symbol of an OpenMP runtime (clang's __kmpc_*, gcc's
 * GOMP_*) in the object's symbol table, read with libelf's checks (the
 * refusal may come before the load read the table), or NULL. */
static const char *openmp_call(rig__link_state *l) {
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(l->elf, scn))) {
    GElf_Shdr sh;
    Elf_Data *d;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)) ||
        !sh.sh_entsize)
      continue;
    for (size_t k = 1; k < sh.sh_size / sh.sh_entsize && k <= INT32_MAX; k++) {
      GElf_Sym s;
      const char *n;
      if (!gelf_getsym(d, (int)k, &s) || s.st_shndx != SHN_UNDEF ||
          !(n = elf_strptr(l->elf, sh.sh_link, s.st_name)))
        continue;
      if (strncmp(n, "__kmpc_", 7) == 0 || strncmp(n, "GOMP_", 5) == 0)
        return n;
    }
  }
  return NULL;
}

void rig__link_explain(rig__link_state *l) {
  if (!l->elf || !l->err || !l->errn)
    return;
  const char *omp = openmp_call(l);
  if (!omp)
    return;
  /* The first refusal's rule, from the end of its message. */
  const char *rule = strrchr(l->err, '(');
  char tag[24] = "";
  if (rule && strncmp(rule, "(LINK-", 6) == 0)
    snprintf(tag, sizeof tag, " %.16s", rule);
  rig__link_fail(l, RIG_LINK_REFUSED,
                 "built with -fopenmp (it calls %.60s): a launch already runs its threads "
                 "first..end-1 on the host's cores; build the kernel without -fopenmp and "
                 "let the launch's grid be the parallel loop%s",
                 omp, tag);
}
