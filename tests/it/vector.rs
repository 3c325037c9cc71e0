//! Vector mode (`width = W`, docs/jacobians.md#vector-mode): a width-`W`
//! forward derivative against `W` calls of the width-1 one, on programs
//! with loops, branches, local and `inout` arrays, calls that stay calls,
//! recursion, views and custom derivatives; its signature, its length
//! checks and the errors of misuse.

use crate::support::{arg_floats, arr, d, number};
use adc::{
    Activity, AdMode, ArgValue, ArrayValue, CallError, Constant, Derivative, JitModule, Type,
};

/// splitmix64, for reproducible tangents.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

fn i(x: i64) -> ArgValue {
    ArgValue::Scalar(Constant::I64(x))
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-11 * (1.0 + want.abs()) || (got.is_nan() && want.is_nan()),
        "{what}: vector mode gives {got:?}, width 1 gives {want:?}"
    );
}

/// Compiles `src` with a width-1 and a width-`w` forward derivative of
/// `f` (default activities, `Dual` result when it has a float one).
fn compile(src: &str, w: u32) -> JitModule {
    let module = adc::compile_jit("probe.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("does not compile:\n{e}"));
    let f = module.function("f").expect("a function `f`");
    let float_ret = matches!(f.returns.as_slice(), [t] if t.elem().is_float());
    let params: Vec<Activity> = f
        .params
        .iter()
        .map(|p| {
            if p.ty.elem().is_float() {
                Activity::Dual
            } else {
                Activity::Const
            }
        })
        .collect();
    let ret = if float_ret {
        Activity::Dual
    } else {
        Activity::Const
    };
    let reqs = [
        Derivative::forward("f", "f_one", params.clone(), ret),
        Derivative::forward("f", "f_vec", params, ret).with_width(w),
    ];
    adc::compile_jit_with("probe.ad", src, &reqs)
        .unwrap_or_else(|e| panic!("does not compile:\n{e}"))
}

/// `f_vec` on `W` random directions at `args` equals `W` calls of `f_one`:
/// the primal result and writes, every tangent lane, every tangent written
/// back.
fn check(src: &str, args: &[ArgValue], w: u32, seed: u64) {
    let j = compile(src, w);
    let f = j.function("f").expect("f").clone();
    let float_ret = matches!(f.returns.as_slice(), [t] if t.elem().is_float());
    let mut rng = Rng(seed);
    let w = w as usize;
    // Per direction, the tangent of each float parameter.
    let tangents: Vec<Vec<Option<Vec<f64>>>> = (0..w)
        .map(|_| {
            f.params
                .iter()
                .zip(args)
                .map(|(p, a)| {
                    p.ty.elem()
                        .is_float()
                        .then(|| arg_floats(a).iter().map(|_| rng.unit()).collect())
                })
                .collect()
        })
        .collect();
    let tangent_arg = |ty: Type, t: &[f64]| match ty {
        Type::Array(_) => arr(t),
        _ => d(t[0]),
    };
    // Width 1, direction by direction.
    let mut one = Vec::new();
    for dir in &tangents {
        let mut a1 = Vec::new();
        for ((p, a), t) in f.params.iter().zip(args).zip(dir) {
            a1.push(a.clone());
            if let Some(t) = t {
                a1.push(tangent_arg(p.ty, t));
            }
        }
        let r = j
            .call("f_one", &mut a1)
            .unwrap_or_else(|e| panic!("f_one: {e}"));
        one.push((r, a1));
    }
    // Width `w`: each tangent the directions one after the other.
    let mut av = Vec::new();
    for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
        av.push(a.clone());
        if p.ty.elem().is_float() {
            let all: Vec<f64> = tangents
                .iter()
                .flat_map(|dir| dir[k].clone().expect("float"))
                .collect();
            av.push(arr(&all));
        }
    }
    if float_ret {
        av.push(arr(&vec![0.0; w]));
    }
    let rv = j
        .call("f_vec", &mut av)
        .unwrap_or_else(|e| panic!("f_vec: {e}"));
    for (k, (r1, a1)) in one.iter().enumerate() {
        let what = |s: &str| format!("direction {k}: {s}");
        // Primal results and writes.
        for (x, y) in rv.iter().zip(r1) {
            close(number(x), number(y), &what("result"));
        }
        if float_ret {
            let t_ret = arg_floats(av.last().expect("t_ret"));
            close(t_ret[k], number(&r1[1]), &what("tangent of the result"));
        }
        let (mut pv, mut p1) = (0, 0);
        for p in &f.params {
            if let (ArgValue::Array(ArrayValue::F64(x)), ArgValue::Array(ArrayValue::F64(y))) =
                (&av[pv], &a1[p1])
            {
                for (x, y) in x.iter().zip(y) {
                    close(*x, *y, &what(&format!("`{}` after the call", p.name)));
                }
            }
            if p.ty.elem().is_float() {
                let (tv, t1) = (arg_floats(&av[pv + 1]), arg_floats(&a1[p1 + 1]));
                let n = t1.len();
                for (x, y) in tv[k * n..(k + 1) * n].iter().zip(&t1) {
                    close(*x, *y, &what(&format!("tangent of `{}`", p.name)));
                }
                pv += 1;
                p1 += 1;
            }
            pv += 1;
            p1 += 1;
        }
    }
}

