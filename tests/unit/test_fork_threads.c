/* test_fork_threads.c: forks while other threads work (docs/fork.md): no
 * child of fork waits for a lock that a thread of its parent held at the
 * fork.
 *
 * Four threads create, fill, copy, launch, read and release buffers on the
 * host, a memory device, an io device, a test device and a Vulkan device
 * (where one opens here), free caches, load and resolve host code, and
 * open and close memory devices of their own, without a pause. Meanwhile
 * the main thread forks again and again. Each child uses the host
 * (buffers, a copy from memory the workers share, launches of a function
 * the parent resolved, one through a submission the workers share, a new
 * image, free_cache), the io device its parent
 * opened, which stays live in the child, and a memory device it opens,
 * then exits 0; a check that fails exits with its number.
 * The parent waits for each child for at most HANG_S seconds, kills one
 * that hangs, and counts it: the test passes only with no hung and no
 * failed child.
 *
 * FORK_THREADS_FORKS sets the number of forks (200, under TSan and ASan
 * too, whose forks copy their shadow memory, at about 0.5 s each here),
 * FORK_THREADS_HANG_S the bound, and
 * FORK_THREADS_GDB=1 prints each hung child's stack. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <rig/rig.h>

#include "child.h"
#include "kernel_file.h"
#include "kernels.h"
#include "util.h"

#define WORKERS 4
#define HANG_S 10.0
#define SHARED_BYTES (64u * 1024u)
/* What a child's two host launches fill. Under TSan they stay one group,
 * which the calling thread runs: TSan does not support a child of a
 * multi-threaded fork that starts threads, and its own runtime may then
 * hang (1 child in 200 in a CI run); the plain and ASan runs start the
 * pool in every child. */
#ifdef UNDER_TSAN
#define CHILD_BIG 32u
#define CHILD_SMALL 32u
#else
#define CHILD_BIG SHARED_BYTES
#define CHILD_SMALL 256u
#endif
#define MAX_DEVICES 5

typedef struct setup {
  rig_device *dev[MAX_DEVICES]; /* host, memory, io, test, vulkan */
  unsigned ndev;
  rig_device *io;
  rig_buffer *shared;           /* host memory every worker copies from */
  rig_function *host_fill;      /* fill_bytes, resolved before the forks */
  rig_image *host_image;
  rig_submission *host_sub;     /* a launch of host_fill every thread takes runs of */
  rig_function *vk_fill;        /* fill.spv on the Vulkan device, or NULL */
  rig_image *vk_image;
  void *fill_object;            /* fill_bytes.o, for loads of its own */
  size_t fill_size;
  atomic_bool stop;
  atomic_bool pause;            /* under ASan: the workers wait at a fork */
  atomic_uint paused;
  atomic_ulong ops, errors;
  char io_path[64];
} setup;

static setup S;

typedef struct worker {
  unsigned id;
  uint64_t rng;
  rig_submission *host_sub, *vk_sub;
} worker;

