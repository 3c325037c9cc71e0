/* Benchmark driver (not a test): where ode's gradient at n = 1000 spends its
 * time (docs/performance.md, "Gradient over primal"). adc's plain port
 * (gradbench/evals/plain/ode.ad, `adc compile`) beside the same algorithm in
 * C (`gcc -O3 -ffp-contract=off`, `restrict`): the port's shape (8 loops a
 * step, the gradient taping the four `ode_fun` reads as adc does and running
 * 8 reverse loops; bit-identical to adc's), the port's forward loops with one
 * fused reverse loop a step, every loop of a step fused into one (stages and
 * adjoints in registers: the primal stores 1 value per element and step, the
 * taped gradient 5 forward and 2 reverse), the fused gradient taping only
 * `yf` (its reverse sweep computes each step's three stages again), and the
 * tape's own traffic: 32 bytes per element and step written and read back in
 * reverse, nothing computed. Thread CPU time
 * (CLOCK_THREAD_CPUTIME_ID), each call timed alone, best of `reps` rounds in
 * which every function runs once. GradBench's inputs (gradbench/ab/inputs.h).
 * Also prints the share of the primal's results that are zero or subnormal.
 *
 * `ftz` as first argument sets the SSE flush-to-zero and denormals-are-zero
 * modes first: a diagnostic of what subnormal numbers cost (results differ;
 * adc never does this).
 *
 * Run: benches/ode.sh [ftz] */
#include "bench.h"
#include "inputs.h"
#include "ode.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

typedef double *restrict P;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fun(int n, const double *restrict x, const double *restrict y, P z) {
    z[0] = x[0];
    for (int i = 1; i < n; i++) z[i] = x[i] * y[i - 1];
}

