// det with GradBench's `manual`: det::Primal (expansion by minors, as adc's
// program) and Gradient, on the inputs of det.c. Manual's gradient is the
// cofactor matrix, each cofactor a determinant of an (ell-1) x (ell-1)
// minor by expansion: ell^2 (ell-1)! = ell ell! work, where reverse mode
// costs a constant times ell!.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/det.cpp"
#undef main
#undef generic_main

static void run(int size) {
  det_in in;
  det_in_make(&in, size);
  det::Input g;
  g.A   = vec(in.a, (size_t)in.ell * in.ell);
  g.ell = in.ell;
  char label[128];

  det::Primal       primal(g);
  det::PrimalOutput y = 0.0;
  det_in_label(label, sizeof label, "det", &in);
  BENCH(label, (void)0, (primal.compute(y), keep(y)), ck_add1(y));

  Gradient            gradient(g);
  det::GradientOutput da;
  det_in_label(label, sizeof label, "det_gradient", &in);
  BENCH(label, (void)0, (gradient.compute(da), keep(da)), ck_vec(da));
  det_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(det_sizes); i++) run(det_sizes[i]);
  return 0;
}
