//! Oracle (e): the IR interpreter against the JIT, after every stage.
//!
//! The program's module is run through the pipeline up to each stage
//! (`lower` .. `opt`) and interpreted there (`adc_ir::interp`), at the
//! first evaluation point:
//! - `f` at every stage equals the JIT's primal;
//! - `f_fwd` from `linearize` on equals the JIT's value and tangent along
//!   the random direction;
//! - `f_rev`, before `transpose`, is still forward mode (each primal then
//!   its tangent) and its tangent equals the JIT's gradient dotted with the
//!   direction; from `transpose` on it returns the JIT's gradient;
//! - with the second-order wrappers, from `transpose` on, `gr`, `gf`, and
//!   the forward-over-reverse and reverse-over-reverse Hessian products
//!   equal the JIT's.
//!
//! The interpreter is written for clarity, independently of codegen, so a
//! wrong lowering to Cranelift, a pass that breaks an invariant the JIT
//! happens to tolerate, or an intermediate stage whose IR means something
//! else than the final one, shows up as a disagreement here.

use super::oracle::{close, fail, Fail};
use super::precision::{constant, tol};
use crate::support::number as num;
use adc::{ArgValue, Constant, JitModule, Stage};
use adc_ir::interp::{self, InterpArg, InterpError};
use adc_ir::{MathFunc, Module};

/// What the JIT computed at the point, to be matched.
pub struct JitValues<'a> {
    pub x: f64,
    pub y: f64,
    pub a: &'a [f64],
    /// `f`'s value.
    pub primal: f64,
    /// The random direction over (x, y, a) and `f_fwd`'s tangent along it.
    pub dir: &'a [f64],
    pub tangent: f64,
    /// `f_rev`'s gradient over (x, y, a).
    pub grad: &'a [f64],
    /// With the second-order wrappers: `gr`, `gf`, `h_fr`'s and `h_rr`'s
    /// (value, Hessian product).
    pub second: Option<SecondValues>,
}

pub struct SecondValues {
    pub gr: f64,
    pub gf: f64,
    pub h_fr: (f64, f64),
    pub h_rr: (f64, f64, f64),
}

/// Instructions an interpreted call may execute; a program that needs
/// more is not compared (counted as skipped by the caller).
const FUEL: u64 = 1 << 24;

fn f(v: f64) -> InterpArg {
    InterpArg::Scalar(constant(v))
}
fn arr(v: &[f64]) -> InterpArg {
    InterpArg::Array(v.iter().map(|x| constant(*x)).collect())
}

/// The C library's `erf`, `erfc` and `lgamma`, as compiled code calls them
/// (the interpreter's own, from the `libm` crate, can differ in the last
/// bit, and a program whose rounding errors grow a millionfold then
/// disagrees with the JIT for no fault of either: seed 170,012,011).
const C_MATH: &str = "double m_erf(double x) { return erf(x); }
double m_erfc(double x) { return erfc(x); }
double m_lgamma(double x) { return lgamma(x); }";

thread_local! {
    static C_MATH_JIT: JitModule =
        adc::compile_jit("c_math.ad", C_MATH, &adc::CompileOptions::default()).expect("three one-line functions compile");
}

fn c_math(f: MathFunc, xs: &[Constant]) -> Option<Constant> {
    let name = match f {
        MathFunc::Erf => "m_erf",
        MathFunc::Erfc => "m_erfc",
        MathFunc::Lgamma => "m_lgamma",
        _ => return None,
    };
    let Constant::F64(x) = xs[0] else { return None };
    C_MATH_JIT
        .with(|j| j.call(name, &mut [ArgValue::Scalar(Constant::F64(x))]).ok())
        .and_then(|r| r.first().copied())
}

/// `Ok(None)` when the call ran out of fuel.
fn run(
    m: &Module,
    stage: Stage,
    name: &str,
    args: &mut [InterpArg],
) -> Result<Option<Vec<f64>>, Fail> {
    match interp::call_with_math(m, name, args, FUEL, Some(&c_math)) {
        Ok(r) => Ok(Some(r.iter().map(num).collect())),
        Err(InterpError::OutOfFuel) => Ok(None),

        Err(e) => fail(
            "interp_error",
            format!("interpreting `{name}` after {stage:?}: {e:?}"),
        ),
    }
}

fn expect(stage: Stage, what: &str, got: f64, want: f64) -> Result<(), Fail> {
    if close(got, want, tol(1e-9), 0.0) {
        Ok(())
    } else {
        fail(
            "interp_vs_jit",
            format!("after {stage:?}: {what}: interpreter {got:?}, JIT {want:?}"),
        )
    }
}

/// Runs the oracle on the module after every stage (`snapshots`, from
/// `compile_jit_staged`); returns whether every call was compared (false when
/// one ran out of fuel).
pub fn check(snapshots: &[(Stage, Module)], jit: &JitValues) -> Result<bool, Fail> {
    let mut complete = true;
    for (stage, m) in snapshots {
        complete &= check_stage(m, *stage, jit)?;
    }
    Ok(complete)
}