/* The port, loop for loop. */
static void primal_port(int n, const double *restrict x, int s, P yf, P k1, P k2, P k3, P k4, P t) {
    double h = 2.0 / s;
    for (int i = 0; i < n; i++) yf[i] = 0.0;
    for (int st = 0; st < s; st++) {
        fun(n, x, yf, k1);
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k1[i] / 2.0;
        fun(n, x, t, k2);
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k2[i] / 2.0;
        fun(n, x, t, k3);
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k3[i];
        fun(n, x, t, k4);
        for (int i = 0; i < n; i++) yf[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
    }
}

/* One loop a step, each stage's element i - 1 carried in a register. With
 * `tape`, the four values `ode_fun` reads are taped (`yf[i - 1]` and the
 * three stages' `t[i - 1]`); with `ytape`, `yf[i]` only. */
static void primal_fused(int n, const double *restrict x, int s, P yf, P tape, P ytape) {
    double h = 2.0 / s;
    for (int i = 0; i < n; i++) yf[i] = 0.0;
    for (int st = 0; st < s; st++) {
        double y0 = yf[0], x0 = x[0];
        double py = y0, p1 = y0 + h * x0 / 2.0, p2 = y0 + h * x0 / 2.0, p3 = y0 + h * x0;
        if (ytape) ytape[(size_t)st * n] = y0;
        yf[0] = y0 + h * (x0 + 2.0 * x0 + 2.0 * x0 + x0) / 6.0;
        for (int i = 1; i < n; i++) {
            double y = yf[i], xi = x[i];
            double k1 = xi * py, a1 = y + h * k1 / 2.0;
            double k2 = xi * p1, a2 = y + h * k2 / 2.0;
            double k3 = xi * p2, a3 = y + h * k3;
            double k4 = xi * p3;
            if (tape) {
                double *T = tape + (size_t)4 * ((size_t)st * (n - 1) + i - 1);
                T[0] = py, T[1] = p1, T[2] = p2, T[3] = p3;
            }
            if (ytape) ytape[(size_t)st * n + i] = y;
            yf[i] = y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0;
            py = y, p1 = a1, p2 = a2, p3 = a3;
        }
    }
}

/* One reverse step, fused: `dy` holds the new `yf`'s adjoint and becomes the
 * old one's; `T(j, c)` is what stage c's `ode_fun` read at element j. */
#define REVERSE_STEP(T)                                                                            \
    do {                                                                                           \
        double c1 = 0, c2 = 0, c3 = 0, cy = 0;                                                     \
        for (int i = n - 1; i >= 0; i--) {                                                         \
            double a = dy[i], g = a / 6.0 * h;                                                     \
            double d4 = g, d3 = g + g + h * c3, d2 = g + g + h * (c2 * 0.5), d1 = g + h * (c1 * 0.5); \
            dy[i] = a + c3 + c2 + c1 + cy;                                                         \
            if (i > 0) {                                                                           \
                double xi = x[i];                                                                  \
                c3 = d4 * xi, c2 = d3 * xi, c1 = d2 * xi, cy = d1 * xi;                            \
                dx[i] += d4 * T(i - 1, 3) + d3 * T(i - 1, 2) + d2 * T(i - 1, 1) + d1 * T(i - 1, 0); \
            } else {                                                                               \
                dx[0] += d4 + d3 + d2 + d1;                                                        \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* The gradient of yf[n - 1] (seed 1), fused, taping all four reads. */
static void grad_fused(int n, const double *restrict x, int s, P dx, P yf, P dy, P tape) {
    double h = 2.0 / s;
    primal_fused(n, x, s, yf, tape, NULL);
    for (int i = 0; i < n; i++) dy[i] = 0.0;
    dy[n - 1] = 1.0;
    for (int st = s - 1; st >= 0; st--) {
        const double *S = tape + (size_t)4 * st * (n - 1);
#define TAPED(j, c) S[4 * (j) + (c)]
        REVERSE_STEP(TAPED);
    }
}

/* The same, taping `yf` only: each reverse step first computes its three
 * stages again from it (into r1..r3, which stay in cache). */
static void grad_fused_yf(int n, const double *restrict x, int s, P dx, P yf, P dy, P ytape, P r1,
                          P r2, P r3) {
    double h = 2.0 / s;
    primal_fused(n, x, s, yf, NULL, ytape);
    for (int i = 0; i < n; i++) dy[i] = 0.0;
    dy[n - 1] = 1.0;
    for (int st = s - 1; st >= 0; st--) {
        const double *Y = ytape + (size_t)st * n;
        r1[0] = Y[0] + h * x[0] / 2.0, r2[0] = r1[0], r3[0] = Y[0] + h * x[0];
        for (int i = 1; i < n; i++) {
            r1[i] = Y[i] + h * (x[i] * Y[i - 1]) / 2.0;
            r2[i] = Y[i] + h * (x[i] * r1[i - 1]) / 2.0;
            r3[i] = Y[i] + h * (x[i] * r2[i - 1]);
        }
#define RECOMPUTED(j, c) ((c) == 0 ? Y[j] : (c) == 1 ? r1[j] : (c) == 2 ? r2[j] : r3[j])
        REVERSE_STEP(RECOMPUTED);
    }
}

/* The port's loops, taping each `ode_fun`'s read `y[i - 1]` (a stack:
 * stage by stage, element by element); returns the tape's end. */
static double *forward_port(int n, const double *restrict x, int s, P yf, P k1, P k2, P k3, P k4, P t,
                            P tape) {
    double h = 2.0 / s, *tp = tape;
    for (int i = 0; i < n; i++) yf[i] = 0.0;
#define FUN(Y, K)                                                                                  \
    K[0] = x[0];                                                                                   \
    for (int i = 1; i < n; i++) K[i] = x[i] * Y[i - 1], *tp++ = Y[i - 1];
    for (int st = 0; st < s; st++) {
        FUN(yf, k1)
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k1[i] / 2.0;
        FUN(t, k2)
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k2[i] / 2.0;
        FUN(t, k3)
        for (int i = 0; i < n; i++) t[i] = yf[i] + h * k3[i];
        FUN(t, k4)
        for (int i = 0; i < n; i++) yf[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
    }
    return tp;
}

/* The port's forward sweep (taping stage by stage, as adc does), then one
 * fused reverse loop a step: what fusing the reverse sweep alone would give. */
static void grad_port_fused_reverse(int n, const double *restrict x, int s, P dx, P yf, P k1, P k2,
                                    P k3, P k4, P t, P dy, P tape) {
    double h = 2.0 / s;
    forward_port(n, x, s, yf, k1, k2, k3, k4, t, tape);
    for (int i = 0; i < n; i++) dy[i] = 0.0;
    dy[n - 1] = 1.0;
    for (int st = s - 1; st >= 0; st--) {
        const double *S = tape + (size_t)4 * st * (n - 1);
#define STAGED(j, c) S[(size_t)(c) * (n - 1) + (j)]
        REVERSE_STEP(STAGED);
    }
}

/* The gradient in the port's (and adc's) shape: 8 loops a step forward,
 * four of them taping, and 8 reverse loops through adjoint arrays. */
static void grad_port(int n, const double *restrict x, int s, P dx, P yf, P k1, P k2, P k3, P k4,
                      P t, P dyf, P d1, P d2, P d3, P d4, P dt, P tape) {
    double h = 2.0 / s, *tp = forward_port(n, x, s, yf, k1, k2, k3, k4, t, tape);
    for (int i = 0; i < n; i++) dyf[i] = 0.0, dt[i] = 0.0;
    dyf[n - 1] = 1.0;
#define RFUN(D, DY, ACC)                                                                           \
    for (int i = n - 1; i >= 1; i--) {                                                             \
        double v = *--tp, a = D[i];                                                                \
        if (ACC) DY[i - 1] += a * x[i]; else DY[i - 1] = a * x[i];                                 \
        dx[i] += a * v;                                                                            \
    }                                                                                              \
    dx[0] += D[0];
    for (int st = s - 1; st >= 0; st--) {
        for (int i = n - 1; i >= 0; i--) {
            double g = dyf[i] / 6.0 * h;
            d4[i] = g, d3[i] = g + g, d2[i] = g + g, d1[i] = g;
        }
        RFUN(d4, dt, 0)
        for (int i = n - 1; i >= 0; i--) d3[i] += dt[i] * h, dyf[i] += dt[i];
        RFUN(d3, dt, 0)
        for (int i = n - 1; i >= 0; i--) d2[i] += dt[i] * 0.5 * h, dyf[i] += dt[i];
        RFUN(d2, dt, 0)
        for (int i = n - 1; i >= 0; i--) d1[i] += dt[i] * 0.5 * h, dyf[i] += dt[i];
        RFUN(d1, dyf, 1)
    }
}

/* The tape's traffic alone: 4 doubles per element and step written, then
 * read back from the end, summed in four chains. */
static double tape_trip(size_t m, P tape) {
    for (size_t i = 0; i < m; i++) tape[i] = 1.0 + (double)(i & 7);
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (size_t i = m; i >= 4; i -= 4) a0 += tape[i - 1], a1 += tape[i - 2], a2 += tape[i - 3], a3 += tape[i - 4];
    return a0 + a1 + a2 + a3;
}

/* The share of the primal's results (every stage's, `y_tmp`'s and `yf`'s
 * elements, each step) that are zero and that are subnormal. */
static void count_results(int n, const double *restrict x, int s, P yf, P k, P t, double *zero,
                          double *subnormal) {
    double h = 2.0 / s, kz = 0, ks = 0, all = 0;
#define COUNT(v) (all++, kz += (v) == 0, ks += fpclassify(v) == FP_SUBNORMAL)
    for (int i = 0; i < n; i++) yf[i] = 0.0, k[i] = 0.0;
    for (int st = 0; st < s; st++) {
        double *y = yf;
        for (int c = 0; c < 4; c++) {
            /* Stage c: k = x * y[i - 1] (k[0] = x[0]), its sum kept in k. */
            for (int i = n - 1; i >= 0; i--) {
                double v = i ? x[i] * y[i - 1] : x[0];
                COUNT(v);
                k[i] += (c == 1 || c == 2 ? 2.0 : 1.0) * v;
                if (c < 3) {
                    double u = yf[i] + (c < 2 ? h * v / 2.0 : h * v);
                    COUNT(u);
                    t[i] = u;
                }
            }
            y = t;
        }
        for (int i = 0; i < n; i++) yf[i] += h * k[i] / 6.0, COUNT(yf[i]), k[i] = 0.0;
    }
    *zero = kz / all, *subnormal = ks / all;
}

enum { ADC_P, ADC_G, PORT_P, PORT_G, PORT_FR_G, FUSED_P, FUSED_G, FUSED_YF_G, TAPE, KINDS };
static const char *const NAMES[KINDS] = {
    "adc primal", "adc gradient", "C primal, port's loops", "C gradient, port's loops",
    "C gradient, port's forward loops, fused reverse",
    "C primal, fused", "C gradient, fused", "C gradient, fused, `yf` taped", "tape alone (32 B written, read back)"};

static double sink;

static void run(int n, int s, int reps) {
    ode_in in;
    ode_in_make(&in, n, s);
    const double *x = in.x;
    double *a[16];
    for (int j = 0; j < 16; j++) a[j] = calloc(n, sizeof(double));
    double *tape = malloc((size_t)32 * n * s);
    double *dx[5];
    for (int j = 0; j < 5; j++) dx[j] = calloc(n, sizeof(double));
    double best[KINDS];
    for (int k = 0; k < KINDS; k++) best[k] = 1e30;
    for (int r = 0; r < reps; r++) {
        double t[KINDS + 1];
        t[0] = now();
        ode_primal(x, n, s, a[0], n);
        t[1] = now();
        memset(dx[0], 0, n * sizeof(double));
        ode_gradient(x, n, dx[0], n, s, 1.0);
        t[2] = now();
        primal_port(n, x, s, a[1], a[2], a[3], a[4], a[5], a[6]);
        t[3] = now();
        memset(dx[1], 0, n * sizeof(double));
        grad_port(n, x, s, dx[1], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
                  a[11], a[12], tape);
        t[4] = now();
        memset(dx[4], 0, n * sizeof(double));
        grad_port_fused_reverse(n, x, s, dx[4], a[1], a[2], a[3], a[4], a[5], a[6], a[14], tape);
        t[5] = now();
        primal_fused(n, x, s, a[13], NULL, NULL);
        t[6] = now();
        memset(dx[2], 0, n * sizeof(double));
        grad_fused(n, x, s, dx[2], a[13], a[14], tape);
        t[7] = now();
        memset(dx[3], 0, n * sizeof(double));
        grad_fused_yf(n, x, s, dx[3], a[13], a[14], tape, a[7], a[8], a[9]);
        t[8] = now();
        sink += tape_trip((size_t)4 * n * s, tape);
        t[9] = now();
        for (int k = 0; k < KINDS; k++)
            if (t[k + 1] - t[k] < best[k]) best[k] = t[k + 1] - t[k];
    }
    /* The C versions compute what adc's does (the fused ones round in another order). */
    double diff = 0, scale = 0;
    int same = 1;
    for (int i = 0; i < n; i++) {
        for (int j = 2; j < 5; j++) diff = fmax(diff, fabs(dx[j][i] - dx[0][i]));
        scale = fmax(scale, fabs(dx[0][i]));
        same &= a[0][i] == a[1][i] && dx[0][i] == dx[1][i];
    }
    printf("\nn = %d, s = %d (best of %d; C port's primal and gradient %s adc's; a fused gradient differs"
           " from adc's by at most %.1e, its largest element %.1e)\n\n",
           n, s, reps, same ? "bit-identical to" : "DIFFER from", diff, scale);
    double zero, subnormal;
    count_results(n, x, s, a[1], a[2], a[3], &zero, &subnormal);
    printf("The primal's results: %.1f%% zero, %.2f%% subnormal.\n\n", 100 * zero, 100 * subnormal);
    printf("| function | ms | / adc primal | ns per element and step |\n|---|---|---|---|\n");
    for (int k = 0; k < KINDS; k++)
        printf("| %s | %.3f | %.2f | %.2f |\n", NAMES[k], best[k] * 1e3, best[k] / best[ADC_P],
               best[k] * 1e9 / ((double)n * s));
    for (int j = 0; j < 16; j++) free(a[j]);
    for (int j = 0; j < 5; j++) free(dx[j]);
    free(tape);
    ode_in_free(&in);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "ftz") == 0) {
        unsigned m;
        __asm__ volatile("stmxcsr %0" : "=m"(m));
        m |= 0x8040;
        __asm__ volatile("ldmxcsr %0" ::"m"(m));
        printf("(flush-to-zero and denormals-are-zero set: a diagnostic, results differ)\n");
    }
    run(10, 1000, 500);
    run(100, 1000, 100);
    run(1000, 1000, 30);
    printf("%g\n", sink > 0 ? 0.0 : 1.0);
    return 0;
}
