//! Array views `a[lo..hi]` / `a[lo..]` (docs/language.md#types) and the aliasing
//! rule (docs/arrays.md#the-aliasing-rule).
//!
//! Each derivative case is a pair of programs: one passing views, its twin
//! passing (array, offset) pairs to helpers written for them. Both define
//! `f(double[] x)`, differentiated in reverse (`df`) and forward (`tf`)
//! mode. Three oracles: the twins agree (value and gradient, to rounding),
//! forward against reverse (`<grad, v> = tangent(v)`), and central finite
//! differences.

use adc::{ArgValue, ArrayValue, CallError, Constant, JitModule};

const N: usize = 12;

const ATTRS: &str =
    "[autodiff_reverse(df, Duplicated, Active)]\n[autodiff_forward(tf, Dual, Dual)]\n";

struct Case {
    name: &'static str,
    views: &'static str,
    twin: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "sliding windows, read-only",
        views: "double sq(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) s += a[i] * a[i] * a[0]; return s; }
double f(double[] x) { double s = 0.0; for (int i = 0; i + 3 <= len(x); i++) s += sin(sq(x[i..i + 3])); return s + sq(x[9..]); }",
        twin: "double sq(double[] a, int o, int n) { double s = 0.0; for (int i = 0; i < n; i++) s += a[o + i] * a[o + i] * a[o]; return s; }
double f(double[] x) { double s = 0.0; for (int i = 0; i + 3 <= len(x); i++) s += sin(sq(x, i, 3)); return s + sq(x, 9, 3); }",
    },
    Case {
        name: "writable views of a local array",
        views: "void smooth(inout double[] t, double c) { for (int i = 1; i < len(t); i++) t[i] = t[i] + c * t[i - 1] * t[i]; }
void fill(out double[] t, double[] s) { for (int i = 0; i < len(t); i++) t[i] = s[i]; }
double f(double[] x) { double t[12]; fill(t[2..], x[0..10]); for (int k = 0; k + 4 <= 12; k += 2) smooth(t[k..k + 4], x[k]); double s = 0.0; for (int i = 0; i < 12; i++) s += t[i] * t[i]; return s; }",
        twin: "void smooth(inout double[] t, int o, int n, double c) { for (int i = 1; i < n; i++) t[o + i] = t[o + i] + c * t[o + i - 1] * t[o + i]; }
void fill(out double[] t, int o, double[] s, int so, int n) { for (int i = 0; i < n; i++) t[o + i] = s[so + i]; }
double f(double[] x) { double t[12]; fill(t, 2, x, 0, 10); for (int k = 0; k + 4 <= 12; k += 2) smooth(t, k, 4, x[k]); double s = 0.0; for (int i = 0; i < 12; i++) s += t[i] * t[i]; return s; }",
    },
    Case {
        name: "recursion on the tail view",
        views: "double rsum(double[] a) { if (len(a) == 0) return 0.0; return a[0] * sin(a[0]) + 0.5 * rsum(a[1..]); }
double f(double[] x) { return rsum(x) + rsum(x[len(x) - 4..len(x) - 1]); }",
        twin: "double rsum(double[] a, int o, int n) { if (n == 0) return 0.0; return a[o] * sin(a[o]) + 0.5 * rsum(a, o + 1, n - 1); }
double f(double[] x) { return rsum(x, 0, len(x)) + rsum(x, len(x) - 4, 3); }",
    },
    Case {
        name: "out views, a matrix times vectors",
        views: "void mv(double[] m, double[] v, out double[] o) { for (int i = 0; i < len(o); i++) { double s = 0.0; for (int j = 0; j < len(v); j++) s += m[i * len(v) + j] * v[j]; o[i] = s; } }
double f(double[] x) { double h[6]; mv(x[0..4], x[4..6], h[0..2]); mv(x[4..10], x[10..], h[2..5]); double s = 0.0; for (int i = 0; i < 6; i++) s += tanh(h[i]); return s; }",
        twin: "void mv(double[] m, int mo, double[] v, int vo, int vn, out double[] o, int oo, int on) { for (int i = 0; i < on; i++) { double s = 0.0; for (int j = 0; j < vn; j++) s += m[mo + i * vn + j] * v[vo + j]; o[oo + i] = s; } }
double f(double[] x) { double h[6]; mv(x, 0, x, 4, 2, h, 0, 2); mv(x, 4, x, 10, 2, h, 2, 3); double s = 0.0; for (int i = 0; i < 6; i++) s += tanh(h[i]); return s; }",
    },
    Case {
        name: "views in a checkpointed loop carrying an array",
        views: "void step(inout double[] s, double[] w) { double a = s[0]; s[0] = s[0] + 0.1 * sin(s[1] * w[0]); s[1] = s[1] - 0.1 * a * w[1]; }
double f(double[] x) { double s[4]; s[0] = x[0]; s[1] = x[1]; s[2] = 1.0; [checkpoint(3)] for (int i = 0; i < 10; i++) { step(s[i % 3..i % 3 + 2], x[i..i + 2]); } return s[0] * s[1] + s[2] * s[3]; }",
        twin: "void step(inout double[] s, int so, double[] w, int wo) { double a = s[so]; s[so] = s[so] + 0.1 * sin(s[so + 1] * w[wo]); s[so + 1] = s[so + 1] - 0.1 * a * w[wo + 1]; }
double f(double[] x) { double s[4]; s[0] = x[0]; s[1] = x[1]; s[2] = 1.0; [checkpoint(3)] for (int i = 0; i < 10; i++) { step(s, i % 3, x, i); } return s[0] * s[1] + s[2] * s[3]; }",
    },
    Case {
        name: "data-dependent bounds and a while loop",
        views: "double mean(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) s += a[i]; return s / double(len(a)); }
double f(double[] x) { int lo = 0; double s = 0.0; while (lo < len(x)) { int w = 1 + int(abs(x[lo])) % 3; int hi = min(lo + w, len(x)); s += exp(mean(x[lo..hi])); lo = hi; } return s; }",
        twin: "double mean(double[] a, int o, int n) { double s = 0.0; for (int i = 0; i < n; i++) s += a[o + i]; return s / double(n); }
double f(double[] x) { int lo = 0; double s = 0.0; while (lo < len(x)) { int w = 1 + int(abs(x[lo])) % 3; int hi = min(lo + w, len(x)); s += exp(mean(x, lo, hi - lo)); lo = hi; } return s; }",
    },
    Case {
        name: "a generated derivative called on views",
        views: "[autodiff_reverse(dg, Duplicated, Active)]
double g(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) s += sin(a[i]) * a[0]; return s; }
double f(double[] x) { double d[12]; double v = dg(x[2..8], d[2..8], 1.0); double s = v; for (int i = 0; i < 12; i++) s += d[i] * d[i] * x[i]; return s; }",
        twin: "[autodiff_reverse(dg, Duplicated, Active)]
