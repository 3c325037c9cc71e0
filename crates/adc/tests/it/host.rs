//! Host functions registered through the public crate (issue 14):
//! called by JIT code, differentiated through their custom derivatives,
//! and checked against their `extern` declarations.

use adc::{Derivative, HostFunctions, TypedFunc};

extern "C" fn cube(x: f64) -> f64 {
    x * x * x
}

extern "C" fn dcube(x: f64, seed: f64) -> f64 {
    3.0 * x * x * seed
}

extern "C" fn pick(flag: bool, n: i64, x: f32) -> f64 {
    if flag {
        n as f64 * x as f64
    } else {
        -1.0
    }
}

static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

extern "C" fn count() {
    CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

fn host() -> HostFunctions {
    let mut h = HostFunctions::new();
    h.func("cube", cube as extern "C" fn(f64) -> f64)
        .func("dcube", dcube as extern "C" fn(f64, f64) -> f64)
        .func("pick", pick as extern "C" fn(bool, i64, f32) -> f64)
        .func("count", count as extern "C" fn());
    h
}

#[test]
fn host_functions_are_called_and_differentiated() {
    let source = "extern double dcube(double x, double seed);
[reverse_derivative(dcube)]
extern double cube(double x);
extern double pick(bool flag, int n, float x);
extern void count();
double h(double x) { return pick(x > 0.0, 3, float(2.5)); }
double g(double x) { count(); return cube(x) * sin(x) ; }";
    let jit =
        adc::compile_jit_with_host("g.ad", source, &[Derivative::gradient("g", "dg")], &host())
            .expect("compiles");
    let g: TypedFunc<(f64,), f64> = jit.typed("g").expect("signature");
    let x = 0.7f64;
    let before = CALLS.load(std::sync::atomic::Ordering::Relaxed);
    let want = x.powi(3) * x.sin();
    assert!((g.call((x,)).unwrap() - want).abs() < 1e-14);
    assert_eq!(g.call((-1.0,)).unwrap(), (-1.0f64).sin() * -1.0);
    let h: TypedFunc<(f64,), f64> = jit.typed("h").expect("signature");
    assert_eq!(h.call((-1.0,)), Ok(-1.0));
    assert_eq!(h.call((1.0,)), Ok(7.5));
    assert!(CALLS.load(std::sync::atomic::Ordering::Relaxed) >= before + 2);
    let dg: TypedFunc<(f64, f64), (f64, f64)> = jit.typed("dg").expect("signature");
    let (p, d) = dg.call((x, 1.0)).unwrap();
    assert!((p - want).abs() < 1e-14);
    let want_d = 3.0 * x * x * x.sin() + x.powi(3) * x.cos();
    assert!((d - want_d).abs() < 1e-13, "{d} vs {want_d}");
}

#[test]
fn a_signature_that_differs_from_the_declaration_is_an_error() {
    for decl in [
        "extern double cube(float x);",
        "extern float cube(double x);",
        "extern double cube(double x, double y);",
        "extern void cube(double x);",
        "extern double cube(inout double x);",
        "extern double cube(double[] x);",
    ] {
        let source = format!("{decl}\ndouble g(double x) {{ return 1.0; }}");
        let e = adc::compile_jit_with_host("g.ad", &source, &[], &host())
            .err()
            .unwrap_or_else(|| panic!("`{decl}` was accepted"));
        assert_eq!(e.diagnostics[0].code, "E0500", "{decl}: {e}");
        assert!(e.rendered.contains("host function `cube`"), "{e}");
    }
    // A definition of the name is not an extern to bind.
    let e = adc::compile_jit_with_host("g.ad", "double cube(double x) { return x; }", &[], &host())
        .err()
        .expect("a definition is refused");
    assert!(e.rendered.contains("defines `cube` itself"), "{e}");
}

#[test]
fn unregistered_externs_are_still_errors_and_raw_symbols_bind() {
    let source = "extern double nowhere_to_be_found(double x);
double g(double x) { return nowhere_to_be_found(x); }";
    let e = adc::compile_jit_with_host("g.ad", source, &[], &HostFunctions::new())
        .err()
        .expect("unresolved");
    assert!(e.rendered.contains("nowhere_to_be_found"), "{e}");
    let mut h = HostFunctions::new();
    // SAFETY: `cube` has the C ABI of `double(double)` and is a static item.
    unsafe { h.raw("nowhere_to_be_found", cube as *const u8) };
    let jit = adc::compile_jit_with_host("g.ad", source, &[], &h).expect("compiles");
    let g: TypedFunc<(f64,), f64> = jit.typed("g").expect("signature");
    assert_eq!(g.call((2.0,)), Ok(8.0));
}

extern "C" fn weighted(x: *const f64, n: i64, w: f64) -> f64 {
    // SAFETY: the JIT passes an array's pointer with its length.
    let x = unsafe { std::slice::from_raw_parts(x, n as usize) };
    x.iter()
        .enumerate()
        .map(|(i, v)| v * w.powi(i as i32))
        .sum()
}

extern "C" fn scale_into(x: *mut f64, n: i64, total: *mut f64, k: f64) {
    // SAFETY: a writable array's pointer with its length, and an `inout`
    // scalar's pointer, from the JIT.
    let x = unsafe { std::slice::from_raw_parts_mut(x, n as usize) };
    for v in x.iter_mut() {
        *v *= k;
        unsafe { *total += *v };
    }
}

/// Arrays and `inout` scalars go to host functions as C passes them:
/// a pointer and a length, a pointer. The signature is checked against
/// that lowering of the declaration.
#[test]
fn host_functions_take_arrays_and_inout_scalars() {
    let mut h = HostFunctions::new();
    h.func(
        "weighted",
        weighted as extern "C" fn(*const f64, i64, f64) -> f64,
    )
    .func(
        "scale_into",
        scale_into as extern "C" fn(*mut f64, i64, *mut f64, f64),
    );
    let source = "extern double weighted(double[] x, double w);
extern void scale_into(inout double[] x, inout double total, double k);
double g(double[] x) { return weighted(x, 0.5); }
double h(inout double[] x) { double t = 1.0; scale_into(x, t, 3.0); return t; }";
    let jit = adc::compile_jit_with_host("g.ad", source, &[], &h).expect("compiles");
    let g: TypedFunc<(&[f64],), f64> = jit.typed("g").expect("signature");
    assert_eq!(g.call((&[1.0, 2.0, 4.0][..],)), Ok(1.0 + 1.0 + 1.0));
    let hf: TypedFunc<(&mut [f64],), f64> = jit.typed("h").expect("signature");
    let mut xs = [1.0, 2.0];
    assert_eq!(hf.call((&mut xs[..],)), Ok(1.0 + 3.0 + 6.0));
    assert_eq!(xs, [3.0, 6.0]);
    // The same functions against declarations they do not match.
    for decl in [
        // A writable array needs `*mut`.
        "extern double weighted(inout double[] x, double w);",
        // A pointer and a length are one array, not an inout scalar and an int.
        "extern double weighted(inout double x, int n, double w);",
        "extern double weighted(double x, double w);",
        "extern void scale_into(double[] x, inout double total, double k);",
        "extern void scale_into(inout double[] x, double total, double k);",
        "extern void scale_into(inout float[] x, inout double total, double k);",
    ] {
        let source = format!("{decl}\ndouble g(double x) {{ return 1.0; }}");
        let e = adc::compile_jit_with_host("g.ad", &source, &[], &h)
            .err()
            .unwrap_or_else(|| panic!("`{decl}` was accepted"));
        assert_eq!(e.diagnostics[0].code, "E0500", "{decl}: {e}");
        assert!(
            e.rendered.contains("*"),
            "the message shows the pointers: {e}"
        );
    }
}

/// Host functions bind only the module's own `extern` declarations, and
/// never a name compiled code calls itself (a host `calloc` once became
/// the local arrays' allocator: SIGSEGV; a host `sin` replaced the
/// built-in). Math functions that write through pointers are not resolved.
#[test]
fn host_functions_cannot_replace_what_compiled_code_calls() {
    extern "C" fn fake(_x: f64) -> f64 {
        12345.0
    }
    let src = "double f(double x) { double t[int(x) + 100]; t[0] = x; return sin(t[0]); }";
    for name in [
        "calloc",
        "sin",
        "exp",
        "free",
        "adc_rt_tape_realloc",
        "__adc_copy",
    ] {
        let mut host = adc::HostFunctions::new();
        host.func(name, fake as extern "C" fn(f64) -> f64);
        match adc::compile_jit_with_host("h.ad", src, &[], &host) {
            Err(e) => assert!(
                e.rendered.contains("cannot be bound to the host"),
                "{name}: {}",
                e.rendered
            ),
            Ok(_) => panic!("{name} was bound"),
        }
    }
    // A registered name the module does not declare is not bound.
    let mut host = adc::HostFunctions::new();
    host.func("unused_helper", fake as extern "C" fn(f64) -> f64);
    let jit = adc::compile_jit_with_host("h.ad", src, &[], &host).expect("compiles");
    let f: adc::TypedFunc<(f64,), f64> = jit.typed("f").expect("signature");
    assert_eq!(f.call((2.0,)), Ok(2.0f64.sin()));
    for decl in [
        "extern double frexp(double x);",
        "extern double modf(double x, int p);",
    ] {
        let src = format!("{decl}\ndouble f(double x) {{ return x; }}");
        match adc::compile_jit("p.ad", &src, &adc::CompileOptions::default()) {
            Err(e) => assert!(
                e.rendered.contains("unresolved external function"),
                "{decl}: {}",
                e.rendered
            ),
            Ok(_) => panic!("{decl} resolved"),
        }
    }
}
