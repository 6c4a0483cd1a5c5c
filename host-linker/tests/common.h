/* common.h: what the host linker's tests share: the kernels built for this
 * host, expectations on loads and refusals, and elfgen, a writer of
 * hand-made objects (with libelf) for the refusals. */
#ifndef RIG_LINK_TESTS_COMMON_H
#define RIG_LINK_TESTS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "rig/link.h"

/* This host's ELF machine (EM_X86_64 or EM_AARCH64) and the suffix of its
 * kernels: "x86_64" or "aarch64". The other machine's, for foreign objects. */
unsigned host_machine(void);
const char *host_arch(void);
unsigned other_machine(void);
const char *other_arch(void);

/* The bytes of file NAME.ARCH.o in the kernel folder (check_main's argv[1]);
 * NULL (and a message) where it cannot be read. The caller frees them. */
unsigned char *kernel_arch(const char *name, const char *arch, size_t *n);
unsigned char *kernel(const char *name, size_t *n); /* this host's */

/* Loads kernel NAME with opt; NULL (and a message) where it fails. */
rig_link_image *load_kernel(const char *name, const rig_link_options *opt);

/* Whether im's `add` (the seed's example) gives z = x + y over 2 floats. */
bool add_runs(rig_link_image *im);
/* Whether the load of bytes is refused (RIG_LINK_REFUSED) with a message
 * holding `rule` and `what`, the rule ID and the section, symbol or
 * relocation at fault; prints what it got where not. The out-parameter must
 * stay untouched (ERR-1 style). */
bool refused(const void *bytes, size_t n, const rig_link_options *opt, const char *rule,
             const char *what);

/* A lookup for tests: the names in a table, then (fallback) the process's. */
typedef struct lookup_table {
  const char *names[8];
  void *addrs[8];
  bool fallback;
  int calls;             /* how many lookups it answered */
  const char *asked[16]; /* the names it was asked, in order */
} lookup_table;
void *table_lookup(void *ctx, const char *name);

/* ---- elfgen: hand-made objects --------------------------------------------- */

typedef struct eg_obj eg_obj;

/* A new 64-bit little-endian ET_REL object for machine. */
eg_obj *eg_new(unsigned machine);
/* Header fields to make it bad: ELFCLASS32/64, ELFDATA2LSB/MSB, e_type. */
void eg_header(eg_obj *o, unsigned char cls, unsigned char data, unsigned type);
/* A section; returns its index. data may be NULL (SHT_NOBITS or zeros). */
unsigned eg_section(eg_obj *o, const char *name, unsigned type, uint64_t flags, uint64_t align,
                    const void *data, uint64_t size);
/* A symbol; returns its index (locals must come before globals). */
unsigned eg_symbol(eg_obj *o, const char *name, unsigned char info, uint16_t shndx, uint64_t value,
                   uint64_t size);
/* A relocation of section target, in .rela<name> (or .rel<name>, rel). */
void eg_reloc(eg_obj *o, unsigned target, uint64_t offset, unsigned sym, unsigned type,
              int64_t addend);
void eg_rel(eg_obj *o, unsigned target, uint64_t offset, unsigned sym, unsigned type);
/* Overrides the sh_info and sh_link (where not 0) of the relocation section
 * of target. */
void eg_reloc_section(eg_obj *o, unsigned target, unsigned info, unsigned link);
/* Writes the object with libelf; returns its bytes (caller frees) and frees o. */
unsigned char *eg_build(eg_obj *o, size_t *n);

/* A small function for the host: a jump (x86_64: e9 rel32, patched at 1;
 * arm64: b imm26, patched at 0), then a return. */
extern const unsigned char *host_code;
extern size_t host_code_bytes;
extern uint64_t host_code_patch; /* the offset of the call's field */
unsigned host_branch_type(void); /* R_X86_64_PLT32 or R_AARCH64_JUMP26 */
unsigned host_pc_type(void);     /* R_X86_64_PC32 or R_AARCH64_ADR_PREL_PG_HI21 */
unsigned host_abs_type(void);    /* R_X86_64_64 or R_AARCH64_ABS64: unlisted */

#endif