/// `f_vec`, the width-`w` reverse derivative of `f` (default activities,
/// `Active` result), on `W` random seeds and shadows at `args` equals `W`
/// calls of the width-1 one: the primal result and writes, each lane of
/// every gradient and shadow.
fn check_reverse(src: &str, args: &[ArgValue], w: u32, seed: u64) {
    let reqs = [
        Derivative::gradient("f", "f_one"),
        Derivative::gradient("f", "f_vec").with_width(w),
    ];
    let j = adc::compile_jit_with("probe.ad", src, &reqs)
        .unwrap_or_else(|e| panic!("does not compile:\n{e}"));
    let f = j.function("f").expect("f").clone();
    let mut rng = Rng(seed);
    let w = w as usize;
    // Per direction: the seed, and each array's shadow on entry.
    let dirs: Vec<(f64, Vec<Option<Vec<f64>>>)> = (0..w)
        .map(|_| {
            let shadows = f
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| {
                    (p.ty.elem().is_float() && matches!(p.ty, Type::Array(_)))
                        .then(|| arg_floats(a).iter().map(|_| rng.unit()).collect())
                })
                .collect();
            (rng.unit(), shadows)
        })
        .collect();
    let mut one = Vec::new();
    for (s, shadows) in &dirs {
        let mut a1 = Vec::new();
        for (a, sh) in args.iter().zip(shadows) {
            a1.push(a.clone());
            if let Some(sh) = sh {
                a1.push(arr(sh));
            }
        }
        a1.push(d(*s));
        let r = j
            .call("f_one", &mut a1)
            .unwrap_or_else(|e| panic!("f_one: {e}"));
        one.push((r, a1));
    }
    let mut av = Vec::new();
    for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
        av.push(a.clone());
        match p.ty {
            Type::Array(_) if p.ty.elem().is_float() => av.push(arr(&dirs
                .iter()
                .flat_map(|d| d.1[k].clone().expect("shadow"))
                .collect::<Vec<_>>())),
            Type::Scalar(_) if p.ty.elem().is_float() => av.push(arr(&vec![7.0; w])),
            _ => (),
        }
    }
    av.push(arr(&dirs.iter().map(|d| d.0).collect::<Vec<_>>()));
    let rv = j
        .call("f_vec", &mut av)
        .unwrap_or_else(|e| panic!("f_vec: {e}"));
    for (k, (r1, a1)) in one.iter().enumerate() {
        let what = |s: &str| format!("direction {k}: {s}");
        close(number(&rv[0]), number(&r1[0]), &what("result"));
        let (mut pv, mut p1, mut grad) = (0, 0, 1);
        for p in &f.params {
            if let (ArgValue::Array(ArrayValue::F64(x)), ArgValue::Array(ArrayValue::F64(y))) =
                (&av[pv], &a1[p1])
            {
                for (x, y) in x.iter().zip(y) {
                    close(*x, *y, &what(&format!("`{}` after the call", p.name)));
                }
            }
            pv += 1;
            p1 += 1;
            if !p.ty.elem().is_float() {
                continue;
            }
            let tv = arg_floats(&av[pv]);
            pv += 1;
            if let Type::Array(_) = p.ty {
                let t1 = arg_floats(&a1[p1]);
                p1 += 1;
                let n = t1.len();
                for (x, y) in tv[k * n..(k + 1) * n].iter().zip(&t1) {
                    close(*x, *y, &what(&format!("shadow of `{}`", p.name)));
                }
            } else {
                close(
                    tv[k],
                    number(&r1[grad]),
                    &what(&format!("gradient of `{}`", p.name)),
                );
                grad += 1;
            }
        }
    }
}

