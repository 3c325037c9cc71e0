//! Typed handles (`JitModule::typed`): checked once against the
//! signature, then called with Rust values and slices passed in place.

use adc::{CallError, TypedFunc};

const SRC: &str = "
double norm2(double[] xs) { double s = 0.0; for (int i = 0; i < len(xs); i++) s += xs[i] * xs[i]; return s; }
void scale(double a, inout double[] xs) { for (int i = 0; i < len(xs); i++) xs[i] *= a; }
(double, int) stats(double[] xs, inout double total) { total += xs[0]; return (xs[len(xs) - 1], len(xs)); }
double at(double[] xs, int i) { return xs[i]; }
bool positive(float x) { return x > 0.0; }
[autodiff_reverse(dnorm2, Duplicated, ActiveOnly)]
double norm2b(double[] xs) { return norm2(xs); }
";

#[test]
fn typed_calls_pass_slices_in_place() {
    let jit = adc::compile_jit("typed.ad", SRC, &adc::CompileOptions::default()).expect("compiles");
    let norm2: TypedFunc<(&[f64],), f64> = jit.typed("norm2").expect("signature");
    let xs = [3.0, 4.0];
    assert_eq!(norm2.call((&xs[..],)), Ok(25.0));

    let scale: TypedFunc<(f64, &mut [f64]), ()> = jit.typed("scale").expect("signature");
    let mut ys = vec![1.0, -2.0, 0.5];
    scale.call((2.0, &mut ys[..])).expect("runs");
    assert_eq!(ys, [2.0, -4.0, 1.0]);

    let stats: TypedFunc<(&[f64], &mut f64), (f64, i64)> = jit.typed("stats").expect("signature");
    let mut total = 10.0;
    assert_eq!(stats.call((&ys[..], &mut total)), Ok((1.0, 3)));
    assert_eq!(total, 12.0);

    let positive: TypedFunc<(f32,), bool> = jit.typed("positive").expect("signature");
    assert_eq!(
        (positive.call((1.5,)), positive.call((-1.0,))),
        (Ok(true), Ok(false))
    );

    // A generated reverse derivative: the shadow is written in place.
    let dnorm2: TypedFunc<(&[f64], &mut [f64], f64), ()> = jit.typed("dnorm2").expect("signature");
    let mut d = vec![0.0; 2];
    dnorm2.call((&xs[..], &mut d[..], 1.0)).expect("runs");
    assert_eq!(d, [6.0, 8.0]);
}

