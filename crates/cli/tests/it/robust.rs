//! Bad or extreme input never crashes the compiler (issue 10): deep nesting,
//! user functions named like runtime symbols, `check` agreeing with
//! `compile`, and untrusted textual IR. Each case gives a diagnostic (exit 1)
//! or runs; none ends in a signal.

use crate::common::{adc, scratch};
use std::path::PathBuf;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit code of `adc ARGS FILE`, failing the test on a signal; stdout and
/// stderr for the caller to look at.
fn exit_code(args: &[&str], file: &PathBuf) -> (i32, String, String) {
    let mut all: Vec<&str> = args.to_vec();
    let f = file.to_str().expect("utf-8 temp path");
    all.push(f);
    let o = adc(&all);
    let code = o.status.code().unwrap_or_else(|| {
        panic!(
            "adc {all:?} ended by a signal ({:?}); stderr:\n{}",
            o.status,
            text(&o.stderr)
        )
    });
    (code, text(&o.stdout), text(&o.stderr))
}

fn flat_sum(n: usize) -> String {
    let terms = vec!["x"; n].join(" + ");
    format!("double f(double x) {{ return {terms}; }}\ndouble main() {{ return f(1.0); }}\n")
}

fn nested_neg(n: usize) -> String {
    format!(
        "double f(double x) {{ return {}x{}; }}\ndouble main() {{ return f(1.0); }}\n",
        "-(".repeat(n),
        ")".repeat(n)
    )
}

fn nested_blocks(n: usize) -> String {
    format!(
        "double f(double x) {{ {}x = x + 1.0;{} return x; }}\ndouble main() {{ return f(1.0); }}\n",
        "{".repeat(n),
        "}".repeat(n)
    )
}

fn nested_ifs(n: usize) -> String {
    let mut s = String::from("x = x + 1.0;");
    for i in 0..n {
        s = format!("if (x > {i}.0) {{ x = x * 2.0; }} else {{ {s} }}");
    }
    format!("double f(double x) {{ {s} return x; }}\ndouble main() {{ return f(-1.0); }}\n")
}

fn nested_parens(n: usize) -> String {
    format!(
        "double f(double x) {{ return {}x{} * 3.0; }}\ndouble main() {{ return f(1.0); }}\n",
        "(".repeat(n),
        ")".repeat(n)
    )
}

#[test]
fn deep_nesting_checks_and_runs() {
    let cases: [(&str, String, &str, &str); 5] = [
        ("sum.ad", flat_sum(8_000), "8000.0", "d/dx = 8000.0"),
        ("neg.ad", nested_neg(7_800), "1.0", "d/dx = 1.0"),
        ("blocks.ad", nested_blocks(20_000), "2.0", "d/dx = 1.0"),
        ("parens.ad", nested_parens(20_000), "3.0", "d/dx = 3.0"),
        ("ifs.ad", nested_ifs(300), "0.0", "d/dx = 1.0"),
    ];
    for (name, source, main, grad) in cases {
        let file = scratch(name, &source);
        let (code, _, err) = exit_code(&["check"], &file);
        assert_eq!(code, 0, "check {name}: {err}");
        let (code, out, err) = exit_code(&["run", "--entry", "main"], &file);
        assert_eq!((code, out.trim()), (0, main), "run {name}: {err}");
        if name != "sum.ad" && name != "ifs.ad" {
            let (code, out, err) =
                exit_code(&["run", "--grad", "--entry", "f", "--args", "[1.0]"], &file);
            assert_eq!(code, 0, "run --grad {name}: {err}");
            assert!(out.lines().any(|l| l == grad), "run --grad {name}: {out}");
        }
    }
    // Derivative passes on a long flat sum (slow in a debug build: 2,000).
    let file = scratch("sum2k.ad", &flat_sum(2_000));
    let (code, out, err) = exit_code(&["run", "--grad", "--entry", "f", "--args", "[1.0]"], &file);
    assert_eq!(code, 0, "run --grad sum2k: {err}");
    assert!(
        out.lines().any(|l| l == "d/dx = 2000.0"),
        "run --grad sum2k: {out}"
    );
}

