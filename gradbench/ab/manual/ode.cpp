// ode with GradBench's `manual`: ode::Primal (the same Runge-Kutta steps as
// adc's program) and Gradient, on the inputs of ode.c. Manual's gradient is
// a closed form of the exact solution's last element, prod_i x_i t^n / n!
// at t = 2, not the derivative of the Runge-Kutta steps.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/ode.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  ode_in in;
  ode_in_make(&in, size[0], size[1]);
  ode::Input g;
  g.x = vec(in.x, in.n);
  g.s = in.s;
  char label[128];

  ode::Primal       primal(g);
  ode::PrimalOutput y;
  ode_in_label(label, sizeof label, "ode_primal", &in);
  BENCH(label, (void)0, (primal.compute(y), keep(y)), ck_vec(y));

  Gradient            gradient(g);
  ode::GradientOutput dx;
  ode_in_label(label, sizeof label, "ode_gradient", &in);
  BENCH(label, (void)0, (gradient.compute(dx), keep(dx)), ck_vec(dx));
  ode_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(ode_sizes); i++) run(ode_sizes[i]);
  return 0;
}