#[test]
fn typed_handles_check_signatures_and_report_runtime_errors() {
    let jit = adc::compile_jit("typed.ad", SRC, &adc::CompileOptions::default()).expect("compiles");
    let at: TypedFunc<(&[f64], i64), f64> = jit.typed("at").expect("signature");
    let xs = [1.0, 2.0];
    assert_eq!(at.call((&xs[..], 1)), Ok(2.0));
    match at.call((&xs[..], 5)) {
        Err(CallError::Runtime(m)) => assert!(m.contains("out of bounds"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Wrong parameter types, count, writability, results: the error names
    // the function and writes both signatures in `.ad` syntax.
    let signature = |e: Result<_, CallError>| match e {
        Err(CallError::Signature {
            function,
            expected,
            found,
        }) => (function, expected, found),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("a signature that does not fit was accepted"),
    };
    let norm2 = "double norm2(double[] xs)";
    let (f, e, found) = signature(jit.typed::<(f64,), f64>("norm2").map(|_| ()));
    assert_eq!((f.as_str(), e.as_str()), ("norm2", norm2));
    assert_eq!(found, "double norm2(double)");
    let (_, e, found) = signature(jit.typed::<(f64, &[f64]), ()>("scale").map(|_| ()));
    assert_eq!(e, "void scale(double a, inout double[] xs)");
    assert_eq!(found, "void scale(double, double[])");
    let (_, _, found) = signature(jit.typed::<(), f64>("norm2").map(|_| ()));
    assert_eq!(found, "double norm2()");
    let (_, _, found) = signature(jit.typed::<(&[f64],), i64>("norm2").map(|_| ()));
    assert_eq!(found, "int norm2(double[])");
    let (_, e, found) = signature(jit.typed::<(&[f64], f64), (f64, f64)>("stats").map(|_| ()));
    assert_eq!(e, "(double, int) stats(double[] xs, inout double total)");
    assert_eq!(found, "(double, double) stats(double[], double)");
    let err = jit
        .typed::<(f32,), f32>("positive")
        .err()
        .expect("a `bool` result");
    assert_eq!(
        err.to_string(),
        "`positive` is `bool positive(float x)`; the handle's types make it `float positive(float)`"
    );
    assert!(matches!(
        jit.typed::<(&[f64],), f64>("nope"),
        Err(CallError::UnknownFunction(_))
    ));
}

/// Derivatives requested from Rust (`compile_jit_with`), with default or
/// given activities, agree with the same derivatives asked for by
/// attribute; bad requests are errors, not panics.
#[test]
fn derivative_requests_match_attributes() {
    use adc::{Activity, Derivative};
    let plain = "double g(double x, double[] w) { double s = 0.0; for (int i = 0; i < len(w); i++) s += sin(x * w[i]); return s; }";
    let jit = adc::compile_jit_with(
        "req.ad",
        plain,
        &[
            Derivative::gradient("g", "dg"),
            Derivative::forward(
                "g",
                "tg",
                vec![Activity::Dual, Activity::Const],
                Activity::DualOnly,
            ),
        ],
    )
    .expect("compiles");
    let attributed = format!(
        "[autodiff_reverse(dg, Active, Duplicated, Active)]\n[autodiff_forward(tg, Dual, Const, DualOnly)]\n{plain}"
    );
    let reference = adc::compile_jit("attr.ad", &attributed, &adc::CompileOptions::default())
        .expect("compiles");
    let w = [0.5, -1.5, 2.0];
    for j in [&jit, &reference] {
        let dg: TypedFunc<(f64, &[f64], &mut [f64], f64), (f64, f64)> =
            j.typed("dg").expect("signature");
        let mut d_w = [0.0; 3];
        let (y, dx) = dg.call((0.7, &w[..], &mut d_w[..], 1.0)).expect("runs");
        let want_y: f64 = w.iter().map(|wi| (0.7 * wi).sin()).sum();
        let want_dx: f64 = w.iter().map(|wi| wi * (0.7 * wi).cos()).sum();
        assert!((y - want_y).abs() < 1e-14 && (dx - want_dx).abs() < 1e-14);
        for i in 0..3 {
            assert!((d_w[i] - 0.7 * (0.7 * w[i]).cos()).abs() < 1e-14);
        }
        let tg: TypedFunc<(f64, f64, &[f64]), f64> = j.typed("tg").expect("signature");
        assert!((tg.call((0.7, 1.0, &w[..])).expect("runs") - want_dx).abs() < 1e-14);
    }
    for bad in [
        Derivative::gradient("nope", "d"),
        Derivative::gradient("g", "g"),
        Derivative::reverse("g", "d", vec![Activity::Active], Activity::Active),
        Derivative::reverse(
            "g",
            "d",
            vec![Activity::Active, Activity::Active],
            Activity::Active,
        ),
        Derivative::forward(
            "g",
            "d",
            vec![Activity::Dual, Activity::Dual],
            Activity::Active,
        ),
    ] {
        let err = adc::compile_jit_with("req.ad", plain, &[bad.clone()]).err();
        let err = err.unwrap_or_else(|| panic!("{bad:?} was accepted"));
        assert_eq!(err.diagnostics[0].code, "E0303", "{bad:?}");
    }
}

/// A handle typed with `&mut [f64]` borrows the slice for one call only:
/// it is called in a loop and from a closure on the same vector (the
/// borrow once had the handle's lifetime, so a second call did not
/// compile).
#[test]
fn mutable_slices_are_borrowed_per_call() {
    let jit = adc::compile_jit(
        "scale.ad",
        "void scale(double a, inout double[] xs) { for (int i = 0; i < len(xs); i++) xs[i] *= a; }",
        &adc::CompileOptions::default(),
    )
    .expect("compiles");
    let scale: adc::TypedFunc<(f64, &mut [f64]), ()> = jit.typed("scale").expect("signature");
    let mut ys = vec![1.0, -2.0];
    for _ in 0..3 {
        scale.call((2.0, &mut ys[..])).expect("runs");
    }
    let mut again = || scale.call((0.5, &mut ys[..])).expect("runs");
    again();
    again();
    assert_eq!(ys, vec![2.0, -4.0]);
}

/// A requested derivative's name follows the rules of a function's name in
/// source: an identifier, not a keyword, not reserved (a request named
/// `free` once became the module's `free`, in place of the C library's).
#[test]
fn derivative_request_names_are_checked() {
    let src = "double f(double x) { double t[2]; t[0] = x; return t[0] * x; }";
    for name in [
        "",
        "d f",
        "123",
        "double",
        "free",
        "calloc",
        "sqrt",
        "__adc_entry_f",
        "adc_rt_tape_free",
        "len",
    ] {
        match adc::compile_jit_with("t.ad", src, &[adc::Derivative::gradient("f", name)]) {
            Err(e) => assert!(e.rendered.contains("E0303"), "{name:?}: {}", e.rendered),
            Ok(_) => panic!("{name:?} was accepted"),
        }
    }
    let jit = adc::compile_jit_with("t.ad", src, &[adc::Derivative::gradient("f", "df_2")])
        .expect("a good name");
    let df: adc::TypedFunc<(f64, f64), (f64, f64)> = jit.typed("df_2").expect("signature");
    assert_eq!(df.call((3.0, 1.0)), Ok((9.0, 6.0)));
}
