/* A bad object: a common symbol (built with -fcommon), read through a
 * PC-relative address since it is hidden: defined outside the image (LINK-7). */
__attribute__((visibility("hidden"))) int shared_count;
int read_count(void) { return shared_count; }
