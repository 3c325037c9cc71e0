// kmeans with GradBench's `manual`: kmeans::Cost and Dir (a closed form:
// each centroid minus the mean of its cluster's points), on the inputs of
// kmeans.c. Manual has no gradient of the cost alone.
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/kmeans.cpp"
#undef main
#undef generic_main

static void run(const int* size) {
  kmeans_in in;
  kmeans_in_make(&in, size[0], size[1], size[2]);
  kmeans::Input g;
  g.n         = in.n;
  g.k         = in.k;
  g.d         = in.d;
  g.points    = vec(in.p, (size_t)in.n * in.d);
  g.centroids = vec(in.c, (size_t)in.k * in.d);
  char label[128];

  kmeans::Cost       cost(g);
  kmeans::CostOutput y = 0.0;
  kmeans_in_label(label, sizeof label, "cost", &in);
  BENCH(label, (void)0, (cost.compute(y), keep(y)), ck_add1(y));

  Dir               dir(g);
  kmeans::DirOutput o;
  kmeans_in_label(label, sizeof label, "dir", &in);
  BENCH(label, (void)0, (dir.compute(o), keep(o)), ck_vec(o.dir));
  kmeans_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(kmeans_sizes); i++) run(kmeans_sizes[i]);
  return 0;
}
