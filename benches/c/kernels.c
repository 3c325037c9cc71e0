/* C translations of the example kernels that benches/kernels.rs times
   (examples/gmm.ad, lstm.ad, heat.ad), for `cc -O2`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The entry points are not inlined into main or specialised for its constant sizes (noipa):
   like the JIT's functions, they get their sizes at run time. */
#define KERNEL __attribute__((noipa)) static

KERNEL double gmm(const double *x, int64_t n, const double *w, const double *mu, const double *sigma, int64_t k) {
    double total = 0.0, lp[64];
    for (int64_t i = 0; i < n; i++) {
        double best = -1e300;
        for (int64_t j = 0; j < k; j++) {
            double z = (x[i] - mu[j]) / sigma[j];
            lp[j] = log(w[j]) - log(sigma[j]) - 0.5 * (1.8378770664093453 + z * z);
            best = lp[j] > best ? lp[j] : best;
        }
        double s = 0.0;
        for (int64_t j = 0; j < k; j++) s += exp(lp[j] - best);
        total += best + log(s);
    }
    return total;
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

static void lstm_step(const double *w, const double *b, const double *x, int64_t xs, const double *h, const double *c,
                      int64_t hs, double *h_new, double *c_new) {
    int64_t cols = xs + hs;
    double gate[4];
    for (int64_t k = 0; k < hs; k++) {
        for (int g = 0; g < 4; g++) {
            int64_t row = g * hs + k;
            double acc = b[row];
            for (int64_t j = 0; j < xs; j++) acc += w[row * cols + j] * x[j];
            for (int64_t j = 0; j < hs; j++) acc += w[row * cols + xs + j] * h[j];
            gate[g] = acc;
        }
        c_new[k] = sigmoid(gate[1]) * c[k] + sigmoid(gate[0]) * tanh(gate[2]);
        h_new[k] = sigmoid(gate[3]) * tanh(c_new[k]);
    }
}

KERNEL double lstm(const double *w, const double *b, const double *x, int64_t xs, const double *h, const double *c, int64_t hs) {
    double *h2 = calloc(hs, sizeof(double)), *c2 = calloc(hs, sizeof(double));
    lstm_step(w, b, x, xs, h, c, hs, h2, c2);
    double s = 0.0;
    for (int64_t k = 0; k < hs; k++) s += h2[k] + 0.5 * c2[k];
    free(h2);
    free(c2);
    return s;
}

KERNEL double heat(double *u, int64_t n, double alpha, int64_t steps) {
    double *next = calloc(n, sizeof(double));
    for (int64_t t = 0; t < steps; t++) {
        next[0] = u[0];
        next[n - 1] = u[n - 1];
        for (int64_t i = 1; i < n - 1; i++) next[i] = u[i] + alpha * (u[i - 1] - 2.0 * u[i] + u[i + 1]);
        for (int64_t i = 0; i < n; i++) u[i] = next[i];
    }
    free(next);
    double e = 0.0;
    for (int64_t i = 0; i < n; i++) e += u[i] * u[i];
    return e;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define TIME(name, reps, expr) do { \
    volatile double sink = 0.0; double best = 1e30; \
    for (int r = 0; r < 5; r++) { double t0 = now(); for (int i = 0; i < reps; i++) sink += (expr); double t = (now() - t0) / reps; if (t < best) best = t; } \
    printf("%s %.9f %.17g\n", name, best, (double)sink); } while (0)

int main(void) {
    int64_t n = 100000, k = 8, hs = 64, xs = 64, hn = 1000, steps = 200;
    double *x = malloc(n * sizeof(double)), w[8], mu[8], sg[8];
    for (int64_t i = 0; i < n; i++) x[i] = sin((double)i) * 3.0;
    for (int j = 0; j < k; j++) { w[j] = 1.0 / k; mu[j] = j - 4.0; sg[j] = 0.5 + 0.1 * j; }
    double *lw = malloc(4 * hs * (xs + hs) * sizeof(double)), *lb = malloc(4 * hs * sizeof(double));
    double *lx = malloc(xs * sizeof(double)), *lh = malloc(hs * sizeof(double)), *lc = malloc(hs * sizeof(double));
    for (int64_t i = 0; i < 4 * hs * (xs + hs); i++) lw[i] = 0.01 * sin((double)i);
    for (int64_t i = 0; i < 4 * hs; i++) lb[i] = 0.001 * i;
    for (int64_t i = 0; i < xs; i++) lx[i] = cos((double)i);
    for (int64_t i = 0; i < hs; i++) { lh[i] = 0.1 * sin((double)i); lc[i] = 0.2 * cos((double)i); }
    double *u = malloc(hn * sizeof(double)), *u0 = malloc(hn * sizeof(double));
    for (int64_t i = 0; i < hn; i++) u0[i] = sin(0.01 * i);
    TIME("gmm", 5, gmm(x, n, w, mu, sg, k));
    TIME("lstm", 200, lstm(lw, lb, lx, xs, lh, lc, hs));
    TIME("heat", 5, (memcpy(u, u0, hn * sizeof(double)), heat(u, hn, 0.25, steps)));
    return 0;
}
