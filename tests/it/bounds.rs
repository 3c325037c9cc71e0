//! Random programs that index out of bounds: the JIT must stop at the
//! access the source stops at, with the same message, or compute what the
//! source computes. The reference is the IR interpreter on the IR before
//! any optimisation (it checks every access, whatever its `checked` flag);
//! the JIT runs the fully optimised code, where `bce`, `version`, `licm`,
//! `carry`, `promote` and `unroll-inner` have dropped or moved checks. A
//! check dropped without proof shows as an error at a later access, no
//! error, or a crash of the test process.
//!
//! Each program is `f(a, b, o, n, s)` with a local array `t` as long as
//! `a`, a local `u` of constant length, and loops whose starts and bounds
//! mix `n`, `s` and the lengths, over accesses at `i + k`, `i + j + k` and
//! `i * 2 + j`, an element at an invariant index, and an inlined helper on
//! an array or a view;
//! forward (`df`) and reverse (`rf`) derivatives run too, against the
//! interpreter on the stage where each first exists (`linearize`,
//! `transpose`). `ADC_BOUNDS_PROGRAMS` (default 100) and
//! `ADC_BOUNDS_SEED` (default 1) set the programs checked.

use crate::support::number as num;
use adc::{ArgValue, ArrayValue, CallError, Constant, Stage};
use adc_ir::interp::{self, InterpArg, InterpError};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as usize) as i64
    }
}

const READ: &[&str] = &["a", "b", "t", "u"];
const WRITE: &[&str] = &["t", "u", "o"];

fn offset(r: &mut Rng, var: &str) -> String {
    match r.below(6) {
        0 => format!("{var} - 1"),
        1 | 2 => var.to_string(),
        3 => format!("{var} + 1"),
        4 => format!("({var} + 2) - 1"),
        _ => format!("{var} + 2"),
    }
}

fn expr(r: &mut Rng, var: &str) -> String {
    let x = format!("{}[{}]", r.pick(READ), offset(r, var));
    match r.below(3) {
        0 => x,
        1 => format!("{x} * 0.5 + {}[{}]", r.pick(READ), offset(r, var)),
        _ => format!("{x} - 0.25 * acc"),
    }
}