#[test]
fn nesting_beyond_the_limit_is_a_diagnostic() {
    let file = scratch("too_deep.ad", &nested_neg(adc_frontend::MAX_DEPTH + 10));
    let (code, _, err) = exit_code(&["check"], &file);
    assert_eq!(code, 1);
    assert!(
        err.contains("E0006") && err.contains("nesting too deep"),
        "{err}"
    );
}

/// A host thread with a 2 MiB stack can compile deep programs: the
/// recursive walks run on a thread of their own.
#[test]
fn library_compiles_deep_programs_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for (source, expected) in [
                (flat_sum(8_000), 8000.0),
                (nested_neg(7_800), 1.0),
                (nested_blocks(20_000), 2.0),
            ] {
                let jit = adc::compile_jit("deep.ad", &source, &adc::CompileOptions::default())
                    .unwrap_or_else(|f| panic!("does not compile:\n{f}"));
                let r = jit.call("main", &mut []).expect("runs");
                assert_eq!(r, vec![adc::Constant::F64(expected)]);
            }
        })
        .expect("spawn");
    handle.join().expect("no panic on a 2 MiB stack");
}

/// Under an address-space limit too small for the 4 GiB compile thread,
/// `with_deep_stack` settles for a smaller stack and accepts less nesting:
/// 10,000 nested `sin(` compile or are E0006, never a stack overflow (the
/// compiler fell back to the 8 MiB main thread and aborted; independent
/// tester's finding). Under 300 MB the stack also leaves room for the heap.
#[test]
fn deep_nesting_under_an_address_space_limit() {
    let n = 10_000;
    let src = format!(
        "double f(double x) {{ return {}x{}; }}",
        "sin(".repeat(n),
        ")".repeat(n)
    );
    let file = scratch("deep_limited.ad", &src);
    let path = file.to_str().expect("utf-8 temp path");
    for kib in [300_000, 1_000_000, 4_000_000] {
        let o = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -v {kib} && exec \"$0\" check \"$1\"",))
            .arg(env!("CARGO_BIN_EXE_adc"))
            .arg(path)
            .output()
            .expect("sh runs");
        let err = text(&o.stderr);
        match o.status.code() {
            Some(0) => (),
            Some(1) => assert!(err.contains("E0006"), "under {kib} KiB: {err}"),
            other => panic!("under {kib} KiB: exit {other:?}\n{err}"),
        }
    }
}

static REENTRANT: std::sync::OnceLock<adc::JitModule> = std::sync::OnceLock::new();
static HOST_SAW_OVERFLOW: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn host_recurse(x: f64, n: i64) -> f64 {
    let jit = REENTRANT.get().expect("set before the first call");
    let g: adc::TypedFunc<(f64, i64), f64> = jit.typed("g").expect("g");
    match g.call((x, n)) {
        Ok(y) => y,
        Err(adc::CallError::Runtime(m)) => {
            assert!(m.contains("stack overflow"), "{m}");
            HOST_SAW_OVERFLOW.store(true, std::sync::atomic::Ordering::SeqCst);
            f64::NAN
        }
        Err(e) => panic!("{e:?}"),
    }
}