static uint64_t next(uint64_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

static void note(rig_status st) {
  if (st != RIG_OK)
    atomic_fetch_add(&S.errors, 1);
}

/* A launch of fill_bytes over b's first n bytes on the host. */
static rig_status host_launch(rig_submission *s, rig_buffer *b, int64_t n, uint32_t pattern) {
  rig_run *r;
  rig_status st = rig_submission_take(s, &r);
  if (st)
    return st;
  struct fill_bytes p = {NULL, n, pattern, 1};
  rig_point pt;
  if ((st = rig_run_bytes(r, 0, 0, &p, sizeof p)) || (st = rig_run_groups(r, 0, (uint64_t)n / 64 + 1, 1, 1)) ||
      (st = rig_run_threads(r, 0, 64, 1, 1)))
    return st;
  return rig_run_submit(r, &b, 1, NULL, 0, &pt);
}

/* A launch of fill.spv over b's first n words on the Vulkan device. */
static rig_status vk_launch(rig_submission *s, rig_buffer *b, uint32_t n) {
  rig_run *r;
  rig_status st = rig_submission_take(s, &r);
  rig_point pt;
  if (st || (st = rig_run_groups(r, 0, (n + 63) / 64, 1, 1)) || (st = rig_run_threads(r, 0, 64, 1, 1)) ||
      (st = rig_run_int32(r, 0, 8, 7)) || (st = rig_run_int32(r, 0, 12, 1)) ||
      (st = rig_run_int32(r, 0, 16, (int32_t)n)))
    return st;
  return rig_run_submit(r, &b, 1, NULL, 0, &pt);
}

/* One round on device i: create, fill, copy from the shared host memory,
 * an asynchronous copy, a launch where the device runs one, a read back,
 * and the release (to the thread's magazine or the device's cache). */
static void round_on(worker *w, unsigned i) {
  rig_device *d = S.dev[i];
  static const uint32_t sizes[] = {256, 4096, 64 * 1024, 100 * 1024};
  uint32_t n = sizes[next(&w->rng) % 4];
  rig_buffer *a = NULL, *b = NULL;
  rig_status st = rig_buffer_create(d, n, &a);
  note(st);
  if (st)
    return;
  note(rig_buffer_fill(a, (uint32_t)w->id, 1));
  if (d != S.io || n <= SHARED_BYTES) {
    rig_buffer *src = NULL;
    if (rig_buffer_view(S.shared, 0, n < SHARED_BYTES ? n : SHARED_BYTES, RIG_READ, &src) == RIG_OK) {
      rig_buffer *dst = NULL;
      if (rig_buffer_view(a, 0, rig_buffer_length(src), RIG_READ_WRITE, &dst) == RIG_OK) {
        note(rig_buffer_copy(src, dst));
        rig_buffer_release(dst);
      }
      rig_buffer_release(src);
    }
  }
  if (rig_buffer_create(d, n, &b) == RIG_OK) {
    rig_point p;
    note(rig_buffer_submit_copy(a, b, &p));
    if (d == rig_device_host())
      note(host_launch(next(&w->rng) % 2 ? S.host_sub : w->host_sub, b, n, 0x5a));
    else if (w->vk_sub && i == S.ndev - 1 && S.vk_fill)
      note(vk_launch(w->vk_sub, b, n / 4));
    uint8_t got[64];
    note(rig_buffer_get(b, 0, got, sizeof got));
    rig_buffer_release(b);
  }
  rig_buffer_release(a);
}

/* Now and then: what takes the process's other locks. */
static void now_and_then(worker *w, uint64_t k) {
  switch (next(&w->rng) % 16) {
  case 0:
    note(rig_device_free_cache(S.dev[next(&w->rng) % S.ndev]));
    break;
  case 1: {
    char name[48];
    snprintf(name, sizeof name, "memory:fork-worker-%u-%llu", w->id, (unsigned long long)k);
    rig_device *m = NULL;
    if (rig_device_open(name, &m) == RIG_OK) {
      rig_buffer *b = NULL;
      if (rig_buffer_create(m, 128, &b) == RIG_OK) {
        note(rig_buffer_fill(b, 1, 1));
        rig_buffer_release(b);
      }
      note(rig_device_close(m));
      rig_device_release(m);
    }
    break;
  }
  case 2: {
    rig_image *im = NULL;
    if (rig_image_load(rig_device_host(), S.fill_object, S.fill_size, &im) == RIG_OK) {
      rig_function *f = NULL;
      note(rig_image_resolve(im, "fill_bytes", &f));
      rig_image_release(im);
    }
    break;
  }
  case 3: {
    rig_function *f = NULL;
    note(rig_image_resolve(S.host_image, "fill_bytes", &f));
    break;
  }
  default:
    break;
  }
}

/* GCC's AddressSanitizer takes no lock of its allocator around a fork: a
 * child of a fork while another thread was in malloc may wait in malloc
 * for good, whatever rig does. Under it the workers wait between rounds
 * at each fork, and the devices' work ends first: that run checks the
 * handlers' and the child's memory; the others, the locks. */
static void wait_at_fork(void) {
  if (!atomic_load(&S.pause))
    return;
  atomic_fetch_add(&S.paused, 1);
  while (atomic_load(&S.pause))
    sleep_ms(1);
  atomic_fetch_sub(&S.paused, 1);
}

static void pause_workers(bool on) {
#ifdef UNDER_ASAN
  atomic_store(&S.pause, on);
  while (on && atomic_load(&S.paused) < WORKERS)
    sleep_ms(1);
  for (unsigned i = 0; on && i < S.ndev; i++)
    (void)rig_point_wait(rig_device_point(S.dev[i], rig_device_submitted(S.dev[i])));
#else
  (void)on;
#endif
}

static void *work(void *arg) {
  worker *w = arg;
  for (uint64_t k = 0; !atomic_load(&S.stop); k++) {
    wait_at_fork();
    round_on(w, (unsigned)(next(&w->rng) % S.ndev));
    now_and_then(w, k);
    atomic_fetch_add(&S.ops, 1);
  }
  return NULL;
}

#define CHECK(n, cond)                                                             \
  do {                                                                             \
    if (!(cond))                                                                   \
      _exit(n);                                                                    \
  } while (0)

/* The child: the host, the parent's io device and a memory device of its
 * own, each must work; exit 0. */
static void child(void) {
  rig_device *h = rig_device_host();
  rig_buffer *a = NULL, *b = NULL, *v = NULL;
  uint8_t got[256];
  CHECK(10, rig_buffer_create(h, SHARED_BYTES, &a) == RIG_OK);
  CHECK(11, rig_buffer_create(h, 256, &b) == RIG_OK);
  CHECK(12, rig_buffer_fill(b, 0x11, 1) == RIG_OK);
  CHECK(13, rig_buffer_view(S.shared, 0, 256, RIG_READ, &v) == RIG_OK);
  CHECK(14, rig_buffer_copy(v, b) == RIG_OK);                    /* memory the workers share */
  CHECK(15, rig_buffer_get(b, 0, got, sizeof got) == RIG_OK && got[0] == 0x77);
  rig_submission *s = NULL;
  rig_ref ref = rig_ref_write(0, offsetof(struct fill_bytes, dst));
  rig_part part = rig_part_launch(S.host_fill, &ref, 1, sizeof(struct fill_bytes));
  CHECK(16, rig_submission_make(h, &part, 1, &s) == RIG_OK);
  CHECK(17, host_launch(s, a, CHILD_BIG, 0x33) == RIG_OK);       /* the pool */
  CHECK(18, rig_buffer_get(a, CHILD_BIG - 16, got, 16) == RIG_OK && got[15] == 0x33);
  CHECK(23, host_launch(S.host_sub, a, CHILD_SMALL, 0x34) == RIG_OK); /* the workers' runs */
  CHECK(24, rig_buffer_get(a, 0, got, CHILD_SMALL) == RIG_OK && got[CHILD_SMALL - 1] == 0x34);
  rig_function *f = NULL;
  CHECK(19, rig_image_resolve(S.host_image, "fill_bytes", &f) == RIG_OK && f == S.host_fill);
  rig_image *im = NULL;
  CHECK(20, rig_image_load(h, S.fill_object, S.fill_size, &im) == RIG_OK);
  CHECK(21, rig_image_resolve(im, "fill_bytes", &f) == RIG_OK && f);
  rig_image_release(im);
  rig_buffer_release(a);
  CHECK(22, rig_device_free_cache(h) == RIG_OK);                        /* every thread's magazine */
  /* The parent's io device, live in the child. */
  CHECK(30, rig_device_lost(S.io) == NULL);
  rig_buffer *io = NULL;
  CHECK(31, rig_buffer_create(S.io, 256, &io) == RIG_OK);
  CHECK(32, rig_buffer_put(io, 0, got, sizeof got) == RIG_OK);
  CHECK(33, rig_buffer_copy(io, b) == RIG_OK);
  rig_buffer_release(io);
  /* A memory device of its own. */
  char name[48];
  snprintf(name, sizeof name, "memory:fork-child-%d", (int)getpid());
  rig_device *m = NULL;
  rig_buffer *mb = NULL;
  CHECK(40, rig_device_open(name, &m) == RIG_OK && rig_device_lost(m) == NULL);
  CHECK(41, rig_buffer_create(m, 256, &mb) == RIG_OK);
  CHECK(42, rig_buffer_fill(mb, 0x44, 1) == RIG_OK);
  CHECK(43, rig_buffer_copy(mb, b) == RIG_OK);
  CHECK(44, rig_buffer_get(b, 0, got, sizeof got) == RIG_OK && got[100] == 0x44);
  rig_buffer_release(mb);
  CHECK(45, rig_device_close(m) == RIG_OK);
  rig_device_release(m);
  rig_submission_release(s);
  rig_buffer_release(v);
  rig_buffer_release(b);
  _exit(0);
}

/* Waits up to HANG_S for pid: 0 when it exited 0, 1 when it failed, 2
 * when it hung (then it is killed). */
static int reap(pid_t pid, int *code) {
  int status = 0;
  const char *env = getenv("FORK_THREADS_HANG_S");
  double bound = env && atof(env) > 0 ? atof(env) : HANG_S;
  for (double end = now_s() + bound; now_s() < end;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      *code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return *code ? 1 : 0;
    }
    sleep_ms(1);
  }
  if (getenv("FORK_THREADS_GDB")) { /* a hung child's stack, to see which lock */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "gdb -batch -p %d -ex bt 2>/dev/null | grep '^#' >&2", (int)pid);
    if (system(cmd) != 0)
      fprintf(stderr, "gdb failed\n");
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 2;
}