fn body(r: &mut Rng, depth: usize) -> String {
    let mut out = String::new();
    for _ in 0..1 + r.below(4) {
        let line = match r.below(if depth == 0 { 9 } else { 4 }) {
            0 | 1 => format!("{}[{}] = {};", r.pick(WRITE), offset(r, "i"), expr(r, "i")),
            2 => format!("acc += {};", expr(r, "i")),
            3 => "if (acc > 2.0) acc = acc * 0.5;".to_string(),
            // An element at an index the loop does not move (`promote`).
            5 => format!("o[{}] += {};", r.pick(&["s", "n", "1"]), expr(r, "i")),
            // A helper inlined into the loop, on the array or a view of it.
            6 => format!(
                "acc += h({}, {});",
                r.pick(&["a", "b", "t", "a[1..]", "b[0..len(b) - 1]"]),
                offset(r, "i")
            ),
            // Rows of an outer counter (`version`'s affine accesses).
            7 => format!(
                "for (int j = 0; j < {}; j++) acc += {}[i * 2 + j] * 0.5;",
                r.pick(&["2", "s"]),
                r.pick(READ)
            ),
            _ => format!(
                "for (int j = 0; j < {}; j++) acc += {}[{}] * 0.25;",
                r.pick(&["2", "n", "len(b)", "s"]),
                r.pick(READ),
                offset(r, "i + j")
            ),
        };
        out.push_str("        ");
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn program(r: &mut Rng) -> String {
    let mut loops = String::new();
    for _ in 0..1 + r.below(3) {
        if r.below(4) == 0 {
            let s = format!(
                "    {}[{}] = acc;\n",
                r.pick(WRITE),
                r.pick(&["s", "n", "0", "1"])
            );
            loops.push_str(&s);
        }
        let start = r.pick(&["0", "1", "s", "s + 1", "s - 1"]);
        let bound = r.pick(&[
            "n",
            "len(a)",
            "len(a) - 1",
            "len(b)",
            "n + 1",
            "len(o)",
            "K",
        ]);
        loops.push_str(&format!(
            "    for (int i = {start}; i < {bound}; i++) {{\n{}    }}\n",
            body(r, 0)
        ));
    }
    let k = 2 + r.below(5);
    format!(
        "static double h(double[] v, int k) {{ return v[k] * 0.5 + v[k + 1]; }}
[autodiff_forward(df, Dual, Dual, Dual, Const, Const, Dual)]
[autodiff_reverse(rf, Duplicated, Duplicated, Duplicated, Const, Const, Active)]
double f(double[] a, double[] b, out double[] o, int n, int s) {{
    double t[len(a)];
    double u[{k}];
    double acc = 0.5;
{}    return acc;
}}
",
        loops.replace("K", &k.to_string())
    )
}

/// `what at bounds.ad:LINE:COL`, as the JIT words a runtime error.
fn located(src: &str, what: &str, start: u32) -> String {
    let before = &src[..start as usize];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |p| p + 1) + 1;
    format!("{what} at bounds.ad:{line}:{col}")
}

fn floats(n: usize, r: &mut Rng) -> Vec<f64> {
    (0..n).map(|_| r.range(-8, 8) as f64 * 0.125).collect()
}

/// The results and the arrays after the call, or the runtime error.
type Run = Result<Vec<f64>, String>;

fn jit_run(j: &adc::JitModule, name: &str, args: &[ArgValue]) -> Run {
    let mut args = args.to_vec();
    match j.call(name, &mut args) {
        Ok(r) => {
            let mut out: Vec<f64> = r.iter().map(num).collect();
            for a in &args {
                if let ArgValue::Array(ArrayValue::F64(xs)) = a {
                    out.extend(xs);
                }
            }
            Ok(out)
        }
        Err(CallError::Runtime(m)) => Err(m),
        Err(e) => panic!("`{name}` cannot be called: {e:?}"),
    }
}

fn interp_run(src: &str, m: &adc_ir::Module, name: &str, args: &[ArgValue]) -> Run {
    let mut iargs: Vec<InterpArg> = args
        .iter()
        .map(|a| match a {
            ArgValue::Array(ArrayValue::F64(xs)) => {
                InterpArg::Array(xs.iter().map(|x| Constant::F64(*x)).collect())
            }
            ArgValue::Scalar(c) => InterpArg::Scalar(*c),
            other => panic!("unexpected argument {other:?}"),
        })
        .collect();
    match interp::call(m, name, &mut iargs, 1 << 22) {
        Ok(r) => {
            let mut out: Vec<f64> = r.iter().map(num).collect();
            for a in &iargs {
                if let InterpArg::Array(xs) = a {
                    out.extend(xs.iter().map(num));
                }
            }
            Ok(out)
        }
        Err(InterpError::Runtime { what, span }) => Err(located(src, &what, span.start)),
        Err(e) => panic!("interpreting `{name}`: {e:?}"),
    }
}

fn stage(src: &str, s: Stage) -> adc_ir::Module {
    let mut m = adc::driver::frontend("bounds.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    adc::driver::run_stages(&mut m, s).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    m
}

fn same(jit: &Run, reference: &Run) -> bool {
    match (jit, reference) {
        (Ok(x), Ok(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|(a, b)| {
                    a.to_bits() == b.to_bits() || (a - b).abs() <= 1e-12 * b.abs().max(1.0)
                })
        }
        (Err(x), Err(y)) => x == y,
        _ => false,
    }
}

#[test]
fn out_of_bounds_programs_stop_where_the_source_does() {
    let var = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (programs, seed) = (var("ADC_BOUNDS_PROGRAMS", 100), var("ADC_BOUNDS_SEED", 1));
    let mut errors = 0;
    for p in 0..programs {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed.wrapping_mul(1_000_003) + p));
        let src = program(&mut r);
        let j = adc::compile_jit("bounds.ad", &src, &adc::CompileOptions::default())
            .unwrap_or_else(|f| panic!("{f}\n{src}"));
        let refs = [
            ("f", stage(&src, Stage::Lower)),
            ("df", stage(&src, Stage::Linearize)),
            ("rf", stage(&src, Stage::Transpose)),
        ];
        for _ in 0..12 {
            let (la, lb, lo) = (r.below(8), r.below(8), r.below(8));
            let (a, b) = (floats(la, &mut r), floats(lb, &mut r));
            let (da, db, d_o) = (floats(la, &mut r), floats(lb, &mut r), floats(lo, &mut r));
            let (n, s) = (r.range(-1, 9), r.range(-2, 3));
            let arr = |v: &Vec<f64>| ArgValue::Array(ArrayValue::F64(v.clone()));
            let int = |v: i64| ArgValue::Scalar(Constant::I64(v));
            let zeros = vec![0.0; lo];
            for (name, m) in &refs {
                let args: Vec<ArgValue> = match *name {
                    "f" => vec![arr(&a), arr(&b), arr(&zeros), int(n), int(s)],
                    "df" => vec![
                        arr(&a),
                        arr(&da),
                        arr(&b),
                        arr(&db),
                        arr(&zeros),
                        arr(&d_o),
                        int(n),
                        int(s),
                    ],
                    _ => vec![
                        arr(&a),
                        arr(&vec![0.0; la]),
                        arr(&b),
                        arr(&vec![0.0; lb]),
                        arr(&zeros),
                        arr(&d_o),
                        int(n),
                        int(s),
                        ArgValue::Scalar(Constant::F64(1.0)),
                    ],
                };
                let (got, want) = (jit_run(&j, name, &args), interp_run(&src, m, name, &args));
                errors += want.is_err() as usize;
                assert!(
                    same(&got, &want),
                    "program {p} (seed {seed}), `{name}` with len(a) = {la}, len(b) = {lb}, \
                     len(o) = {lo}, n = {n}, s = {s}:\nJIT {got:?}\nsource {want:?}\n{src}"
                );
            }
        }
    }
    // (The programs must reach their errors, or this tests nothing.)
    assert!(errors > programs as usize, "{errors} runtime errors");
}
