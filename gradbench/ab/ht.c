/* ht: ht_objective and ht_jacobian (GradBench's objective, jacobian) on a
 * synthetic hand (inputs.h). Simple variant: points correspond to
 * vertices; complicated: to points of triangles given by us. */
#include "bench.h"
#include "inputs.h"
#include "ht.h"

#define NB HT_NB
#define NV HT_NV
#define NT HT_NT

static void run(const int *size) {
    ht_in in;
    ht_in_make(&in, size[0], size[1]);
    int complicated = in.complicated, npts = in.npts;
    int64_t *parents = in.parents, *tris = in.tris, *corr = in.corr;
    double *rel = in.rel, *inv = in.inv, *pos = in.pos, *weights = in.weights, *theta = in.theta;
    double *points = in.points, *us = in.us;
    int64_t nus = complicated ? 2LL * npts : 0, nerr = 3LL * npts;
    int64_t njac = nerr * (complicated ? 28 : 26);
    double *err = dalloc(nerr), *jac = dalloc(njac);
    bool mirrored = complicated;   /* both branches, one per variant */
    char label[128];
    ht_in_label(label, sizeof label, "ht_objective", &in);
    BENCH(label, (void)0,
          ht_objective(theta, 26, parents, NB, rel, 16 * NB, inv, 16 * NB, pos, 4 * NV, weights,
                       (int64_t)NB * NV, tris, 3 * NT, mirrored, corr, npts, points, nerr, us, nus, err,
                       nerr),
          ck_add(err, nerr));
    ht_in_label(label, sizeof label, "ht_jacobian", &in);
    BENCH(label, (void)0,
          ht_jacobian(theta, 26, parents, NB, rel, 16 * NB, inv, 16 * NB, pos, 4 * NV, weights,
                      (int64_t)NB * NV, tris, 3 * NT, mirrored, corr, npts, points, nerr, us, nus, jac,
                      njac),
          ck_add(jac, njac));
    ht_in_free(&in);
    free(err); free(jac);
}

int main(int argc, char **argv) {
    bench_args(argc, argv);
    for (int i = 0; i < AB_COUNT(ht_sizes); i++) run(ht_sizes[i]);
    return 0;
}