#[test]
fn reverse_mode_loops_branches_and_arrays() {
    let args = [d(0.7), d(-0.4), arr(&[0.5, -0.25, 1.5, -2.0]), i(9)];
    for w in [1, 2, 3, 5] {
        check_reverse(LOOPS, &args, w, u64::from(w) + 40);
    }
    let src = "
double f(inout double[] u, double[] c, double k) {
    int n = len(u);
    double tmp[n];
    for (int i = 0; i < n; i++) tmp[i] = u[i] * c[i] + k;
    for (int i = 1; i < n; i++) u[i] = tmp[i - 1] * tmp[i];
    double s = 0.0;
    for (int i = 0; i < n; i++) { if (u[i] > 0.1) s += u[i] * u[i]; else s -= sin(u[i] * k); }
    return s;
}";
    let args = [
        arr(&[0.1, 0.2, 0.3, 0.4, 0.5]),
        arr(&[1.0, -1.0, 2.0, 0.5, 3.0]),
        d(0.3),
    ];
    check_reverse(src, &args, 4, 77);
    check_reverse(src, &args, 1, 78);
    let src = "
double sq(double v) { return v * v; }
double f(double x, out double[] o, double[] c) {
    double s = x;
    while (s < 4.0) s = s * 1.5 + sq(c[0]);
    for (int i = 0; i < len(o); i++) o[i] = s * c[i % len(c)] + x;
    return sq(s) + o[0];
}";
    check_reverse(src, &[d(0.4), arr(&[0.0; 3]), arr(&[0.5, -0.7])], 3, 5);
}

/// Reverse vector mode through calls that stay calls (recursion, a
/// checkpointed loop) runs a width-1 reverse derivative once per
/// direction, writing `inout` arguments once.
#[test]
fn reverse_vector_mode_through_calls_lane_by_lane() {
    let src = "
double pw(double x, int n) { if (n == 0) return 1.0; return x * pw(x, n - 1) + 0.1 * sin(x); }
double f(double x, inout double[] b, double[] c) {
    double s = pw(x, 5);
    [checkpoint(2)]
    for (int i = 0; i < len(b); i++) { b[i] = b[i] * s + c[i % len(c)]; s = s + sin(b[i]); }
    return s * x;
}";
    check_reverse(
        src,
        &[d(0.8), arr(&[0.5, -0.4, 0.9]), arr(&[0.3, 1.1])],
        3,
        17,
    );
}

const LOOPS: &str = "
double f(double x, double y, double[] a, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        if (a[i % len(a)] > 0.0) { s = s * x + sin(a[i % len(a)] * y); }
        else { s = s - cos(x) * a[i % len(a)]; }
        while (s > 3.0) { s = s * 0.5; }
    }
    return s * y + exp(x * 0.1);
}";

#[test]
fn loops_and_branches() {
    let args = [d(0.7), d(-0.4), arr(&[0.5, -0.25, 1.5, -2.0]), i(9)];
    for w in [1, 2, 3, 4, 8] {
        check(LOOPS, &args, w, u64::from(w));
    }
}

