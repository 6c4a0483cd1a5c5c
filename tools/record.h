/* SPDX-License-Identifier: MIT */
/* record.h: one device's facts as named fields, which rig info prints as
 * text (a line each, or a table's row) or as JSON. */
#ifndef RIG_TOOLS_RECORD_H
#define RIG_TOOLS_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum rig_cli_kind { RIG_CLI_STR, RIG_CLI_NUM, RIG_CLI_BYTES, RIG_CLI_BOOL } rig_cli_kind;

/* A budget of this many bytes is no budget: "unlimited", null in JSON. */
#define RIG_CLI_UNLIMITED ((uint64_t)INT64_MAX)

typedef struct rig_cli_field {
  const char *group; /* the capability record's key, or NULL for a fact */
  const char *key;   /* the JSON key; the text's label is it with ' ' for '_' */
  rig_cli_kind kind;
  bool known;        /* false: unknown, null in JSON */
  uint64_t n;
  char s[256];
} rig_cli_field;

#define RIG_CLI_FIELDS 64
typedef struct rig_cli_record {
  rig_cli_field f[RIG_CLI_FIELDS];
  int n;
} rig_cli_record;

void rig_cli_str(rig_cli_record *r, const char *group, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rig_cli_num(rig_cli_record *r, const char *group, const char *key, uint64_t n);
void rig_cli_size(rig_cli_record *r, const char *group, const char *key, uint64_t n);
void rig_cli_bool(rig_cli_record *r, const char *group, const char *key, bool b);
/* A field whose value is not known here. */
void rig_cli_unknown(rig_cli_record *r, const char *group, const char *key, rig_cli_kind kind);

/* The field's value as text ("15.6 GiB", "yes", "unknown"), in out. */
const char *rig_cli_text(const rig_cli_field *f, char *out, size_t cap);
/* The fact called key (no group), or NULL. */
const rig_cli_field *rig_cli_get(const rig_cli_record *r, const char *key);

/* One line per field, "  label   value", capability fields as
 * "  group.label   value". */
void rig_cli_print_text(FILE *out, const rig_cli_record *r);
/* A JSON object: the facts, then "capabilities": {group: {key: value}}.
 * indent is the object's own indentation in spaces. */
void rig_cli_print_json(FILE *out, const rig_cli_record *r, int indent);
/* s as a JSON string, quoted and escaped. */
void rig_cli_json_string(FILE *out, const char *s);

#endif
