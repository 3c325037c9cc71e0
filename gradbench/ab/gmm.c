/* gmm: gmm_objective and gmm_jacobian (GradBench's objective, jacobian). */
#include "bench.h"
#include "inputs.h"
#include "gmm.h"

static void run(const int *size) {
    gmm_in in;
    gmm_in_make(&in, size[0], size[1], size[2]);
    int d = in.d, k = in.k, n = in.n, tri = in.tri;
    double *alpha = in.alpha, *mu = in.mu, *q = in.q, *l = in.l, *x = in.x;
    double *da = dalloc(k), *dmu = dalloc((size_t)k * d), *dq = dalloc((size_t)k * d);
    double *dl = dalloc((size_t)k * tri);
    int64_t m = 0;
    double gamma = 1.0, y = 0.0;
    char label[128];
    gmm_in_label(label, sizeof label, "gmm_objective", &in);
    BENCH(label, (void)0,
          y = gmm_objective(alpha, k, mu, (int64_t)k * d, q, (int64_t)k * d, l, (int64_t)k * tri, x,
                            (int64_t)n * d, m, gamma),
          ck_add1(y));
    gmm_in_label(label, sizeof label, "gmm_jacobian", &in);
    BENCH(label,
          (ZERO(da, k), ZERO(dmu, (size_t)k * d), ZERO(dq, (size_t)k * d), ZERO(dl, (size_t)k * tri)),
          gmm_jacobian(alpha, k, da, k, mu, (int64_t)k * d, dmu, (int64_t)k * d, q, (int64_t)k * d, dq,
                       (int64_t)k * d, l, (int64_t)k * tri, dl, (int64_t)k * tri, x, (int64_t)n * d, m,
                       gamma, 1.0),
          (ck_add(da, k), ck_add(dmu, (int64_t)k * d), ck_add(dq, (int64_t)k * d),
           ck_add(dl, (int64_t)k * tri)));
    gmm_in_free(&in);
    free(da); free(dmu); free(dq); free(dl);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(gmm_sizes); i++) run(gmm_sizes[i]);
    return 0;
}