#[test]
fn arrays_written_in_place_and_local_arrays() {
    let src = "
void f(inout double[] u, double[] c, out double[] o, double k) {
    int n = len(u);
    double tmp[n];
    for (int i = 0; i < n; i++) tmp[i] = u[i] * c[i] + k;
    for (int i = 1; i < n; i++) u[i] = tmp[i - 1] * tmp[i];
    for (int i = 0; i < len(o); i++) o[i] = u[i % n] / (2.0 + cos(k));
}";
    let args = [
        arr(&[0.1, 0.2, 0.3, 0.4, 0.5]),
        arr(&[1.0, -1.0, 2.0, 0.5, 3.0]),
        arr(&[0.0; 3]),
        d(0.3),
    ];
    check(src, &args, 4, 11);
    check(src, &args, 1, 12);
}

#[test]
fn inout_scalars_and_tuples_through_calls() {
    let src = "
(double, double) polar(double r, double t) {
    double c = 0.0;
    for (int i = 0; i < 6; i++) c = c + cos(t * i) / (i + 1.0);
    return (r * c, r * sin(t));
}
void bump(inout double acc, double v) { for (int i = 0; i < 5; i++) acc = acc + v * v / (i + 1.0); }
double f(double r, double t, inout double acc) {
    auto [a, b] = polar(r, t);
    bump(acc, a);
    bump(acc, b * t);
    return a * b + acc;
}";
    check(src, &[d(1.3), d(0.4), d(0.25)], 3, 5);
    check(src, &[d(1.3), d(0.4), d(0.25)], 1, 6);
}

#[test]
fn recursion_and_arrays_passed_to_callees() {
    let src = "
double pw(double x, int n) { if (n == 0) return 1.0; return x * pw(x, n - 1) + 0.1 * sin(x); }
void scale(inout double[] v, double s) {
    for (int i = 0; i < len(v); i++) v[i] = v[i] * s + pw(s, i);
}
double f(double x, double[] a, inout double[] b) {
    double loc[3] = {x, x * x, 1.0};
    scale(loc, a[0]);
    scale(b, x);
    double s = pw(x, 7);
    for (int i = 0; i < len(b); i++) s = s + b[i] * a[i % len(a)] + loc[i % 3];
    return s;
}";
    check(
        src,
        &[d(0.9), arr(&[0.5, 1.5]), arr(&[1.0, 2.0, -1.0, 0.5])],
        4,
        3,
    );
}

#[test]
fn views_passed_to_callees() {
    let src = "
double sum(double[] v) {
    if (len(v) <= 1) { if (len(v) == 1) return v[0] * v[0]; return 0.0; }
    int h = len(v) / 2;
    return sum(v[0..h]) + sin(sum(v[h..len(v)]));
}
double f(double[] a, double x) { return sum(a) * x; }";
    check(src, &[arr(&[0.3, -0.2, 0.9, 1.1, 0.4]), d(1.7)], 3, 9);
}

#[test]
fn checkpointed_loops_and_custom_derivatives() {
    let src = "
[forward_derivative(sq_fwd)]
double sq(double x) { return x * x; }
double sq_fwd(double x, double t) { return 2.0 * x * t; }
double f(double x, double[] a) {
    double s = x;
    [checkpoint(2)]
    for (int i = 0; i < 7; i++) s = sq(sin(s)) + a[i % len(a)];
    return s;
}";
    check(src, &[d(0.4), arr(&[0.1, 0.2, 0.3])], 5, 21);
}

/// Forward vector mode over a reverse derivative that keeps arrays on its
/// tape (a checkpointed loop overwriting an array) cannot carry lanes: it
/// runs the width-1 derivative once per direction, writing `f`'s `inout`
/// arguments once.
#[test]
fn over_a_tape_of_arrays_lane_by_lane() {
    let src = "
[autodiff_reverse(dg, Active, Duplicated, Active)]
double g(double x, inout double[] b) {
    double s = 0.0;
    [checkpoint(2)]
    for (int i = 0; i < len(b); i++) { b[i] = b[i] * x + sin(s); s += b[i] * b[i]; }
    return s;
}
double f(double x, inout double[] u, inout double acc) {
    double db[len(u)];
    auto [r, dx] = dg(x, u, db, 1.0);
    acc = acc * 1.5 + dx * r;
    for (int i = 0; i < len(u); i++) acc = acc + db[i] * u[i];
    return acc * x;
}";
    check(src, &[d(0.7), arr(&[0.5, -0.4, 0.9, 0.2]), d(0.3)], 3, 13);
}