fn check_stage(m: &Module, stage: Stage, j: &JitValues) -> Result<bool, Fail> {
    let (x, y, a, v) = (j.x, j.y, j.a, j.dir);
    // Before `linearize`, a derivative the program calls (`nd`) is a
    // declaration without a body: nothing to run yet.
    let ungenerated = m
        .funcs
        .iter()
        .any(|g| g.deriv.is_some() && g.layout.is_empty() && g.name == "nd");
    if stage == Stage::Lower && ungenerated {
        return Ok(true);
    }
    let Some(p) = run(m, stage, "f", &mut [f(x), f(y), arr(a)])? else {
        return Ok(false);
    };
    expect(stage, "f", p[0], j.primal)?;
    if stage == Stage::Lower {
        return Ok(true);
    }
    let tangent_args = || vec![f(x), f(v[0]), f(y), f(v[1]), arr(a), arr(&v[2..])];
    let Some(t) = run(m, stage, "f_fwd", &mut tangent_args())? else {
        return Ok(false);
    };
    expect(stage, "f_fwd's primal", t[0], j.primal)?;
    expect(stage, "f_fwd's tangent", t[1], j.tangent)?;
    let rev_id = m
        .find("f_rev")
        .ok_or_else(|| Fail("interp_stage".into(), format!("no f_rev after {stage:?}")))?;
    let dot: f64 = j.grad.iter().zip(v).map(|(g, v)| g * v).sum();
    if m.func(rev_id).params.len() == 6 {
        // Not transposed yet: the linearized signature.
        let Some(t) = run(m, stage, "f_rev", &mut tangent_args())? else {
            return Ok(false);
        };
        expect(stage, "f_rev's primal", t[0], j.primal)?;
        if !split_call_over_arrays(m, rev_id) {
            expect(stage, "f_rev's tangent (before transpose)", t[1], dot)?;
        }
        return Ok(true);
    }
    let mut args = vec![f(x), f(y), arr(a), arr(&vec![0.0; a.len()]), f(1.0)];
    let Some(r) = run(m, stage, "f_rev", &mut args)? else {
        return Ok(false);
    };
    expect(stage, "f_rev's primal", r[0], j.primal)?;
    expect(stage, "f_rev's d/dx", r[1], j.grad[0])?;
    expect(stage, "f_rev's d/dy", r[2], j.grad[1])?;
    if let InterpArg::Array(da) = &args[3] {
        for (k, d) in da.iter().enumerate() {
            expect(stage, &format!("f_rev's d/da[{k}]"), num(d), j.grad[2 + k])?;
        }
    }
    let Some(s) = &j.second else {
        return Ok(true);
    };
    if stage < Stage::Transpose {
        return Ok(true);
    }
    let mut complete = true;
    let scalar_calls: [(&str, f64); 2] = [("gr", s.gr), ("gf", s.gf)];
    for (name, want) in scalar_calls {
        match run(m, stage, name, &mut [f(x), f(y), arr(a)])? {
            Some(r) => expect(stage, name, r[0], want)?,
            None => complete = false,
        }
    }
    match run(m, stage, "h_fr", &mut [f(x), f(1.0), f(y), f(0.3), arr(a)])? {
        Some(r) => {
            expect(stage, "h_fr's value", r[0], s.h_fr.0)?;
            expect(stage, "h_fr's tangent", r[1], s.h_fr.1)?;
        }
        None => complete = false,
    }
    match run(m, stage, "h_rr", &mut [f(x), f(y), arr(a), f(1.0)])? {
        Some(r) => {
            let want = [s.h_rr.0, s.h_rr.1, s.h_rr.2];
            for (k, (g, w)) in r.iter().zip(want).enumerate() {
                expect(stage, &format!("h_rr's result {k}"), *g, w)?;
            }
        }
        None => complete = false,
    }
    Ok(complete)
}

/// Whether `f` calls a split function's tangent placeholder
/// (`__adc_lin_g`) that takes arrays: between `unzip` and `transpose` it
/// sees them as they are after the primal part, so the tangent is exact
/// only for scalars (see `ad/split.rs`).
fn split_call_over_arrays(m: &Module, f: adc_ir::FuncId) -> bool {
    let f = m.func(f);
    f.layout.iter().any(|b| {
        f.dfg.block(*b).insts.iter().any(|i| match f.dfg.inst(*i) {
            adc_ir::InstData::Call { func, .. } => {
                let g = m.func(*func);
                g.name.starts_with("__adc_lin_")
                    && g.params
                        .iter()
                        .any(|p| matches!(p.ty, adc_ir::Type::Array(_)))
            }
            _ => false,
        })
    })
}