/// Recursion through a host function (JIT code calls an `extern` that
/// calls back into the module) meets the stack guard like recursion within
/// the module: a function calling an `extern` is guarded too. It had no
/// guard and aborted the host at depth 3,000 on a 2 MiB thread
/// (independent tester's finding F1).
#[test]
fn recursion_through_a_host_function_is_a_runtime_error() {
    let src = "extern double host_recurse(double x, int n);
double g(double x, int n) { if (n <= 0) { return x; } double t[4]; t[n % 4] = x; return sin(host_recurse(t[n % 4], n - 1)); }";
    let mut host = adc::HostFunctions::new();
    host.func(
        "host_recurse",
        host_recurse as extern "C" fn(f64, i64) -> f64,
    );
    let jit = adc::compile_jit_with_host("reenter.ad", src, &[], &host).expect("compiles");
    assert!(REENTRANT.set(jit).is_ok());
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let jit = REENTRANT.get().expect("set");
            let g: adc::TypedFunc<(f64, i64), f64> = jit.typed("g").expect("g");
            assert_eq!(g.call((0.5, 3)), Ok(0.5f64.sin().sin().sin()));
            let deep = g.call((0.5, 1_000_000));
            assert!(deep.as_ref().map_or(true, |y| y.is_nan()), "{deep:?}");
        })
        .expect("spawn")
        .join()
        .expect("no abort on a 2 MiB stack");
    assert!(HOST_SAW_OVERFLOW.load(std::sync::atomic::Ordering::SeqCst));
}

/// Code generation runs on the compiler's deep-stack thread too: compiling
/// `return x;` on a 64 KiB host thread aborted the process inside
/// Cranelift (independent tester's finding).
#[test]
fn library_compiles_on_a_64_kib_thread() {
    let handle = std::thread::Builder::new()
        .stack_size(64 << 10)
        .spawn(|| {
            let src = "[autodiff_reverse(df, Active, Active)] double f(double x) { return x * x; }";
            let jit = adc::compile_jit("small.ad", src, &adc::CompileOptions::default())
                .expect("compiles");
            let r = jit.call(
                "df",
                &mut [
                    adc::ArgValue::Scalar(adc::Constant::F64(3.0)),
                    adc::ArgValue::Scalar(adc::Constant::F64(1.0)),
                ],
            );
            assert_eq!(
                r,
                Ok(vec![adc::Constant::F64(9.0), adc::Constant::F64(6.0)])
            );
            let out = adc::driver::compile_object(
                "small.ad",
                src,
                "SMALL_H",
                &adc::CompileOptions::default(),
            )
            .expect("compiles to an object");
            assert!(out.object.starts_with(b"\x7fELF"));
        })
        .expect("spawn");
    handle.join().expect("no panic on a 64 KiB stack");
}

/// `adc check` fails exactly when `adc compile` does: a reverse derivative
/// through an extern without a custom derivative is found only when the
/// derivative is generated.
#[test]
fn check_fails_when_compile_fails() {
    let sources = [
        "extern double j0(double x);\n[autodiff_reverse(df, Active, Active)]\ndouble f(double x) { return j0(x) * x; }\n",
        "double g(double x) { return x * x; }\ndouble main() { return g(2.0); }\n",
    ];
    for (i, source) in sources.iter().enumerate() {
        let file = scratch(&format!("agree{i}.ad"), source);
        let (check, _, check_err) = exit_code(&["check"], &file);
        let obj = file.with_extension("o");
        let (compile, _, compile_err) =
            exit_code(&["compile", "-o", obj.to_str().expect("utf-8")], &file);
        assert_eq!(
            check, compile,
            "{source}\ncheck: {check_err}\ncompile: {compile_err}"
        );
    }
}

