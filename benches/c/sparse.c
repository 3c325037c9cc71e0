/* Benchmark driver (not a test): the sparse Jacobian of benches/ad/bratu.ad
 * and the sparse Hessians of benches/ad/banded.ad, compiled by `adc compile`,
 * against their primals, in thread CPU time (CLOCK_THREAD_CPUTIME_ID), each
 * call timed alone, the best of `reps` calls; the three calls of one
 * function alternate in every round. Prints a Markdown table.
 *
 * Run: benches/sparse.sh (builds adc, the objects and this driver). */
#include "banded.h"
#include "arrow.h"
#include "bratu.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double sink;

typedef void (*VecFn)(const double *, int64_t, double *, int64_t);
typedef void (*VecJac)(const double *, int64_t, double *, int64_t, double *, int64_t, int64_t *,
                       int64_t, int64_t *, int64_t);
typedef int64_t (*VecNnz)(const double *, int64_t, double *, int64_t);

/* The best of `reps` rounds of the primal, the derivative and `NAME_nnz`
 * of a function `void f(double[] x, out double[] y)` with `expect`
 * entries; `check` looks at the rows. */
static void jac_row(const char *name, VecFn f, VecJac jac, VecNnz nnz, long n, long expect,
                    int reps, int (*check)(const double *, long, const double *, const int64_t *,
                                           const int64_t *)) {
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    double *v = malloc(expect * sizeof *v);
    int64_t *c = malloc(expect * sizeof *c), *r = malloc((n + 1) * sizeof *r);
    for (long i = 0; i < n; i++) x[i] = sin(i * 0.37) * 0.5;
    if (nnz(x, n, y, n) != expect) { printf("%s: wrong nnz\n", name); exit(1); }
    double best[3] = {1e9, 1e9, 1e9};
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        f(x, n, y, n);
        double t1 = now();
        jac(x, n, y, n, v, expect, c, expect, r, n + 1);
        double t2 = now();
        sink += (double)nnz(x, n, y, n);
        double t3 = now();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
        if (t3 - t2 < best[2]) best[2] = t3 - t2;
    }
    if (!check(x, n, v, c, r)) {
        printf("%s: wrong rows\n", name);
        exit(1);
    }
    printf("| `%s` | %ld | %.3f | %.3f | %.1f | %.3f | %.1f |\n", name, n, best[0] * 1e3,
           best[1] * 1e3, best[1] / best[0], best[2] * 1e3, best[2] / best[0]);
    free(x), free(y), free(v), free(c), free(r);
}

/* Row 1 of the Bratu Jacobian: (1, -2 + h^2 exp(x[1]), 1). */
static int bratu_ok(const double *x, long n, const double *v, const int64_t *c, const int64_t *r) {
    double h2 = 1.0 / ((n + 1.0) * (n + 1.0));
    return r[1] == 2 && c[2] == 0 && v[2] == 1.0 && fabs(v[3] - (-2.0 + h2 * exp(x[1]))) <= 1e-12;
}

/* Row 1 of the arrow's: 2 x[1] at column 1; the last row: n ones. */
static int arrow_ok(const double *x, long n, const double *v, const int64_t *c, const int64_t *r) {
    return r[1] == 1 && c[1] == 1 && v[1] == 2.0 * x[1] && r[n - 1] == n - 1 && r[n] == 2 * n - 1 &&
           c[2 * n - 2] == n - 1 && v[2 * n - 2] == 1.0;
}

typedef double (*Primal)(const double *, int64_t);
typedef int64_t (*Nnz)(const double *, int64_t);
typedef double (*Hess)(const double *, int64_t, double *, int64_t, int64_t *, int64_t, int64_t *,
                       int64_t);

static void hess_row(const char *name, Primal f, Hess h, Nnz nnz, long n, long expect, int reps) {
    double *x = malloc(n * sizeof *x);
    for (long i = 0; i < n; i++) x[i] = sin(i * 0.37) * 0.5;
    long m = (long)nnz(x, n);
    if (m != expect) { printf("%s: nnz %ld, not %ld\n", name, m, expect); exit(1); }
    double *v = malloc(m * sizeof *v);
    int64_t *c = malloc(m * sizeof *c), *r = malloc((n + 1) * sizeof *r);
    double best[3] = {1e9, 1e9, 1e9};
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        sink += f(x, n);
        double t1 = now();
        sink += h(x, n, v, m, c, m, r, n + 1);
        double t2 = now();
        sink += (double)nnz(x, n);
        double t3 = now();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
        if (t3 - t2 < best[2]) best[2] = t3 - t2;
    }
    if (r[1] != 1 || r[2] != 3 || c[1] != 0 || c[2] != 1) { printf("%s: wrong row 1\n", name); exit(1); }
    printf("| `%s` | %ld | %.3f | %.3f | %.1f | %.3f | %.1f |\n", name, n, best[0] * 1e3,
           best[1] * 1e3, best[1] / best[0], best[2] * 1e3, best[2] / best[0]);
    free(x), free(v), free(c), free(r);
}

/* Usage: sparse [jac|hess|rosen|smooth|rows|arrow|all] [n ...] (default: all, 10^4 10^5 10^6);
 * `rows` is bratu by columns and by rows forced, `arrow` the arrow's
 * Jacobian (by rows; and forced by columns up to 20,000), neither in `all`;
 * benches/sparse.sh runs one process per function and size. */
int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "all";
    long ns[16] = {10000, 100000, 1000000};
    int count = 3;
    if (argc > 2) {
        count = 0;
        for (int a = 2; a < argc && count < 16; a++) ns[count++] = atol(argv[a]);
    }
    int all = which[0] == 'a' && which[1] == 'l', jac = all || which[0] == 'j';
    /* `rows` and `rosen` share their first two letters. */
    int rows = strcmp(which, "rows") == 0, arrows = which[0] == 'a' && which[1] == 'r';
    int rosen_too = all || which[0] == 'h' || strcmp(which, "rosen") == 0;
    int smooth_too = all || which[0] == 'h' || which[0] == 's';
    printf("| function | n | primal (ms) | derivative (ms) | derivative / primal | NAME_nnz (ms) | "
           "NAME_nnz / primal |\n|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < count; k++) {
        long n = ns[k];
        int reps = n >= 1000000 ? 20 : (int)(20000000 / n);
        if (reps > 2000) reps = 2000;
        if (jac) jac_row("bratu", bratu, bratu_jac, bratu_jac_nnz, n, 3 * n - 2, reps, bratu_ok);
        if (rows) {
            jac_row("bratu, forward", bratu, bratu_jacc, bratu_jacc_nnz, n, 3 * n - 2, reps, bratu_ok);
            jac_row("bratu, reverse", bratu, bratu_jacr, bratu_jacr_nnz, n, 3 * n - 2, reps, bratu_ok);
        }
        if (arrows) jac_row("arrow", arrow, arrow_jac, arrow_jac_nnz, n, 2 * n - 1, reps, arrow_ok);
        /* n / 4 forward runs of n elements each: only the small sizes. */
        if (arrows && n <= 20000)
            jac_row("arrow, forward", arrow, arrow_jacc, arrow_jacc_nnz, n, 2 * n - 1, reps / 100 + 1,
                    arrow_ok);
        if (rosen_too) hess_row("rosen", rosen, rosen_hess, rosen_hess_nnz, n, 2 * n - 1, reps);
        if (smooth_too) hess_row("smooth", smooth, smooth_hess, smooth_hess_nnz, n, 3 * n - 3, reps);
    }
    return sink == 12345.678;
}
