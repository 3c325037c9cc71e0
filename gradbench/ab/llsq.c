/* llsq: llsq and llsq_gradient (GradBench's primal, gradient); m = len(x)
 * coefficients, n points. */
#include "bench.h"
#include "inputs.h"
#include "llsq.h"

static void run(const int *size) {
    llsq_in in;
    llsq_in_make(&in, size[0], size[1]);
    int m = in.m, n = in.n;
    double *x = in.x, *dx = dalloc(m), y = 0.0;
    char label[128];
    llsq_in_label(label, sizeof label, "llsq", &in);
    BENCH(label, (void)0, y = llsq(x, m, n), ck_add1(y));
    llsq_in_label(label, sizeof label, "llsq_gradient", &in);
    BENCH(label, ZERO(dx, m), llsq_gradient(x, m, dx, m, n, 1.0), ck_add(dx, m));
    llsq_in_free(&in);
    free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(llsq_sizes); i++) run(llsq_sizes[i]);
    return 0;
}
