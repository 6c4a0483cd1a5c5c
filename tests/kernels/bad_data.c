/* A bad object: an initialised variable in use, a non-empty .data (LINK-4). */
static int counter = 7;
int bump(void) { return counter++; }