/// Names compiled code needs for itself are refused with a diagnostic, by
/// `check`, `run` and `compile` alike (an object file defining `free` would
/// take the C library's place for the code's own calls): C library
/// functions the runtime calls, and math built-ins, which derivative code
/// calls too. An `extern` of a math function's own name stays allowed.
#[test]
fn user_functions_named_like_runtime_symbols() {
    for (name, code) in [
        ("calloc", "E0204"),
        ("free", "E0204"),
        ("malloc", "E0204"),
        ("realloc", "E0204"),
        ("memmove", "E0204"),
        ("exit", "E0204"),
        ("write", "E0204"),
        ("__adc_copy", "E0204"),
        ("sin", "E0202"),
        ("expf", "E0202"),
        ("fabs", "E0202"),
    ] {
        let source = format!(
            "double {name}(double x) {{ return x * 2.0; }}\n\
             double main() {{ double a[3]; a[1] = 1.5; return {name}(a[1]); }}\n"
        );
        let file = scratch(&format!("{name}.ad"), &source);
        let obj = file.with_extension("o");
        for args in [
            vec!["check"],
            vec!["run"],
            vec!["compile", "-o", obj.to_str().expect("utf-8")],
        ] {
            let (status, _, err) = exit_code(&args, &file);
            assert_eq!(status, 1, "{name} {args:?}: {err}");
            assert!(err.contains(code), "{name} {args:?}: {err}");
        }
    }
    let source = "extern double cos(double x);\ndouble main() { return cos(0.0); }\n";
    let file = scratch("extern_cos.ad", source);
    let (status, out, err) = exit_code(&["run"], &file);
    assert_eq!((status, out.trim()), (0, "1.0"), "{err}");
}

/// Textual IR is made safe before it runs (`user_ir.rs`): an unchecked
/// load out of bounds is a runtime error, not a crash; `free` of a
/// parameter does nothing (no double free); a `copyrange` out of bounds is
/// a runtime error; IR of every stage of a program with a derivative
/// either runs with the source's result or is refused with exit 1.
#[test]
fn textual_ir_is_made_safe() {
    let cases = [
        (
            "oob.adir",
            "func @main() -> f64 {\nblock0():\n    v0: i64 = const 3\n    v1: arr<f64> = new v0\n    v2: i64 = const 100000000\n    v3: f64 = load.unchecked v1, v2\n    return v3\n}\n",
            3,
        ),
        (
            "free_param.adir",
            "func @main() -> f64 {\nblock0():\n    v0: i64 = const 3\n    v1: arr<f64> = new v0\n    v2: f64 = call @f(v1)\n    free v1\n    free v1\n    return v2\n}\n\nfunc @f(a: arr<f64>) -> f64 {\nblock0(v0: arr<f64>):\n    free v0\n    v1: f64 = const 1.0\n    return v1\n}\n",
            0,
        ),
        (
            "copy.adir",
            "func @main() -> f64 {\nblock0():\n    v0: i64 = const 3\n    v1: arr<f64> = new v0\n    v2: i64 = const 2\n    v3: i64 = const 0\n    copyrange v1, v2, v1, v3, v2\n    v4: f64 = const 1.0\n    return v4\n}\n",
            3,
        ),
    ];
    for (name, text, want) in cases {
        let file = scratch(name, text);
        let (code, _, err) = exit_code(&["run"], &file);
        assert_eq!(code, want, "{name}: {err}");
        if want == 3 {
            // The instruction's line and column in the .adir text (docs/cli.md).
            let line = text
                .lines()
                .position(|l| l.contains("load.unchecked") || l.contains("copyrange"));
            let at = format!("{name}:{}:5", line.expect("the failing instruction") + 1);
            assert!(err.contains(&at), "{name}: {err} (want {at})");
        }
    }
    // `new.uninit` (arrays the compiler's generated code writes before
    // reading) becomes `new`: an element read first is zero.
    let uninit = "func @main() -> f64 {\nblock0():\n    v0: i64 = const 3\n    v1: arr<f64> = new.uninit v0\n    v2: i64 = const 2\n    v3: f64 = load v1, v2\n    return v3\n}\n";
    let (code, out, err) = exit_code(&["run"], &scratch("uninit.adir", uninit));
    assert_eq!((code, out.trim()), (0, "0.0"), "{err}");
    let src = "[autodiff_reverse(df, Active, Active)]\ndouble f(double x) { double s = 0.0; for (int i = 0; i < 3; i++) s += sin(x * s + 1.0); return s; }\ndouble main() { auto [y, d] = df(0.5, 1.0); return y + d; }\n";
    let file = scratch("stages.ad", src);
    let (code, want, err) = exit_code(&["run"], &file);
    assert_eq!(code, 0, "{err}");
    for stage in [
        "lower",
        "linearize",
        "propagate",
        "lower-pairs",
        "widen",
        "unzip",
        "transpose",
        "opt",
        "final",
    ] {
        let (code, ir, err) = exit_code(&["ir", "--after", stage], &file);
        assert_eq!(code, 0, "{stage}: {err}");
        let dumped = scratch(&format!("stage_{stage}.adir"), &ir);
        let (code, out, err) = exit_code(&["run"], &dumped);
        match code {
            0 => assert_eq!(out, want, "{stage}"),
            1 => assert!(err.contains("not accepted in textual IR"), "{stage}: {err}"),
            other => panic!("{stage}: exit {other}: {err}"),
        }
    }
}

