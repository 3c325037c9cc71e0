/* lse: lse and lse_gradient (GradBench's primal, gradient). */
#include "bench.h"
#include "lse.h"

static void run(int n) {
    rng_seed(17u + (uint64_t)n);
    double *x = drandn(n, 3.0), *dx = dalloc(n), y = 0.0;
    char label[128];
    snprintf(label, sizeof label, "lse[n=%d]", n);
    BENCH(label, (void)0, y = lse(x, n), ck_add1(y));
    snprintf(label, sizeof label, "lse_gradient[n=%d]", n);
    BENCH(label, ZERO(dx, n), lse_gradient(x, n, dx, n, 1.0), ck_add(dx, n));
    free(x); free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(1000);
    run(1000000);
    return 0;
}
