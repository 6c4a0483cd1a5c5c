/* messages.c: the words of a refusal (LINK-1): every status but RIG_LINK_OK
 * comes with a message that names the section, symbol or relocation at
 * fault, cut to fit RIG_LINK_ERROR_BYTES. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

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
