/* kmeans: cost, its gradient cost_gradient, and dir (GradBench's cost and
 * dir: forward over reverse). */
#include "bench.h"
#include "inputs.h"
#include "kmeans.h"

static void run(const int *size) {
    kmeans_in in;
    kmeans_in_make(&in, size[0], size[1], size[2]);
    int k = in.k, d = in.d;
    double *p = in.p, *c = in.c;
    double *g = dalloc((size_t)k * d), *dir_ = dalloc((size_t)k * d), y = 0.0;
    int64_t np = (int64_t)in.n * d, nc = (int64_t)k * d;
    char label[128];
    kmeans_in_label(label, sizeof label, "cost", &in);
    BENCH(label, (void)0, y = cost(p, np, c, nc, d), ck_add1(y));
    kmeans_in_label(label, sizeof label, "cost_gradient", &in);
    BENCH(label, ZERO(g, nc), cost_gradient(p, np, c, nc, g, nc, d, 1.0), ck_add(g, nc));
    kmeans_in_label(label, sizeof label, "dir", &in);
    BENCH(label, (void)0, dir(p, np, c, nc, d, dir_, nc), ck_add(dir_, nc));
    kmeans_in_free(&in);
    free(g); free(dir_);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(kmeans_sizes); i++) run(kmeans_sizes[i]);
    return 0;
}
