// llsq with GradBench's `manual`: llsq::Primal and Gradient, on the inputs
// of llsq.c.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/llsq.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  llsq_in in;
  llsq_in_make(&in, size[0], size[1]);
  llsq::Input g;
  g.x = vec(in.x, in.m);
  g.n = in.n;
  char label[128];

  llsq::Primal       primal(g);
  llsq::PrimalOutput y = 0.0;
  llsq_in_label(label, sizeof label, "llsq", &in);
  BENCH(label, (void)0, (primal.compute(y), keep(y)), ck_add1(y));

  Gradient             gradient(g);
  llsq::GradientOutput dx;
  llsq_in_label(label, sizeof label, "llsq_gradient", &in);
  BENCH(label, (void)0, (gradient.compute(dx), keep(dx)), ck_vec(dx));
  llsq_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(llsq_sizes); i++) run(llsq_sizes[i]);
  return 0;
}