double g(double[] a) { double s = 0.0; for (int i = 0; i < len(a); i++) s += sin(a[i]) * a[0]; return s; }
double f(double[] x) { double a[6]; for (int i = 0; i < 6; i++) a[i] = x[2 + i]; double da[6]; double v = dg(a, da, 1.0); double d[12]; for (int i = 0; i < 6; i++) d[2 + i] = da[i]; double s = v; for (int i = 0; i < 12; i++) s += d[i] * d[i] * x[i]; return s; }",
    },
    Case {
        // The twin's helpers, once inlined, store and load one array at
        // constant indices (`rle` keeps what it knows of `a[0]` across a
        // store to `a[2]`, not of `a[2]`); the views store and load the
        // same elements at other constants of other arrays (`a[1..3]`'s 1
        // is `a[2]`). The array has a run-time length, so it stays in memory.
        name: "one element written and read through views at other constants",
        views: "void set1(inout double[] v, double c) { v[1] = c; }
double get1(double[] v) { return v[1]; }
double f(double[] x) { double a[len(x)]; a[0] = x[0]; a[2] = x[1]; double p = a[2] * 3.0; set1(a[1..3], x[2] * x[2]); double q = a[2]; a[3] = q * x[0]; double r = get1(a[2..4]); a[2] = r + a[0]; a[1] = a[0] * a[3]; set1(a[0..2], a[2] - 1.0); return p + q * a[0] + a[2] * get1(a[1..3]) + a[1] * x[3]; }",
        twin: "void set1(inout double[] v, int o, double c) { v[o + 1] = c; }
double get1(double[] v, int o) { return v[o + 1]; }
double f(double[] x) { double a[len(x)]; a[0] = x[0]; a[2] = x[1]; double p = a[2] * 3.0; set1(a, 1, x[2] * x[2]); double q = a[2]; a[3] = q * x[0]; double r = get1(a, 2); a[2] = r + a[0]; a[1] = a[0] * a[3]; set1(a, 0, a[2] - 1.0); return p + q * a[0] + a[2] * get1(a, 1) + a[1] * x[3]; }",
    },
];

