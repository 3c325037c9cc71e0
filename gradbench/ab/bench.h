/* Shared pieces of the A/B drivers: a seeded random generator, the timing
 * loop and the output checksums.
 *
 * A driver is run as `DRIVER [MIN_SECONDS [MIN_REPS [BOTH [WALL]]]]`
 * (defaults 0.2, 20, 0, 0). Each timed call is repeated until its calls'
 * total time is at least MIN_SECONDS or MIN_REPS calls were made (with
 * BOTH = 1: until both hold), and the least time of one call is reported.
 * One untimed warm-up call comes first; work done between calls (zeroing
 * accumulated shadows) is not timed.
 *
 * Each call is timed with the wall clock (CLOCK_MONOTONIC) and the thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID), each less the cost of reading the
 * clocks. Wall-clock time counts the time other processes hold the CPU,
 * which on a loaded machine inflates most long calls; CPU time does not,
 * but here (a VM; steal time accounting, probably) it sometimes undercounts
 * a call that was descheduled, by up to tens of microseconds, and the least
 * time picks exactly those. So the time reported is the least wall-clock time of the
 * clean calls (wall-clock within 1% + 1 us of CPU time: not descheduled),
 * or, if no call was clean, the least CPU time; with WALL = 1 the least
 * wall-clock time of all calls. Total time (for MIN_SECONDS) is CPU time,
 * or wall-clock time with WALL = 1.
 *
 * Output, one line per timed function (parsed by ab.py):
 *   RESULT LABEL SECONDS REPS WEIGHTED_SUM ABS_SUM NONFINITE COUNT WALL CPU CLEAN
 * where SECONDS is the time reported, WALL and CPU the least of each clock,
 * CLEAN the number of clean calls, and the sums are over the function's
 * outputs after its last call (WEIGHTED_SUM = sum of w_i y_i with w_i in [1, 2) depending on i, so that
 * permuted outputs differ; NONFINITE counts NaNs and infinities; COUNT
 * the outputs). */
#ifndef AB_BENCH_H
#define AB_BENCH_H

#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double bench_min_seconds = 0.2;
static long bench_min_reps = 20;
static int bench_both = 0, bench_wall = 0;
static double bench_cost_cpu = 0.0, bench_cost_wall = 0.0;

static inline double clock_seconds(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One call's times: the wall clock's interval encloses the CPU clock's;
 * each less the cost of reading the clocks. */
typedef struct { double w0, c0; } bench_mark;
static inline void bench_begin(bench_mark *m) {
    m->w0 = clock_seconds(CLOCK_MONOTONIC);
    m->c0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}
static inline void bench_end(const bench_mark *m, double *cpu, double *wall) {
    double c1 = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    double w1 = clock_seconds(CLOCK_MONOTONIC);
    *cpu = fmax(0.0, c1 - m->c0 - bench_cost_cpu);
    *wall = fmax(0.0, w1 - m->w0 - bench_cost_wall);
}

static inline void bench_args(int argc, char **argv) {
    if (argc > 1) bench_min_seconds = atof(argv[1]);
    if (argc > 2) bench_min_reps = atol(argv[2]);
    if (argc > 3) bench_both = atoi(argv[3]);
    if (argc > 4) bench_wall = atoi(argv[4]);
    double cpu = 1.0, wall = 1.0;
    for (int i = 0; i < 1000; i++) {
        bench_mark m;
        double c, w;
        bench_begin(&m);
        bench_end(&m, &c, &w);
        cpu = fmin(cpu, c);
        wall = fmin(wall, w);
    }
    bench_cost_cpu = cpu;
    bench_cost_wall = wall;
}

/* splitmix64: deterministic for a seed on every platform. */
static uint64_t rng_state;
static inline void rng_seed(uint64_t s) { rng_state = s; }
static inline uint64_t rng_u64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* uniform in [0, 1) */
static inline double rng_unif(void) { return (double)(rng_u64() >> 11) * 0x1.0p-53; }
static inline double rng_range(double lo, double hi) { return lo + (hi - lo) * rng_unif(); }
static inline int64_t rng_int(int64_t n) { return (int64_t)(rng_u64() % (uint64_t)n); }
/* standard normal (Box-Muller) */
static inline double rng_normal(void) {
    double u = rng_unif(), v = rng_unif();
    return sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307179586 * v);
}

