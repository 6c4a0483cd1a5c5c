/* test_jobs.c: jobs over this host and two other machines, each a rig
 * serve process (<rig/job.h>, docs/remote.md): the results byte by byte,
 * what a machine killed mid-job takes with it, and a retry of the lost part
 * on the machine left. Each test bounds its time through the hang bound
 * and stops the servers it started. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rig/rig.h>

#include "check.h"
#include "server.h"

enum { N = (3u << 20) + 5, MID = 4096, MID_BYTES = 1000 };

static const char *key;

/* The machines of a job: m1's memory device and host, m2's memory
 * device, and the buffers the job passes between them. */
typedef struct machines {
  test_server s1, s2;
  rig_device *h1, *h2, *a1, *b2;
  rig_buffer *in, *x1, *y1, *mid, *v1, *z2, *w2, *out, *out1;
  unsigned char *want; /* what out and out1 must hold */
} machines;

/* Opens machines m1 and m2 under the names given: a name lost or closed
 * cannot be opened again in the process (MACH-6). */
static void machines_open(machines *m, const char *m1, const char *m2) {
  test_server_start(&m->s1, key);
  test_server_start(&m->s2, key);
  m->h1 = test_remote_host(m1, &m->s1, key, 0);
  m->h2 = test_remote_host(m2, &m->s2, key, 0);
  m->a1 = test_remote_on(m->h1, "memory:a");
  m->b2 = test_remote_on(m->h2, "memory:b");
  rig_device *here = rig_device_host();
  m->in = create_ok(here, N);
  m->out = create_ok(here, N);
  m->out1 = create_ok(here, N);
  m->x1 = create_ok(m->a1, N);
  m->v1 = create_ok(m->a1, N);
  m->y1 = create_ok(m->h1, N);
  m->z2 = create_ok(m->b2, N);
  m->w2 = create_ok(m->b2, N);
  ok(rig_buffer_view(m->y1, MID, MID_BYTES, RIG_READ_WRITE, &m->mid));
  m->want = malloc(N);
  assert_non_null(m->want);
  test_pattern(rig_buffer_host_address(m->in), N, 5);
  memset(rig_buffer_host_address(m->out), 0, N);
  memset(rig_buffer_host_address(m->out1), 0, N);
  memcpy(m->want, rig_buffer_host_address(m->in), N);
  memset(m->want + MID, 0xab, MID_BYTES); /* the job's fill on m1 */
}

static void machines_close(machines *m) {
  rig_buffer *bufs[] = {m->in, m->x1, m->y1, m->mid, m->v1, m->z2, m->w2, m->out, m->out1};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
    rig_buffer_release(bufs[i]);
  rig_device *devs[] = {m->a1, m->b2, m->h1, m->h2};
  for (size_t i = 0; i < 4; i++) {
    rig_status st = rig_device_close(devs[i]); /* a lost machine's: its owed stop */
    assert_true(st == RIG_OK || st == RIG_LOST);
    rig_device_release(devs[i]);
  }
  test_server_stop(&m->s1);
  test_server_stop(&m->s2);
  free(m->want);
}

/* A step that submits one part on d over buffers a (and b). */
static size_t add_part(rig_job *j, rig_device *d, rig_part part, rig_buffer *a, rig_buffer *b,
                       rig_job_setup setup, void *ctx) {
  rig_submission *s = NULL;
  ok(rig_submission_make(d, &part, 1, &s));
  rig_buffer *bufs[2] = {a, b};
  size_t step = 0;
  ok(rig_job_add(j, s, bufs, b ? 2 : 1, setup, ctx, &step));
  rig_submission_release(s); /* the job holds it */
  return step;
}

static size_t add_copy(rig_job *j, rig_buffer *src, rig_buffer *dst) {
  size_t step = 0;
  ok(rig_job_add_copy(j, src, dst, &step));
  return step;
}

/* The job's steps, in order: this host to m1; on m1 a copy and a fill;
 * m1 to m2; on m1 a copy whose setup runs `fault`; on m2 a copy; m2 to
 * this host (out), and m1 to this host (out1). steps[] gets their indices. */
