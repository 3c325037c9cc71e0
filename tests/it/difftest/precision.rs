//! `float` programs: the generated source turned to `float`, the values
//! passed at the program's precision, and the oracles' tolerances scaled
//! to it.
//!
//! A `float` program (`Program::single`) is the seed's program with every
//! `double` written `float` and every floating literal a `float` one
//! ([`to_single`]): its types, casts, local arrays,
//! helpers, and the oracles' wrappers (`g`, `fh`, `fbd`, the second-order
//! functions), so `[jacobian]` and `[hessian]` take `float` functions.
//! What a `float` function gives as `double` (`jac`, `hess`, a sparse
//! `vals`) stays `double` ([`darr`]). `check` sets the precision of the
//! thread for the program's oracles ([`with`]); [`s`], [`arr`] and
//! [`constant`] then make `float` arguments, and [`tol`] turns each
//! tolerance and step size written for `double` into the `float` one: its
//! square root (a `float` carries about half of a `double`'s digits), so
//! 1e-12 becomes 1e-6, comparisons to rounding (reverse against forward,
//! vector lanes, sparse against dense, interpreter against JIT) stay tight
//! for `float`, and central differences step by 1e-2 and 3e-3 and compare
//! to 3e-3.

use adc::{ArgValue, ArrayValue, Constant};
use std::cell::Cell;

thread_local! {
    /// Whether the program being checked on this thread is a `float` one.
    static SINGLE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the oracles on this thread check a `float` program.
pub fn single() -> bool {
    SINGLE.with(|s| s.get())
}

/// Runs `f` with the thread's precision `float` if `single` (restored
/// after, also on a panic's unwinding through `catch_unwind` above).
pub fn with<T>(single: bool, f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SINGLE.with(|s| s.set(self.0));
        }
    }
    let _restore = Restore(SINGLE.with(|s| s.replace(single)));
    f()
}

/// A tolerance (or step size) written for `double`, at the precision of
/// the thread's program.
pub fn tol(t: f64) -> f64 {
    if single() {
        t.sqrt()
    } else {
        t
    }
}

/// `v` as the program sees it: rounded to `float` in a `float` program.
pub fn round(v: f64) -> f64 {
    if single() {
        v as f32 as f64
    } else {
        v
    }
}

/// A scalar of the program's floating type.
pub fn constant(v: f64) -> Constant {
    if single() {
        Constant::F32(v as f32)
    } else {
        Constant::F64(v)
    }
}

/// A scalar argument of the program's floating type.
pub fn s(v: f64) -> ArgValue {
    ArgValue::Scalar(constant(v))
}

/// An array argument of the program's floating type.
pub fn arr(v: &[f64]) -> ArgValue {
    if single() {
        ArgValue::Array(ArrayValue::F32(v.iter().map(|&x| x as f32).collect()))
    } else {
        ArgValue::Array(ArrayValue::F64(v.to_vec()))
    }
}

/// A `double` array whatever the program's type (`jac`, `hess`, `vals`).
pub fn darr(v: &[f64]) -> ArgValue {
    ArgValue::Array(ArrayValue::F64(v.to_vec()))
}

/// The values of a floating array argument.
pub fn floats(v: &ArgValue) -> Vec<f64> {
    match v {
        ArgValue::Array(ArrayValue::F64(v)) => v.clone(),
        ArgValue::Array(ArrayValue::F32(v)) => v.iter().map(|&x| f64::from(x)).collect(),
        other => panic!("not a floating array: {other:?}"),
    }
}

/// A floating result as an `f64`.
pub fn value(c: &Constant) -> Option<f64> {
    match c {
        Constant::F64(v) => Some(*v),
        Constant::F32(v) if single() => Some(f64::from(*v)),
        _ => None,
    }
}

/// `src` with every `double` (a word: types, casts) written `float` and
/// every floating literal a `float` one (`0.5f`: a literal without `f` is
/// a `double` as the argument of a math function, docs/language.md).
pub fn to_single(src: &str) -> String {
    float_literals(&float_types(src))
}

/// `src` with an `f` after each floating literal (`1.5`, `.3`, `2.`, not
/// the bounds of a view, `1..`).
fn float_literals(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + src.len() / 8);
    let word = |k: usize| k > 0 && (c[k - 1].is_ascii_alphanumeric() || c[k - 1] == '_');
    let digits = |mut k: usize| {
        while k < c.len() && c[k].is_ascii_digit() {
            k += 1;
        }
        k
    };
    let mut i = 0;
    while i < c.len() {
        let after_dot = i > 0 && c[i - 1] == '.';
        let lead_digit = c[i].is_ascii_digit() && !word(i) && !after_dot;
        let lead_dot = c[i] == '.'
            && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())
            && !word(i)
            && !after_dot;
        if !(lead_digit || lead_dot) {
            out.push(c[i]);
            i += 1;
            continue;
        }
        let mut k = digits(i + lead_dot as usize);
        let mut floating = lead_dot;
        if lead_digit && c.get(k) == Some(&'.') && c.get(k + 1) != Some(&'.') {
            k = digits(k + 1);
            floating = true;
        }
        if matches!(c.get(k), Some('e' | 'E')) {
            let sign = matches!(c.get(k + 1), Some('+' | '-')) as usize;
            if c.get(k + 1 + sign).is_some_and(|d| d.is_ascii_digit()) {
                k = digits(k + 1 + sign);
                floating = true;
            }
        }
        out.extend(&c[i..k]);
        if floating {
            out.push('f');
        }
        i = k;
    }
    out
}

/// `src` with every `double` (a word) written `float`.
fn float_types(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut rest = src;
    while let Some(k) = rest.find("double") {
        let before = rest[..k].chars().next_back();
        let after = rest[k + 6..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..k]);
        out.push_str(if word(before) || word(after) {
            "double"
        } else {
            "float"
        });
        rest = &rest[k + 6..];
    }
    out.push_str(rest);
    out
}

#[test]
fn float_source() {
    let src = "double f(double x, double[] a) { double m[2] = {0.5, .3}; \
               return tanh(1.0) * g(a[1..], m[0..len(a) - 1]) + double(2) * 1e-3 + 2. + x1 * 12; }";
    assert_eq!(
        to_single(src),
        "float f(float x, float[] a) { float m[2] = {0.5f, .3f}; \
         return tanh(1.0f) * g(a[1..], m[0..len(a) - 1]) + float(2) * 1e-3f + 2.f + x1 * 12; }"
    );
}
