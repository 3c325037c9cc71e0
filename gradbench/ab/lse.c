/* lse: lse and lse_gradient (GradBench's primal, gradient). */
#include "bench.h"
#include "inputs.h"
#include "lse.h"

static void run(int size) {
    lse_in in;
    lse_in_make(&in, size);
    int n = in.n;
    double *x = in.x, *dx = dalloc(n), y = 0.0;
    char label[128];
    lse_in_label(label, sizeof label, "lse", &in);
    BENCH(label, (void)0, y = lse(x, n), ck_add1(y));
    lse_in_label(label, sizeof label, "lse_gradient", &in);
    BENCH(label, ZERO(dx, n), lse_gradient(x, n, dx, n, 1.0), ck_add(dx, n));
    lse_in_free(&in);
    free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(lse_sizes); i++) run(lse_sizes[i]);
    return 0;
}
