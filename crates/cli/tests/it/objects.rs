//! `adc compile` objects linked with a C compiler: the C ABI, runtime
//! errors, the tape spare kept between calls, `print` without host code.

use crate::common::{compile, compile_and_link, run_entry, scratch, stderr, stdout};

#[test]
fn compiled_object_links_with_c() {
    let Some((_, run)) = compile_and_link(
        "kern",
        "double dot(double[] a, double[] b) { double s = 0.0; for (int i = 0; i < len(a); i++) s += a[i] * b[i]; return s; }
(double, double, double) three(double x) { return (x, 2.0 * x, exp(x)); }
(float, int) fi(float x, inout int n) { n = n + 1; return (x * 2.0, n); }
void fill(out double[] xs, double v) { for (int i = 0; i < len(xs); i++) xs[i] = v + double(i); }
double at(double[] xs, int i) { return xs[i]; }
",
        r#"#include <stdio.h>
#include "kern.h"
int main(void) {
    double a[3] = {1, 2, 3}, b[3] = {4, 5, 6}, xs[4];
    int64_t n = 41;
    three_result t = three(1.0);
    fi_result f = fi(1.25f, &n);
    fill(xs, 4, 0.5);
    printf("%g %g %g %.6f %g %lld %lld %g %g\n", dot(a, 3, b, 3), t._0, t._1, t._2, f._0, (long long)f._1, (long long)n, xs[0], xs[3]);
    fflush(stdout);
    printf("%g\n", at(a, 3, 3));
    return 0;
}
"#,
    ) else {
        return;
    };
    assert_eq!(stdout(&run), "32 1 2 2.718282 2.5 42 42 0.5 3.5\n");
    assert_eq!(
        run.status.code(),
        Some(3),
        "a runtime error in C-called code exits 3"
    );
    assert!(
        stderr(&run).contains("runtime error: index out of bounds at"),
        "{}",
        stderr(&run)
    );
}

/// An `extern` returning a tuple is called with the C struct ABI (docs/embedding.md#the-c-signature-of-a-function), as
/// the module's own functions return one: two floats packed in one SSE
/// register, two bools in one integer register, a struct over 16 bytes
/// through a hidden pointer (once read from the wrong registers, and the
/// callee's store through the missing pointer corrupted memory).
#[test]
fn externs_returning_tuples_use_the_c_struct_abi() {
    let Some((_, run)) = compile_and_link(
        "tuples",
        "extern (float, float) eff(float x);
extern (bool, bool) ebb(bool x);
extern (float, double) efd(float x);
extern (double, int, bool) trip(double x);
extern (double, double, double) three(double x);
double g() {
    auto [a, b] = eff(1.5);
    auto [p, q] = ebb(true);
    auto [c, d] = efd(1.5);
    auto [e, n, t] = trip(1.5);
    auto [u, v, w] = three(1.0);
    print(a, b, p, q, c, d, e, n, t, u, v, w);
    return u + v + w;
}
",
        r#"#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include "tuples.h"
typedef struct { float _0, _1; } ff;
typedef struct { bool _0, _1; } bb;
typedef struct { float _0; double _1; } fd;
typedef struct { double _0; int64_t _1; bool _2; } dib;
typedef struct { double _0, _1, _2; } ddd;
ff eff(float x) { ff r = { x, x + 1.0f }; return r; }
bb ebb(bool x) { bb r = { x, !x }; return r; }
fd efd(float x) { fd r = { x, x + 1.0 }; return r; }
dib trip(double x) { dib r = { 2.0 * x, 42, true }; return r; }
ddd three(double x) { ddd r = { x, 2.0 * x, 4.0 * x }; return r; }
int main(void) { printf("%g\n", g()); return 0; }
"#,
    ) else {
        return;
    };
    assert_eq!(
        stdout(&run),
        "1.5 2.5 true false 1.5 2.5 3.0 42 true 1.0 2.0 4.0\n7\n",
        "{}",
        stderr(&run)
    );
}

