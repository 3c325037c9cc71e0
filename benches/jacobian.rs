//! Benchmark (not a test): a dense `[jacobian]` of an ht-shaped function
//! (26 inputs, 3000 outputs, each output a sum of `sin` over every input)
//! against the function itself, and the forward vector-mode derivative
//! the Jacobian is made of at each width `W`, per call and per
//! Jacobian (`ceil(26 / W)` calls). Then the choice between columns and
//! rows (docs/jacobians.md#by-columns-or-by-rows): the Jacobians by
//! columns (`forward`), by rows (`reverse`) and chosen at each call of two
//! functions with a float result, the ht-shaped one (26 columns, 3001
//! rows) and a wide one (1000 columns, 3 rows). Everything runs in
//! alternating rounds (`ADC_BENCH_ROUNDS`, default 3), each side's least
//! time over them.
//!
//! Run: `cargo bench --bench jacobian`.

mod common;

use common::best_of;

const INPUTS: usize = 26;
const OUTPUTS: usize = 3000;
const WIDTHS: [u32; 6] = [1, 2, 4, 8, 16, 32];

const FUNCTION: &str = r#"
[jacobian(jf)]
void f(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int j = 0; j < len(x); j++) {
            s += sin(x[j] * double(i % 7 + 1) + double(i));
        }
        y[i] = s;
    }
}
"#;

/// The source: `f`, its Jacobian `jf`, and `fw{W}`, its forward
/// derivative of width `W`, for each of [`WIDTHS`].
fn source() -> String {
    let mut s = String::new();
    for w in WIDTHS {
        s += &format!("[autodiff_forward(fw{w}, Dual, Dual, width = {w})]\n");
    }
    s + FUNCTION.trim_start()
}

/// Two functions with a float result, each with its Jacobian by columns
/// (`_c`), by rows (`_r`) and chosen at each call (`_a`).
const MODES: &str = r#"
[jacobian(ht_a)]
[jacobian(ht_c, forward)]
[jacobian(ht_r, reverse)]
double ht(double[] x, out double[] y) {
    for (int i = 0; i < len(y); i++) {
        double s = 0.0;
        for (int j = 0; j < len(x); j++) {
            s += sin(x[j] * double(i % 7 + 1) + double(i));
        }
        y[i] = s;
    }
    return y[0] * y[len(y) - 1];
}
[jacobian(wide_a)]
[jacobian(wide_c, forward)]
[jacobian(wide_r, reverse)]
double wide(double[] x, out double[] c) {
    double s = 0.0;
    for (int j = 0; j < len(x); j++) s += sin(x[j] * (0.5 + 0.001 * double(j))) * x[j];
    for (int i = 0; i < len(c); i++) {
        double t = 0.0;
        for (int j = i; j < len(x); j += len(c)) t += cos(x[j]) * x[j];
        c[i] = t;
    }
    return s;
}
"#;

const WIDE_INPUTS: usize = 1000;
const WIDE_OUTPUTS: usize = 2;

type Primal = extern "C" fn(*const f64, i64, *mut f64, i64);
type Jacobian = extern "C" fn(*const f64, i64, *mut f64, i64, *mut f64, i64);
type JacobianF = extern "C" fn(*const f64, i64, *mut f64, i64, *mut f64, i64) -> f64;
type Forward = extern "C" fn(*const f64, i64, *const f64, i64, *mut f64, i64, *mut f64, i64);

