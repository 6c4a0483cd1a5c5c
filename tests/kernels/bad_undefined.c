/* A bad object: it calls a function that no library of the process
 * defines (LINK-10). */
float rig_link_test_nowhere(float);
float call_nowhere(float x) { return rig_link_test_nowhere(x) + 1.0f; }
