/* ba: ba_objective and ba_jacobian (GradBench's objective, jacobian): n
 * cameras, m points, p observations (inputs.h). */
#include "bench.h"
#include "inputs.h"
#include "ba.h"

static void run(const int *size) {
    ba_in in;
    ba_in_make(&in, size[0], size[1], size[2]);
    int n = in.n, m = in.m, p = in.p;
    double *cams = in.cams, *x = in.x, *w = in.w, *feats = in.feats;
    int64_t *obs = in.obs;
    double *re = dalloc(2 * (size_t)p), *we = dalloc(p);
    int64_t nv = 31LL * p, nr = 3LL * p + 1;
    double *vals = dalloc(nv);
    int64_t *rows = ialloc(nr), *cols = ialloc(nv);
    char label[128];
    ba_in_label(label, sizeof label, "ba_objective", &in);
    BENCH(label, (void)0,
          ba_objective(cams, 11LL * n, x, 3LL * m, w, p, obs, 2LL * p, feats, 2LL * p, re, 2LL * p, we, p),
          (ck_add(re, 2LL * p), ck_add(we, p)));
    ba_in_label(label, sizeof label, "ba_jacobian", &in);
    BENCH(label, (void)0,
          ba_jacobian(cams, 11LL * n, x, 3LL * m, w, p, obs, 2LL * p, feats, 2LL * p, vals, nv, rows, nr,
                      cols, nv),
          (ck_add(vals, nv), ck_addi(rows, nr), ck_addi(cols, nv)));
    ba_in_free(&in);
    free(re); free(we); free(vals); free(rows); free(cols);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(ba_sizes); i++) run(ba_sizes[i]);
    return 0;
}
