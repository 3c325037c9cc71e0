//! Derivatives of the examples against independent oracles: central
//! finite differences on the primal function, and the dot-product test
//! (forward mode's `J v` against reverse mode's `Jᵀ u`, here with `u = 1`
//! for a scalar result, so `tangent(v) == <gradient, v>`). The IR
//! interpreter runs the output of each derivative stage and must agree.

use crate::support;

use adc::derivs::{add_request, derivative_args, Request};
use adc::driver::{self, Stage};
use adc::{ArgValue, ArrayValue, Constant};
use adc_ir::interp::{self, InterpArg};
use serde_json::Value as Json;

/// (example, function, arguments as JSON).
const CASES: &[(&str, &str, &str)] = &[
    ("slang_f.ad", "f", "[1.5, -2.0]"),
    ("slang_f.ad", "f", "[0.25, 4.0]"),
    ("horner.ad", "horner", "[[1.0, -2.0, 0.5, 3.0], 0.7]"),
    ("bessel.ad", "bessel_j", "[1, 2.5]"),
    ("logsumexp.ad", "logsumexp", "[[0.3, -1.2, 2.0, 0.1]]"),
    ("logsumexp.ad", "cross_entropy", "[[0.3, -1.2, 2.0, 0.1], 2]"),
    ("newton.ad", "cube_root", "[5.0]"),
    ("sort_weighted.ad", "sorted_weighted_sum", "[[0.3, -1.0, 2.5, 0.7, 1.1]]"),
    ("heat.ad", "heat_energy", "[[0.0, 0.2, 0.9, 1.0, 0.6, 0.3, 0.1, 0.0], 0.25, 5]"),
    ("gmm.ad", "gmm_loglik", "[[0.1, -0.4, 1.3, 2.2, -1.0], [0.3, 0.7], [0.0, 1.5], [1.0, 0.6]]"),
    ("mlp.ad", "mlp_loss", "[[0.1, -0.2, 0.3, 0.4, -0.5, 0.6], [0.05, -0.05], [1.0, 2.0, -1.0], [0.5, -0.25]]"),
    (
        "lstm.ad",
        "lstm_loss",
        "[[0.0, 0.0964, 0.0516, -0.0688, -0.0883, 0.0215, 0.0999, 0.0319, -0.0828, -0.0762, 0.042, 0.0987, 0.0108, -0.0929, -0.0605, 0.0606, 0.0929, -0.0109, -0.0987, -0.0419, 0.0763, 0.0827, -0.032, -0.0998, -0.0214, 0.0884, 0.0687, -0.0516, -0.0963, 0.0001, 0.0964, 0.0515, -0.0688, -0.0883, 0.0216, 0.0999, 0.0318, -0.0828, -0.0761, 0.0421], [-0.2, -0.15, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15], [0.5, -1.0, 0.25], [0.2, -0.3], [0.1, 0.4]]",
    ),
];

fn source(example: &str) -> String {
    support::read(&support::root().join("examples").join(example))
}

fn module_with(
    example: &str,
    func: &str,
    req: &Request,
) -> (adc_ir::Module, adc_ir::Function, String) {
    let src = source(example);
    let mut m =
        driver::frontend(example, &src, &adc::CompileOptions::default()).expect("example compiles");
    let name = add_request(&mut m, func, req).expect("request accepted");
    let f = m.func(m.find(func).expect("function exists")).clone();
    (m, f, name)
}

fn f64s(a: &ArgValue) -> Vec<f64> {
    match a {
        ArgValue::Scalar(Constant::F64(x)) => vec![*x],
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        _ => Vec::new(),
    }
}

fn set(a: &mut ArgValue, k: usize, x: f64) {
    match a {
        ArgValue::Scalar(Constant::F64(v)) => *v = x,
        ArgValue::Array(ArrayValue::F64(v)) => v[k] = x,
        _ => unreachable!("only float inputs are perturbed"),
    }
}

fn scalar(c: Constant) -> f64 {
    match c {
        Constant::F64(x) => x,
        Constant::F32(x) => x as f64,
        other => panic!("not a float: {other:?}"),
    }
}

