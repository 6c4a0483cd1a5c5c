// empty.cu: a kernel that does nothing, for bench P9's cost of a submit.
// Parameter: any block up to 4 KiB, unread.
extern "C" __global__ void empty(void) {}
