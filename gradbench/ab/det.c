/* det: det and det_gradient (GradBench's primal, gradient) of an ell x ell
 * matrix (expansion by minors: ell! work). */
#include "bench.h"
#include "inputs.h"
#include "det.h"

static void run(int size) {
    det_in in;
    det_in_make(&in, size);
    int ell = in.ell;
    int64_t n = (int64_t)ell * ell;
    double *a = in.a, *da = dalloc(n), y = 0.0;
    char label[128];
    det_in_label(label, sizeof label, "det", &in);
    BENCH(label, (void)0, y = det(a, n, ell), ck_add1(y));
    det_in_label(label, sizeof label, "det_gradient", &in);
    BENCH(label, ZERO(da, n), det_gradient(a, n, da, n, ell, 1.0), ck_add(da, n));
    det_in_free(&in);
    free(da);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(det_sizes); i++) run(det_sizes[i]);
    return 0;
}
