/* lstm: lstm_objective and lstm_jacobian (GradBench's objective, jacobian):
 * l layers, c characters, hidden size b. */
#include "bench.h"
#include "inputs.h"
#include "lstm.h"

static void run(const int *size) {
    lstm_in in;
    lstm_in_make(&in, size[0], size[1], size[2]);
    int64_t nm = in.nm, ne = in.ne, ns = in.ns, nq = in.nq;
    double *mn = in.main, *ex = in.extra, *st = in.state, *seq = in.seq;
    double *dm = dalloc(nm), *de = dalloc(ne), y = 0.0;
    char label[128];
    lstm_in_label(label, sizeof label, "lstm_objective", &in);
    BENCH(label, (void)0, y = lstm_objective(mn, nm, ex, ne, st, ns, seq, nq), ck_add1(y));
    lstm_in_label(label, sizeof label, "lstm_jacobian", &in);
    BENCH(label, (ZERO(dm, nm), ZERO(de, ne)),
          lstm_jacobian(mn, nm, dm, nm, ex, ne, de, ne, st, ns, seq, nq, 1.0),
          (ck_add(dm, nm), ck_add(de, ne)));
    lstm_in_free(&in);
    free(dm); free(de);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(lstm_sizes); i++) run(lstm_sizes[i]);
    return 0;
}
