/* det: det and det_gradient (GradBench's primal, gradient) of an ell x ell
 * matrix (expansion by minors: ell! work). */
#include "bench.h"
#include "det.h"

static void run(int ell) {
    rng_seed(4242u + (uint64_t)ell);
    int64_t n = (int64_t)ell * ell;
    double *a = drange(n, -1.0, 1.0), *da = dalloc(n), y = 0.0;
    char label[128];
    snprintf(label, sizeof label, "det[ell=%d]", ell);
    BENCH(label, (void)0, y = det(a, n, ell), ck_add1(y));
    snprintf(label, sizeof label, "det_gradient[ell=%d]", ell);
    BENCH(label, ZERO(da, n), det_gradient(a, n, da, n, ell, 1.0), ck_add(da, n));
    free(a); free(da);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(7);
    run(9);
    return 0;
}
