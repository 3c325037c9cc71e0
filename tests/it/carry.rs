//! `carry` keeps neighbouring array elements in block parameters across loop
//! iterations. These loops run through the JIT (after `opt`, so after
//! `carry`) on arrays of every length from 0 to 9, so that loops that run
//! zero times, once and many times are all covered, against the same loops
//! written in Rust. The operations are the same in the same order, so the
//! results must be bitwise equal. (Reverse sweeps, whose loops count down,
//! are covered by the gradient tests of the examples.)

use adc::driver;
use adc::{ArgValue, ArrayValue};

const SOURCE: &str = "
    void smooth(double[] a, inout double[] b) {
        for (int i = 1; i < len(a) - 1; i++) b[i] = a[i - 1] + 2.0 * a[i] + a[i + 1];
    }
    void relax(inout double[] a) {
        for (int i = 1; i < len(a) - 1; i++) a[i] = 0.5 * (a[i - 1] + a[i + 1]);
    }
    void gap(inout double[] a) {
        for (int i = 2; i < len(a); i++) a[i] = a[i - 2] * 0.5 + a[i];
    }
    double pairs(inout double[] a) {
        double s = 0.0;
        for (int i = 1; i < len(a); i++) {
            s += a[i - 1] * a[i];
            a[i - 1] = s;
        }
        return s;
    }
";

fn smooth(a: &[f64], b: &mut [f64]) {
    for i in 1..a.len().saturating_sub(1) {
        b[i] = a[i - 1] + 2.0 * a[i] + a[i + 1];
    }
}

fn relax(a: &mut [f64]) {
    for i in 1..a.len().saturating_sub(1) {
        a[i] = 0.5 * (a[i - 1] + a[i + 1]);
    }
}

fn gap(a: &mut [f64]) {
    for i in 2..a.len() {
        a[i] += a[i - 2] * 0.5;
    }
}

fn pairs(a: &mut [f64]) -> f64 {
    let mut s = 0.0;
    for i in 1..a.len() {
        s += a[i - 1] * a[i];
        a[i - 1] = s;
    }
    s
}

/// A loop in Rust: changes its array in place, maybe returns a result.
type Kernel = fn(&mut [f64]) -> Option<f64>;

