/* C translations of the kernels that benches/kernels.rs times
   (examples/gmm.ad, lstm.ad, heat.ad; benches/ad/matmul.ad, project.ad, ode.ad),
   for `cc -O2`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The entry points are not inlined into main or specialised for its constant sizes (noipa):
   like the JIT's functions, they get their sizes at run time. */
#define KERNEL __attribute__((noipa)) static

/* Sizes and inputs, the same as benches/kernels.rs's. */
#define MATMUL_N 96
#define PROJECT_POINTS 20000
#define ODE_STATE 32
#define ODE_STEPS 2000
#define CAM_INIT(i) (0.1 + 0.05 * (i) + ((i) == 6 ? 400.0 : 0.0) + ((i) >= 9 ? -0.1 : 0.0))
#define PTS_INIT(i) (sin(0.37 * (i)) + ((i) % 3 == 2 ? 5.0 : 0.0))
#define OBS_INIT(i) (10.0 * cos(0.11 * (i)))
#define ODE_INIT(i) (0.3 * sin(0.7 * (i)))

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

KERNEL double matmul(const double *a, const double *b, double *o, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            o[i * n + j] = 0.0;
            for (int64_t p = 0; p < n; p++) o[i * n + j] += a[i * n + p] * b[p * n + j];
        }
    double s = 0.0;
    for (int64_t i = 0; i < n * n; i++) s += o[i];
    return s;
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double *a, const double *b, double *c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static void rodrigues(const double *w, const double *x, double *y) {
    double theta = sqrt(dot3(w, w)), k[3], kx[3];
    for (int i = 0; i < 3; i++) k[i] = w[i] / theta;
    cross3(k, x, kx);
    double c = cos(theta), s = sin(theta), kd = dot3(k, x) * (1.0 - c);
    for (int i = 0; i < 3; i++) y[i] = x[i] * c + kx[i] * s + k[i] * kd;
}

KERNEL double reproj(const double *cam, const double *pts, int64_t npts, const double *obs) {
    double err = 0.0;
    int64_t m = npts / 3;
    for (int64_t i = 0; i < m; i++) {
        double d[3], y[3];
        for (int k = 0; k < 3; k++) d[k] = pts[3 * i + k] - cam[3 + k];
        rodrigues(cam, d, y);
        double px = y[0] / y[2], py = y[1] / y[2], r2 = px * px + py * py;
        double dist = 1.0 + cam[9] * r2 + cam[10] * r2 * r2;
        double ex = cam[6] * dist * px + cam[7] - obs[2 * i], ey = cam[6] * dist * py + cam[8] - obs[2 * i + 1];
        err += ex * ex + ey * ey;
    }
    return err;
}

static void rhs(const double *y, int64_t len, double *dy) {
    int64_t n = len / 2;
    for (int64_t i = 0; i < n; i++) {
        double left = i > 0 ? y[i - 1] : 0.0, right = i + 1 < n ? y[i + 1] : 0.0;
        dy[i] = y[n + i];
        dy[n + i] = -sin(y[i]) + 0.1 * (left - 2.0 * y[i] + right) - 0.01 * y[n + i];
    }
}

KERNEL double rk4(double *y, int64_t s, double h, int64_t steps) {
    double *k1 = calloc(s, sizeof(double)), *k2 = calloc(s, sizeof(double)), *k3 = calloc(s, sizeof(double));
    double *k4 = calloc(s, sizeof(double)), *t = calloc(s, sizeof(double));
    for (int64_t step = 0; step < steps; step++) {
        rhs(y, s, k1);
        for (int64_t i = 0; i < s; i++) t[i] = y[i] + 0.5 * h * k1[i];
        rhs(t, s, k2);
        for (int64_t i = 0; i < s; i++) t[i] = y[i] + 0.5 * h * k2[i];
        rhs(t, s, k3);
        for (int64_t i = 0; i < s; i++) t[i] = y[i] + h * k3[i];
        rhs(t, s, k4);
        for (int64_t i = 0; i < s; i++) y[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
    free(k1); free(k2); free(k3); free(k4); free(t);
    double e = 0.0;
    for (int64_t i = 0; i < s; i++) e += y[i] * y[i];
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
    int64_t mn = MATMUL_N, np = PROJECT_POINTS, os = ODE_STATE;
    double *ma = malloc(mn * mn * sizeof(double)), *mb = malloc(mn * mn * sizeof(double)), *mo = malloc(mn * mn * sizeof(double));
    for (int64_t i = 0; i < mn * mn; i++) { ma[i] = sin(0.1 * i); mb[i] = cos(0.2 * i); }
    double cam[11], *pts = malloc(3 * np * sizeof(double)), *obs = malloc(2 * np * sizeof(double));
    for (int i = 0; i < 11; i++) cam[i] = CAM_INIT(i);
    for (int64_t i = 0; i < 3 * np; i++) pts[i] = PTS_INIT(i);
    for (int64_t i = 0; i < 2 * np; i++) obs[i] = OBS_INIT(i);
    double *oy = malloc(os * sizeof(double)), *oy0 = malloc(os * sizeof(double));
    for (int64_t i = 0; i < os; i++) oy0[i] = ODE_INIT(i);
    TIME("matmul", 20, matmul(ma, mb, mo, mn));
    TIME("project", 20, reproj(cam, pts, 3 * np, obs));
    TIME("ode", 5, (memcpy(oy, oy0, os * sizeof(double)), rk4(oy, os, 0.01, ODE_STEPS)));
    return 0;
}
