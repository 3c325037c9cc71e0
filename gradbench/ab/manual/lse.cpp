// lse with GradBench's `manual`: lse::Primal and Gradient (softmax), on the
// inputs of lse.c.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/lse.cpp"
#undef main
#undef generic_main

static void run(int size) {
  lse_in in;
  lse_in_make(&in, size);
  lse::Input g;
  g.x = vec(in.x, in.n);
  char label[128];

  lse::Primal       primal(g);
  lse::PrimalOutput y = 0.0;
  lse_in_label(label, sizeof label, "lse", &in);
  BENCH(label, (void)0, (primal.compute(y), keep(y)), ck_add1(y));

  Gradient            gradient(g);
  lse::GradientOutput dx;
  lse_in_label(label, sizeof label, "lse_gradient", &in);
  BENCH(label, (void)0, (gradient.compute(dx), keep(dx)), ck_vec(dx));
  lse_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(lse_sizes); i++) run(lse_sizes[i]);
  return 0;
}