fn main() {
    let rounds: usize = std::env::var("ADC_BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let jit = adc::compile_jit("jacobian.ad", &source(), &adc::CompileOptions::default())
        .expect("compiles");
    let raw = |name: &str| jit.raw_function(name).expect("defined");
    // SAFETY: the C ABI of docs/embedding.md#the-c-signature-of-a-function
    // for these signatures; `jit` outlives the calls, and every call below
    // passes slices valid for the lengths it passes.
    let f: Primal = unsafe { std::mem::transmute(raw("f")) };
    let jf: Jacobian = unsafe { std::mem::transmute(raw("jf")) };
    let fw: Vec<Forward> = WIDTHS
        .iter()
        .map(|w| unsafe { std::mem::transmute(raw(&format!("fw{w}"))) })
        .collect();
    let x: Vec<f64> = (0..INPUTS).map(|j| 0.1 + 0.05 * j as f64).collect();
    let mut y = vec![0.0; OUTPUTS];
    let mut jac = vec![0.0; OUTPUTS * INPUTS];
    let (n, m) = (INPUTS as i64, OUTPUTS as i64);
    let reps = 20;
    let (mut t_f, mut t_jf) = (f64::MAX, f64::MAX);
    let mut t_fw = vec![f64::MAX; WIDTHS.len()];
    for _ in 0..rounds {
        t_f = t_f.min(best_of(reps, || f(x.as_ptr(), n, y.as_mut_ptr(), m)));
        t_jf = t_jf.min(best_of(reps, || {
            jf(x.as_ptr(), n, y.as_mut_ptr(), m, jac.as_mut_ptr(), m * n)
        }));
        for (k, &w) in WIDTHS.iter().enumerate() {
            let w = w as usize;
            // Directions: the unit vectors of the first `w` columns.
            let mut dx = vec![0.0; w * INPUTS];
            for d in 0..w.min(INPUTS) {
                dx[d * INPUTS + d] = 1.0;
            }
            let mut dy = vec![0.0; w * OUTPUTS];
            let call = fw[k];
            t_fw[k] = t_fw[k].min(best_of(reps, || {
                call(
                    x.as_ptr(),
                    n,
                    dx.as_ptr(),
                    dx.len() as i64,
                    y.as_mut_ptr(),
                    m,
                    dy.as_mut_ptr(),
                    dy.len() as i64,
                )
            }));
        }
    }
    // The Jacobian against a difference quotient of one entry.
    let h = 1e-6;
    let mut xh = x.clone();
    xh[3] += h;
    let mut yh = vec![0.0; OUTPUTS];
    f(xh.as_ptr(), n, yh.as_mut_ptr(), m);
    f(x.as_ptr(), n, y.as_mut_ptr(), m);
    let fd = (yh[100] - y[100]) / h;
    assert!((jac[100 * INPUTS + 3] - fd).abs() < 1e-4, "jacobian entry");
    println!(
        "{INPUTS} inputs, {OUTPUTS} outputs (sums of sin), best of {rounds} alternating rounds"
    );
    println!();
    println!("| function | time (ms) | / primal |");
    println!("|---|---|---|");
    println!("| primal `f` | {:.3} | 1 |", t_f * 1e3);
    println!(
        "| `[jacobian]` `jf` | {:.3} | {:.2} |",
        t_jf * 1e3,
        t_jf / t_f
    );
    for (k, w) in WIDTHS.iter().enumerate() {
        let calls = INPUTS.div_ceil(*w as usize) as f64;
        println!(
            "| width {w}: one call (Jacobian: {calls} calls) | {:.3} ({:.3}) | {:.2} ({:.2}) |",
            t_fw[k] * 1e3,
            t_fw[k] * calls * 1e3,
            t_fw[k] / t_f,
            t_fw[k] * calls / t_f
        );
    }
    modes(rounds);
}

/// The Jacobians of [`MODES`] by columns, by rows and chosen: a table
/// row per function.
fn modes(rounds: usize) {
    let jit =
        adc::compile_jit("modes.ad", MODES, &adc::CompileOptions::default()).expect("compiles");
    println!();
    println!("By columns, by rows and chosen at each call, best of {rounds} alternating rounds");
    println!();
    println!("| function | rows x columns | by columns (ms) | by rows (ms) | chosen (ms) | the rule takes | faster |");
    println!("|---|---|---|---|---|---|---|");
    for (name, inputs, outputs, reps) in [
        ("ht", INPUTS, OUTPUTS, 1),
        ("wide", WIDE_INPUTS, WIDE_OUTPUTS, 20),
    ] {
        // SAFETY: as in `main`, for `double NAME(double[] x, out double[]
        // y, out double[] jac)`.
        let get = |suffix: &str| -> JacobianF {
            unsafe {
                std::mem::transmute(
                    jit.raw_function(&format!("{name}_{suffix}"))
                        .expect("defined"),
                )
            }
        };
        let fs = [get("c"), get("r"), get("a")];
        let x: Vec<f64> = (0..inputs).map(|j| 0.1 + 0.05 * (j % 29) as f64).collect();
        let (n, m) = (inputs as i64, outputs as i64);
        let rows = outputs + 1;
        let mut jacs = vec![vec![0.0; rows * inputs]; 3];
        let mut t = [f64::MAX; 3];
        for _ in 0..rounds {
            for k in 0..3 {
                let mut y = vec![0.0; outputs];
                let jac = &mut jacs[k];
                t[k] = t[k].min(best_of(reps, || {
                    fs[k](
                        x.as_ptr(),
                        n,
                        y.as_mut_ptr(),
                        m,
                        jac.as_mut_ptr(),
                        jac.len() as i64,
                    );
                }));
            }
        }
        for k in 1..3 {
            for (a, b) in jacs[k].iter().zip(&jacs[0]) {
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + b.abs()),
                    "{name}: the modes differ"
                );
            }
        }
        let rule = if rows < inputs { "rows" } else { "columns" };
        let faster = if t[1] < t[0] { "rows" } else { "columns" };
        println!(
            "| `{name}` | {rows} x {inputs} | {:.3} | {:.3} | {:.3} | {rule} | {faster} |",
            t[0] * 1e3,
            t[1] * 1e3,
            t[2] * 1e3
        );
    }
}
