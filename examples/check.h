/* check.h: the one helper the examples share. Every rig call returns a
 * rig_status; on failure the calling thread's rig_error_last() says why,
 * so an example stops at the first failing call and prints that message. */
#ifndef RIG_EXAMPLE_CHECK_H
#define RIG_EXAMPLE_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <rig/rig.h>

#define CHECK(call)                                                              \
  do {                                                                           \
    rig_status check_status_ = (call);                                           \
    if (check_status_ != RIG_OK) {                                               \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call,          \
              rig_status_name(check_status_), rig_error_last()->message);        \
      exit(1);                                                                   \
    }                                                                            \
  } while (0)

#endif
