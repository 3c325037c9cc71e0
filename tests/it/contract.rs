//! `--fp-contract` (`CompileOptions::fp_contract`, pass `contract`): a
//! product and sum rounded once only when asked, and the fused code (scalar,
//! `f64x2` loops and vector-mode lanes) computing what the IR interpreter
//! computes on the `final` module: the primal bit for bit, derivatives to
//! rounding (code generation adds a derivative's terms in a free order).

use adc::driver;
use adc::{ArgValue, ArrayValue, CompileOptions, Constant};
use adc_ir::interp::{self, InterpArg};

fn fused() -> CompileOptions {
    CompileOptions {
        fp_contract: true,
        ..Default::default()
    }
}

fn scalar(x: f64) -> ArgValue {
    ArgValue::Scalar(Constant::F64(x))
}

fn array(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn interp_arg(arg: &ArgValue) -> InterpArg {
    match arg {
        ArgValue::Scalar(c) => InterpArg::Scalar(*c),
        ArgValue::Array(ArrayValue::F64(v)) => {
            InterpArg::Array(v.iter().map(|x| Constant::F64(*x)).collect())
        }
        other => panic!("unexpected argument {other:?}"),
    }
}

fn floats(arg: &ArgValue) -> Vec<f64> {
    match arg {
        ArgValue::Scalar(Constant::F64(x)) => vec![*x],
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("unexpected argument {other:?}"),
    }
}

fn interp_floats(arg: &InterpArg) -> Vec<f64> {
    let one = |c: &Constant| match c {
        Constant::F64(x) => *x,
        other => panic!("expected a double, got {other:?}"),
    };
    match arg {
        InterpArg::Scalar(c) => vec![one(c)],
        InterpArg::Array(v) => v.iter().map(one).collect(),
    }
}

#[test]
fn a_product_and_sum_round_once_only_when_asked() {
    let src = "double f(double a, double b, double c) { return a * b + c; }";
    let call = |options: &CompileOptions| {
        let jit = adc::compile_jit("f.ad", src, options).unwrap_or_else(|f| panic!("{f}"));
        let mut args = [scalar(0.1), scalar(0.3), scalar(-0.03)];
        jit.call("f", &mut args).expect("runs")[0]
    };
    let separate = 0.1f64 * 0.3 + -0.03;
    let once = 0.1f64.mul_add(0.3, -0.03);
    assert_ne!(separate, once, "the inputs must tell the roundings apart");
    assert_eq!(call(&CompileOptions::default()), Constant::F64(separate));
    let want = if adc::host_has_fma() { once } else { separate };
    assert_eq!(call(&fused()), Constant::F64(want));
}

/// A Horner polynomial and a dot product (scalar `fma`s in loops), an
/// elementwise update (`unroll-inner`'s copies, run on `f64x2`), their
/// gradient and a width-2 forward derivative (vector-mode lanes).
const PROGRAM: &str = "
[autodiff_reverse(grad, Duplicated, Duplicated, Duplicated, Active, Active)]
[autodiff_forward(fwd, Dual, Dual, Dual, Dual, Dual, width = 2)]
double f(double[] c, double[] x, inout double[] z, double t) {
    double p = 0.0;
    for (int i = 0; i < len(c); i++) p = p * t + c[i];
    double s = 0.0;
    for (int i = 0; i < len(x); i++) s += x[i] * z[i];
    for (int i = 0; i < len(z); i++) z[i] = x[i] * t + z[i] * 0.5 - x[i] * z[i];
    return p * s - t * t;
}
";

#[test]
fn fused_code_computes_what_the_interpreter_does() {
    let (jit, snapshots) =
        driver::compile_jit_staged("f.ad", PROGRAM, &fused()).unwrap_or_else(|f| panic!("{f}"));
    let (stage, module) = snapshots.last().expect("at least `opt`");
    if adc::host_has_fma() {
        assert_eq!(*stage, driver::Stage::Final);
        let text = module.to_string();
        for name in ["f", "grad", "fwd"] {
            let func = module.func(module.find(name).expect("generated"));
            let fmas = func
                .layout
                .iter()
                .flat_map(|&b| &func.dfg.block(b).insts)
                .filter(|&&i| {
                    matches!(
                        func.dfg.inst(i),
                        adc_ir::InstData::Math {
                            func: adc_ir::MathFunc::Fma,
                            ..
                        }
                    )
                })
                .count();
            assert!(fmas > 0, "`{name}` has no fma:\n{text}");
        }
    }
    for n in [0usize, 1, 3, 8, 13] {
        let v = |k: usize, s: f64| -> Vec<f64> {
            (0..n).map(|i| ((i * k + 3) % 7) as f64 * s - 0.3).collect()
        };
        let calls: Vec<(&str, Vec<ArgValue>)> = vec![
            (
                "f",
                vec![
                    array(&v(5, 0.1)),
                    array(&v(3, 0.7)),
                    array(&v(2, 0.3)),
                    scalar(0.9),
                ],
            ),
            (
                "grad",
                vec![
                    array(&v(5, 0.1)),
                    array(&vec![0.0; n]),
                    array(&v(3, 0.7)),
                    array(&vec![0.0; n]),
                    array(&v(2, 0.3)),
                    array(&v(4, 0.2)),
                    scalar(0.9),
                    scalar(1.0),
                ],
            ),
            (
                "fwd",
                vec![
                    array(&v(5, 0.1)),
                    array(&v(1, 0.2).repeat(2)),
                    array(&v(3, 0.7)),
                    array(&v(2, 0.4).repeat(2)),
                    array(&v(2, 0.3)),
                    array(&v(6, 0.1).repeat(2)),
                    scalar(0.9),
                    array(&[0.5, -1.0]),
                    array(&[0.0, 0.0]),
                ],
            ),
        ];
        for (name, mut args) in calls {
            let mut iargs: Vec<InterpArg> = args.iter().map(interp_arg).collect();
            let got = jit
                .call(name, &mut args)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let want = interp::call(module, name, &mut iargs, 1 << 24)
                .unwrap_or_else(|e| panic!("{name}: interpreter: {e:?}"));
            let exact = name == "f";
            let agree = |x: f64, y: f64| {
                x.to_bits() == y.to_bits() || (!exact && (x - y).abs() <= 1e-13 * x.abs().max(1.0))
            };
            let (got, want): (Vec<f64>, Vec<f64>) = (
                got.iter()
                    .map(|c| floats(&ArgValue::Scalar(*c))[0])
                    .collect(),
                want.iter()
                    .map(|c| floats(&ArgValue::Scalar(*c))[0])
                    .collect(),
            );
            let results =
                got.len() == want.len() && got.iter().zip(&want).all(|(x, y)| agree(*x, *y));
            assert!(
                results,
                "`{name}`'s result, n = {n}: JIT {got:?}, interpreter {want:?}"
            );
            for (k, (a, ia)) in args.iter().zip(&iargs).enumerate() {
                let (a, ia) = (floats(a), interp_floats(ia));
                let same = a.len() == ia.len() && a.iter().zip(&ia).all(|(x, y)| agree(*x, *y));
                assert!(
                    same,
                    "`{name}`'s argument {k}, n = {n}: JIT {a:?}, interpreter {ia:?}"
                );
            }
        }
    }
}
