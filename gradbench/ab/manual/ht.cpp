// ht with GradBench's `manual`: ht::Objective and the Jacobian
// (ht_objective_d), on the inputs of ht.c converted to GradBench's
// ht::DataLightMatrix (column-major LightMatrix: base_positions 4 x
// vertices, weights bones x vertices, points 3 x points; 4x4 transforms
// with (i, j) = row i, column j). The Jacobian is column-major with the us
// columns first, as adc's; only part of it is comparable (dump_comparable).
#include "manual.hpp"

#define generic_main(...) 0
#define main gradbench_manual_main
#include "tools/manual/ht.cpp"
#undef main
#undef generic_main

static LightMatrix<double> mat4(const double* rowmajor) {
  LightMatrix<double> m(4, 4);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) m(i, j) = rowmajor[4 * i + j];
  return m;
}

// With AB_DUMP_DIR set, writes AB_DUMP_DIR/LABEL.comparable.bin: for each
// output of the Jacobian, 1 where manual's value is comparable with adc's,
// 0 where not. Manual's Jacobian is derived for GradBench's hand (bone 0
// the wrist, bones 4f+1..4f+4 finger f, the first unposed, bone 21 the
// forearm; not mirrored): it gives no finger derivatives to bones 0, 4f+1
// and 21, which in the synthetic hand of inputs.h are posed through their
// parents when they are fingertips (their parent posed), and it does not
// mirror the finger derivatives. So its finger columns are comparable only
// for an unmirrored model, in the rows of points none of whose vertices is
// skinned to such a bone; its global (and us) columns always are.
static void dump_comparable(const char* label, const ht_in& in) {
  const char* dir = getenv("AB_DUMP_DIR");
  if (!dir || !*dir) return;
  auto no_derivative = [](int b) { return b == 0 || b == HT_NB - 1 || (b - 1) % 4 == 0; };
  // posed_above[b]: an ancestor of bone b is posed; right[b]: manual's
  // finger derivatives of bone b are right (parents come first).
  bool posed_above[HT_NB], right[HT_NB];
  for (int b = 0; b < HT_NB; b++) {
    int p          = (int)in.parents[b];
    posed_above[b] = p >= 0 && (posed_above[p] || !no_derivative(p));
    right[b]       = no_derivative(b) ? !posed_above[b] : p < 0 || right[p];
  }
  int    k = in.complicated ? 3 : 1, npts = in.npts, rows = 3 * npts, extra = in.complicated ? 2 : 0;
  std::vector<double> ok(rows * (size_t)(extra + 26), 1.0);
  for (int i = 0; i < npts; i++) {
    bool fine = !in.complicated;   // (mirrored)
    for (int j = 0; j < k && fine; j++) {
      int64_t v = in.complicated ? in.tris[3 * in.corr[i] + j] : in.corr[i];
      for (int b = 0; b < HT_NB; b++)
        if (in.weights[HT_NB * v + b] != 0.0 && !right[b]) fine = false;
    }
    if (!fine)
      for (int c = extra + 6; c < extra + 26; c++)
        for (int r = 0; r < 3; r++) ok[(size_t)c * rows + 3 * i + r] = 0.0;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.comparable.bin", dir, label);
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(ok.data(), sizeof(double), ok.size(), f) != ok.size()) {
    perror(path);
    exit(2);
  }
  fclose(f);
}

static void run(const int* size) {
  ht_in in;
  ht_in_make(&in, size[0], size[1]);
  int        npts = in.npts;
  ht::Input  g;
  auto&      model = g.data.model;
  for (int b = 0; b < HT_NB; b++) {
    model.bone_names.push_back("bone" + std::to_string(b));
    model.parents.push_back((int)in.parents[b]);
    model.base_relatives.push_back(mat4(in.rel + 16 * b));
    model.inverse_base_absolutes.push_back(mat4(in.inv + 16 * b));
  }
  model.base_positions.resize(4, HT_NV);
  model.weights.resize(HT_NB, HT_NV);
  for (int v = 0; v < HT_NV; v++) {
    for (int i = 0; i < 4; i++) model.base_positions(i, v) = in.pos[4 * v + i];
    for (int b = 0; b < HT_NB; b++) model.weights(b, v) = in.weights[HT_NB * v + b];
  }
  for (int t = 0; t < HT_NT; t++) {
    Triangle tri;
    for (int i = 0; i < 3; i++) tri.verts[i] = (int)in.tris[3 * t + i];
    model.triangles.push_back(tri);
  }
  model.is_mirrored      = in.complicated != 0;
  g.data.correspondences = ivec(in.corr, npts);
  g.data.points.resize(3, npts);
  for (int i = 0; i < npts; i++)
    for (int j = 0; j < 3; j++) g.data.points(j, i) = in.points[3 * i + j];
  g.theta = vec(in.theta, 26);
  if (in.complicated) g.us = vec(in.us, 2 * (size_t)npts);
  char label[128];

  ht::Objective objective(g);
  ht::ObjOutput e;
  ht_in_label(label, sizeof label, "ht_objective", &in);
  BENCH(label, (void)0, (objective.compute(e), keep(e)), ck_vec(e));

  Jacobian      jacobian(g);
  ht::JacOutput j;
  ht_in_label(label, sizeof label, "ht_jacobian", &in);
  BENCH(label, (void)0, (jacobian.compute(j), keep(j)), ck_vec(j.jacobian));
  dump_comparable(label, in);
  ht_in_free(&in);
}

int main(int argc, char** argv) {
  bench_args(argc, argv);
  for (int i = 0; i < AB_COUNT(ht_sizes); i++) run(ht_sizes[i]);
  return 0;
}