static rig_job *make_job(machines *m, rig_job_setup fault, void *ctx, size_t steps[8]) {
  rig_job *j = NULL;
  ok(rig_job_make(&j));
  steps[0] = add_copy(j, m->in, m->x1);
  steps[1] = add_part(j, m->a1, rig_part_copy(0, 1), m->x1, m->y1, NULL, NULL);
  steps[2] = add_part(j, m->h1, rig_part_fill(0, 0xab, 1), m->mid, NULL, NULL, NULL);
  steps[3] = add_copy(j, m->y1, m->z2);
  steps[4] = add_part(j, m->a1, rig_part_copy(0, 1), m->x1, m->v1, fault, ctx);
  steps[5] = add_part(j, m->b2, rig_part_copy(0, 1), m->z2, m->w2, NULL, NULL);
  steps[6] = add_copy(j, m->w2, m->out);
  steps[7] = add_copy(j, m->y1, m->out1);
  assert_int_equal(rig_job_steps(j), 8);
  return j;
}

/* A job over this host, m1 and m2: every step reached, the bytes that
 * came back through both machines checked byte by byte. */
static void test_job_over_three_machines(void **state) {
  (void)state;
  machines m = {0};
  machines_open(&m, "m1-whole", "m2-whole");
  size_t steps[8];
  rig_job *j = make_job(&m, NULL, NULL, steps);
  ok(rig_job_run(j));
  for (size_t i = 0; i < 8; i++) {
    rig_point p;
    ok(rig_job_step(j, steps[i], &p));
  }
  assert_memory_equal(rig_buffer_host_address(m.out), m.want, N);
  assert_memory_equal(rig_buffer_host_address(m.out1), m.want, N);
  ok(rig_job_run(j)); /* nothing left to run */
  rig_job_release(j);
  machines_close(&m);
}

/* The fault: m2's server killed, from inside the job's step on m1. */
static rig_status kill_m2(rig_run *r, void *ctx) {
  (void)r;
  test_server_kill(ctx);
  return RIG_OK;
}

static void assert_step_lost(rig_job *j, size_t step, const char *names) {
  rig_point p = 7;
  assert_int_equal(rig_job_step(j, step, &p), RIG_LOST);
  assert_int_equal(p, 7); /* no out written on failure */
  print_message("%s\n", rig_error_last()->message);
  assert_non_null(strstr(rig_error_last()->message, names));
}

/* The lost part again, on m1 instead of m2: m1 to m1, a copy there, and
 * back to this host. */
static void retry_on_m1(machines *m) {
  rig_buffer *z1 = create_ok(m->a1, N), *w1 = create_ok(m->h1, N);
  rig_job *j = NULL;
  ok(rig_job_make(&j));
  add_copy(j, m->y1, z1);
  add_part(j, m->a1, rig_part_copy(0, 1), z1, w1, NULL, NULL);
  add_copy(j, w1, m->out);
  ok(rig_job_run(j));
  assert_memory_equal(rig_buffer_host_address(m->out), m->want, N);
  rig_job_release(j);
  rig_buffer_release(z1);
  rig_buffer_release(w1);
}

/* MACH-4: m2 killed (SIGKILL) mid-job, after its first step there was reached:
 * the job's run is RIG_LOST; its steps on m2, the one reading m2's result
 * and the one after it that reads what that one would have written here
 * are lost, and so is the reached step whose result was on m2; the
 * steps on m1 and this host are reached and their results readable; every
 * call on m2's buffers is RIG_LOST; nothing on this host is lost. A new job
 * on m1 gives the lost result, the same bytes. */
