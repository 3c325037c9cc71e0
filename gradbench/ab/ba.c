/* ba: ba_objective and ba_jacobian (GradBench's objective, jacobian): n
 * cameras, m points, p observations, with random but valid cameras (small
 * rotations, centers 10 behind the points, so depths stay positive). */
#include "bench.h"
#include "ba.h"

static void run(int n, int m, int p) {
    rng_seed(13u * (uint64_t)n + 101u * (uint64_t)m + (uint64_t)p);
    double *cams = dalloc(11 * (size_t)n), *x = drange(3 * (size_t)m, -1.0, 1.0);
    for (int c = 0; c < n; c++) {
        double *cam = cams + 11 * c;
        for (int i = 0; i < 3; i++) cam[i] = 0.1 * rng_normal();       /* rotation */
        cam[3] = 0.5 * rng_normal();                                   /* center */
        cam[4] = 0.5 * rng_normal();
        cam[5] = -10.0 + 0.5 * rng_normal();
        cam[6] = rng_range(400.0, 600.0);                              /* focal */
        cam[7] = rng_range(-5.0, 5.0);                                 /* principal point */
        cam[8] = rng_range(-5.0, 5.0);
        cam[9] = 1e-3 * rng_normal();                                  /* distortion */
        cam[10] = 1e-4 * rng_normal();
    }
    double *w = drange(p, 0.5, 1.5), *feats = drange(2 * (size_t)p, -50.0, 50.0);
    int64_t *obs = ialloc(2 * (size_t)p);
    for (int i = 0; i < p; i++) {
        obs[2 * i] = rng_int(n);
        obs[2 * i + 1] = i < m ? i : rng_int(m);   /* every point observed */
    }
    double *re = dalloc(2 * (size_t)p), *we = dalloc(p);
    int64_t nv = 31LL * p, nr = 3LL * p + 1;
    double *vals = dalloc(nv);
    int64_t *rows = ialloc(nr), *cols = ialloc(nv);
    char label[128];
    snprintf(label, sizeof label, "ba_objective[n=%d,m=%d,p=%d]", n, m, p);
    BENCH(label, (void)0,
          ba_objective(cams, 11LL * n, x, 3LL * m, w, p, obs, 2LL * p, feats, 2LL * p, re, 2LL * p, we, p),
          (ck_add(re, 2LL * p), ck_add(we, p)));
    snprintf(label, sizeof label, "ba_jacobian[n=%d,m=%d,p=%d]", n, m, p);
    BENCH(label, (void)0,
          ba_jacobian(cams, 11LL * n, x, 3LL * m, w, p, obs, 2LL * p, feats, 2LL * p, vals, nv, rows, nr,
                      cols, nv),
          (ck_add(vals, nv), ck_addi(rows, nr), ck_addi(cols, nv)));
    free(cams); free(x); free(w); free(feats); free(obs); free(re); free(we); free(vals); free(rows);
    free(cols);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(21, 11315, 36455);   /* the sizes of GradBench's ba1 */
    return 0;
}