/// What `adc ir` prints reads back under any name but `.ad`: redirected
/// to `f.ir` or `f.txt` (not only `.adir`), it is textual IR, for `ir`,
/// `run` and `check`; `.ad` source under such a name stays source.
#[test]
fn ir_printed_to_a_file_of_any_extension_reads_back() {
    let src = "double main() { double x = 1.5; return x * x; }\n";
    let file = scratch("readback.ad", src);
    let (code, ir, err) = exit_code(&["ir", "--after", "lower"], &file);
    assert_eq!(code, 0, "{err}");
    for name in ["readback.ir", "readback.txt", "readback"] {
        let dumped = scratch(name, &format!("; printed by adc ir\n\n{ir}"));
        let (code, out, err) = exit_code(&["run"], &dumped);
        assert_eq!((code, out.trim()), (0, "2.25"), "{name}: {err}");
        let (code, _, err) = exit_code(&["ir", "--after", "final"], &dumped);
        assert_eq!(code, 0, "{name}: {err}");
    }
    let source = scratch("source.txt", src);
    let (code, out, err) = exit_code(&["run"], &source);
    assert_eq!((code, out.trim()), (0, "2.25"), "{err}");
}

/// Textual IR that the verifier accepts but compiled code could not run
/// safely is refused with a diagnostic (exit 1), never a panic or a crash:
/// derivative declarations whose activities do not fit (once a panic in
/// `linearize` or Cranelift), a signature other than the activities
/// generate, a function returning a reference (a dead frame's slot: once
/// a segfault).
#[test]
fn textual_ir_declarations_and_results_are_checked() {
    let f =
        "func @f(x: f64) -> f64 {\nblock0(v0: f64):\n    v1: f64 = mul v0, v0\n    return v1\n}\n";
    let g = "func @g(a: arr<f64>) -> f64 {\nblock0(v0: arr<f64>):\n    v1: i64 = const 0\n    v2: f64 = load v0, v1\n    return v2\n}\n";
    let cases = [
        ("too_few.adir", format!("{f}func @df(x: f64) -> f64 = reverse @f(Active)\n"), "0 activities for 1 parameters"),
        ("too_many.adir", format!("{f}func @df(x: f64) -> f64 = forward @f(Dual, Dual, Dual)\n"), "2 activities"),
        ("active_array.adir", format!("{g}func @dg(x: f64) -> f64 = reverse @g(Active, Active)\n"), "does not fit parameter `a`"),
        ("dup_scalar.adir", format!("{f}func @df(x: f64, d_x: f64, seed: f64) -> f64 = reverse @f(Duplicated, Active)\n"), "does not fit parameter `x`"),
        ("wrong_sig.adir", format!("{f}func @df(x: f64) -> f64 = reverse @f(Active, Active)\n"), "not the one"),
        // Names `.ad` source may not take either: an object file's
        // `@malloc` replaced the C library's (robust5 F6), adc's prefixes
        // clashed with its own symbols.
        ("malloc.adir", f.replace("@f", "@malloc"), "`malloc` is a name compiled code uses"),
        ("write.adir", f.replace("@f", "@write"), "`write` is a name compiled code uses"),
        ("impl.adir", format!("{f}{}", f.replace("@f", "@__adc_impl_f")), "`__adc_impl_f`"),
        ("sin.adir", f.replace("@f", "@sin"), "`sin` is a built-in"),
        // A name a C header could not declare.
        ("dotted.adir", f.replace("@f", "@foo.bar"), "not an identifier"),
        (
            "ref_result.adir",
            "func @mk() -> ref<i64> {\nblock0():\n    v0: ref<i64> = slot\n    return v0\n}\nfunc @main() -> i64 {\nblock0():\n    v0: ref<i64> = call @mk()\n    v1: i64 = rload v0\n    return v1\n}\n".to_string(),
            "returns a reference",
        ),
    ];
    for (name, text, want) in cases {
        let file = scratch(name, &text);
        let (code, _, err) = exit_code(&["run", "--entry", "f"], &file);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
    }
    // What an attribute generates is still accepted.
    let file = scratch(
        "good_decl.adir",
        &format!("{f}func @df(x: f64, seed: f64) -> f64, f64 = reverse @f(Active, Active)\n"),
    );
    let (code, out, err) = exit_code(
        &["run", "--entry", "df", "--args", "[3, 1]", "--json"],
        &file,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[9.0, 6.0]"), "{out}");
}

/// The halves of a split-mode call take a raw tape handle: they are not
/// entry points (`adc run --entry __adc_aug_tree` once segfaulted).
#[test]
fn split_halves_are_not_entry_points() {
    let src = "double tree(double[] xs) {
    int n = len(xs);
    if (n <= 2) { return xs[0] * xs[0]; }
    return tree(xs[0..n / 2]) * tree(xs[n / 2..]);
}
[autodiff_reverse(dtree, Duplicated, Active)]
double top(double[] xs) { return tree(xs); }
";
    let file = scratch("split_entry.ad", src);
    for (entry, args) in [
        ("__adc_aug_tree", "[[1, 2, 3, 4], [0, 0, 0, 0], 0]"),
        ("__adc_rev_tree", "[[1, 2, 3, 4], [0, 0, 0, 0], 1, 12345]"),
    ] {
        let (code, _, err) = exit_code(&["run", "--entry", entry, "--args", args], &file);
        assert_eq!(code, 2, "{entry}: {err}");
    }
    let (code, out, err) = exit_code(
        &[
            "run",
            "--entry",
            "dtree",
            "--args",
            "[[1, 2, 3, 4], [0, 0, 0, 0], 1]",
            "--json",
        ],
        &file,
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[18.0, 0.0, 6.0, 0.0]"), "{out}");
}

/// Under `adc run`, externs resolve against the math library and the host
/// only (docs/cli.md): `wmemset` from the rest of the C library, declared with
/// another signature, once segfaulted; `.adir` externs of `free` or
/// `memset` corrupted the heap.
#[test]
fn externs_resolve_against_the_math_library_only() {
    let src = "extern void wmemset(inout double[] a, int n);\nextern double j0(double x);\ndouble main() { double a[2]; wmemset(a, 1000000); return j0(a[0]); }\n";
    let (code, _, err) = exit_code(&["run"], &scratch("wmemset.ad", src));
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("unresolved external function `wmemset`"),
        "{err}"
    );
    let ir = "extern @free(a: arr<f64>)\nfunc @main() -> f64 {\nblock0():\n    v0: i64 = const 3\n    v1: arr<f64> = new v0\n    call @free(v1)\n    call @free(v1)\n    v2: f64 = const 1.0\n    return v2\n}\n";
    let (code, _, err) = exit_code(&["run"], &scratch("free.adir", ir));
    assert_eq!(code, 1, "{err}");
    // Refused before resolution now: `free` is a name compiled code uses.
    assert!(err.contains("`free` is a name compiled code uses"), "{err}");
    let ok = "extern double j0(double x);\nextern double ldexp(double x, int e);\ndouble main() { return ldexp(j0(0.0), 3); }\n";
    let (code, out, err) = exit_code(&["run"], &scratch("libm.ad", ok));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "8.0");
    // Math functions writing through pointers resolve when declared with
    // exactly their C signature (`out` scalars are pointers), not otherwise
    // (`modf` was unresolved whatever its declaration).
    let exact = "extern double modf(double x, out double ip);\nextern void sincos(double x, out double s, out double c);\ndouble main() { double ip = 0.0; double fr = modf(3.75, ip); double s = 0.0; double c = 0.0; sincos(0.5, s, c); return fr + ip + s * s + c * c; }\n";
    let (code, out, err) = exit_code(&["run"], &scratch("modf.ad", exact));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "4.75");
    let wrong = "extern double modf(double x, out int ip);\ndouble main() { int ip = 0; return modf(3.75, ip); }\n";
    let (code, _, err) = exit_code(&["run"], &scratch("modf_int.ad", wrong));
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("unresolved external function `modf`"), "{err}");
}