fn point(k: usize) -> Vec<f64> {
    (0..N)
        .map(|i| 0.3 + 0.7 * ((i * 7 + k * 3) as f64 * 0.37).sin())
        .collect()
}

fn compile(src: &str, what: &str) -> JitModule {
    adc::compile_jit("views.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{what} does not compile:\n{e}\n{src}"))
}

fn arr(x: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(x.to_vec()))
}

fn f64s(cs: &[Constant]) -> Vec<f64> {
    cs.iter()
        .map(|c| match c {
            Constant::F64(v) => *v,
            other => panic!("not a double: {other:?}"),
        })
        .collect()
}

fn value(j: &JitModule, x: &[f64]) -> f64 {
    f64s(&j.call("f", &mut [arr(x)]).expect("f runs"))[0]
}

/// (value, gradient) by reverse mode.
fn gradient(j: &JitModule, x: &[f64]) -> (f64, Vec<f64>) {
    let mut args = [arr(x), arr(&[0.0; N]), ArgValue::Scalar(Constant::F64(1.0))];
    let v = f64s(&j.call("df", &mut args).expect("df runs"))[0];
    let ArgValue::Array(ArrayValue::F64(g)) = &args[1] else {
        panic!("shadow is not a double array")
    };
    (v, g.clone())
}

