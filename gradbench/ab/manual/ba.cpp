// ba with GradBench's `manual`: ba::Objective and the Jacobian (a new
// ba::SparseMat each call, as GradBench's), on the inputs of ba.c; the
// Jacobian's vals, rows and cols are in the same order as adc's.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/ba.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  ba_in in;
  ba_in_make(&in, size[0], size[1], size[2]);
  int       n = in.n, m = in.m, p = in.p;
  ba::Input g;
  g.n     = n;
  g.m     = m;
  g.p     = p;
  g.cams  = vec(in.cams, 11 * (size_t)n);
  g.X     = vec(in.x, 3 * (size_t)m);
  g.w     = vec(in.w, p);
  g.feats = vec(in.feats, 2 * (size_t)p);
  g.obs   = ivec(in.obs, 2 * (size_t)p);
  char label[128];

  ba::Objective objective(g);
  ba::ObjOutput e;
  ba_in_label(label, sizeof label, "ba_objective", &in);
  BENCH(label, (void)0, (objective.compute(e), keep(e)), (ck_vec(e.reproj_err), ck_vec(e.w_err)));

  Jacobian      jacobian(g);
  ba::JacOutput j;
  ba_in_label(label, sizeof label, "ba_jacobian", &in);
  BENCH(label, (void)0, (jacobian.compute(j), keep(j)), (ck_vec(j.vals), ck_ivec(j.rows), ck_ivec(j.cols)));
  ba_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(ba_sizes); i++) run(ba_sizes[i]);
  return 0;
}
