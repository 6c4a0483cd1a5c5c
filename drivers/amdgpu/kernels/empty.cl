// empty.cl: a kernel that does nothing, for the cost of a submit.
kernel void empty(void) {}
