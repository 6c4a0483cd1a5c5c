/* A vendor library that the novendor plugin links and that is never on the
 * library path at run time: dlopen of the plugin fails on it. */
int rig_absent_vendor_init(void);
int rig_absent_vendor_init(void) { return 0; }
