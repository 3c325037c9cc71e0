/* ode: ode_primal and ode_gradient (GradBench's primal, gradient). */
#include "bench.h"
#include "inputs.h"
#include "ode.h"

static void run(const int *size) {
    ode_in in;
    ode_in_make(&in, size[0], size[1]);
    int n = in.n, s = in.s;
    double *x = in.x, *yf = dalloc(n), *dx = dalloc(n);
    char label[128];
    ode_in_label(label, sizeof label, "ode_primal", &in);
    BENCH(label, (void)0, ode_primal(x, n, s, yf, n), ck_add(yf, n));
    ode_in_label(label, sizeof label, "ode_gradient", &in);
    BENCH(label, ZERO(dx, n), ode_gradient(x, n, dx, n, s, 1.0), ck_add(dx, n));
    ode_in_free(&in);
    free(yf); free(dx);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(ode_sizes); i++) run(ode_sizes[i]);
    return 0;
}