/// An object file keeps its tape between calls: calls
/// of one derivative with tapes large, small and large again must each
/// give the gradient a hand-written reverse loop gives.
#[test]
fn object_tape_spare_reused_across_calls() {
    let Some((_, run)) = compile_and_link(
        "spare",
        "[autodiff_reverse(dg, Duplicated, ActiveOnly)]
double g(double[] x) {
    double s = 1.0;
    for (int i = 0; i < len(x); i++) s = s * x[i] + sin(x[i]);
    return s;
}
",
        r#"#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "spare.h"
/* s_{i+1} = s_i x_i + sin x_i: ds_i = ds_{i+1} x_i, dx_i = ds_{i+1} (s_i + cos x_i). */
static int check(int64_t n) {
    double *x = malloc(n * sizeof *x), *d = calloc(n, sizeof *d), *s = malloc((n + 1) * sizeof *s);
    for (int64_t i = 0; i < n; i++) x[i] = 0.5 + 0.5 * sin((double)i);
    s[0] = 1.0;
    for (int64_t i = 0; i < n; i++) s[i + 1] = s[i] * x[i] + sin(x[i]);
    dg(x, n, d, n, 1.0);
    double ds = 1.0, worst = 0.0;
    for (int64_t i = n - 1; i >= 0; i--) {
        double want = ds * (s[i] + cos(x[i]));
        double err = fabs(d[i] - want) / (1.0 + fabs(want));
        if (err > worst) worst = err;
        ds *= x[i];
    }
    free(x); free(d); free(s);
    return worst < 1e-12;
}
int main(void) {
    int64_t sizes[5] = {300000, 10, 300000, 1, 2000000};
    for (int k = 0; k < 5; k++) printf("%d", check(sizes[k]));
    printf("\n");
    return 0;
}
"#,
    ) else {
        return;
    };
    assert_eq!(stdout(&run), "11111\n", "{}", stderr(&run));
}

/// The spare is the larger buffer: a derivative whose deferred-free list
/// (here for the shadow of `t`) is freed after its tape must still keep
/// the tape (about 40 MB), so a call after the first faults in almost no
/// new pages. Before, the list took the spare's place and each call
/// faulted the whole tape in again (9,766 minor faults a call).
#[test]
fn object_tape_spare_keeps_the_tape_not_the_deferred_list() {
    let Some((_, run)) = compile_and_link(
        "spare_list",
        "[autodiff_reverse(dg, Duplicated, Const, ActiveOnly)]
double g(double[] x, int m) {
    double t[m];
    for (int j = 0; j < m; j++) t[j] = 0.5 * double(j);
    double s = 1.0;
    for (int i = 0; i < len(x); i++) s = s * x[i] + sin(x[i]) * t[i % m];
    return s;
}
",
        r#"#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "spare_list.h"
static long faults(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_minflt; }
int main(void) {
    int64_t n = 1000000;
    double *x = malloc(n * sizeof *x), *d = calloc(n, sizeof *d);
    for (int64_t i = 0; i < n; i++) x[i] = 0.5 + 0.5 * sin((double)i);
    long f = 0;
    for (int k = 0; k < 3; k++) { long a = faults(); dg(x, n, d, n, 4, 1.0); f = faults() - a; }
    printf("%s %ld\n", f < 1000 ? "kept" : "faulted", f);
    return 0;
}
"#,
    ) else {
        return;
    };
    let out = stdout(&run);
    assert!(out.starts_with("kept "), "{out}{}", stderr(&run));
}

