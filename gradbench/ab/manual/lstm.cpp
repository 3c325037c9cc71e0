// lstm with GradBench's `manual`: lstm::Objective and the Jacobian
// (lstm_objective_d: the state's Jacobian in the parameters carried
// forward through the sequence, not a reverse sweep), on the inputs of
// lstm.c; the gradient is main's then extra's, as adc's.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/lstm.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  lstm_in in;
  lstm_in_make(&in, size[0], size[1], size[2]);
  lstm::Input g;
  g.l            = in.l;
  g.c            = in.c;
  g.b            = in.b;
  g.main_params  = vec(in.main, in.nm);
  g.extra_params = vec(in.extra, in.ne);
  g.state        = vec(in.state, in.ns);
  g.sequence     = vec(in.seq, in.nq);
  char label[128];

  lstm::Objective objective(g);
  lstm::ObjOutput y = 0.0;
  lstm_in_label(label, sizeof label, "lstm_objective", &in);
  BENCH(label, (void)0, (objective.compute(y), keep(y)), ck_add1(y));

  Jacobian        jacobian(g);
  lstm::JacOutput j;
  lstm_in_label(label, sizeof label, "lstm_jacobian", &in);
  BENCH(label, (void)0, (jacobian.compute(j), keep(j)), ck_vec(j));
  lstm_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(lstm_sizes); i++) run(lstm_sizes[i]);
  return 0;
}
