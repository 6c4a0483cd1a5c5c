/* common.c: the tests' harness, kernels and elfgen (common.h). */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

int check_failed;
static const char *kernel_dir = ".";

int check_main(const check_test *tests, size_t n, int argc, char **argv) {
  int failed = 0, ran = 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  if (argc > 1)
    kernel_dir = argv[1];
  for (size_t i = 0; i < n; i++) {
    bool want = argc <= 2;
    for (int a = 2; a < argc; a++)
      if (strcmp(argv[a], tests[i].name) == 0)
        want = true;
    if (!want)
      continue;
    check_failed = 0;
    tests[i].fn();
    printf("%s %s\n", check_failed ? "FAIL" : "ok  ", tests[i].name);
    failed += check_failed;
    ran++;
  }
  printf("%d of %d tests passed (%s)\n", ran - failed, ran, host_arch());
  return failed ? 1 : 0;
}

unsigned host_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#else
  return EM_AARCH64;
#endif
}
const char *host_arch(void) { return host_machine() == EM_X86_64 ? "x86_64" : "aarch64"; }
unsigned other_machine(void) { return host_machine() == EM_X86_64 ? EM_AARCH64 : EM_X86_64; }
const char *other_arch(void) { return host_machine() == EM_X86_64 ? "aarch64" : "x86_64"; }

unsigned char *kernel_arch(const char *name, const char *arch, size_t *n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s.%s.o", kernel_dir, name, arch);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
    return NULL;
  }
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(len > 0 ? (size_t)len : 1);
  if (!b || len <= 0 || fread(b, 1, (size_t)len, f) != (size_t)len) {
    fprintf(stderr, "cannot read %s\n", path);
    free(b);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *n = (size_t)len;
  return b;
}

unsigned char *kernel(const char *name, size_t *n) { return kernel_arch(name, host_arch(), n); }

rig_link_image *load_kernel(const char *name, const rig_link_options *opt) {
  size_t n;
  unsigned char *b = kernel(name, &n);
  rig_link_image *im = NULL;
  char err[RIG_LINK_ERROR_BYTES];
  if (!b)
    return NULL;
  rig_link_status st = rig_link_load(b, n, opt, &im, err, sizeof err);
  free(b);
  if (st != RIG_LINK_OK) {
    fprintf(stderr, "load of %s: status %d: %s\n", name, st, err);
    return NULL;
  }
  return im;
}

bool add_runs(rig_link_image *im) {
  typedef void kernel_fn(const void *params, int64_t first, int64_t end);
  kernel_fn *f = (kernel_fn *)rig_link_resolve(im, "add");
  float x[2] = {1, 2}, y[2] = {3, 4}, z[2] = {0, 0};
  struct {
    const float *x, *y;
    float *z;
    int64_t n;
  } p = {x, y, z, 2};
  if (!f)
    return false;
  f(&p, 0, 2);
  return z[0] == 4 && z[1] == 6;
}

bool refused(const void *bytes, size_t n, const rig_link_options *opt, const char *rule,
             const char *what) {
  rig_link_image *sentinel = (rig_link_image *)(uintptr_t)0x5a5a5a5a, *im = sentinel;
  char err[RIG_LINK_ERROR_BYTES] = "unset";
  rig_link_status st = rig_link_load(bytes, n, opt, &im, err, sizeof err);
  bool ok =
      st == RIG_LINK_REFUSED && im == sentinel && strstr(err, rule) && (!what || strstr(err, what));
  printf("  %s -> %d: %s\n", rule, st, err);
  if (!ok)
    fprintf(stderr, "  expected RIG_LINK_REFUSED naming %s and %s\n", rule, what ? what : "-");
  if (st == RIG_LINK_OK && im != sentinel)
    rig_link_free(im);
  return ok;
}

void *table_lookup(void *ctx, const char *name) {
  lookup_table *t = ctx;
  if (t->calls < 16)
    t->asked[t->calls] = name; /* valid during the load only */
  t->calls++;
  for (int i = 0; i < 8 && t->names[i]; i++)
    if (strcmp(t->names[i], name) == 0)
      return t->addrs[i];
  return t->fallback ? rig_link_default_lookup(NULL, name) : NULL;
}

/* ---- host code -------------------------------------------------------------- */