/// `print` in an object file needs no host code and
/// prints what `adc run` prints, after what the C program printed first.
#[test]
fn print_in_object_files_matches_adc_run() {
    let source = "double f(double x, float y, int n, bool b) {
    print(x, y, n, b);
    print(1.0, 0.1, 1e-7, 1e16, 123456789.0, -0.0, 1.0 / 0.0, -1.0 / 0.0, 0.0 / 0.0, 2.5e-300);
    print(-9223372036854775807 - 1, 0, -5, 42, 1.5f, float(0.1), false);
    print(10.0, 100.0, 120.0, 2500.0, 10.0f, 1e15, 1e-4, 1.5e-5, 9999999999999998.0, 1.1782983132354918e16);
    print(34900000000000.0, 861080.0f, 9745998000000000.0f, 1e16f, 0.0f, -0.0f, 1e-5f, 3.4e38f, 1e-45f, 5e-324);
    for (int i = 1; i < 2000; i += 7) print(double(i), float(i), double(i) * 10.0, 0.1 * double(i), 1e13 * double(i));
    return x;
}
";
    let Some((_, linked)) = compile_and_link(
        "printing",
        source,
        r#"#include <stdio.h>
#include "printing.h"
int main(void) { printf("before\n"); f(0.30000000000000004, 2.5f, -17, true); printf("after\n"); return 0; }
"#,
    ) else {
        return;
    };
    let p = scratch("printing_run.ad", source);
    let o = run_entry(&p, "f", "[0.30000000000000004, 2.5, -17, true]", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let run = stdout(&o);
    let printed: Vec<&str> = run.lines().collect();
    let want = format!(
        "before\n{}\nafter\n",
        printed[..printed.len() - 1].join("\n")
    );
    assert_eq!(stdout(&linked), want);
}

/// Headers compile warning-free as C99 and as C++ whatever the module's
/// names are (docs/embedding.md#the-c-signature-of-a-function): parameters named like C or C++ keywords,
/// alternative tokens or macros, functions named like C++ keywords, a
/// tuple result struct that would take a function's name, names reserved
/// by their underscores (`_B`, `__x`, once an endless loop), names that
/// `cc`'s default GNU mode predefines as macros (`linux`, `unix`); and `main`
/// stays local, so a C program with its own `main` links.
#[test]
fn headers_compile_strictly_whatever_the_names() {
    let src = "double class(double new, double this, double[] int_len) { return new * this + int_len[0]; }
double h(double x, double[] x_len, int NULL) { return x + x_len[0] + double(NULL); }
(double, double) h_result(double x) { return (x, 2.0 * x); }
(double, double) g(double and, double or) { return (and, or); }
double virtual(double x) { return -x; }
double N(double errno) { return errno; }
double linux(double unix, double i386) { return unix + i386; }
double u(double _B, double __x, double _, double __, double B) { return _B + __x + _ + __ + B; }
(double, double) _Q(double x) { return (x, x); }
double main() { return 1.0; }";
    let Some((header, run)) = compile_and_link(
        "keywords",
        src,
        "#include <stdio.h>\n#include \"keywords.h\"\nint main(void) { double a[1] = {0.5}; h_result_result r = h_result(1.5); g_result s = g(1.0, 2.0);\nprintf(\"%g %g %g %g %g %g\\n\", class(2.0, 3.0, a, 1), h(1.0, a, 1, 2), r._1, s._0 + s._1, virtual(4.0), N(7.0)); \n#undef linux\n printf(\"%g\\n\", linux(1.0, 2.0)); return 0; }\n",
    ) else {
        return;
    };
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "6.5 3.5 3 3 -4 7\n3",
        "{header}"
    );
    assert!(!header.contains("main"), "{header}");
    // Names only a header must survive (the program above could not link
    // with its own `printf` replaced): C keywords with an underscore,
    // macros of the included headers, predefined macros, builtins.
    let only = "double INT64_MAX(double x) { return x; }