/// A function whose frame is larger than the stack left stops with a
/// runtime error, also without calls (once a leaf's frame jumped past the
/// guard page from a 256 KiB thread: SIGSEGV, or an abort when recursion
/// called it); the frame's size counts in the recursion guard too.
#[test]
fn large_frames_on_a_small_stack_are_a_runtime_error() {
    // 20,000 values live across calls: a 160 KB frame (counted twice by
    // the guard, which runs once the frame is allocated).
    let n = 20_000;
    let mut src = String::from("double leaf(double x) {\n");
    for i in 0..n {
        src += &format!("    double a{i} = sin(x + {i}.0);\n");
    }
    src += "    return 0.0";
    for i in 0..n {
        src += &format!(" + a{i}");
    }
    src += ";\n}\ndouble rec(double x, int n) { if (n == 0) { return 0.0; } return leaf(x) + rec(x, n - 1); }\n";
    let jit = std::sync::Arc::new(
        adc::compile_jit("frame.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}")),
    );
    let small = jit.clone();
    let handle = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let jit = small;
            let leaf: adc::TypedFunc<(f64,), f64> = jit.typed("leaf").expect("leaf");
            let rec: adc::TypedFunc<(f64, i64), f64> = jit.typed("rec").expect("rec");
            let overflow = |r: Result<f64, adc::CallError>| match r {
                Err(adc::CallError::Runtime(m)) => assert!(m.contains("stack overflow"), "{m}"),
                other => panic!("{other:?}"),
            };
            overflow(leaf.call((0.5,)));
            overflow(rec.call((0.5, 10_000)));
        })
        .expect("spawn");
    handle.join().expect("no crash on a 256 KiB stack");
    // On a large stack the same calls run.
    let handle = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let rec: adc::TypedFunc<(f64, i64), f64> = jit.typed("rec").expect("rec");
            assert!(rec.call((0.5, 3)).expect("runs").is_finite());
        })
        .expect("spawn");
    handle.join().expect("runs on a 64 MiB stack");
}

