//! Calls: arity, built-ins, and user functions (with their derivative
//! requests and the aliasing rule of docs/arrays.md#the-aliasing-rule).

use super::alias::RefArg;
use super::expr::*;
use super::items::is_float_literal;
use super::signature::{RetTy, Signature};
use super::{type_name, FnLowerer, VarId};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{BinaryOp, InstData, MathFunc, ScalarType, Span, Type, UnaryOp, Value};

impl FnLowerer<'_> {
    pub(super) fn call(&mut self, f: &Ident, args: &[Expr], span: Span) -> ExprVal {
        if let Some(sig) = self.globals.funcs.get(&f.name).cloned() {
            return self.user_call(f, &sig, args, span);
        }
        self.builtin(f, args, span)
    }

    pub(super) fn arity(&mut self, f: &Ident, args: &[Expr], n: usize, span: Span) -> bool {
        if args.len() != n {
            let message = arity_message(&format!("`{}`", f.name), n, args.len());
            self.error(Diagnostic::error("E0124", message, span));
            return false;
        }
        true
    }

    /// The arity check of a call of a function of the program: the error
    /// shows the signature, and where the function is declared or which
    /// attribute generates it.
    fn user_arity(&mut self, f: &Ident, sig: &Signature, args: &[Expr], span: Span) -> bool {
        let n = sig.params.len();
        if args.len() == n {
            return true;
        }
        let message = arity_message(&sig.describe(&f.name), n, args.len());
        let mut d = Diagnostic::error("E0124", message, span);
        d = match &sig.generated {
            Some(_) => d
                .with_label(sig.decl, format!("`{}` is generated here", f.name))
                .with_note(format!("the generated signature is `{}`", sig.text)),
            None => d
                .with_label(sig.decl, format!("`{}` is defined here", f.name))
                .with_note(format!("the signature is `{}`", sig.text)),
        };
        let seed = sig.params.last().map(|p| p.name.name.as_str()) == Some("seed");
        if sig.generated.is_some() && seed && args.len() + 1 == n {
            d = d.with_note(
                "the last argument, `seed`, multiplies the derivatives: pass `1.0` for the gradient",
            );
        }
        self.error(d);
        false
    }

    pub(super) fn builtin(&mut self, f: &Ident, args: &[Expr], span: Span) -> ExprVal {
        match f.name.as_str() {
            "len" => {
                if !self.arity(f, args, 1, span) {
                    return ExprVal::Error;
                }
                let Some((a, ..)) = self.array_arg(&args[0]) else {
                    return ExprVal::Error;
                };
                self.span = span;
                ExprVal::Scalar(
                    self.ins1(InstData::ArrayLen { array: a }, Type::I64),
                    ScalarType::I64,
                )
            }
            "print" => {
                let mut vals = Vec::new();
                for a in args {
                    if let Some((v, _)) = self.scalar_expr(a, None) {
                        vals.push(v);
                    }
                }
                self.span = span;
                self.ins(InstData::Print { args: vals }, &[]);
                ExprVal::Void
            }
            "no_diff" => {
                if !self.arity(f, args, 1, span) {
                    return ExprVal::Error;
                }
                match self.scalar_expr(&args[0], None) {
                    Some((v, t)) => {
                        self.span = span;
                        let op = UnaryOp::NoDiff;
                        ExprVal::Scalar(
                            self.ins1(InstData::Unary { op, arg: v }, Type::Scalar(t)),
                            t,
                        )
                    }
                    None => ExprVal::Error,
                }
            }
            // `__adc_jacobian_len(n, jac)`: the length check of the code
            // `[jacobian]` generates (crates/frontend/src/jacobian.rs),
            // `lencheck.jac` (`__adc_hessian_len`, `[hessian]`'s,
            // `lencheck.hess`); `__adc_sparse_len(n, a)` and
            // `__adc_sparse_hessian_len(n, a)` those of sparse Jacobians
            // and Hessians, `lencheck.nnz`. A program cannot define a
            // function of these names (the prefix is reserved), so the call
            // is always one of them.
            JACOBIAN_LEN | HESSIAN_LEN | SPARSE_LEN | SPARSE_HESSIAN_LEN => {
                if !self.arity(f, args, 2, span) {
                    return ExprVal::Error;
                }
                let n = match self.scalar_expr(&args[0], None) {
                    Some((n, ScalarType::I64)) => n,
                    Some(_) => {
                        let message = format!("`{}` needs an `int` length first", f.name);
                        self.error(Diagnostic::error("E0125", message, args[0].span));
                        return ExprVal::Error;
                    }
                    None => return ExprVal::Error,
                };
                let Some((a, ..)) = self.array_arg(&args[1]) else {
                    return ExprVal::Error;
                };
                self.span = span;
                let what = match f.name.as_str() {
                    JACOBIAN_LEN => adc_ir::LenCheckOf::Jacobian,
                    HESSIAN_LEN => adc_ir::LenCheckOf::Hessian,
                    SPARSE_LEN => adc_ir::LenCheckOf::SparseJacobian,
                    _ => adc_ir::LenCheckOf::SparseHessian,
                };
                self.ins(InstData::LenCheck { args: [n, a], what }, &[]);
                ExprVal::Void
            }
            "min" | "max" => {
                if !self.arity(f, args, 2, span) {
                    return ExprVal::Error;
                }
                let Some((a, b)) = self.operands(&args[0], &args[1], None) else {
                    return ExprVal::Error;
                };
                if a.1 == ScalarType::Bool || b.1 == ScalarType::Bool {
                    self.error(Diagnostic::error(
                        "E0125",
                        format!("`{}` needs numbers", f.name),
                        span,
                    ));
                    return ExprVal::Error;
                }
                let Some((va, vb, t)) = self.unify(a, b, span) else {
                    return ExprVal::Error;
                };
                let op = if f.name == "min" {
                    BinaryOp::Min
                } else {
                    BinaryOp::Max
                };
                self.span = span;
                ExprVal::Scalar(
                    self.ins1(InstData::Binary { op, args: [va, vb] }, Type::Scalar(t)),
                    t,
                )
            }
            name => {
                let Some(func) = MathFunc::from_source_name(name) else {
                    if let Some(d) = self.unknown_function(name, f.span) {
                        self.error(d);
                    }
                    return ExprVal::Error;
                };
                if !self.arity(f, args, func.arity(), span) {
                    return ExprVal::Error;
                }
                let mut vals = Vec::new();
                for a in args {
                    match self.scalar_expr(a, None) {
                        Some(r) if r.1 != ScalarType::Bool => vals.push(r),
                        Some(_) => {
                            self.error(Diagnostic::error(
                                "E0125",
                                format!("`{name}` needs a number"),
                                a.span,
                            ));
                            return ExprVal::Error;
                        }
                        None => return ExprVal::Error,
                    }
                }
                // `float` when some argument is `float` and the others are
                // `float` or unsuffixed literals; `int` only for `abs`.
                let all_int = vals.iter().all(|r| r.1 == ScalarType::I64);
                let t = if func == MathFunc::Abs && all_int {
                    ScalarType::I64
                } else if vals.iter().any(|r| r.1 == ScalarType::F32)
                    && args
                        .iter()
                        .zip(&vals)
                        .all(|(a, r)| r.1 == ScalarType::F32 || is_float_literal(a))
                {
                    ScalarType::F32
                } else {
                    ScalarType::F64
                };
                let mut conv = Vec::new();
                for (a, (v, vt)) in args.iter().zip(vals) {
                    let v = if vt == ScalarType::F64 && t == ScalarType::F32 {
                        self.span = a.span;
                        self.ins1(InstData::Convert { arg: v }, Type::F32)
                    } else {
                        match self.coerce(v, vt, t, a.span) {
                            Some(v) => v,
                            None => return ExprVal::Error,
                        }
                    };
                    conv.push(v);
                }
                self.span = span;
                ExprVal::Scalar(
                    self.ins1(InstData::Math { func, args: conv }, Type::Scalar(t)),
                    t,
                )
            }
        }
    }

    pub(super) fn user_call(
        &mut self,
        f: &Ident,
        sig: &Signature,
        args: &[Expr],
        span: Span,
    ) -> ExprVal {
        if !self.user_arity(f, sig, args, span) {
            return ExprVal::Error;
        }
        let mut vals = Vec::new();
        // (slot, variable) pairs copied back after the call.
        let mut write_back: Vec<(Value, VarId, ScalarType)> = Vec::new();
        let mut ok = true;
        // Array arguments: (value, named array, written by the callee).
        let mut arrays: Vec<(Value, Value, bool)> = Vec::new();
        // `inout`/`out` scalar arguments, for the aliasing rule.
        let mut refs: Vec<(RefArg, Span)> = Vec::new();
        for (p, a) in sig.params.iter().zip(args) {
            let elem = super::scalar_of(p.ty);
            if p.is_array {
                match self.array_arg(a) {
                    Some((v, e, writable, base)) => {
                        arrays.push((v, base, p.mode != Mode::Value));
                        if e != elem {
                            self.error(Diagnostic::error(
                                "E0127",
                                format!(
                                    "expected an array of `{}`, found an array of `{}`",
                                    type_name(elem),
                                    type_name(e)
                                ),
                                a.span,
                            ));
                            ok = false;
                        } else if p.mode != Mode::Value && !writable {
                            self.error(
                                Diagnostic::error("E0121", format!("parameter `{}` writes to its array, but this array is read-only", p.name.name), a.span)
                                    .with_label(p.span, "declared here"),
                            );
                            ok = false;
                        }
                        vals.push(v);
                    }
                    None => ok = false,
                }
            } else if p.mode == Mode::Value {
                vals.push(self.expr_as(a, elem));
            } else {
                let Some(place) = self.place(a, true) else {
                    ok = false;
                    continue;
                };
                if place.ty() != elem {
                    self.error(Diagnostic::error(
                        "E0127",
                        format!(
                            "`{}` parameter `{}` needs a `{}` variable, found `{}`",
                            if p.mode == Mode::Out { "out" } else { "inout" },
                            p.name.name,
                            type_name(elem),
                            type_name(place.ty())
                        ),
                        a.span,
                    ));
                    ok = false;
                    continue;
                }
                self.span = a.span;
                refs.push((
                    match place {
                        Place::Var(var, _) => RefArg::Var(var),
                        Place::Ref(r, _) => RefArg::Ref(r),
                        Place::Elem(array, index, _) => RefArg::Elem { array, index },
                    },
                    a.span,
                ));
                let r = match place {
                    Place::Var(var, t) => {
                        let slot = self.ins1(InstData::Slot, Type::Ref(t));
                        let cur = self.var(var);
                        self.ins(
                            InstData::RefStore {
                                ptr: slot,
                                value: cur,
                            },
                            &[],
                        );
                        write_back.push((slot, var, t));
                        slot
                    }
                    Place::Ref(r, _) => r,
                    Place::Elem(arr, i, t) => self.ins1(
                        InstData::ElemRef {
                            array: arr,
                            index: i,
                        },
                        Type::Ref(t),
                    ),
                };
                vals.push(r);
            }
        }
        if !ok || !self.check_aliasing(&arrays, &refs, span) {
            return ExprVal::Error;
        }
        self.span = span;
        // A generated derivative's shadows: the length check at the call
        // names the call in its runtime error (the derivative's own check,
        // for callers from C, names the attribute).
        for &(array, shadow) in &sig.shadow_pairs {
            if let (Some(&a), Some(&s)) = (vals.get(array), vals.get(shadow)) {
                self.ins(
                    InstData::LenCheck {
                        args: [a, s],
                        what: adc_ir::LenCheckOf::Shadow,
                    },
                    &[],
                );
            }
        }
        let types = sig.ret.types();
        let results = self.ins(
            InstData::Call {
                func: sig.id,
                args: vals,
            },
            &types,
        );
        for (slot, var, t) in write_back {
            let v = self.ins1(InstData::RefLoad { ptr: slot }, Type::Scalar(t));
            self.set_var(var, v);
        }
        match &sig.ret {
            RetTy::Void => ExprVal::Void,
            RetTy::Scalar(t) => ExprVal::Scalar(results[0], *t),
            RetTy::Tuple(ts) => ExprVal::Tuple(results, ts.clone()),
        }
    }
}