static inline double *dalloc(size_t n) {
    double *p = (double *)calloc(n ? n : 1, sizeof(double));
    if (!p) { perror("calloc"); exit(2); }
    return p;
}
static inline int64_t *ialloc(size_t n) {
    int64_t *p = (int64_t *)calloc(n ? n : 1, sizeof(int64_t));
    if (!p) { perror("calloc"); exit(2); }
    return p;
}
static inline double *drandn(size_t n, double scale) {
    double *p = dalloc(n);
    for (size_t i = 0; i < n; i++) p[i] = scale * rng_normal();
    return p;
}
static inline double *drange(size_t n, double lo, double hi) {
    double *p = dalloc(n);
    for (size_t i = 0; i < n; i++) p[i] = rng_range(lo, hi);
    return p;
}

/* The checksum of the outputs of one function, over several arrays; with
 * the environment variable AB_DUMP_DIR set, the outputs are also written
 * (as native doubles) to AB_DUMP_DIR/LABEL.bin, for an elementwise check. */
static double ck_weighted, ck_abs;
static long ck_nonfinite, ck_count;
static FILE *ck_dump;
static inline void ck_begin(const char *label) {
    ck_weighted = ck_abs = 0.0;
    ck_nonfinite = ck_count = 0;
    const char *dir = getenv("AB_DUMP_DIR");
    if (dir && *dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.bin", dir, label);
        ck_dump = fopen(path, "wb");
        if (!ck_dump) { perror(path); exit(2); }
    }
}
static inline void ck_add(const double *y, int64_t n) {
    if (ck_dump) fwrite(y, sizeof(double), (size_t)n, ck_dump);
    for (int64_t i = 0; i < n; i++) {
        double v = y[i];
        if (!isfinite(v)) { ck_nonfinite++; ck_count++; continue; }
        ck_weighted += (1.0 + (double)(ck_count % 97) / 97.0) * v;
        ck_abs += fabs(v);
        ck_count++;
    }
}
static inline void ck_add1(double y) { ck_add(&y, 1); }
static inline void ck_addi(const int64_t *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) ck_add1((double)y[i]);
}

static inline void report(const char *label, double best, long reps, double wall, double cpu,
                          long clean) {
    if (ck_dump) { fclose(ck_dump); ck_dump = NULL; }
    printf("RESULT %s %.9e %ld %.17g %.17g %ld %ld %.9e %.9e %ld\n", label, best, reps, ck_weighted,
           ck_abs, ck_nonfinite, ck_count, wall, cpu, clean);
    fflush(stdout);
}

static inline int bench_done(double total, long reps) {
    int t = total >= bench_min_seconds, r = reps >= bench_min_reps;
    return bench_both ? (t && r) : (t || r);
}

/* A call is clean when its wall-clock time is within 1% + 1 us of its CPU
 * time: the thread was not descheduled, and the wall-clock time (which
 * never undercounts) is the call's. */
static inline int bench_clean(double cpu, double wall) { return wall - cpu <= 0.01 * wall + 1e-6; }

/* Times CALL (RESET, untimed, before each call); then OUTPUTS (statements
 * calling ck_add...) give the checksum of the last call's outputs. */
#define BENCH(LABEL, RESET, CALL, OUTPUTS)                                                   \
    do {                                                                                     \
        double bench_clean_ = 1e300, bench_cpu_ = 1e300, bench_wall_ = 1e300;                \
        double bench_total_ = 0.0;                                                           \
        long bench_reps_ = 0, bench_nclean_ = 0;                                             \
        RESET;                                                                               \
        CALL; /* warm-up, untimed */                                                         \
        while (!bench_done(bench_total_, bench_reps_)) {                                     \
            bench_mark bench_m_;                                                             \
            double bench_c_, bench_w_;                                                       \
            RESET;                                                                           \
            bench_begin(&bench_m_);                                                          \
            CALL;                                                                            \
            bench_end(&bench_m_, &bench_c_, &bench_w_);                                      \
            bench_total_ += bench_wall ? bench_w_ : bench_c_;                                \
            bench_reps_++;                                                                   \
            bench_cpu_ = fmin(bench_cpu_, bench_c_);                                         \
            bench_wall_ = fmin(bench_wall_, bench_w_);                                       \
            if (bench_clean(bench_c_, bench_w_)) {                                           \
                bench_nclean_++;                                                             \
                bench_clean_ = fmin(bench_clean_, bench_w_);                                 \
            }                                                                                \
        }                                                                                    \
        ck_begin(LABEL);                                                                     \
        OUTPUTS;                                                                             \
        report(LABEL, bench_wall ? bench_wall_ : bench_nclean_ ? bench_clean_ : bench_cpu_,  \
               bench_reps_, bench_wall_, bench_cpu_, bench_nclean_);                         \
    } while (0)

#define ZERO(P, N) memset((P), 0, (size_t)(N) * sizeof(double))

#endif
