/* llsq: llsq and llsq_gradient (GradBench's primal, gradient); m = len(x)
 * coefficients, n points. */
#include "bench.h"
#include "llsq.h"

static void run(int m, int n) {
    rng_seed(101u * (uint64_t)m + (uint64_t)n);
    double *x = drandn(m, 1.0), *dx = dalloc(m), y = 0.0;
    char label[128];
    snprintf(label, sizeof label, "llsq[m=%d,n=%d]", m, n);
    BENCH(label, (void)0, y = llsq(x, m, n), ck_add1(y));
    snprintf(label, sizeof label, "llsq_gradient[m=%d,n=%d]", m, n);
    BENCH(label, ZERO(dx, m), llsq_gradient(x, m, dx, m, n, 1.0), ck_add(dx, m));
    free(x); free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(16, 1024);
    run(256, 4096);
    return 0;
}
