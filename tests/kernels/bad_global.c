/* A bad object of real compiler output: a global (default visibility)
 * table, read under -fPIC through the GOT: R_X86_64_REX_GOTPCRELX or
 * R_AARCH64_ADR_GOT_PAGE, not in the Relocations list (LINK-6). */
#include <stdint.h>
const float global_table[4] = {1, 2, 3, 4};
float global_read(int64_t i) { return global_table[i & 3]; }
