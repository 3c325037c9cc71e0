/* ht: ht_objective and ht_jacobian (GradBench's objective, jacobian) on a
 * synthetic hand shaped like GradBench's: 22 bones (root, palm, 5 fingers
 * of 4 bones; theta moves the first three of each finger), 544 vertices
 * skinned to one or two bones, 1084 triangles; rigid base transforms and
 * their true inverses. Simple variant: points correspond to vertices;
 * complicated: to points of triangles given by us. */
#include "bench.h"
#include "ht.h"

#define NB 22
#define NV 544
#define NT 1084

/* c = a b, 4x4 row-major */
static void mul4(const double *a, const double *b, double *c) {
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += a[4 * i + k] * b[4 * k + j];
            c[4 * i + j] = s;
        }
}

/* A rigid transform: rotation Rz(c) Ry(b) Rx(a), then translation t. */
static void rigid(double a, double b, double c, double t0, double t1, double t2, double *m) {
    double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
    double r[9] = {cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa,
                   sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa,
                   -sb,     cb * sa,                cb * ca};
    double t[3] = {t0, t1, t2};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) m[4 * i + j] = r[3 * i + j];
        m[4 * i + 3] = t[i];
    }
    m[12] = m[13] = m[14] = 0.0;
    m[15] = 1.0;
}

/* The inverse of a rigid transform. */
static void rigid_inverse(const double *m, double *o) {
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) o[4 * i + j] = m[4 * j + i];
        o[4 * i + 3] = -(m[i] * m[3] + m[4 + i] * m[7] + m[8 + i] * m[11]);
    }
    o[12] = o[13] = o[14] = 0.0;
    o[15] = 1.0;
}

static void run(int complicated, int npts) {
    rng_seed(99991u * (uint64_t)complicated + (uint64_t)npts);
    int64_t parents[NB];
    double rel[16 * NB], absm[16 * NB], inv[16 * NB];
    for (int b = 0; b < NB; b++) {
        int f = (b - 2) / 4, j = (b - 2) % 4;
        double t0 = 0.0, t1 = 0.0;
        if (b == 0) parents[b] = -1;
        else if (b == 1) { parents[b] = 0; t1 = 0.3; }
        else if (j == 0) { parents[b] = 1; t0 = -0.4 + 0.2 * f; t1 = 0.8; }
        else { parents[b] = b - 1; t1 = 0.3 - 0.05 * j; }
        rigid(0.2 * rng_normal(), 0.2 * rng_normal(), 0.2 * rng_normal(), t0, t1, 0.0, rel + 16 * b);
        if (parents[b] < 0) memcpy(absm, rel, sizeof(double) * 16);
        else mul4(absm + 16 * parents[b], rel + 16 * b, absm + 16 * b);
        rigid_inverse(absm + 16 * b, inv + 16 * b);
    }
    double *pos = dalloc(4 * NV), *weights = dalloc((size_t)NB * NV);
    for (int v = 0; v < NV; v++) {
        int b = (int)rng_int(NB);
        double local[4] = {rng_range(-0.1, 0.1), rng_range(0.0, 0.3), rng_range(-0.1, 0.1), 1.0};
        for (int i = 0; i < 4; i++) {
            double s = 0.0;
            for (int k = 0; k < 4; k++) s += absm[16 * b + 4 * i + k] * local[k];
            pos[4 * v + i] = s;
        }
        double w = rng_range(0.6, 1.0);
        if (parents[b] >= 0) {
            weights[NB * v + b] = w;
            weights[NB * v + parents[b]] = 1.0 - w;
        } else {
            weights[NB * v + b] = 1.0;
        }
    }
    int64_t *tris = ialloc(3 * NT);
    for (int t = 0; t < NT; t++) {
        int64_t a = rng_int(NV), b, c;
        do b = rng_int(NV); while (b == a);
        do c = rng_int(NV); while (c == a || c == b);
        tris[3 * t] = a; tris[3 * t + 1] = b; tris[3 * t + 2] = c;
    }
    double theta[26];
    for (int i = 0; i < 26; i++) theta[i] = 0.3 * rng_normal();
    for (int i = 3; i < 6; i++) theta[i] = rng_normal();
    int64_t *corr = ialloc(npts);
    double *points = dalloc(3 * (size_t)npts), *us = dalloc(complicated ? 2 * (size_t)npts : 0);
    for (int i = 0; i < npts; i++) {
        corr[i] = rng_int(complicated ? NT : NV);
        int64_t v = complicated ? tris[3 * corr[i]] : corr[i];
        for (int k = 0; k < 3; k++) points[3 * i + k] = pos[4 * v + k] + 0.05 * rng_normal();
        if (complicated) {
            double u0 = rng_unif(), u1 = rng_unif();
            if (u0 + u1 > 1.0) { u0 = 1.0 - u0; u1 = 1.0 - u1; }
            us[2 * i] = u0;
            us[2 * i + 1] = u1;
        }
    }
    int64_t nus = complicated ? 2LL * npts : 0, nerr = 3LL * npts;
    int64_t njac = nerr * (complicated ? 28 : 26);
    double *err = dalloc(nerr), *jac = dalloc(njac);
    bool mirrored = complicated;   /* both branches, one per variant */
    const char *kind = complicated ? "complicated" : "simple";
    char label[128];
    snprintf(label, sizeof label, "ht_objective[%s,c=%d]", kind, npts);
    BENCH(label, (void)0,
          ht_objective(theta, 26, parents, NB, rel, 16 * NB, inv, 16 * NB, pos, 4 * NV, weights,
                       (int64_t)NB * NV, tris, 3 * NT, mirrored, corr, npts, points, nerr, us, nus, err,
                       nerr),
          ck_add(err, nerr));
    snprintf(label, sizeof label, "ht_jacobian[%s,c=%d]", kind, npts);
    BENCH(label, (void)0,
          ht_jacobian(theta, 26, parents, NB, rel, 16 * NB, inv, 16 * NB, pos, 4 * NV, weights,
                      (int64_t)NB * NV, tris, 3 * NT, mirrored, corr, npts, points, nerr, us, nus, jac,
                      njac),
          ck_add(jac, njac));
    free(pos); free(weights); free(tris); free(corr); free(points); free(us); free(err); free(jac);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(0, 1600);
    run(1, 1600);
    return 0;
}