double _Bool(double x) { return x; }
double __cplusplus(double x) { return x; }
int printf(int a) { return a; }
double strcmp(double[] a) { return a[0]; }
int remainder(int a, int b) { return a % b; }
double fmax(double[] a) { return a[0]; }
int j0(int x) { return x; }
int copysignl(int x) { return x; }
int lgammaf_r(int x) { return x; }
int fork(int x) { return x; }
int asm(int x) { return x; }
int std(int x) { return x; }";
    let file = scratch("names_only.ad", only);
    let hdr2 = file.with_extension("h");
    let obj2 = file.with_extension("o");
    let o = compile(&file, &obj2, Some(&hdr2));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let header2 = std::fs::read_to_string(&hdr2).expect("header");
    assert!(
        header2.contains("INT64_MAX(double x);") && header2.contains("printf(int64_t a);"),
        "{header2}"
    );
    let hdr = scratch("keywords_strict.h", &format!("{header}\n{header2}"));
    for (cc, flags) in [
        ("cc", &["-std=c99", "-pedantic", "-x", "c"][..]),
        ("cc", &["-x", "c"][..]),
        ("c++", &["-x", "c++"][..]),
    ] {
        let o = std::process::Command::new(cc)
            .args(["-Wall", "-Wextra", "-Werror", "-fsyntax-only"])
            .args(flags)
            .arg(&hdr)
            .output();
        let Ok(o) = o else {
            eprintln!("skipping {cc}: not found");
            continue;
        };
        assert!(
            o.status.success(),
            "{cc}: {}\n{header}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The symbols `nm -u` lists for `src` compiled to an object file named
/// after `name`, or `None` (a message printed) where there is no `nm`.
fn undefined_symbols(name: &str, src: &str) -> Option<String> {
    let Ok(nm) = std::process::Command::new("nm").arg("--version").output() else {
        eprintln!("skipping: no nm");
        return None;
    };
    assert!(nm.status.success());
    let file = scratch(name, src);
    let obj = file.with_extension("o");
    let o = compile(&file, &obj, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = std::process::Command::new("nm")
        .arg("-u")
        .arg(&obj)
        .output()
        .expect("nm runs");
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every C library function an object file calls is one a module may not
/// define (E0204, `adc_frontend::lower::C_RUNTIME`) or a math function: a
/// user function named `strpbrk` once took the place of the C library's in
/// the object's `print` (`2.5.0` printed for `2.5`).
#[test]
fn object_files_need_only_reserved_c_functions() {
    // Printing of every type, a tape (reverse mode with a loop and a
    // call), local arrays, a copy loop, views, runtime checks.
    let src = "double g(double[] a, int k) { double s = 0.0; for (int i = 0; i < len(a); i++) s += sin(a[i]) * a[(i + k) % len(a)]; return s; }
[autodiff_reverse(dg, Duplicated, Const, Active)]
double f(double[] a, int k) {
    double t[len(a)];
    for (int i = 0; i < len(a); i++) t[i] = a[i];
    print(t[0], 1.5f, k, true);
    return g(t, k) + g(a[1..], k) / double(k);
}";
    let Some(undefined) = undefined_symbols("imports.ad", src) else {
        return;
    };
    let math: Vec<String> = adc_ir::MathFunc::ALL
        .iter()
        .flat_map(|m| {
            [
                m.libm_symbol(adc_ir::ScalarType::F64),
                m.libm_symbol(adc_ir::ScalarType::F32),
            ]
        })
        .map(|s| s.to_string())
        // `sin x` and `cos x` of one `x` are one call (codegen's sincos.rs).
        .chain(["sincos".to_string(), "sincosf".to_string()])
        .collect();
    let mut seen = 0;
    for sym in undefined.split_whitespace().filter(|w| *w != "U") {
        seen += 1;
        assert!(
            adc_frontend::lower::C_RUNTIME.contains(&sym) || math.iter().any(|m| m == sym),
            "the object needs `{sym}`, which a module may define: add it to C_RUNTIME\n{undefined}"
        );
    }
    assert!(seen >= 5, "{undefined}");
}

/// An object file refers to none of adc's internal functions it does not
/// define: Hessians and sparse derivatives leave helpers (the sweep's set
/// union, a Hessian's inner gradient) that nothing calls after inlining,
/// which were once declared as imports (undefined `__adc_*` symbols).
#[test]
fn object_files_leave_no_internal_symbol_undefined() {
    let src = "[jacobian(J)] [jacobian(JS, sparse)] [hessian(H)] [hessian(HS, sparse)]
double g(double[] x, inout double w, int[] idx, bool[] mask) {
  double s = w;
  for (int i = 0; i < len(idx); i++) { if (mask[i]) { s += x[idx[i]] * x[idx[i]] * w; } }
  w = w + s * s;
  return s * cos(x[0]);
}";
    let Some(undefined) = undefined_symbols("internal_undefined.ad", src) else {
        return;
    };
    assert!(undefined.contains("cos"), "{undefined}");
    assert!(!undefined.contains("__adc_"), "{undefined}");
}

/// A sparse Jacobian (docs/jacobians.md#sparse-jacobians) called from C
/// through an object file: `NAME_nnz` sizes the arrays, `NAME` fills
/// them in compressed sparse rows; the sweep's set helper is internal.
#[test]
fn sparse_jacobian_from_c() {
    let Some((header, run)) = compile_and_link(
        "sparse",
        "[jacobian(jdiffs, sparse)]
void diffs(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) y[i] = x[i + 1] * x[i + 1] - x[i];
}",
        r#"#include <stdio.h>
#include <stdlib.h>
#include "sparse.h"
int main(void) {
    double x[4] = {1, 2, 3, 4}, y[3];
    int64_t nnz = jdiffs_nnz(x, 4, y, 3);
    double *vals = malloc(nnz * sizeof(double));
    int64_t *cols = malloc(nnz * sizeof(int64_t)), rows[4];
    jdiffs(x, 4, y, 3, vals, nnz, cols, nnz, rows, 4);
    printf("%lld:", (long long)nnz);
    for (int r = 0; r < 3; r++)
        for (int64_t q = rows[r]; q < rows[r + 1]; q++)
            printf(" (%d,%lld)=%g", r, (long long)cols[q], vals[q]);
    printf(" y=%g,%g,%g\n", y[0], y[1], y[2]);
    fflush(stdout);
    jdiffs(x, 4, y, 3, vals, nnz - 1, cols, nnz, rows, 4);
    return 0;
}
"#,
    ) else {
        return;
    };
    assert!(!header.contains("__adc_set_union"), "{header}");
    assert_eq!(
        stdout(&run),
        "6: (0,0)=-1 (0,1)=4 (1,1)=-1 (1,2)=6 (2,2)=-1 (2,3)=8 y=3,7,13\n"
    );
    assert_eq!(
        run.status.code(),
        Some(3),
        "a short `vals` is a runtime error"
    );
    let want = "runtime error: jacobian needs 6 entries at ";
    assert!(stderr(&run).contains(want), "{}", stderr(&run));
}

/// An object file defines, as global symbols, the module's non-`static`
/// functions, the derivatives its attributes ask for, and `NAME_nnz` of
/// its sparse ones; the header declares the same. The helpers that
/// `[jacobian]` and `[hessian]` write (`J__columns`, `H__gw`, ...) and the
/// derivatives they use are local (they were once exported and declared).
#[test]
fn object_files_export_only_the_programs_functions_and_derivatives() {
    let Ok(nm) = std::process::Command::new("nm").arg("--version").output() else {
        eprintln!("skipping: no nm");
        return;
    };
    assert!(nm.status.success());
    let src = "static double sq(double a) { return a * a; }
[autodiff_reverse(df, Duplicated, Duplicated, Active)]
[jacobian(J)]
[jacobian(JS, sparse)]
double f(double[] x, out double[] y) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i + 1]; y[i] = sin(x[i]); }
    return s;
}
[hessian(H)]
[hessian(HS, sparse)]
double g(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) s += sq(x[i + 1] - x[i]);
    return s;
}";
    let file = scratch("exports.ad", src);
    let obj = file.with_extension("o");
    let header = file.with_extension("h");
    let o = compile(&file, &obj, Some(&header));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = std::process::Command::new("nm")
        .args(["-g", "--defined-only"])
        .arg(&obj)
        .output()
        .expect("nm runs");
    let listing = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut global: Vec<&str> = listing
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    global.sort_unstable();
    let expected = ["H", "HS", "HS_nnz", "J", "JS", "JS_nnz", "df", "f", "g"];
    assert_eq!(global, expected, "{listing}");
    let text = std::fs::read_to_string(&header).expect("the header is written");
    let mut declared: Vec<&str> = text
        .lines()
        .filter(|l| l.contains('(') && !l.starts_with('#'))
        .filter_map(|l| l.split('(').next()?.split_whitespace().last())
        .map(|n| n.trim_start_matches('*'))
        .collect();
    declared.sort_unstable();
    assert_eq!(declared, expected, "{text}");
}