/// A case's arguments, read against the function's signature.
fn case_args(example: &str, func: &str, json: &str) -> Vec<ArgValue> {
    let m = driver::frontend(example, &source(example), &adc::CompileOptions::default())
        .expect("example compiles");
    let f = m.func(m.find(func).expect("function exists"));
    adc::json::args_from_json(func, json, &f.params).expect("test arguments fit")
}

/// The reverse-mode gradient, flattened over float inputs in order.
fn gradient(example: &str, func: &str, args: &[ArgValue]) -> (f64, Vec<f64>) {
    let (mut m, f, name) = module_with(example, func, &Request::Grad);
    driver::run_stages(&mut m, Stage::Final).expect("derivatives generate");
    let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
    let (mut dargs, shadow_at) = derivative_args(&f, args, &Request::Grad).expect("args");
    let res = jit.call(&name, &mut dargs).expect("gradient runs");
    let mut grads = res[1..].iter().map(|c| scalar(*c));
    let mut out = Vec::new();
    for (p, at) in f.params.iter().zip(&shadow_at) {
        match (p.ty, at) {
            (adc_ir::Type::Scalar(s), _) if s.is_float() => out.push(grads.next().expect("grad")),
            (_, Some(i)) => out.extend(f64s(&dargs[*i])),
            _ => (),
        }
    }
    (scalar(res[0]), out)
}

fn primal(jit: &adc::JitModule, func: &str, args: &[ArgValue]) -> f64 {
    let mut a = args.to_vec();
    scalar(jit.call(func, &mut a).expect("primal runs")[0])
}

/// Float inputs as (argument index, element index) pairs.
fn inputs(args: &[ArgValue]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        for k in 0..f64s(a).len() {
            out.push((i, k));
        }
    }
    out
}

#[test]
fn reverse_mode_matches_finite_differences() {
    for (example, func, json) in CASES {
        let args = case_args(example, func, json);
        let jit = adc::compile_jit(example, &source(example), &adc::CompileOptions::default())
            .expect("compiles");
        let (value, grad) = gradient(example, func, &args);
        support::assert_close(
            value,
            primal(&jit, func, &args),
            1e-12,
            "primal result of the gradient",
        );
        let ins = inputs(&args);
        assert_eq!(
            ins.len(),
            grad.len(),
            "{example} {func}: one gradient per input"
        );
        for (n, &(i, k)) in ins.iter().enumerate() {
            let x = f64s(&args[i])[k];
            let h = 1e-6 * x.abs().max(1.0);
            let (mut up, mut down) = (args.clone(), args.clone());
            set(&mut up[i], k, x + h);
            set(&mut down[i], k, x - h);
            let fd = (primal(&jit, func, &up) - primal(&jit, func, &down)) / (2.0 * h);
            let what = format!("{example} {func}: d/d(arg {i}[{k}])");
            support::assert_close(grad[n], fd, 1e-5, &what);
        }
    }
}