static void test_job_machine_killed(void **state) {
  (void)state;
  machines m = {0};
  machines_open(&m, "m1", "m2");
  size_t steps[8];
  rig_job *j = make_job(&m, kill_m2, &m.s2, steps);
  rig_buffer *u1 = create_ok(m.a1, N);
  size_t onward = add_copy(j, m.out, u1); /* reads what lost step 6 writes, here */
  assert_int_equal(rig_job_run(j), RIG_LOST);
  print_message("%s\n", rig_error_last()->message);
  assert_non_null(strstr(rig_error_last()->message, "4 of 9 steps lost"));
  size_t reached[] = {steps[0], steps[1], steps[2], steps[4], steps[7]};
  for (size_t i = 0; i < sizeof reached / sizeof *reached; i++)
    ok(rig_job_step(j, reached[i], NULL));
  assert_step_lost(j, steps[3], "m2");   /* reached, but its result was on m2 */
  assert_step_lost(j, steps[5], "m2");   /* submitted as m2 died */
  assert_null(strstr(rig_error_last()->message, "not submitted"));
  assert_step_lost(j, steps[6], "not submitted"); /* reads what step 5 wrote */
  assert_step_lost(j, onward, "not submitted: uses memory that step 6, lost, writes");
  rig_buffer_release(u1);
  assert_non_null(strstr(rig_device_lost(m.h2), "m2"));
  assert_non_null(rig_device_lost(m.b2));
  assert_null(rig_device_lost(m.h1));
  unsigned char byte;
  assert_int_equal(rig_buffer_get(m.z2, 0, &byte, 1), RIG_LOST);
  assert_int_equal(rig_buffer_get(m.w2, 0, &byte, 1), RIG_LOST);
  assert_memory_equal(rig_buffer_host_address(m.out1), m.want, N); /* m1's result, here */
  unsigned char *y = malloc(N);
  ok(rig_buffer_get(m.y1, 0, y, N));                                /* and on m1 */
  assert_memory_equal(y, m.want, N);
  free(y);
  test_pattern(m.want, N, 5);
  assert_memory_equal(rig_buffer_host_address(m.in), m.want, N);    /* nothing lost here */
  memset(m.want + MID, 0xab, MID_BYTES);
  assert_int_equal(rig_job_run(j), RIG_LOST); /* a lost step stays lost */
  rig_job_release(j);
  retry_on_m1(&m);
  machines_close(&m);
}

/* A setup that finds the job in use, and stops the first run. */
static rig_status setup_once(rig_run *r, void *ctx) {
  (void)r;
  static int calls;
  rig_job *j = ctx;
  size_t step;
  assert_int_equal(rig_job_run(j), RIG_INVALID);
  assert_int_equal(rig_job_add_copy(j, NULL, NULL, &step), RIG_INVALID);
  return calls++ == 0 ? RIG_INTERRUPTED : RIG_OK;
}

/* Bad inputs get a status and a message, on this machine's devices; a run
 * its setup stops goes on at the next. */
static void test_job_bad_input(void **state) {
  (void)state;
  rig_job *j = NULL;
  size_t step = 0;
  assert_int_equal(rig_job_make(NULL), RIG_INVALID);
  ok(rig_job_make(&j));
  rig_device *a = open_ok("memory:a");
  rig_buffer *x = create_ok(a, 64), *y = create_ok(a, 64);
  rig_part fill = rig_part_fill(0, 1, 1);
  rig_submission *s = NULL;
  ok(rig_submission_make(a, &fill, 1, &s));
  rig_buffer *two[2] = {x, y}, *none[1] = {NULL};
  assert_int_equal(rig_job_add(j, s, two, 2, NULL, NULL, &step), RIG_INVALID);
  assert_int_equal(rig_job_add(j, s, none, 1, NULL, NULL, &step), RIG_INVALID);
  assert_int_equal(rig_job_add(j, NULL, two, 1, NULL, NULL, &step), RIG_INVALID);
  assert_int_equal(rig_job_add(NULL, s, two, 1, NULL, NULL, &step), RIG_INVALID);
  assert_int_equal(rig_job_add_copy(j, x, NULL, &step), RIG_INVALID);
  assert_int_equal(rig_job_step(j, 0, NULL), RIG_INVALID);  /* no such step */
  ok(rig_job_add(j, s, two, 1, setup_once, j, &step));
  assert_int_equal(rig_job_step(j, step, NULL), RIG_INVALID); /* not reached */
  assert_int_equal(rig_job_run(NULL), RIG_INVALID);
  assert_int_equal(rig_job_run(j), RIG_INTERRUPTED);
  assert_int_equal(rig_job_step(j, step, NULL), RIG_INVALID);
  ok(rig_job_run(j));
  ok(rig_job_step(j, step, NULL));
  unsigned char got[64], want[64];
  memset(want, 1, 64);
  ok(rig_buffer_get(x, 0, got, 64));
  assert_memory_equal(got, want, 64);
  assert_ptr_equal(rig_job_retain(j), j);
  rig_job_release(j);
  rig_job_release(j);
  rig_job_release(NULL);
  assert_int_equal(rig_job_steps(NULL), 0);
  rig_submission_release(s);
  rig_buffer_release(x);
  rig_buffer_release(y);
  close_release(a);
}

int main(void) {
  key = test_key_file("a shared secret of the job tests, long enough to use");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_job_bad_input),
      cmocka_unit_test(test_job_over_three_machines),
      cmocka_unit_test(test_job_machine_killed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
