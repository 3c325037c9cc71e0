/* gmm: gmm_objective and gmm_jacobian (GradBench's objective, jacobian). */
#include "bench.h"
#include "gmm.h"

static void run(int d, int k, int n) {
    rng_seed(1000003u * (uint64_t)d + 1009u * (uint64_t)k + (uint64_t)n);
    int tri = d * (d - 1) / 2;
    double *alpha = drandn(k, 1.0), *mu = drange((size_t)k * d, 0.0, 1.0);
    double *q = drandn((size_t)k * d, 0.1), *l = drandn((size_t)k * tri, 0.1);
    double *x = drandn((size_t)n * d, 1.0);
    double *da = dalloc(k), *dmu = dalloc((size_t)k * d), *dq = dalloc((size_t)k * d);
    double *dl = dalloc((size_t)k * tri);
    int64_t m = 0;
    double gamma = 1.0, y = 0.0;
    char label[128];
    snprintf(label, sizeof label, "gmm_objective[d=%d,k=%d,n=%d]", d, k, n);
    BENCH(label, (void)0,
          y = gmm_objective(alpha, k, mu, (int64_t)k * d, q, (int64_t)k * d, l, (int64_t)k * tri, x,
                            (int64_t)n * d, m, gamma),
          ck_add1(y));
    snprintf(label, sizeof label, "gmm_jacobian[d=%d,k=%d,n=%d]", d, k, n);
    BENCH(label,
          (ZERO(da, k), ZERO(dmu, (size_t)k * d), ZERO(dq, (size_t)k * d), ZERO(dl, (size_t)k * tri)),
          gmm_jacobian(alpha, k, da, k, mu, (int64_t)k * d, dmu, (int64_t)k * d, q, (int64_t)k * d, dq,
                       (int64_t)k * d, l, (int64_t)k * tri, dl, (int64_t)k * tri, x, (int64_t)n * d, m,
                       gamma, 1.0),
          (ck_add(da, k), ck_add(dmu, (int64_t)k * d), ck_add(dq, (int64_t)k * d),
           ck_add(dl, (int64_t)k * tri)));
    free(alpha); free(mu); free(q); free(l); free(x); free(da); free(dmu); free(dq); free(dl);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    /* (Larger ones make single calls slow and the tape big: d=64, k=200
     * takes about 12 s and a 6.6 GB tape with adc-9204b47.) */
    run(10, 25, 1000);
    run(20, 50, 1000);
    run(64, 5, 1000);
    return 0;
}
