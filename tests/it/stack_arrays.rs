//! Small local arrays live in the stack frame (`crates/codegen/src/translate/stack_arrays.rs`).
//! Each program runs through the JIT and through the IR interpreter (which
//! knows nothing of the stack) on the same optimised IR: results and the
//! gradient must agree exactly. The shapes are those where a frame slot
//! could go wrong: an array declared in a loop (fresh and zeroed every
//! iteration), arrays passed to callees that write them, a copy of one, an
//! array merged with another on a branch, arrays too large for the frame,
//! recursion with an array per frame, and an array made in an arm of an
//! `if` whose shadow the reverse sweep reads through the join's parameter
//! (`arm`, both arms taken).

use adc::driver::{self, Stage};
use adc_ir::interp::{self, InterpArg};
use adc_ir::Constant;

const PROGRAM: &str = "
void fill(inout double[] t, double x) { for (int i = 0; i < len(t); i++) t[i] = t[i] + x * double(i + 1); }
double rec(double x, int n) { double t[2]; t[0] = x; t[1] = t[0] * 0.5; if (n == 0) return t[1]; return rec(t[1] + x, n - 1) + t[0]; }
double f(double x, int n) {
    double s = 0.0;
    for (int k = 0; k < n; k++) {
        double t[3];
        s += t[0] + t[1] + t[2];
        t[0] = double(k) * x; t[1] = 1.0;
        fill(t, x);
        double u[3]; for (int i = 0; i < 3; i++) u[i] = t[i];
        if (k % 2 == 0) u[2] = 7.0;
        s += t[0] + t[1] + t[2] + u[2];
        double big[600];
        big[599] = x;
        s += big[599] + big[0];
    }
    double w[4];
    double v[4];
    for (int i = 0; i < 4; i++) { w[i] = x + double(i); v[i] = w[i] * w[i]; }
    s += v[3] + rec(x, 5);
    return s;
}
[autodiff_reverse(df, Active, Const, Active)]
double g(double x, int n) { return f(x, n); }
double arm(double x) {
    double s = x;
    if (x > 0.5) {
        double t[2];
        t[0] = x * x;
        t[1] = t[0] * sin(x);
        s = t[0] * t[1] + cos(t[1]);
    }
    return s * x;
}
[autodiff_reverse(darm, Active, Active)]
double arm_of(double x) { return arm(x); }
";

fn run_both(m: &adc_ir::Module, name: &str, args: &[Constant]) -> (Vec<Constant>, Vec<Constant>) {
    let jit = adc_codegen::jit(m, &|_| String::new(), &[]).expect("JIT");
    let mut jargs: Vec<adc::ArgValue> = args.iter().map(|c| adc::ArgValue::Scalar(*c)).collect();
    let j = jit.call(name, &mut jargs).expect("JIT runs");
    let mut iargs: Vec<InterpArg> = args.iter().map(|c| InterpArg::Scalar(*c)).collect();
    let i = interp::call(m, name, &mut iargs, 1 << 26).expect("interpreter runs");
    (j, i)
}

#[test]
fn stack_arrays_agree_with_the_interpreter() {
    let mut m = driver::frontend("stack.ad", PROGRAM, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    driver::run_stages(&mut m, Stage::Final).expect("stages run");
    for n in [0, 1, 2, 5] {
        let args = [Constant::F64(0.75), Constant::I64(n)];
        let (j, i) = run_both(&m, "f", &args);
        assert_eq!(j, i, "f(0.75, {n})");
        let dargs = [Constant::F64(0.75), Constant::I64(n), Constant::F64(1.0)];
        let (j, i) = run_both(&m, "df", &dargs);
        assert_eq!(j, i, "df(0.75, {n})");
    }
    for x in [0.75, 0.25] {
        let (j, i) = run_both(&m, "darm", &[Constant::F64(x), Constant::F64(1.0)]);
        assert_eq!(j, i, "darm({x})");
    }
}
