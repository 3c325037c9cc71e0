// gmm with GradBench's `manual`: gmm::Objective and the Jacobian
// (gmm_objective_d), on the inputs of gmm.c.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/gmm.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  gmm_in in;
  gmm_in_make(&in, size[0], size[1], size[2]);
  int        d = in.d, k = in.k, n = in.n, tri = in.tri;
  gmm::Input g;
  g.d             = d;
  g.k             = k;
  g.n             = n;
  g.alpha         = vec(in.alpha, k);
  g.mu            = vec(in.mu, (size_t)k * d);
  g.q             = vec(in.q, (size_t)k * d);
  g.l             = vec(in.l, (size_t)k * tri);
  g.x             = vec(in.x, (size_t)n * d);
  g.wishart.gamma = 1.0;
  g.wishart.m     = 0;
  char label[128];

  gmm::Objective  objective(g);
  gmm::ObjOutput  y = 0.0;
  gmm_in_label(label, sizeof label, "gmm_objective", &in);
  BENCH(label, (void)0, (objective.compute(y), keep(y)), ck_add1(y));

  Jacobian        jacobian(g);
  gmm::JacOutput  j;
  gmm_in_label(label, sizeof label, "gmm_jacobian", &in);
  BENCH(label, (void)0, (jacobian.compute(j), keep(j)), (ck_vec(j.alpha), ck_vec(j.mu), ck_vec(j.q), ck_vec(j.l)));
  gmm_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(gmm_sizes); i++) run(gmm_sizes[i]);
  return 0;
}