#[test]
fn dual_only_and_the_signature() {
    let src = "[autodiff_forward(tv, Dual, Const, DualOnly, width = 2)]
double f(double x, double[] a) { return x * a[0]; }";
    let j = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let tv = j.function("tv").expect("generated");
    let shown: Vec<String> = tv
        .params
        .iter()
        .map(|p| format!("{:?} {} {}", p.mode, p.ty, p.name))
        .collect();
    assert_eq!(
        shown,
        [
            "In f64 x",
            "In arr<f64> d_x",
            "In arr<f64> a",
            "Out arr<f64> t_ret"
        ]
    );
    assert!(tv.returns.is_empty());
    let mut args = [d(2.0), arr(&[1.0, -3.0]), arr(&[5.0]), arr(&[0.0, 0.0])];
    j.call("tv", &mut args).expect("runs");
    assert_eq!(arg_floats(&args[3]), [5.0, -15.0]);
}

/// `width = 1`, written as a literal or a `const int`, is vector mode
/// with one direction: the signature of `width = 2` with 1 in place of 2
/// (tangents, gradients and the seed in arrays, `t_ret` appended), the
/// values of the derivative without `width`.
#[test]
fn width_one_has_the_vector_signature() {
    let src = "const int W = 1;
[autodiff_forward(t0, Dual, Dual, Dual, Dual)]
[autodiff_forward(t1, Dual, Dual, Dual, Dual, width = 1)]
[autodiff_forward(tw, Dual, Dual, Dual, Dual, width = W)]
[autodiff_forward(t2, Dual, Dual, Dual, Dual, width = 2)]
[autodiff_forward(o1, Dual, Dual, Dual, DualOnly, width = W)]
[autodiff_forward(o2, Dual, Dual, Dual, DualOnly, width = 2)]
double f(double x, double[] a, inout double acc) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s = s + sin(a[i] * x);
    acc = acc * s + x;
    return s * acc;
}
[autodiff_reverse(r0, Active, Duplicated, Active)]
[autodiff_reverse(r1, Active, Duplicated, Active, width = 1)]
[autodiff_reverse(rw, Active, Duplicated, Active, width = W)]
[autodiff_reverse(r2, Active, Duplicated, Active, width = 2)]
double g(double x, double[] a) {
    double s = 0.0;
    for (int i = 0; i < len(a); i++) s = s + sin(a[i] * x);
    return s * x;
}";
    let j = adc::compile_jit("w1.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let sig = |name: &str| {
        let f = j.function(name).expect("generated");
        (f.params.clone(), f.returns.clone())
    };
    for (one, two) in [
        ("t1", "t2"),
        ("tw", "t2"),
        ("o1", "o2"),
        ("r1", "r2"),
        ("rw", "r2"),
    ] {
        assert_eq!(sig(one), sig(two), "`{one}` against `{two}`");
    }
    // Forward: against `t0` with the same tangents.
    let (x, a, acc) = (0.7, [0.5, -1.25, 2.0], 0.3);
    let (tx, ta, tacc) = (0.4, [1.0, -0.5, 0.25], -0.6);
    let mut a0 = [d(x), d(tx), arr(&a), arr(&ta), d(acc), d(tacc)];
    let r0 = j.call("t0", &mut a0).expect("t0 runs");
    for name in ["t1", "tw", "o1"] {
        let mut a1 = [
            d(x),
            arr(&[tx]),
            arr(&a),
            arr(&ta),
            d(acc),
            arr(&[tacc]),
            arr(&[0.0]),
        ];
        let r1 = j
            .call(name, &mut a1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if name == "o1" {
            assert!(r1.is_empty(), "{name}: {r1:?}");
        } else {
            close(number(&r1[0]), number(&r0[0]), &format!("{name}: result"));
        }
        close(
            arg_floats(&a1[6])[0],
            number(&r0[1]),
            &format!("{name}: t_ret"),
        );
        close(
            arg_floats(&a1[4])[0],
            arg_floats(&a0[4])[0],
            &format!("{name}: acc"),
        );
        close(
            arg_floats(&a1[5])[0],
            arg_floats(&a0[5])[0],
            &format!("{name}: tangent of acc"),
        );
        for (u, v) in arg_floats(&a1[3]).iter().zip(arg_floats(&a0[3])) {
            close(*u, v, &format!("{name}: tangent of a"));
        }
    }
    // Reverse: against `r0` with the same seed.
    let mut a0 = [d(x), arr(&a), arr(&[0.0; 3]), d(1.5)];
    let r0 = j.call("r0", &mut a0).expect("r0 runs");
    for name in ["r1", "rw"] {
        let mut a1 = [d(x), arr(&[9.0]), arr(&a), arr(&[0.0; 3]), arr(&[1.5])];
        let r1 = j
            .call(name, &mut a1)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        close(number(&r1[0]), number(&r0[0]), &format!("{name}: result"));
        close(
            arg_floats(&a1[1])[0],
            number(&r0[1]),
            &format!("{name}: gradient of x"),
        );
        for (u, v) in arg_floats(&a1[3]).iter().zip(arg_floats(&a0[2])) {
            close(*u, v, &format!("{name}: shadow of a"));
        }
    }
}