static void open_devices(void) {
  S.dev[S.ndev++] = rig_device_host();
  S.dev[S.ndev++] = open_ok("memory:fork-threads");
  snprintf(S.io_path, sizeof S.io_path, "/tmp/rig-fork-threads-%d", (int)getpid());
  rig_io_opener o = {.library = "io", .target = S.io_path, .flags = RIG_IO_CREATE,
                     .size = 1u << 22};
  check_ok(rig_device_open_io(&o, &S.io), "open io");
  S.dev[S.ndev++] = S.io;
  S.dev[S.ndev++] = open_ok("test:fork-threads,delay_us=20");
  rig_device *vk = NULL;
  if (rig_device_open("vulkan:0", &vk) == RIG_OK) {
    S.dev[S.ndev++] = vk;
    size_t n;
    void *spv = kernel_file_read("kernels/vulkan/fill.spv", &n);
    if (spv && rig_image_load(vk, spv, n, &S.vk_image) == RIG_OK)
      check_ok(rig_image_resolve(S.vk_image, "fill", &S.vk_fill), "resolve fill");
    free(spv);
  } else
    print_message("no Vulkan device here (%s): its part is skipped\n", rig_error_last()->message);
}

static unsigned forks_wanted(void) {
  const char *env = getenv("FORK_THREADS_FORKS");
  if (env && atoi(env) > 0)
    return (unsigned)atoi(env);
  return 200;
}

