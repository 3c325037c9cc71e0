/* lstm: lstm_objective and lstm_jacobian (GradBench's objective, jacobian):
 * l layers, c characters, hidden size b. */
#include "bench.h"
#include "lstm.h"

static void run(int l, int c, int b) {
    rng_seed(5u * (uint64_t)l + 977u * (uint64_t)c + (uint64_t)b);
    int64_t nm = 8LL * b * l, ne = 3LL * b, ns = 2LL * l * b, nq = (int64_t)c * b;
    double *mn = drandn(nm, 0.5), *ex = drandn(ne, 0.5), *st = drandn(ns, 0.5);
    double *seq = drange(nq, 0.0, 1.0), *dm = dalloc(nm), *de = dalloc(ne), y = 0.0;
    char label[128];
    snprintf(label, sizeof label, "lstm_objective[l=%d,c=%d,b=%d]", l, c, b);
    BENCH(label, (void)0, y = lstm_objective(mn, nm, ex, ne, st, ns, seq, nq), ck_add1(y));
    snprintf(label, sizeof label, "lstm_jacobian[l=%d,c=%d,b=%d]", l, c, b);
    BENCH(label, (ZERO(dm, nm), ZERO(de, ne)),
          lstm_jacobian(mn, nm, dm, nm, ex, ne, de, ne, st, ns, seq, nq, 1.0),
          (ck_add(dm, nm), ck_add(de, ne)));
    free(mn); free(ex); free(st); free(seq); free(dm); free(de);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    run(2, 1024, 14);
    run(4, 4096, 14);
    return 0;
}
