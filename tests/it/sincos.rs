//! `sin x` and `cos x` of one `x` in one block are one call of the C
//! library's `sincos` (codegen's `translate/sincos.rs`). Its results must
//! be the bits `sin` and `cos` give (Rust's `f64::sin`/`cos` and
//! `f32::sin`/`cos` call the same C library's functions), for arguments
//! over the whole range: huge ones (the argument reduction), tiny and
//! subnormal ones, zeros of both signs, infinities and NaN; and each
//! result must reach its own instruction (a swap gives `cos` for `sin`).

use crate::support;

use adc::{ArgValue, ArrayValue};

const SOURCE: &str = "
void both(double[] x, out double[] s, out double[] c) {
    for (int i = 0; i < len(x); i++) { s[i] = sin(x[i]); c[i] = cos(x[i]) * 2.0; }
}
void bothf(float[] x, out float[] s, out float[] c) {
    for (int i = 0; i < len(x); i++) { c[i] = cos(x[i]); s[i] = sin(x[i]) * 2.0f; }
}
";

fn args() -> Vec<f64> {
    let mut xs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        3.141592653589793,
        1e-300,
        5e-324,
        -2.5e-310,
    ];
    xs.extend([
        1e5,
        1e22,
        -1e300,
        1.7976931348623157e308,
        f64::INFINITY,
        -f64::INFINITY,
        f64::NAN,
    ]);
    // A spread of magnitudes and signs (a fixed generator, no dependency).
    let mut z: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2000 {
        z ^= z << 13;
        z ^= z >> 7;
        z ^= z << 17;
        let mantissa = (z >> 11) as f64 / (1u64 << 53) as f64;
        let exp = ((z & 0xff) as i32) - 120;
        let sign = if z & 0x100 == 0 { 1.0 } else { -1.0 };
        xs.push(sign * mantissa * 2f64.powi(exp));
    }
    xs
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn sincos_pairs_give_the_bits_of_sin_and_cos() {
    let j = support::jit(SOURCE);
    let xs = args();
    let n = xs.len();
    let mut a = [
        ArgValue::Array(ArrayValue::F64(xs.clone())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; n])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; n])),
    ];
    j.call("both", &mut a).expect("both runs");
    let (ArgValue::Array(ArrayValue::F64(s)), ArgValue::Array(ArrayValue::F64(c))) = (&a[1], &a[2])
    else {
        panic!("double arrays expected");
    };
    for (i, &x) in xs.iter().enumerate() {
        assert!(
            same_bits(s[i], x.sin()),
            "sin({x:e}): {:e} against {:e}",
            s[i],
            x.sin()
        );
        assert!(
            same_bits(c[i], x.cos() * 2.0),
            "cos({x:e}): {:e} against {:e}",
            c[i] / 2.0,
            x.cos()
        );
    }

    let xf: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let mut a = [
        ArgValue::Array(ArrayValue::F32(xf.clone())),
        ArgValue::Array(ArrayValue::F32(vec![0.0; n])),
        ArgValue::Array(ArrayValue::F32(vec![0.0; n])),
    ];
    j.call("bothf", &mut a).expect("bothf runs");
    let (ArgValue::Array(ArrayValue::F32(s)), ArgValue::Array(ArrayValue::F32(c))) = (&a[1], &a[2])
    else {
        panic!("float arrays expected");
    };
    for (i, &x) in xf.iter().enumerate() {
        let (ws, wc) = (x.sin() * 2.0, x.cos());
        assert!(
            s[i].to_bits() == ws.to_bits() || (s[i].is_nan() && ws.is_nan()),
            "sinf({x:e}): {:e} against {:e}",
            s[i],
            ws
        );
        assert!(
            c[i].to_bits() == wc.to_bits() || (c[i].is_nan() && wc.is_nan()),
            "cosf({x:e}): {:e} against {:e}",
            c[i],
            wc
        );
    }
}

/// The pair is one call: the object file calls `sincos` and `sincosf`,
/// and neither `sin` nor `cos` (nor their `float` forms).
#[test]
fn a_pair_is_one_sincos_call_in_object_files() {
    let object =
        adc::driver::compile_object("both.ad", SOURCE, "BOTH_H", &adc::CompileOptions::default())
            .expect("compiles to an object file")
            .object;
    let has = |name: &str| {
        let pat = format!("\0{name}\0");
        object.windows(pat.len()).any(|w| w == pat.as_bytes())
    };
    assert!(has("sincos") && has("sincosf"), "no sincos call");
    for single in ["sin", "cos", "sinf", "cosf"] {
        assert!(!has(single), "the object still calls `{single}`");
    }
}

/// A module that defines a function named `sincos` keeps separate calls
/// (its own `sincos` would be called instead of the C library's, or its
/// object would not compile: one symbol, two signatures).
#[test]
fn a_module_defining_sincos_keeps_sin_and_cos() {
    let src = format!("{SOURCE}\ndouble sincos(double x) {{ return x; }}\n");
    adc::driver::compile_object("own.ad", &src, "OWN_H", &adc::CompileOptions::default())
        .expect("an object file with its own sincos");
    let j = support::jit(&src);
    let xs = vec![0.25, 2.0, -7.0];
    let mut a = [
        ArgValue::Array(ArrayValue::F64(xs.clone())),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
        ArgValue::Array(ArrayValue::F64(vec![0.0; 3])),
    ];
    j.call("both", &mut a).expect("both runs");
    let ArgValue::Array(ArrayValue::F64(s)) = &a[1] else {
        panic!("double array expected");
    };
    for (i, &x) in xs.iter().enumerate() {
        assert!(same_bits(s[i], x.sin()), "sin({x}) = {}", s[i]);
    }
}
