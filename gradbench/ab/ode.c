/* ode: ode_primal and ode_gradient (GradBench's primal, gradient). */
#include "bench.h"
#include "ode.h"

static void run(int n, int s) {
    rng_seed(31u * (uint64_t)n + (uint64_t)s);
    double *x = drange(n, 0.0, 1.0), *yf = dalloc(n), *dx = dalloc(n);
    char label[128];
    snprintf(label, sizeof label, "ode_primal[n=%d,s=%d]", n, s);
    BENCH(label, (void)0, ode_primal(x, n, s, yf, n), ck_add(yf, n));
    snprintf(label, sizeof label, "ode_gradient[n=%d,s=%d]", n, s);
    BENCH(label, ZERO(dx, n), ode_gradient(x, n, dx, n, s, 1.0), ck_add(dx, n));
    free(x); free(yf); free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(10, 1000);
    run(100, 1000);
    run(1000, 1000);   /* (the last element, and so the gradient, underflows to 0) */
    return 0;
}
