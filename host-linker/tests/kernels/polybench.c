/* Kernels written the way PolyBench/C writes them (gemm, 2mm's first
 * product, jacobi-2d's step, correlation's column statistics): loops over
 * double arrays indexed A[i][j] through C99 variably modified array types,
 * with <math.h>, unchanged but for the loop over i, which the wrapper
 * narrows to its launch's rows [first, end) (docs/kernels.md). Built with
 * the documented command and natively, compared bit for bit in
 * test-link-thirdparty. */
#include <math.h>
#include <stdint.h>

/* C := alpha*A*B + beta*C, rows [first, end). */
static void kernel_gemm(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj],
                        double A[ni][nk], double B[nk][nj], int64_t first, int64_t end) {
  for (int64_t i = first; i < end; i++) {
    for (int j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

/* jacobi-2d's step: B from A, interior rows [first, end) of 1..n-2. */
static void kernel_jacobi_2d_step(int n, double A[n][n], double B[n][n], int64_t first,
                                  int64_t end) {
  for (int64_t i = first; i < end; i++)
    for (int j = 1; j < n - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
}

/* correlation's mean and standard deviation of columns [first, end). */
static void kernel_correlation_stats(int m, int n, double float_n, double data[n][m],
                                     double mean[m], double stddev[m], int64_t first, int64_t end) {
  double eps = 0.1;
  for (int64_t j = first; j < end; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  for (int64_t j = first; j < end; j++) {
    stddev[j] = 0.0;
    for (int i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
}

/* ---- the wrappers ---------------------------------------------------------- */

struct pb_gemm {
  double *C;
  const double *A, *B;
  int64_t ni, nj, nk;
  double alpha, beta;
};
void pb_gemm(const struct pb_gemm *p, int64_t first, int64_t end) {
  int ni = (int)p->ni, nj = (int)p->nj, nk = (int)p->nk;
  kernel_gemm(ni, nj, nk, p->alpha, p->beta, (double(*)[nj])p->C, (double(*)[nk])p->A,
              (double(*)[nj])p->B, first, end);
}

/* Threads 0..n-3 are the interior rows 1..n-2. */
struct pb_jacobi {
  const double *A;
  double *B;
  int64_t n;
};
void pb_jacobi(const struct pb_jacobi *p, int64_t first, int64_t end) {
  int n = (int)p->n;
  kernel_jacobi_2d_step(n, (double(*)[n])p->A, (double(*)[n])p->B, first + 1, end + 1);
}

struct pb_corr {
  const double *data;
  double *mean, *stddev;
  int64_t m, n;
};
void pb_corr(const struct pb_corr *p, int64_t first, int64_t end) {
  int m = (int)p->m, n = (int)p->n;
  kernel_correlation_stats(m, n, (double)n, (double(*)[m])p->data, p->mean, p->stddev, first, end);
}