/// Stack guards use the frames Cranelift laid out: bounding a frame by the
/// function's IR values made the reverse derivative of 300 nested `if`s
/// ask for 436 KB (it takes about 1 KB) and fail on a 256 KiB thread
/// (2,000 of them asked for 16 MB: "frame too large" from `adc run`).
#[test]
fn stack_guards_measure_frames() {
    let n = 300;
    let mut src =
        String::from("[autodiff_reverse(ddeep, Active, ActiveOnly)]\ndouble deep(double x) {\n");
    for i in 0..n {
        src += &format!("if (x > {i}.5) {{ x = x * 1.0001 + 1.0;\n");
    }
    src += &"}".repeat(n);
    src += "\nreturn x * x;\n}\n";
    let jit = adc::compile_jit("deep.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let d: adc::TypedFunc<(f64, f64), f64> = jit.typed("ddeep").expect("ddeep");
            // x stays below 0.5: no branch taken, d(x^2)/dx = 2x.
            assert_eq!(d.call((0.25, 1.0)).expect("runs on a 256 KiB stack"), 0.5);
        })
        .expect("spawn")
        .join()
        .expect("no crash");
}

/// A long straight-line function's reverse derivative (4,500 statements,
/// about 18,000 Cranelift values in one block) is compiled with the
/// single-pass register allocator (the default one's time grew as the
/// square of the values: 15 s at 10,000 statements, 59 s at 20,000); its
/// gradient is the one computed by hand, statement by statement.
#[test]
fn long_straight_line_reverse_derivatives_compile_with_the_single_pass_allocator() {
    let n = 4_500;
    let mut src = String::from(
        "[autodiff_reverse(d, Active, Active)]\ndouble f(double x) {\n  double s = x;\n",
    );
    for k in 0..n {
        src += &format!("  s = s * 0.99999 + sin(x) * {}.0;\n", k % 7);
    }
    src += "  return s;\n}\n";
    let jit = adc::compile_jit("long.ad", &src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let d: adc::TypedFunc<(f64, f64), (f64, f64)> = jit.typed("d").expect("d");
    let x = 0.3f64;
    let (mut s, mut ds) = (x, 1.0);
    for k in 0..n {
        s = s * 0.99999 + x.sin() * (k % 7) as f64;
        ds = ds * 0.99999 + x.cos() * (k % 7) as f64;
    }
    let (value, grad) = d.call((x, 1.0)).expect("runs");
    assert!((value - s).abs() <= 1e-12 * s.abs(), "{value} against {s}");
    assert!((grad - ds).abs() <= 1e-12 * ds.abs(), "{grad} against {ds}");
}

/// A function of more than 30,000 Cranelift blocks (20,000 nested `if`s)
/// is compiled with the single-pass register allocator, whose frames are
/// large: the result is the same, recursion through it still meets the
/// stack guard on a small stack instead of crashing, and it runs on a
/// large one. (With the default allocator it took 9 s and 2.5 GB.)
#[test]
fn huge_functions_compile_with_the_single_pass_allocator() {
    let n = 20_000;
    let mut src = String::from("double deep(double x) {\n");
    for _ in 0..n {
        src += "if (x > 0.0) { x = x * 1.0001;\n";
    }
    src += &"}".repeat(n);
    src += "\nreturn x;\n}\ndouble rec(double x, int n) { if (n == 0) { return 0.0; } return deep(x) + rec(x, n - 1); }\n";
    let jit = std::sync::Arc::new(
        adc::compile_jit("deep.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}")),
    );
    let want = (0..n).fold(0.5f64, |x, _| x * 1.0001);
    let small = jit.clone();
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let rec: adc::TypedFunc<(f64, i64), f64> = small.typed("rec").expect("rec");
            match rec.call((0.5, 1_000)) {
                Err(adc::CallError::Runtime(m)) => assert!(m.contains("stack overflow"), "{m}"),
                other => panic!("{other:?}"),
            }
        })
        .expect("spawn")
        .join()
        .expect("no crash on a 256 KiB stack");
    std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let deep: adc::TypedFunc<(f64,), f64> = jit.typed("deep").expect("deep");
            assert_eq!(deep.call((0.5,)).expect("runs"), want);
            let rec: adc::TypedFunc<(f64, i64), f64> = jit.typed("rec").expect("rec");
            assert_eq!(rec.call((0.5, 3)).expect("runs"), 3.0 * want);
        })
        .expect("spawn")
        .join()
        .expect("runs on a 64 MiB stack");
}