static void no_child_of_fork_finds_a_lock_held(void **state) {
  open_devices();
  S.fill_object = kernel_object("fill_bytes", &S.fill_size);
  S.host_image = kernel_load("fill_bytes");
  check_ok(rig_image_resolve(S.host_image, "fill_bytes", &S.host_fill), "resolve");
  S.shared = create_ok(rig_device_host(), SHARED_BYTES);
  check_ok(rig_buffer_fill(S.shared, 0x77, 1), "fill shared");
  worker w[WORKERS];
  pthread_t t[WORKERS];
  rig_ref sref = rig_ref_write(0, offsetof(struct fill_bytes, dst));
  rig_part spart = rig_part_launch(S.host_fill, &sref, 1, sizeof(struct fill_bytes));
  check_ok(rig_submission_make(rig_device_host(), &spart, 1, &S.host_sub), "shared submission");
  for (unsigned i = 0; i < WORKERS; i++) {
    w[i] = (worker){.id = i + 1, .rng = 0x9e3779b97f4a7c15ull * (i + 1)};
    rig_ref ref = rig_ref_write(0, offsetof(struct fill_bytes, dst));
    rig_part part = rig_part_launch(S.host_fill, &ref, 1, sizeof(struct fill_bytes));
    check_ok(rig_submission_make(rig_device_host(), &part, 1, &w[i].host_sub), "host submission");
    if (S.vk_fill) {
      rig_ref vref = rig_ref_write(0, 0);
      rig_part vpart = rig_part_launch(S.vk_fill, &vref, 1, 24);
      check_ok(rig_submission_make(S.dev[S.ndev - 1], &vpart, 1, &w[i].vk_sub), "vk submission");
    }
    assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
  }
  unsigned forks = forks_wanted(), hung = 0, failed = 0;
  int first_code = 0;
  double start = now_s();
  for (unsigned k = 0; k < forks; k++) {
    pause_workers(true);
    pid_t pid = fork_ok();
    if (pid == 0)
      child();
    pause_workers(false);
    int code = 0;
    switch (reap(pid, &code)) {
    case 1:
      failed++;
      first_code = first_code ? first_code : code;
      break;
    case 2:
      hung++;
      break;
    }
  }
  atomic_store(&S.stop, true);
  for (unsigned i = 0; i < WORKERS; i++)
    pthread_join(t[i], NULL);
  print_message("%u forks in %.1f s while %u threads ran %lu rounds (%lu calls failed): "
                "%u children hung, %u failed (first exit code %d)\n",
                forks, now_s() - start, WORKERS, (unsigned long)atomic_load(&S.ops),
                (unsigned long)atomic_load(&S.errors), hung, failed, first_code);
  for (unsigned i = 0; i < WORKERS; i++) {
    rig_submission_release(w[i].host_sub);
    rig_submission_release(w[i].vk_sub);
  }
  rig_buffer_release(S.shared);
  rig_submission_release(S.host_sub);
  rig_image_release(S.host_image);
  rig_image_release(S.vk_image);
  free(S.fill_object);
  for (unsigned i = 1; i < S.ndev; i++)
    close_release(S.dev[i]);
  unlink(S.io_path);
  assert_int_equal(hung, 0);
  assert_int_equal(failed, 0);
  assert_int_equal(atomic_load(&S.errors), 0);
}

int main(void) {
  /* qemu-user (Debian 12's 7.2) aborts a child of fork that starts a
   * thread while its parent's threads run ("cpu_exec: assertion failed:
   * (cpu == current_cpu)"), for any program: docs/arm64.md. */
  if (child_emulator()) {
    printf("fork-threads: skipped: a child of a threaded fork cannot start threads under %s\n",
           child_emulator());
    return 77;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(no_child_of_fork_finds_a_lock_held),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
