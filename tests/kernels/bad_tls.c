/* A bad object: a thread-local variable (LINK-4, its .tbss is writable; its
 * relocations are not in the list either). */
static _Thread_local int per_thread;
int tls_bump(void) { return ++per_thread; }