/// "`f` takes 2 arguments, but 1 was given".
fn arity_message(callee: &str, want: usize, got: usize) -> String {
    format!(
        "{callee} takes {want} argument{}, but {got} {} given",
        if want == 1 { "" } else { "s" },
        if got == 1 { "was" } else { "were" }
    )
}

/// The built-in the code of `[jacobian]` checks `len(jac)` with.
pub(crate) const JACOBIAN_LEN: &str = "__adc_jacobian_len";
/// The built-in the code of `[hessian]` checks `len(hess)` with.
pub(crate) const HESSIAN_LEN: &str = "__adc_hessian_len";
/// The built-in the code of `[jacobian(NAME, sparse)]` checks that an
/// array holds at least the entries it needs with (`lencheck.nnz`).
pub(crate) const SPARSE_LEN: &str = "__adc_sparse_len";
/// The same for `[hessian(NAME, sparse)]` (`lencheck.nnz.hess`).
pub(crate) const SPARSE_HESSIAN_LEN: &str = "__adc_sparse_hessian_len";
/// `T a[__adc_uninit(n)]`, only as a local array's length: an array of
/// `n` elements not zero-filled (`new.uninit`), for generated code that
/// stores every element before reading it. Elsewhere an unknown function.
pub(crate) const UNINIT: &str = "__adc_uninit";
