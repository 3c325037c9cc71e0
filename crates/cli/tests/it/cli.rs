//! The `adc` binary: exit codes, `--json` output, diagnostics on stderr,
//! `adc compile` linked with a C compiler.

use crate::common::{adc, compile_and_link, run_entry, scratch, stderr, stdout};
use std::process::Command;

const PROG: &str = "
double get(double[] xs, int i) { return xs[i]; }
int divide(int a, int b) { return a / b; }
void scale(inout double[] xs, inout double k) { for (int i = 0; i < len(xs); i++) xs[i] *= k; k = 0.5; }
(double, int) pair(float x) { return (x * 2.0, 7); }
double inf() { return 1.0 / 0.0; }
double main() { print(1, 2.5, true); return 0.1 + 0.2; }
int depth(int n) { if (n == 0) return 0; return 1 + depth(n - 1); }
";

#[test]
fn run_prints_json_as_last_line() {
    let p = scratch("prog.ad", PROG);
    let o = adc(&["run", p.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1 2.5 true");
    assert_eq!(
        lines.last().copied(),
        Some(r#"{"result": 0.30000000000000004, "args": []}"#)
    );
}

#[test]
fn run_writes_back_arrays_and_scalars() {
    let p = scratch("prog2.ad", PROG);
    let o = run_entry(&p, "scale", "[[1, 2.5], 3]", &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        r#"{"result": null, "args": [[3.0, 7.5], 0.5]}"#
    );
}

#[test]
fn tuples_floats_and_non_finite_values_in_json() {
    let p = scratch("prog3.ad", PROG);
    let o = run_entry(&p, "pair", "[0.1]", &["--json"]);
    assert_eq!(
        stdout(&o).trim(),
        r#"{"result": [0.20000000298023224, 7], "args": [0.1]}"#
    );
    let o = adc(&["run", p.to_str().unwrap(), "--entry", "inf", "--json"]);
    assert_eq!(stdout(&o).trim(), r#"{"result": "inf", "args": []}"#);
}

#[test]
fn runtime_errors_exit_3_with_location() {
    let p = scratch("prog4.ad", PROG);
    let o = run_entry(&p, "get", "[[1, 2], 2]", &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr(&o).starts_with("runtime error: index out of bounds at "),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("prog4.ad:2:41"), "{}", stderr(&o));
    let o = run_entry(&p, "divide", "[1, 0]", &[]);
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("division by zero"), "{}", stderr(&o));
    // Recursion deeper than the stack: an error, not a crash.
    let run_depth = |n: &str| {
        let args = format!("[{n}]");
        run_entry(&p, "depth", &args, &["--json"])
    };
    let o = run_depth("100000000");
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("runtime error: stack overflow (recursion too deep) at ")
            && stderr(&o).contains("prog4.ad:8:"),
        "{}",
        stderr(&o)
    );
    let o = run_depth("10000");
    assert_eq!(stdout(&o).trim(), r#"{"result": 10000, "args": [10000]}"#);
}

#[test]
fn usage_errors_exit_2() {
    let p = scratch("prog5.ad", PROG);
    let file = p.to_str().unwrap();
    for args in [
        vec!["run", file, "--entry", "nope"],
        vec!["run", file, "--entry", "get", "--args", "[1]"],
        vec!["run", file, "--entry", "get", "--args", "[[1], 1.5]"],
        vec!["run", file, "--entry", "get", "--args", "not json"],
        vec!["run", file, "--entry", "get"],
        vec!["frobnicate"],
        vec!["ir", file, "--after", "nowhere"],
    ] {
        let o = adc(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

/// Output that cannot be written is an error (exit 2), not a panic; a
/// closed pipe ends adc quietly (SIGPIPE), as other Unix tools.
#[test]
fn unwritable_output_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::File::options().write(true).open("/dev/full") else {
        eprintln!("skipping: no /dev/full");
        return;
    };
    let p = scratch(
        "prints.ad",
        "double f(int n) { for (int i = 0; i < n; i++) print(i); return 0.0; }\n",
    );
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_adc"))
        .args([
            "run",
            p.to_str().unwrap(),
            "--entry",
            "f",
            "--args",
            "[1000]",
        ])
        .stdout(full)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("failed printing to stdout"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

/// At most 100 errors are reported, the last with a note of how many more
/// there were (20,000 undefined names on one line printed gigabytes).
#[test]
fn errors_are_capped_at_100() {
    let terms: Vec<String> = (0..150).map(|k| format!("u{k}")).collect();
    let src = format!(
        "double f(double x) {{ return x + {}; }}\n",
        terms.join(" + ")
    );
    let p = scratch("many_errors.ad", &src);
    let o = adc(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.matches("[E0116]").count(), 100, "{err}");
    assert!(err.contains("50 more errors not shown"), "{err}");
}

/// Warnings are capped the same way (8,000 unused variables on one line
/// printed hundreds of megabytes, then aborted: robust5 F10).
#[test]
fn warnings_are_capped_at_100() {
    let vars: Vec<String> = (0..130).map(|k| format!("double v{k} = x;")).collect();
    let src = format!("double f(double x) {{ {} return x; }}\n", vars.join(" "));
    let p = scratch("many_warnings.ad", &src);
    let o = adc(&["check", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.matches("[W0001]").count(), 100, "{err}");
    assert!(err.contains("30 more warnings not shown"), "{err}");
}

/// `adc compile` never writes over its input, nor both outputs to one file
/// (it silently replaced the source by the object: independent tester's
/// finding E2).
#[test]
fn compile_refuses_to_overwrite_its_input() {
    let p = scratch("keep_me.ad", PROG);
    let file = p.to_str().unwrap();
    let obj = p.with_extension("o");
    let obj = obj.to_str().unwrap();
    for args in [
        vec!["compile", file, "-o", file],
        vec!["compile", file, "-o", obj, "--emit-header", file],
        vec!["compile", file, "-o", obj, "--emit-header", obj],
    ] {
        let o = adc(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&p).expect("still there"), PROG);
    }
}

#[test]
fn compile_errors_exit_1_with_source_line() {
    let p = scratch("bad.ad", "double f(double x) {\n    return x + y;\n}\n");
    for cmd in ["check", "run"] {
        let o = adc(&[cmd, p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.contains("cannot find `y` in this scope"), "{err}");
        assert!(err.contains("bad.ad:2:16"), "{err}");
        assert!(err.contains("    return x + y;"), "{err}");
    }
    let ok = scratch("ok.ad", PROG);
    assert_eq!(adc(&["check", ok.to_str().unwrap()]).status.code(), Some(0));
}

#[test]
fn ir_after_stages_prints_parseable_ir() {
    let p = scratch("prog6.ad", PROG);
    for stage in ["lower", "opt", "final"] {
        let o = adc(&["ir", p.to_str().unwrap(), "--after", stage]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let text = stdout(&o);
        let m = adc_ir::parse_module(&text).expect("parses");
        assert_eq!(m.to_string(), text);
        let ir = scratch(&format!("prog6_{stage}.adir"), &text);
        let o = adc(&["run", ir.to_str().unwrap()]);
        assert_eq!(
            stdout(&o).lines().last(),
            Some("0.30000000000000004"),
            "{}",
            stderr(&o)
        );
    }
}

const DERIV: &str = "
double f(double[] xs, double a, int n) {
    double s = 0.0;
    for (int i = 0; i < len(xs); i++) s += a * xs[i] * xs[i];
    return s * double(n);
}
int count(int n) { return n; }
";

#[test]
fn grad_and_tangent_json() {
    let p = scratch("deriv.ad", DERIV);
    let o = run_entry(&p, "f", "[[1.0, 2.0], 3.0, 2]", &["--grad", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // s = n a sum x^2 = 30: d/dx = 2 n a x, d/da = n sum x^2, n is `Const`.
    assert_eq!(
        stdout(&o).lines().last(),
        Some(
            r#"{"result": 30.0, "args": [[1.0, 2.0], 3.0, 2], "gradient": [[12.0, 24.0], 10.0, null]}"#
        )
    );
    let o = run_entry(
        &p,
        "f",
        "[[1.0, 2.0], 3.0, 2]",
        &["--tangent", "[[1.0, 0.0], 1.0, null]", "--json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().last(),
        Some(r#"{"result": 30.0, "args": [[1.0, 2.0], 3.0, 2], "tangent": 22.0}"#)
    );
    // An integral `2.0` for the `int`; a tuple's tangent: one per element
    // (d(x*2) = 2, `null` for the `int`).
    let o = run_entry(&p, "f", "[[1.0, 2.0], 3.0, 2.0]", &["--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let p2 = scratch("pair.ad", PROG);
    let o = run_entry(&p2, "pair", "[0.5]", &["--tangent", "[1.0]", "--json"]);
    assert_eq!(
        stdout(&o).lines().last(),
        Some(r#"{"result": [1.0, 7], "args": [0.5], "tangent": [2.0, null]}"#),
        "{}",
        stderr(&o)
    );
    // Usage errors: a non-float entry, a tangent for an `int`, 2.5 for it.
    let o = run_entry(&p, "f", "[[1.0, 2.0], 3.0, 2.5]", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run_entry(&p, "count", "[1]", &["--grad"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run_entry(
        &p,
        "f",
        "[[1.0, 2.0], 3.0, 2]",
        &["--tangent", "[null, 1.0, 1]"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn generated_derivative_links_with_c() {
    let Some((header, run)) = compile_and_link(
        "dkern",
        "[autodiff_reverse(dnorm, Duplicated, Active)]
[autodiff_forward(tnorm, Dual, Dual)]
double norm2(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) s += a[i] * a[i]; return s; }
",
        r#"#include <stdio.h>
#include "dkern.h"
int main(void) {
    double a[2] = {3, 4}, da[2] = {0, 0}, ta[2] = {1, 1};
    double y = dnorm(a, 2, da, 2, 1.0);
    tnorm_result t = tnorm(a, 2, ta, 2);
    printf("%g %g %g %g %g\n", y, da[0], da[1], t._0, t._1);
    return 0;
}
"#,
    ) else {
        return;
    };
    assert!(header.contains("double dnorm(const double *a, int64_t a_len, double *d_a, int64_t d_a_len, double seed);"), "{header}");
    assert!(!header.contains("__adc_"), "{header}");
    assert_eq!(stdout(&run), "25 6 8 25 14\n");
}

/// Split-mode calls: `print` in a callee that stays a call runs once per
/// primal call under `--grad` (joint mode ran it again in the reverse
/// sweep, at every level of the recursion).
#[test]
fn print_in_a_callee_runs_once_per_primal_call() {
    let p = scratch(
        "split_print.ad",
        "double h(double x, int n) { print(n); if (n == 0) return x; return sin(h(x, n - 1)) * x; }
double f(double x) { return h(x, 3) + h(x * 0.5, 1); }",
    );
    let o = run_entry(&p, "f", "[0.7]", &["--grad"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let printed: Vec<&str> = out
        .lines()
        .filter(|l| l.trim().parse::<i64>().is_ok())
        .collect();
    assert_eq!(printed, ["3", "2", "1", "0", "1", "0"], "{out}");
}

/// `--args @FILE` and `@-` (docs/cli.md): the JSON from a file or from
/// standard input; an unreadable file is a usage error.
#[test]
fn args_from_a_file_and_from_stdin() {
    let p = scratch("args_file.ad", "double sum(double[] xs, double k) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += xs[i]; return s * k; }");
    let big: Vec<String> = (0..40_000).map(|i| format!("{}", i % 3)).collect();
    let json = format!("[[{}], 0.5]", big.join(", "));
    let file = scratch("args_file.json", &json);
    let o = run_entry(&p, "sum", &format!("@{}", file.display()), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o).trim(), "19999.5");
    let mut child = Command::new(env!("CARGO_BIN_EXE_adc"))
        .args(["run", p.to_str().unwrap(), "--entry", "sum", "--args", "@-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn adc");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"[[1, 2, 3], 2]")
        .expect("write");
    let out = child.wait_with_output().expect("adc runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "12.0");
    let missing = run_entry(&p, "sum", "@/nonexistent/args.json", &[]);
    assert_eq!(missing.status.code(), Some(2));
}

/// The header compiles whatever the parameters are called: a parameter
/// named like a length adc adds (`x_len`), like a shadow (`d_x`) or seed
/// (`seed`) of a generated derivative, or like a C++ keyword (`new`).
#[test]
fn header_compiles_with_clashing_parameter_names() {
    let Some((header, run)) = compile_and_link(
        "names",
        "[autodiff_reverse(df2, Duplicated, Const, Active, Active, Active, Active)]
double f2(double[] x, int x_len, double d_x, double seed, double new) { return x[0] * d_x * seed * new + double(x_len); }",
        "#include <stdio.h>\n#include \"names.h\"\nint main(void) { double x[2] = {2.0, 1.0}; printf(\"%g\\n\", f2(x, 2, 7, 3.0, 0.5, 1.0)); return 0; }\n",
    ) else {
        return;
    };
    assert!(header.contains("int64_t x_len,"), "{header}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "10",
        "{header}"
    );
}

/// `static` functions (docs/language.md#static-functions) stay inside the object: a C program
/// may define a function of the same name, the header leaves them out,
/// and what an attribute generates from one is `static` too; `adc run`
/// still calls them.
#[test]
fn static_functions_are_internal() {
    let src = "static double sq(double x) { return x * x; }
[autodiff_reverse(dsq, Active, Active)]
static double cube(double x) { return sq(x) * x; }
double f(double x) { auto [y, d] = dsq(x, 1.0); return sq(x) + d; }";
    let Some((header, run)) = compile_and_link(
        "statics",
        src,
        "#include <stdio.h>\n#include \"statics.h\"\ndouble sq(double x) { return -1.0; }\ndouble dsq(double x) { return -2.0; }\nint main(void) { printf(\"%g %g\\n\", f(3.0), sq(3.0)); return 0; }\n",
    ) else {
        return;
    };
    assert!(
        !header.contains("sq") && !header.contains("cube"),
        "{header}"
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "36 -1");
    let p = scratch("statics_run.ad", src);
    let o = run_entry(&p, "sq", "[3.0]", &[]);
    assert_eq!(stdout(&o).trim(), "9.0", "{}", stderr(&o));
}

/// `check` and `compile` print warnings (exit 0), `run` does not;
/// `--error-format json` writes one JSON object per diagnostic with its
/// code and 1-based line and column.
#[test]
fn warnings_and_json_diagnostics() {
    let ok = scratch("warn.ad", "double f(double x, double y) { return x; }");
    let check = adc(&["check", ok.to_str().unwrap()]);
    assert_eq!(check.status.code(), Some(0));
    assert!(
        stderr(&check).contains("unused parameter `y`"),
        "{}",
        stderr(&check)
    );
    let run = run_entry(&ok, "f", "[1.0, 2.0]", &[]);
    assert_eq!(run.status.code(), Some(0));
    assert_eq!(stderr(&run), "");
    let bad = scratch(
        "bad_json.ad",
        "double f(double total) {\n  return totl;\n}\n",
    );
    let o = adc(&["check", "--error-format", "json", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stderr(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", stderr(&o));
    let d = &lines[0];
    assert_eq!(d["code"], "E0116");
    assert_eq!(d["severity"], "error");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(2), Some(10))
    );
    assert_eq!(d["notes"][0], "did you mean `total`?");
}

/// An `extern` nothing provides is, under `adc run`, a compile error at
/// its declaration with the source line (docs/cli.md); `check` and `compile` leave
/// it to the linker.
#[test]
fn unresolved_extern_points_at_its_declaration() {
    let p = scratch(
        "unresolved.ad",
        "double f(double x) { return x; }\nextern double nosuchfn_xyz(double x);\ndouble main() { return nosuchfn_xyz(1.0); }\n",
    );
    for cmd in ["run"] {
        let o = adc(&[cmd, p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("unresolved external function `nosuchfn_xyz`"),
            "{cmd}: {err}"
        );
        assert!(err.contains("unresolved.ad:2:15"), "{cmd}: {err}");
        assert!(
            err.contains("extern double nosuchfn_xyz(double x);"),
            "{cmd}: {err}"
        );
    }
}

/// `width = 1` (docs/jacobians.md#vector-mode) is vector mode with one
/// direction in the header too: tangents, gradients and the seed in
/// arrays, the result's tangent in `t_ret`.
#[test]
fn header_of_width_one_has_the_vector_signature() {
    let Some((header, run)) = compile_and_link(
        "width1",
        "const int W = 1;
[autodiff_forward(t1, Dual, Dual, width = 1)]
[autodiff_reverse(r1, Active, Active, width = W)]
double f(double x) { return x * x * x; }",
        "#include <stdio.h>\n#include \"width1.h\"\nint main(void) { double tx[1] = {1.0}, tr[1] = {0.0}, dx[1] = {0.0}, s[1] = {2.0}; double y = t1(2.0, tx, 1, tr, 1); double z = r1(2.0, dx, 1, s, 1); printf(\"%g %g %g %g\\n\", y, tr[0], z, dx[0]); return 0; }\n",
    ) else {
        return;
    };
    assert!(
        header.contains(
            "double t1(double x, const double *d_x, int64_t d_x_len, double *t_ret, int64_t t_ret_len);"
        ),
        "{header}"
    );
    assert!(
        header.contains(
            "double r1(double x, double *d_x, int64_t d_x_len, const double *seed, int64_t seed_len);"
        ),
        "{header}"
    );
    assert_eq!(String::from_utf8_lossy(&run.stdout).trim(), "8 12 8 24");
}