/// A fixed pseudo-random direction (no dependency for a test).
fn direction(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn tangent_request(args: &[ArgValue], v: &[f64]) -> Request {
    let mut it = v.iter();
    Request::Tangent(
        args.iter()
            .map(|a| match a {
                ArgValue::Scalar(Constant::F64(_)) => Json::from(*it.next().expect("v")),
                ArgValue::Array(ArrayValue::F64(xs)) => Json::Array(
                    xs.iter()
                        .map(|_| Json::from(*it.next().expect("v")))
                        .collect(),
                ),
                _ => Json::Null,
            })
            .collect(),
    )
}

#[test]
fn forward_and_reverse_agree_on_random_directions() {
    for (n_case, (example, func, json)) in CASES.iter().enumerate() {
        let args = case_args(example, func, json);
        let (_, grad) = gradient(example, func, &args);
        let v = direction(grad.len(), n_case as u64 + 7);
        let req = tangent_request(&args, &v);
        let (mut m, fsrc, name) = module_with(example, func, &req);
        driver::run_stages(&mut m, Stage::Final).expect("derivatives generate");
        let fjit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
        let (mut dargs, _) = derivative_args(&fsrc, &args, &req).expect("args");
        let res = fjit.call(&name, &mut dargs).expect("tangent runs");
        let jv = scalar(res[1]);
        let jtu_v: f64 = grad.iter().zip(&v).map(|(g, x)| g * x).sum();
        support::assert_close(
            jv,
            jtu_v,
            1e-10,
            &format!("{example} {func}: <u, J v> = <J^T u, v>"),
        );
    }
}

fn to_interp(a: &ArgValue) -> InterpArg {
    match a {
        ArgValue::Scalar(c) => InterpArg::Scalar(*c),
        ArgValue::Array(ArrayValue::F64(v)) => {
            InterpArg::Array(v.iter().map(|x| Constant::F64(*x)).collect())
        }
        ArgValue::Array(ArrayValue::F32(v)) => {
            InterpArg::Array(v.iter().map(|x| Constant::F32(*x)).collect())
        }
        ArgValue::Array(ArrayValue::I64(v)) => {
            InterpArg::Array(v.iter().map(|x| Constant::I64(*x)).collect())
        }
        ArgValue::Array(ArrayValue::Bool(v)) => {
            InterpArg::Array(v.iter().map(|x| Constant::Bool(*x)).collect())
        }
    }
}

/// Up to `unzip` a reverse request is still forward mode: with tangents it
/// computes `J v`. After `transpose` it computes the gradient. The
/// interpreter runs each stage's output.
#[test]
fn interpreter_runs_every_derivative_stage() {
    for (n_case, (example, func, json)) in CASES.iter().enumerate() {
        let args = case_args(example, func, json);
        let (_, grad) = gradient(example, func, &args);
        let v = direction(grad.len(), n_case as u64 + 11);
        let jtu_v: f64 = grad.iter().zip(&v).map(|(g, x)| g * x).sum();
        for stage in [
            Stage::Linearize,
            Stage::Propagate,
            Stage::LowerPairs,
            Stage::Unzip,
        ] {
            let (mut m, fsrc, name) = module_with(example, func, &Request::Grad);
            driver::run_stages(&mut m, stage).expect("stages run");
            support::assert_round_trips(&m.to_string());
            // The linearized signature: each primal, then its tangent.
            let req = tangent_request(&args, &v);
            let (dargs, _) = derivative_args(&fsrc, &args, &req).expect("args");
            let mut iargs: Vec<InterpArg> = dargs.iter().map(to_interp).collect();
            let res = interp::call(&m, &name, &mut iargs, 1 << 26).expect("interpreter runs");
            let what = format!("{example} {func} after {stage:?}: tangent");
            support::assert_close(scalar(res[1]), jtu_v, 1e-9, &what);
        }
        let (mut m, fsrc, name) = module_with(example, func, &Request::Grad);
        driver::run_stages(&mut m, Stage::Transpose).expect("stages run");
        support::assert_round_trips(&m.to_string());
        let (dargs, shadow_at) = derivative_args(&fsrc, &args, &Request::Grad).expect("args");
        let mut iargs: Vec<InterpArg> = dargs.iter().map(to_interp).collect();
        let res = interp::call(&m, &name, &mut iargs, 1 << 26).expect("interpreter runs");
        let mut got = Vec::new();
        let mut grads = res[1..].iter();
        for (p, at) in fsrc.params.iter().zip(&shadow_at) {
            match (p.ty, at, &iargs.get(at.unwrap_or(usize::MAX))) {
                (adc_ir::Type::Scalar(s), _, _) if s.is_float() => {
                    got.push(scalar(*grads.next().expect("g")))
                }
                (_, Some(_), Some(InterpArg::Array(xs))) => {
                    got.extend(xs.iter().map(|c| scalar(*c)))
                }
                (_, Some(_), Some(InterpArg::Scalar(c))) => got.push(scalar(*c)),
                _ => (),
            }
        }
        for (k, (a, b)) in got.iter().zip(&grad).enumerate() {
            support::assert_close(
                *a,
                *b,
                1e-10,
                &format!("{example} {func} after transpose: gradient {k}"),
            );
        }
    }
}
