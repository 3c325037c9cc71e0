//! Arrays not zero-filled (`new.uninit`, `T a[__adc_uninit(n)]`): the
//! code generated for sparse Hessians declares its arrays so when it
//! stores every element before reading it (docs/performance.md#sparse-hessians).
//! The declaration lowers to `new.uninit` (on the heap: `malloc`; in the
//! frame: no zeroing stores), the program's results equal the
//! interpreter's (which fills with zeros), a length whose bytes overflow
//! is the runtime error `out of memory`, and the sparse Hessian's own
//! arrays use it.

use adc::driver::{self, Stage};
use adc_ir::interp::{self, InterpArg};
use adc_ir::Constant;

const PROGRAM: &str = "
int f(int n) {
    int a[__adc_uninit(n)];
    int b[__adc_uninit(3)];
    for (int i = 0; i < n; i++) { a[i] = i * i; }
    for (int i = 0; i < 3; i++) { b[i] = n + i; }
    int s = 0;
    for (int i = 0; i < n; i++) { s += a[i]; }
    return s + b[0] + b[1] + b[2];
}
";

fn module(source: &str) -> adc_ir::Module {
    let mut m = driver::frontend("uninit.ad", source, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    driver::run_stages(&mut m, Stage::Final).expect("stages run");
    m
}

#[test]
fn an_uninit_declaration_lowers_to_new_uninit() {
    let m = driver::frontend("uninit.ad", PROGRAM, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let text = m.to_string();
    assert_eq!(text.matches("= new.uninit ").count(), 2, "{text}");
    assert!(!text.contains("__adc_uninit"), "{text}");
}

#[test]
fn uninit_arrays_written_first_agree_with_the_interpreter() {
    let m = module(PROGRAM);
    let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
    for n in [0i64, 1, 7, 100_000] {
        let want = (0..n).map(|i| i * i).sum::<i64>() + 3 * n + 3;
        let mut jargs = [adc::ArgValue::Scalar(Constant::I64(n))];
        let j = jit.call("f", &mut jargs).expect("JIT runs");
        let mut iargs = [InterpArg::Scalar(Constant::I64(n))];
        let i = interp::call(&m, "f", &mut iargs, 1 << 26).expect("interpreter runs");
        assert_eq!(j, vec![Constant::I64(want)], "JIT f({n})");
        assert_eq!(i, j, "interpreter f({n})");
    }
}

#[test]
fn an_uninit_length_whose_bytes_overflow_is_out_of_memory() {
    let m = module(PROGRAM);
    let jit = adc_codegen::jit(&m, &|_| String::new(), &[]).expect("JIT");
    for n in [1i64 << 61, i64::MAX] {
        let mut jargs = [adc::ArgValue::Scalar(Constant::I64(n))];
        let e = jit.call("f", &mut jargs).expect_err("too long");
        assert!(e.to_string().contains("out of memory"), "f({n}): {e}");
    }
}

#[test]
fn the_sparse_hessian_does_not_zero_its_arena_and_rows() {
    let src = "
[hessian(S, sparse)]
double f(double[] x) {
    double s = 0.0;
    for (int i = 0; i + 1 < len(x); i++) { s += x[i] * x[i + 1]; }
    return s;
}
";
    let m = driver::frontend("h.ad", src, &adc::CompileOptions::default())
        .unwrap_or_else(|f| panic!("{f}"));
    let text = m.to_string();
    let body = |name: &str| {
        let start = text
            .find(&format!("@{name}("))
            .unwrap_or_else(|| panic!("no {name}"));
        let end = text[start..]
            .find("\n}\n")
            .map_or(text.len(), |e| start + e);
        text[start..end].to_string()
    };
    // The arena, the rows before and after packing, and the colors.
    let s = body("S");
    assert!(s.matches("= new.uninit ").count() >= 4, "{s}");
    let nnz = body("S_nnz");
    assert!(nnz.matches("= new.uninit ").count() >= 3, "{nnz}");
}

#[test]
fn textual_ir_gets_zeroed_arrays() {
    let text = "func @main(n: i64) -> f64 {\nblock0(v0: i64):\n    v1: arr<f64> = new.uninit v0\n    v2: i64 = const 2\n    v3: f64 = load v1, v2\n    return v3\n}\n";
    let mut m = adc_ir::parse_module(text).expect("parses");
    adc::user_ir::make_safe(&mut m).expect("safe");
    let out = m.to_string();
    assert!(
        out.contains("= new v0") && !out.contains("new.uninit"),
        "{out}"
    );
}