fn tangent(j: &JitModule, x: &[f64], v: &[f64]) -> f64 {
    f64s(&j.call("tf", &mut [arr(x), arr(v)]).expect("tf runs"))[1]
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn view_derivatives_agree_with_twins_forward_and_differences() {
    for case in CASES {
        let with_views = compile(
            &format!("{}\n{ATTRS}{}", helpers(case.views), main(case.views)),
            case.name,
        );
        let twin = compile(
            &format!("{}\n{ATTRS}{}", helpers(case.twin), main(case.twin)),
            case.name,
        );
        for k in 0..3 {
            let x = point(k);
            let (v, g) = gradient(&with_views, &x);
            let (tv, tg) = gradient(&twin, &x);
            assert!(close(v, tv, 1e-13), "{}: value {v} vs twin {tv}", case.name);
            assert!(
                close(v, value(&with_views, &x), 1e-15),
                "{}: df's primal",
                case.name
            );
            for i in 0..N {
                assert!(
                    close(g[i], tg[i], 1e-12),
                    "{}: d/dx{i} {} vs twin {}",
                    case.name,
                    g[i],
                    tg[i]
                );
            }
            let dir = point(k + 5);
            let dot: f64 = g.iter().zip(&dir).map(|(a, b)| a * b).sum();
            let t = tangent(&with_views, &x, &dir);
            assert!(
                close(t, dot, 1e-12),
                "{}: tangent {t} vs <grad, v> {dot}",
                case.name
            );
            let h = 1e-6;
            let shifted =
                |s: f64| -> Vec<f64> { x.iter().zip(&dir).map(|(a, b)| a + s * b).collect() };
            let fd =
                (value(&with_views, &shifted(h)) - value(&with_views, &shifted(-h))) / (2.0 * h);
            assert!(
                close(fd, dot, 1e-5),
                "{}: central difference {fd} vs {dot}",
                case.name
            );
        }
    }
}

/// Everything before the last function of a case (the helpers).
fn helpers(src: &str) -> &str {
    &src[..src.rfind("double f(").expect("a case defines f")]
}

fn main(src: &str) -> &str {
    &src[src.rfind("double f(").expect("a case defines f")..]
}

fn run_err(src: &str, name: &str, args: &mut [ArgValue]) -> Result<Vec<Constant>, CallError> {
    compile(src, name).call(name, args)
}

const RUNTIME: &str = "
void addto(inout double[] d, double[] s) { for (int i = 0; i < len(d); i++) d[i] += s[i]; }
double both(double[] a, double[] b) { return a[0] + b[0]; }
double view(double[] x, int lo, int hi) { return both(x[lo..hi], x[lo..]); }
double overlap(inout double[] y, int a, int b) { addto(y[a..a + 2], y[b..b + 2]); return y[0]; }
double same(inout double[] y) { addto(y, y); return y[0]; }
double readers(double[] x) { return both(x, x[1..]) + both(x[0..2], x); }
double empty(inout double[] y) { addto(y[1..1], y[0..]); return y[0]; }
";

fn ints(a: &[i64]) -> Vec<ArgValue> {
    a.iter()
        .map(|&v| ArgValue::Scalar(Constant::I64(v)))
        .collect()
}

#[test]
fn view_bounds_are_checked_at_run_time() {
    let x = [1.0, 2.0, 3.0, 4.0];
    let call = |lo: i64, hi: i64| {
        let mut args = vec![arr(&x)];
        args.extend(ints(&[lo, hi]));
        run_err(RUNTIME, "view", &mut args)
    };
    assert_eq!(call(1, 3), Ok(vec![Constant::F64(4.0)]));
    assert_eq!(call(3, 4), Ok(vec![Constant::F64(8.0)]));
    for (lo, hi) in [(2, 1), (-1, 2), (1, 5), (5, 5), (-3, -1)] {
        match call(lo, hi) {
            Err(CallError::Runtime(m)) => assert!(
                m.starts_with("array view out of bounds at views.ad:4:"),
                "{m}"
            ),
            other => panic!("x[{lo}..{hi}]: {other:?}"),
        }
    }
    // An empty view is fine; its element 0 is not.
    match call(4, 4) {
        Err(CallError::Runtime(m)) => assert!(m.starts_with("index out of bounds"), "{m}"),
        other => panic!("x[4..4]: {other:?}"),
    }
}

#[test]
fn overlapping_writable_arguments_are_a_runtime_error() {
    let y = [1.0, 2.0, 3.0, 4.0, 5.0];
    let overlap = |a: i64, b: i64| {
        let mut args = vec![arr(&y)];
        args.extend(ints(&[a, b]));
        run_err(RUNTIME, "overlap", &mut args)
    };
    // y[0..2] += y[2..4]: disjoint.
    assert_eq!(overlap(0, 2), Ok(vec![Constant::F64(4.0)]));
    assert_eq!(overlap(3, 0), Ok(vec![Constant::F64(1.0)]));
    for (a, b) in [(0, 1), (1, 0), (2, 2), (2, 3)] {
        match overlap(a, b) {
            Err(CallError::Runtime(m)) => {
                assert!(m.starts_with("arguments alias at views.ad:5:"), "{m}")
            }
            other => panic!("y[{a}..] and y[{b}..]: {other:?}"),
        }
    }
    match run_err(RUNTIME, "same", &mut [arr(&y)]) {
        Err(CallError::Runtime(m)) => assert!(m.starts_with("arguments alias"), "{m}"),
        other => panic!("addto(y, y): {other:?}"),
    }
    // Read-only arguments may share elements; an empty view shares none.
    assert_eq!(
        run_err(RUNTIME, "readers", &mut [arr(&y)]),
        Ok(vec![Constant::F64(5.0)])
    );
    assert_eq!(
        run_err(RUNTIME, "empty", &mut [arr(&y)]),
        Ok(vec![Constant::F64(1.0)])
    );
}

#[test]
fn views_are_call_arguments_only() {
    for (src, code) in [
        ("double f(double[] x) { return x[1..2][0]; }", "E0123"),
        (
            "double f(double[] x) { double y = x[1..]; return y; }",
            "E0128",
        ),
        (
            "void g(inout double[] a) { a[0] = 1.0; }\nvoid f(double[] x) { g(x[0..1]); }",
            "E0121",
        ),
        (
            "double g(double[] a) { return a[0]; }\ndouble f(int[] x) { return g(x[0..1]); }",
            "E0127",
        ),
    ] {
        match adc::compile_jit("views.ad", src, &adc::CompileOptions::default()) {
            Err(e) => assert!(
                e.to_string().contains(code),
                "{src}: want {code}, got:\n{e}"
            ),
            Ok(_) => panic!("accepted: {src}"),
        }
    }
}

#[test]
fn integer_ranges_lex_as_ranges() {
    // `2..` is the integer 2 and `..`, not the float `2.` and a `.`.
    let src = "double s(double[] a) { double t = 0.0; for (int i = 0; i < len(a); i++) t += a[i]; return t; }
double f(double[] x) { return s(x[1..3]) + 10.0 * s(x[2..]) + 100.0 * s(x[0..1]) + 2. + .5; }";
    let out = compile(src, "ranges").call("f", &mut [arr(&[1.0, 2.0, 3.0, 4.0])]);
    assert_eq!(out, Ok(vec![Constant::F64(5.0 + 70.0 + 100.0 + 2.5)]));
}

/// The IR interpreter runs views too: on the final IR of each case, `f`
/// and `df` give the JIT's results exactly, and both report the same
/// runtime errors.
#[test]
fn interpreter_agrees_with_the_jit_on_views() {
    use adc::driver::{self, Stage};
    use adc_ir::interp::{self, InterpArg};
    let consts = |x: &[f64]| x.iter().map(|v| Constant::F64(*v)).collect::<Vec<_>>();
    let mut sources: Vec<String> = CASES
        .iter()
        .map(|c| format!("{}\n{ATTRS}{}", helpers(c.views), main(c.views)))
        .collect();
    sources.push(RUNTIME.to_string());
    for src in &sources {
        let mut m = driver::frontend("views.ad", src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        driver::run_stages(&mut m, Stage::Final).expect("stages run");
        let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
        let x = point(1);
        let calls: Vec<(&str, Vec<InterpArg>)> = if src == RUNTIME {
            let y = consts(&[1.0, 2.0, 3.0, 4.0, 5.0]);
            let i = |v: i64| InterpArg::Scalar(Constant::I64(v));
            vec![
                ("overlap", vec![InterpArg::Array(y.clone()), i(0), i(2)]),
                ("overlap", vec![InterpArg::Array(y.clone()), i(1), i(2)]),
                ("view", vec![InterpArg::Array(y.clone()), i(2), i(4)]),
                ("view", vec![InterpArg::Array(y.clone()), i(3), i(6)]),
                ("empty", vec![InterpArg::Array(y.clone())]),
                ("readers", vec![InterpArg::Array(y)]),
            ]
        } else {
            vec![
                ("f", vec![InterpArg::Array(consts(&x))]),
                (
                    "df",
                    vec![
                        InterpArg::Array(consts(&x)),
                        InterpArg::Array(consts(&[0.0; N])),
                        InterpArg::Scalar(Constant::F64(1.0)),
                    ],
                ),
            ]
        };
        for (name, mut iargs) in calls {
            let mut jargs: Vec<ArgValue> = iargs
                .iter()
                .map(|a| match a {
                    InterpArg::Scalar(c) => ArgValue::Scalar(*c),
                    InterpArg::Array(xs) => arr(&f64s(xs)),
                })
                .collect();
            let j = jit.call(name, &mut jargs);
            let i = interp::call(&m, name, &mut iargs, 1 << 26);
            match (&j, &i) {
                (Ok(j), Ok(i)) => assert_eq!(j, i, "{name}"),
                (
                    Err(CallError::Runtime(je)),
                    Err(interp::InterpError::Runtime { what: ie, .. }),
                ) => {
                    // No locator here: the message ends in " at ".
                    let what = je.split(" at").next().unwrap_or_default();
                    assert!(*ie == what, "{name}: JIT `{je}`, interpreter `{ie}`");
                }
                _ => panic!("{name}: JIT {j:?}, interpreter {i:?}"),
            }
            for (ja, ia) in jargs.iter().zip(&iargs) {
                if let (ArgValue::Array(ArrayValue::F64(jx)), InterpArg::Array(ix)) = (ja, ia) {
                    assert_eq!(jx, &f64s(ix), "{name}: arrays after the call");
                }
            }
        }
    }
}

/// An `inout` scalar that is an element of an array passed to the same
/// call is checked like a one-element view (once unchecked: a
/// `[checkpoint]` callee then got a gradient of 72 where 108 is right).
#[test]
fn scalar_references_follow_the_aliasing_rule() {
    let src = "[checkpoint]
void upd(inout double[] t, inout double z) {
    t[0] = t[0] * z;
    z = z * t[0];
}
void swap(inout double a, inout double b) { double s = a; a = b; b = s; }
[autodiff_reverse(dwhole, Active, Active)]
[autodiff_forward(twhole, Dual, Dual)]
double whole(double x) { double t[1] = {x}; upd(t, t[0]); return t[0]; }
[autodiff_reverse(dpart, Active, Const, Active)]
[autodiff_forward(tpart, Dual, Const, Dual)]
double part(double x, int k) {
    double t[4] = {x, 2.0 * x, 0.5, x * x};
    upd(t[0..2], t[k]);
    return t[0] + t[1] + t[k];
}
double elems(double x, int i, int j) {
    double t[3] = {x, 1.0, 2.0};
    swap(t[i], t[j]);
    return t[0] + 10.0 * t[1] + 100.0 * t[2];
}";
    let j = compile(src, "aliasing scalars");
    let d = |v: f64| ArgValue::Scalar(Constant::F64(v));
    let i = |v: i64| ArgValue::Scalar(Constant::I64(v));
    let aliases = |r: Result<Vec<Constant>, CallError>, what: &str| match r {
        Err(CallError::Runtime(m)) => assert!(m.starts_with("arguments alias"), "{what}: {m}"),
        other => panic!("{what}: {other:?}"),
    };
    aliases(j.call("whole", &mut [d(3.0)]), "whole");
    aliases(j.call("dwhole", &mut [d(3.0), d(1.0)]), "dwhole");
    aliases(j.call("twhole", &mut [d(3.0), d(1.0)]), "twhole");
    aliases(j.call("part", &mut [d(3.0), i(1)]), "part, k = 1");
    aliases(j.call("elems", &mut [d(3.0), i(2), i(2)]), "elems, i = j");
    assert_eq!(
        f64s(
            &j.call("elems", &mut [d(3.0), i(0), i(2)])
                .expect("distinct elements")
        ),
        vec![2.0 + 10.0 + 300.0]
    );
    // Disjoint: t[0..2] and t[3]. part(x) with t = {x, 2x}, z = x^2:
    // t0 = x^3, z = x^5, and t1 = 2x untouched: x^3 + 2x + x^5.
    for x in [0.7_f64, 1.3] {
        let want = 3.0 * x * x + 2.0 + 5.0 * x.powi(4);
        let rev = f64s(&j.call("dpart", &mut [d(x), i(3), d(1.0)]).expect("dpart"));
        let fwd = f64s(&j.call("tpart", &mut [d(x), d(1.0), i(3)]).expect("tpart"));
        assert!(
            close(rev[0], x.powi(3) + 2.0 * x + x.powi(5), 1e-12),
            "{rev:?}"
        );
        assert!(close(rev[1], want, 1e-12), "reverse {} vs {want}", rev[1]);
        assert!(close(fwd[1], want, 1e-12), "forward {} vs {want}", fwd[1]);
    }
}
