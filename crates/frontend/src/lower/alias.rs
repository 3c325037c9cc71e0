//! The aliasing rule at calls (docs/arrays.md#the-aliasing-rule, docs/arrays.md): the
//! arguments of one call share no storage where one of them is written,
//! so a callee (and its derivatives) may assume that writing one parameter
//! changes no other.
//!
//! - Two array arguments on the same named array, one of them writable:
//!   a run-time `AliasCheck` (arrays of different names cannot overlap:
//!   distinct parameters were checked by the caller's caller, locals are
//!   fresh).
//! - An `inout`/`out` scalar argument that is an element `a[i]`: the
//!   one-element view `a[i..i + 1]` is checked like a writable array
//!   against every array argument and element on `a`.
//! - The same variable or `inout` parameter passed by reference twice:
//!   error E0129 (it is certain; the callee would see two copies, or one
//!   location through two names).

use super::{FnLowerer, VarId};
use crate::diag::Diagnostic;
use adc_ir::{BinaryOp, Constant, InstData, Span, Type, Value};

/// An `inout`/`out` scalar argument: where it lives.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefArg {
    /// A local variable, passed through a slot.
    Var(VarId),
    /// The caller's own `inout`/`out` parameter.
    Ref(Value),
    /// Element `index` of the named array `array`.
    Elem { array: Value, index: Value },
}

impl FnLowerer<'_> {
    /// Checks a call's arguments against the aliasing rule: `arrays` are
    /// (argument, the named array it is on, written by the callee);
    /// `refs` the by-reference scalars with their spans. Returns false
    /// after an error.
    pub(crate) fn check_aliasing(
        &mut self,
        arrays: &[(Value, Value, bool)],
        refs: &[(RefArg, Span)],
        span: Span,
    ) -> bool {
        let mut ok = true;
        for (k, &(r, at)) in refs.iter().enumerate() {
            if matches!(r, RefArg::Elem { .. }) {
                continue;
            }
            if let Some(&(_, first)) = refs[..k].iter().find(|(q, _)| *q == r) {
                self.error(
                    Diagnostic::error(
                        "E0129",
                        "this variable is already passed by reference to this call; \
                         arguments that a call writes may not alias",
                        at,
                    )
                    .with_label(first, "first passed here"),
                );
                ok = false;
            }
        }
        if !ok {
            return false;
        }
        let mut checked: Vec<(Value, Value, bool)> = arrays.to_vec();
        let on =
            |q: &RefArg, base: Value| matches!(q, RefArg::Elem { array, .. } if *array == base);
        for (k, &(r, at)) in refs.iter().enumerate() {
            let RefArg::Elem { array, index } = r else {
                continue;
            };
            let shares_base = arrays.iter().any(|&(_, base, _)| base == array)
                || refs
                    .iter()
                    .enumerate()
                    .any(|(j, (q, _))| j != k && on(q, array));
            if !shares_base {
                continue;
            }
            // `a[i..i + 1]`: `index` was checked in bounds by the
            // element's reference, so the view is too.
            self.span = at;
            let one = self.constant(Constant::I64(1));
            let end = self.ins1(
                InstData::Binary {
                    op: BinaryOp::Add,
                    args: [index, one],
                },
                Type::I64,
            );
            let ty = self.func.dfg.value_type(array);
            let view = self.ins1(
                InstData::ArrayView {
                    array,
                    lo: index,
                    hi: end,
                },
                ty,
            );
            checked.push((view, array, true));
        }
        for (k, &(a, base_a, writes_a)) in checked.iter().enumerate() {
            for &(b, base_b, writes_b) in &checked[k + 1..] {
                if base_a == base_b && (writes_a || writes_b) {
                    self.span = span;
                    self.ins(InstData::AliasCheck { args: [a, b] }, &[]);
                }
            }
        }
        true
    }
}