#if defined(__x86_64__)
static const unsigned char code[16] = {0xe9, 0,    0,    0,    0,    0xc3, 0x90, 0x90,
                                       0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
uint64_t host_code_patch = 1;
unsigned host_branch_type(void) { return R_X86_64_PLT32; }
unsigned host_pc_type(void) { return R_X86_64_PC32; }
unsigned host_abs_type(void) { return R_X86_64_64; }
#else
static const unsigned char code[16] = {0x00, 0x00, 0x00, 0x14, 0xc0, 0x03, 0x5f, 0xd6,
                                       0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5};
uint64_t host_code_patch = 0;
unsigned host_branch_type(void) { return R_AARCH64_JUMP26; }
unsigned host_pc_type(void) { return R_AARCH64_ADR_PREL_PG_HI21; }
unsigned host_abs_type(void) { return R_AARCH64_ABS64; }
#endif
const unsigned char *host_code = code;
size_t host_code_bytes = sizeof code;

/* ---- elfgen ----------------------------------------------------------------- */

#define EG_MAX 32

typedef struct eg_sec {
  char name[64];
  unsigned type;
  uint64_t flags, align, size, entsize;
  unsigned link, info;
  void *data;
  Elf_Type dtype;
} eg_sec;

typedef struct eg_rel {
  unsigned target;
  bool rel;
  GElf_Rela r;
} eg_relo;

struct eg_obj {
  unsigned char cls, data;
  unsigned type, machine;
  eg_sec secs[EG_MAX];
  unsigned nsecs; /* user sections: indices 1..nsecs */
  GElf_Sym syms[EG_MAX];
  char *symnames[EG_MAX];
  unsigned nsyms;
  eg_relo rels[EG_MAX];
  unsigned nrels;
  struct {
    unsigned target, info, link;
  } over[4];
  unsigned nover;
};

eg_obj *eg_new(unsigned machine) {
  eg_obj *o = calloc(1, sizeof *o);
  o->cls = ELFCLASS64;
  o->data = ELFDATA2LSB;
  o->type = ET_REL;
  o->machine = machine;
  o->nsyms = 1; /* the null symbol */
  return o;
}

void eg_header(eg_obj *o, unsigned char cls, unsigned char data, unsigned type) {
  o->cls = cls;
  o->data = data;
  o->type = type;
}

unsigned eg_section(eg_obj *o, const char *name, unsigned type, uint64_t flags, uint64_t align,
                    const void *data, uint64_t size) {
  eg_sec *s = &o->secs[++o->nsecs];
  snprintf(s->name, sizeof s->name, "%s", name);
  s->type = type;
  s->flags = flags;
  s->align = align;
  s->size = size;
  s->dtype = ELF_T_BYTE;
  if (type != SHT_NOBITS && size) {
    s->data = calloc(1, size);
    if (data)
      memcpy(s->data, data, size);
  }
  return o->nsecs;
}

unsigned eg_symbol(eg_obj *o, const char *name, unsigned char info, uint16_t shndx, uint64_t value,
                   uint64_t size) {
  unsigned i = o->nsyms++;
  o->syms[i] = (GElf_Sym){.st_info = info, .st_shndx = shndx, .st_value = value, .st_size = size};
  o->symnames[i] = strdup(name ? name : "");
  return i;
}

void eg_reloc(eg_obj *o, unsigned target, uint64_t offset, unsigned sym, unsigned type,
              int64_t addend) {
  o->rels[o->nrels++] =
      (eg_relo){.target = target,
                .r = {.r_offset = offset, .r_info = GELF_R_INFO(sym, type), .r_addend = addend}};
}

void eg_rel(eg_obj *o, unsigned target, uint64_t offset, unsigned sym, unsigned type) {
  o->rels[o->nrels++] = (eg_relo){
      .target = target, .rel = true, .r = {.r_offset = offset, .r_info = GELF_R_INFO(sym, type)}};
}

void eg_reloc_section(eg_obj *o, unsigned target, unsigned info, unsigned link) {
  o->over[o->nover].target = target;
  o->over[o->nover].info = info;
  o->over[o->nover++].link = link;
}

/* A string table: names appended, each NUL-terminated. */
typedef struct strtab {
  char buf[4096];
  size_t len;
} strtab;

static unsigned str_add(strtab *t, const char *s) {
  size_t n = strlen(s) + 1;
  if (t->len == 0)
    t->buf[t->len++] = 0;
  if (!s[0])
    return 0;
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  return (unsigned)(t->len - n);
}

static void add_sec(Elf *e, strtab *shs, const eg_sec *s) {
  Elf_Scn *scn = elf_newscn(e);
  GElf_Shdr sh;
  gelf_getshdr(scn, &sh);
  sh.sh_name = str_add(shs, s->name);
  sh.sh_type = s->type;
  sh.sh_flags = s->flags;
  sh.sh_addralign = s->align;
  sh.sh_link = s->link;
  sh.sh_info = s->info;
  sh.sh_entsize = s->entsize;
  gelf_update_shdr(scn, &sh);
  Elf_Data *d = elf_newdata(scn);
  d->d_type = s->dtype;
  d->d_buf = s->data;
  d->d_size = s->size;
  d->d_align = s->align > 8 ? 8 : (s->align ? s->align : 1);
  if (s->dtype != ELF_T_BYTE)
    d->d_align = 8;
  d->d_version = EV_CURRENT;
  if (s->type == SHT_NOBITS) {
    /* libelf takes a NOBITS section's size from its header. */
    sh.sh_size = s->size;
    gelf_update_shdr(scn, &sh);
  }
}

unsigned char *eg_build(eg_obj *o, size_t *n) {
  elf_version(EV_CURRENT);
  bool wide = o->cls == ELFCLASS64;
  FILE *f = tmpfile();
  Elf *e = elf_begin(fileno(f), ELF_C_WRITE, NULL);
  strtab shs = {.len = 0}, strs = {.len = 0};
  str_add(&shs, "");
  str_add(&strs, "");

  GElf_Ehdr eh;
  gelf_newehdr(e, o->cls);
  gelf_getehdr(e, &eh);
  eh.e_ident[EI_DATA] = o->data;
  eh.e_type = (GElf_Half)o->type;
  eh.e_machine = (GElf_Half)o->machine;
  eh.e_version = EV_CURRENT;

  /* The user's sections, then .strtab, .symtab, the relocations, .shstrtab. */
  unsigned strtab_i = o->nsecs + 1, symtab_i = o->nsecs + 2, next = o->nsecs + 3;
  for (unsigned i = 1; i <= o->nsecs; i++)
    add_sec(e, &shs, &o->secs[i]);

  for (unsigned i = 1; i < o->nsyms; i++)
    o->syms[i].st_name = str_add(&strs, o->symnames[i]);
  eg_sec st = {
      .type = SHT_STRTAB, .align = 1, .data = strs.buf, .size = strs.len, .dtype = ELF_T_BYTE};
  snprintf(st.name, sizeof st.name, ".strtab");
  add_sec(e, &shs, &st);

  unsigned first_global = o->nsyms;
  for (unsigned i = 1; i < o->nsyms; i++)
    if (GELF_ST_BIND(o->syms[i].st_info) != STB_LOCAL) {
      first_global = i;
      break;
    }
  size_t symsz = wide ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  void *symbuf = calloc(o->nsyms, symsz);
  for (unsigned i = 0; i < o->nsyms; i++) {
    if (wide) {
      Elf64_Sym *s = (Elf64_Sym *)symbuf + i;
      *s = (Elf64_Sym){o->syms[i].st_name,  o->syms[i].st_info,  0,
                       o->syms[i].st_shndx, o->syms[i].st_value, o->syms[i].st_size};
    } else {
      Elf32_Sym *s = (Elf32_Sym *)symbuf + i;
      *s = (Elf32_Sym){o->syms[i].st_name,
                       (Elf32_Addr)o->syms[i].st_value,
                       (Elf32_Word)o->syms[i].st_size,
                       o->syms[i].st_info,
                       0,
                       o->syms[i].st_shndx};
    }
  }
  eg_sec sy = {.type = SHT_SYMTAB,
               .align = 8,
               .data = symbuf,
               .size = o->nsyms * symsz,
               .entsize = symsz,
               .link = strtab_i,
               .info = first_global,
               .dtype = ELF_T_SYM};
  snprintf(sy.name, sizeof sy.name, ".symtab");
  add_sec(e, &shs, &sy);

  /* One relocation section per target and kind. */
  void *bufs[EG_MAX] = {0};
  unsigned nbufs = 0;
  for (unsigned t = 1; t <= o->nsecs; t++)
    for (int kind = 0; kind < 2; kind++) {
      unsigned count = 0;
      for (unsigned i = 0; i < o->nrels; i++)
        if (o->rels[i].target == t && o->rels[i].rel == (kind == 1))
          count++;
      if (!count)
        continue;
      size_t esz = kind ? (wide ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel))
                        : (wide ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela));
      unsigned char *buf = calloc(count, esz), *p = buf;
      for (unsigned i = 0; i < o->nrels; i++) {
        const eg_relo *r = &o->rels[i];
        if (r->target != t || r->rel != (kind == 1))
          continue;
        if (wide && kind)
          *(Elf64_Rel *)p = (Elf64_Rel){r->r.r_offset, r->r.r_info};
        else if (wide)
          *(Elf64_Rela *)p = (Elf64_Rela){r->r.r_offset, r->r.r_info, r->r.r_addend};
        else if (kind)
          *(Elf32_Rel *)p =
              (Elf32_Rel){(Elf32_Addr)r->r.r_offset,
                          ELF32_R_INFO(GELF_R_SYM(r->r.r_info), GELF_R_TYPE(r->r.r_info))};
        else
          *(Elf32_Rela *)p =
              (Elf32_Rela){(Elf32_Addr)r->r.r_offset,
                           ELF32_R_INFO(GELF_R_SYM(r->r.r_info), GELF_R_TYPE(r->r.r_info)),
                           (Elf32_Sword)r->r.r_addend};
        p += esz;
      }
      bufs[nbufs++] = buf;
      eg_sec rs = {.type = kind ? SHT_REL : SHT_RELA,
                   .flags = SHF_INFO_LINK,
                   .align = 8,
                   .data = buf,
                   .size = count * esz,
                   .entsize = esz,
                   .link = symtab_i,
                   .info = t,
                   .dtype = kind ? ELF_T_REL : ELF_T_RELA};
      for (unsigned v = 0; v < o->nover; v++)
        if (o->over[v].target == t) {
          if (o->over[v].info)
            rs.info = o->over[v].info;
          if (o->over[v].link)
            rs.link = o->over[v].link;
        }
      /* A test's section names are short: one that leaves no room for the
       * prefix is the test's own mistake. */
      if (snprintf(rs.name, sizeof rs.name, "%s%s", kind ? ".rel" : ".rela", o->secs[t].name) >=
          (int)sizeof rs.name) {
        fprintf(stderr, "elfgen: section name '%s' too long\n", o->secs[t].name);
        abort();
      }
      add_sec(e, &shs, &rs);
      next++;
    }

  eg_sec ss = {.type = SHT_STRTAB, .align = 1, .dtype = ELF_T_BYTE};
  snprintf(ss.name, sizeof ss.name, ".shstrtab");
  unsigned shs_name = str_add(&shs, ss.name);
  ss.data = shs.buf;
  ss.size = shs.len;
  {
    Elf_Scn *scn = elf_newscn(e);
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    sh.sh_name = shs_name;
    sh.sh_type = SHT_STRTAB;
    sh.sh_addralign = 1;
    gelf_update_shdr(scn, &sh);
    Elf_Data *d = elf_newdata(scn);
    d->d_type = ELF_T_BYTE;
    d->d_buf = shs.buf;
    d->d_size = shs.len;
    d->d_align = 1;
    d->d_version = EV_CURRENT;
  }
  eh.e_shstrndx = (GElf_Half)next;
  gelf_update_ehdr(e, &eh);
  if (elf_update(e, ELF_C_WRITE) < 0)
    fprintf(stderr, "elfgen: %s\n", elf_errmsg(-1));
  elf_end(e);

  fflush(f);
  long len = ftell(f);
  fseek(f, 0, SEEK_END);
  len = ftell(f);
  unsigned char *out = malloc(len > 0 ? (size_t)len : 1);
  fseek(f, 0, SEEK_SET);
  if (len <= 0 || fread(out, 1, (size_t)len, f) != (size_t)len)
    len = 0;
  fclose(f);
  *n = (size_t)len;

  free(symbuf);
  for (unsigned i = 0; i < nbufs; i++)
    free(bufs[i]);
  for (unsigned i = 1; i <= o->nsecs; i++)
    free(o->secs[i].data);
  for (unsigned i = 1; i < o->nsyms; i++)
    free(o->symnames[i]);
  free(o);
  return out;
}
