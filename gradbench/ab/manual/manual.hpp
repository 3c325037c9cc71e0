// Shared by the drivers of GradBench's `manual` tool: the timing and
// checksums of bench.h, the inputs of inputs.h (the same as the adc
// drivers'), and GradBench's main.hpp (class Function).
//
// Compiled by manual.py as GradBench compiles `manual` (tools/manual's
// Makefile, cpp/common.mk; single-threaded), with this directory first on
// the include path (its json.hpp stands in for nlohmann's), then
// GradBench's root and its cpp/.
#pragma once

// bench.h first: it sets _POSIX_C_SOURCE.
#include "../bench.h"
#include "../inputs.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "gradbench/main.hpp"

// A driver then includes tools/manual/EVAL.cpp (its classes are the
// derivatives' code), which ends with `int main(...) { return
// generic_main(..., {{"objective", function_main<...>}, ...}); }`: as
//
//   #define generic_main(...) 0
//   #define main gradbench_manual_main
//   #include "tools/manual/EVAL.cpp"
//   #undef main
//   #undef generic_main
//
// that main is renamed and instantiates no function_main (which would
// read JSON).

// After each timed call: the compiler must assume that x, and all memory,
// is read and written here, so that it cannot move the work of one call
// across calls (the manual code is inlined into the timing loop, whereas
// adc's is called in an object of its own).
template <typename T>
static inline void keep(T& x) {
  asm volatile("" : : "r"(&x) : "memory");
}

// The outputs of a vector, for the checksum.
static inline void ck_vec(const std::vector<double>& v) { ck_add(v.data(), (int64_t)v.size()); }
static inline void ck_ivec(const std::vector<int>& v) {
  for (int x : v) ck_add1((double)x);
}
template <typename T>
static inline std::vector<T> vec(const T* p, size_t n) {
  return std::vector<T>(p, p + n);
}
static inline std::vector<int> ivec(const int64_t* p, size_t n) {
  return std::vector<int>(p, p + n);
}
