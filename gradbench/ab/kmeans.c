/* kmeans: cost, its gradient cost_gradient, and dir (GradBench's cost and
 * dir: forward over reverse). Centroids are the first k points, so that
 * every centroid has a point and dir's Hessian diagonal is not zero. */
#include "bench.h"
#include "kmeans.h"

static void run(int k, int n, int d) {
    rng_seed(7u * (uint64_t)k + 1000003u * (uint64_t)n + (uint64_t)d);
    double *p = drange((size_t)n * d, 0.0, 1.0), *c = dalloc((size_t)k * d);
    memcpy(c, p, sizeof(double) * (size_t)k * d);
    double *g = dalloc((size_t)k * d), *dir_ = dalloc((size_t)k * d), y = 0.0;
    int64_t np = (int64_t)n * d, nc = (int64_t)k * d;
    char label[128];
    snprintf(label, sizeof label, "cost[k=%d,n=%d,d=%d]", k, n, d);
    BENCH(label, (void)0, y = cost(p, np, c, nc, d), ck_add1(y));
    snprintf(label, sizeof label, "cost_gradient[k=%d,n=%d,d=%d]", k, n, d);
    BENCH(label, ZERO(g, nc), cost_gradient(p, np, c, nc, g, nc, d, 1.0), ck_add(g, nc));
    snprintf(label, sizeof label, "dir[k=%d,n=%d,d=%d]", k, n, d);
    BENCH(label, (void)0, dir(p, np, c, nc, d, dir_, nc), ck_add(dir_, nc));
    free(p); free(c); free(g); free(dir_);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(100, 1000, 8);
    run(100, 1000, 32);
    return 0;
}
