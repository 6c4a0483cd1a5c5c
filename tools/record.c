/* SPDX-License-Identifier: MIT */
/* record.c: a device's facts as fields, printed as text or JSON
 * (record.h). */
#include <stdarg.h>
#include <string.h>

#include "cli.h"
#include "record.h"

static rig_cli_field *add(rig_cli_record *r, const char *group, const char *key, rig_cli_kind k) {
  static rig_cli_field spare; /* past RIG_CLI_FIELDS: written, never printed */
  rig_cli_field *f = r->n < RIG_CLI_FIELDS ? &r->f[r->n++] : &spare;
  memset(f, 0, sizeof *f);
  f->group = group;
  f->key = key;
  f->kind = k;
  f->known = true;
  return f;
}

void rig_cli_str(rig_cli_record *r, const char *group, const char *key, const char *fmt, ...) {
  rig_cli_field *f = add(r, group, key, RIG_CLI_STR);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->s, sizeof f->s, fmt, ap);
  va_end(ap);
}

void rig_cli_num(rig_cli_record *r, const char *group, const char *key, uint64_t n) {
  add(r, group, key, RIG_CLI_NUM)->n = n;
}

void rig_cli_size(rig_cli_record *r, const char *group, const char *key, uint64_t n) {
  add(r, group, key, RIG_CLI_BYTES)->n = n;
}

void rig_cli_bool(rig_cli_record *r, const char *group, const char *key, bool b) {
  add(r, group, key, RIG_CLI_BOOL)->n = b;
}

void rig_cli_unknown(rig_cli_record *r, const char *group, const char *key, rig_cli_kind kind) {
  add(r, group, key, kind)->known = false;
}

const char *rig_cli_text(const rig_cli_field *f, char *out, size_t cap) {
  if (!f || !f->known)
    snprintf(out, cap, "unknown");
  else if (f->kind == RIG_CLI_STR)
    snprintf(out, cap, "%s", f->s);
  else if (f->kind == RIG_CLI_BOOL)
    snprintf(out, cap, "%s", f->n ? "yes" : "no");
  else if (f->kind == RIG_CLI_NUM)
    snprintf(out, cap, "%llu", (unsigned long long)f->n);
  else if (f->n == RIG_CLI_UNLIMITED)
    snprintf(out, cap, "unlimited");
  else
    rig_cli_bytes(f->n, out, cap);
  return out;
}

const rig_cli_field *rig_cli_get(const rig_cli_record *r, const char *key) {
  for (int i = 0; i < r->n; i++)
    if (!r->f[i].group && strcmp(r->f[i].key, key) == 0)
      return &r->f[i];
  return NULL;
}

void rig_cli_print_text(FILE *out, const rig_cli_record *r) {
  for (int i = 0; i < r->n; i++) {
    const rig_cli_field *f = &r->f[i];
    char label[96], value[256];
    snprintf(label, sizeof label, "%s%s%s", f->group ? f->group : "", f->group ? "." : "", f->key);
    for (char *c = label; *c; c++)
      *c = *c == '_' ? ' ' : *c;
    fprintf(out, "  %-28s %s\n", label, rig_cli_text(f, value, sizeof value));
  }
}

void rig_cli_json_string(FILE *out, const char *s) {
  fputc('"', out);
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(out, "\\%c", *c);
    else if (*c < 0x20)
      fprintf(out, "\\u%04x", *c);
    else
      fputc(*c, out);
  }
  fputc('"', out);
}

static void json_value(FILE *out, const rig_cli_field *f) {
  if (!f->known || (f->kind == RIG_CLI_BYTES && f->n == RIG_CLI_UNLIMITED))
    fputs("null", out);
  else if (f->kind == RIG_CLI_STR)
    rig_cli_json_string(out, f->s);
  else if (f->kind == RIG_CLI_BOOL)
    fputs(f->n ? "true" : "false", out);
  else
    fprintf(out, "%llu", (unsigned long long)f->n);
}

/* The fields of group (NULL: the facts) as "key": value lines. */
static void json_members(FILE *out, const rig_cli_record *r, const char *group, int indent,
                         bool *first) {
  for (int i = 0; i < r->n; i++) {
    const rig_cli_field *f = &r->f[i];
    if (group ? !f->group || strcmp(f->group, group) != 0 : f->group != NULL)
      continue;
    fprintf(out, "%s\n%*s", *first ? "" : ",", indent, "");
    rig_cli_json_string(out, f->key);
    fputs(": ", out);
    json_value(out, f);
    *first = false;
  }
}

/* Whether group first appears at field i. */
static bool group_starts(const rig_cli_record *r, int i) {
  for (int j = 0; j < i; j++)
    if (r->f[j].group && strcmp(r->f[j].group, r->f[i].group) == 0)
      return false;
  return true;
}

void rig_cli_print_json(FILE *out, const rig_cli_record *r, int indent) {
  bool first = true, any = false;
  fputc('{', out);
  json_members(out, r, NULL, indent + 2, &first);
  fprintf(out, "%s\n%*s\"capabilities\": {", first ? "" : ",", indent + 2, "");
  for (int i = 0; i < r->n; i++) {
    if (!r->f[i].group || !group_starts(r, i))
      continue;
    bool inner = true;
    fprintf(out, "%s\n%*s", any ? "," : "", indent + 4, "");
    rig_cli_json_string(out, r->f[i].group);
    fputs(": {", out);
    json_members(out, r, r->f[i].group, indent + 6, &inner);
    fprintf(out, "\n%*s}", indent + 4, "");
    any = true;
  }
  if (any)
    fprintf(out, "\n%*s", indent + 2, "");
  fprintf(out, "}\n%*s}", indent, "");
}