fn array(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

fn back(arg: &ArgValue) -> Vec<f64> {
    match arg {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        other => panic!("expected a double array, got {other:?}"),
    }
}

#[test]
fn carried_loops_compute_what_the_loops_did() {
    // The pass must fire on every one of these loops, or this tests nothing.
    let mut module = driver::frontend("carry.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    for f in &mut module.funcs {
        adc_passes::optimize_function(f);
        assert!(
            adc_passes::opt::carry::run(f),
            "`carry` leaves `{}` alone:\n{f}",
            f.name
        );
    }
    adc_ir::verify(&module).unwrap_or_else(|e| panic!("{e}\n{module}"));
    let jit = driver::compile_jit("carry.ad", SOURCE, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    for n in 0..10 {
        let input: Vec<f64> = (0..n).map(|i| ((i * 7 + 3) % 11) as f64 - 4.5).collect();
        let mut want_b = vec![0.25; n];
        smooth(&input, &mut want_b);
        let mut args = [array(&input), array(&[0.25].repeat(n))];
        jit.call("smooth", &mut args).expect("smooth runs");
        assert_eq!(back(&args[1]), want_b, "smooth, n = {n}");

        let kernels: [(&str, Kernel); 3] = [
            ("relax", |a| {
                relax(a);
                None
            }),
            ("gap", |a| {
                gap(a);
                None
            }),
            ("pairs", |a| Some(pairs(a))),
        ];
        for (name, reference) in kernels {
            let mut want = input.clone();
            let want_result = reference(&mut want);
            let mut args = [array(&input)];
            let got = jit.call(name, &mut args).expect("runs");
            assert_eq!(back(&args[0]), want, "{name}, n = {n}");
            if let Some(w) = want_result {
                assert_eq!(got, vec![adc::Constant::F64(w)], "{name}'s result, n = {n}");
            }
        }
    }
}

/// A small deterministic generator (an LCG), so failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }

    fn offset(&mut self) -> String {
        match self.below(5) as i64 - 2 {
            0 => "i".to_string(),
            d if d > 0 => format!("i + {d}"),
            d => format!("i - {}", -d),
        }
    }
}

/// A random loop over `a[i-2..=i+2]` (which `bce` proves, so `carry`
/// may take it) with reads, overwrites and a running sum, and its reverse
/// derivative, whose sweep runs the loop backwards.
fn random_kernel(rng: &mut Lcg) -> String {
    let constants = ["0.5", "-1.25", "2.0"];
    let mut body = String::new();
    for _ in 0..1 + rng.below(4) {
        let c = constants[rng.below(3) as usize];
        let (x, y, z) = (rng.offset(), rng.offset(), rng.offset());
        body += &match rng.below(4) {
            0 => format!("a[{x}] = a[{y}] * {c} + a[{z}];\n"),
            1 => format!("s += a[{x}] * a[{y}];\n"),
            2 => format!("b[i] = b[i] * {c} + a[{x}];\n"),
            _ => format!("a[{x}] += {c} * a[{y}] * a[{z}];\n"),
        };
    }
    format!(
        "[autodiff_reverse(grad, Duplicated, Duplicated, Active)]
        double kernel(inout double[] a, inout double[] b) {{
            double s = 0.0;
            for (int i = 2; i < len(a) - 2; i++) {{
                {body}
            }}
            return s;
        }}"
    )
}

fn interp_array(v: &[f64]) -> adc_ir::interp::InterpArg {
    adc_ir::interp::InterpArg::Array(v.iter().map(|x| adc::Constant::F64(*x)).collect())
}

fn interp_back(arg: &adc_ir::interp::InterpArg) -> Vec<f64> {
    match arg {
        adc_ir::interp::InterpArg::Array(v) => v
            .iter()
            .map(|c| match c {
                adc::Constant::F64(x) => *x,
                other => panic!("expected a double, got {other:?}"),
            })
            .collect(),
        other => panic!("expected an array, got {other:?}"),
    }
}

/// Random loops and their gradients through the JIT (after `opt`, so with
/// `carry`) against the IR interpreter on the unoptimised IR: the primal
/// as lowered, the gradient as `transpose` leaves it.
#[test]
fn random_loops_agree_with_the_interpreter() {
    let mut rng = Lcg(7);
    for case in 0..200 {
        let source = random_kernel(&mut rng);
        let jit = driver::compile_jit("k.ad", &source, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        let mut lowered = driver::frontend("k.ad", &source, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}"));
        driver::run_stages(&mut lowered, driver::Stage::Transpose).expect("stages run");
        for n in 0..9 {
            let a: Vec<f64> = (0..n)
                .map(|i| ((i * 5 + case) % 7) as f64 * 0.25 - 0.5)
                .collect();
            let b: Vec<f64> = (0..n).map(|i| ((i * 3 + case) % 5) as f64 * 0.5).collect();
            let what = format!("case {case}, n = {n}:\n{source}");
            let mut args = [array(&a), array(&b)];
            let got = jit.call("kernel", &mut args).expect("runs");
            let mut iargs = [interp_array(&a), interp_array(&b)];
            let want = adc_ir::interp::call(&lowered, "kernel", &mut iargs, 1 << 24)
                .expect("interpreter runs");
            assert_eq!(got, want, "result, {what}");
            assert_eq!(back(&args[0]), interp_back(&iargs[0]), "a, {what}");
            assert_eq!(back(&args[1]), interp_back(&iargs[1]), "b, {what}");

            let (da, db) = (vec![0.5; n], vec![-0.25; n]);
            let seed = adc::ArgValue::Scalar(adc::Constant::F64(1.0));
            let mut args = [array(&a), array(&da), array(&b), array(&db), seed];
            let got = jit.call("grad", &mut args).expect("gradient runs");
            let mut iargs = [
                interp_array(&a),
                interp_array(&da),
                interp_array(&b),
                interp_array(&db),
                adc_ir::interp::InterpArg::Scalar(adc::Constant::F64(1.0)),
            ];
            let want = adc_ir::interp::call(&lowered, "grad", &mut iargs, 1 << 24)
                .expect("interpreter runs");
            assert_eq!(got, want, "gradient's result, {what}");
            for k in 0..4 {
                assert_eq!(
                    back(&args[k]),
                    interp_back(&iargs[k]),
                    "argument {k}, {what}"
                );
            }
        }
    }
}