#[test]
fn a_shadow_of_the_wrong_length_is_a_runtime_error() {
    let src = "const int W = 3;
[autodiff_forward(tv, Dual, Dual, Dual, width = W)]
double f(double x, double[] a) { return x * a[0]; }";
    let j = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let run = |tx: usize, ta: usize, tr: usize| {
        let mut args = [
            d(2.0),
            arr(&vec![1.0; tx]),
            arr(&[5.0, 1.0]),
            arr(&vec![1.0; ta]),
            arr(&vec![0.0; tr]),
        ];
        j.call("tv", &mut args)
    };
    assert!(run(3, 6, 3).is_ok());
    for (tx, ta, tr) in [(2, 6, 3), (3, 2, 3), (3, 7, 3), (3, 6, 4)] {
        match run(tx, ta, tr) {
            Err(CallError::Runtime(m)) => {
                assert!(m.contains("shadow length differs from its primal's"), "{m}")
            }
            other => panic!("lengths {tx} {ta} {tr}: {other:?}"),
        }
    }
}

#[test]
fn misuse_of_width_is_e0308() {
    for (attr, why) in [
        ("width = 0", "positive"),
        ("width = 65", "up to 64"),
        ("width = q", "positive"),
        ("widht = 4", "unknown option"),
        ("width = 2, width = 3", "twice"),
    ] {
        let src = format!(
            "[autodiff_forward(tv, Dual, Dual, {attr})]\ndouble f(double x) {{ return x; }}"
        );
        let e = adc::compile_jit("t.ad", &src, &adc::CompileOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{attr} compiles"));
        assert_eq!(e.diagnostics[0].code, "E0308", "{attr}: {e}");
        assert!(e.rendered.contains(why), "{attr}: {e}");
    }
    let src = "[autodiff_reverse(g, Duplicated, width = 2)]\nvoid f(inout double[] a) { a[0] = a[0] * a[0]; }";
    let e = adc::compile_jit("t.ad", src, &adc::CompileOptions::default())
        .err()
        .expect("no float result");
    assert_eq!(e.diagnostics[0].code, "E0308", "{e}");
    let bad = Derivative::forward("f", "g", vec![Activity::Dual], Activity::Dual).with_width(0);
    assert!(adc::compile_jit_with("t.ad", "double f(double x) { return x; }", &[bad]).is_err());
    let _ = AdMode::Forward;
}
