//! Places (assignable locations: variables, references, array elements)
//! and array arguments.

use super::expr::*;
use super::{ArraySource, Binding, FnLowerer};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{InstData, ScalarType, Type, Value};

impl FnLowerer<'_> {
    /// Resolves an assignable (or, with `for_write == false`, readable) place.
    pub(crate) fn place(&mut self, e: &Expr, for_write: bool) -> Option<Place> {
        match &e.kind {
            ExprKind::Var(name) => match self.lookup_for_write(name) {
                Some(Binding::Local { var, ty, is_const }) => {
                    if is_const && for_write {
                        self.error(Diagnostic::error(
                            "E0120",
                            format!("cannot assign to constant `{name}`"),
                            e.span,
                        ));
                        return None;
                    }
                    Some(Place::Var(var, ty))
                }
                Some(Binding::Ref { value, ty }) => Some(Place::Ref(value, ty)),
                Some(Binding::Const(_)) => {
                    self.error(Diagnostic::error(
                        "E0120",
                        format!("cannot assign to constant `{name}`"),
                        e.span,
                    ));
                    None
                }
                Some(Binding::Array { .. }) => {
                    self.error(Diagnostic::error(
                        "E0115",
                        format!("cannot assign to array `{name}` as a whole"),
                        e.span,
                    ));
                    None
                }
                None => {
                    self.error(self.unknown_name(name, e.span));
                    None
                }
            },
            ExprKind::Index(arr, idx) => {
                let (array, elem, writable) = self.array_named(arr)?;
                if for_write && !writable {
                    self.error(
                        Diagnostic::error(
                            "E0121",
                            "cannot write to an element of a read-only array",
                            e.span,
                        )
                        .with_help("declare the parameter `inout` or `out` to write to it"),
                    );
                    return None;
                }
                let i = self.expr_as(idx, ScalarType::I64);
                self.span = e.span;
                Some(Place::Elem(array, i, elem))
            }
            _ => {
                self.error(Diagnostic::error(
                    "E0122",
                    "this expression is not assignable",
                    e.span,
                ));
                None
            }
        }
    }

    pub(crate) fn read_place(&mut self, p: &Place) -> Value {
        match *p {
            Place::Var(var, _) => self.var(var),
            Place::Ref(r, t) => self.ins1(InstData::RefLoad { ptr: r }, Type::Scalar(t)),
            Place::Elem(a, i, t) => self.ins1(
                InstData::Load {
                    array: a,
                    index: i,
                    checked: true,
                },
                Type::Scalar(t),
            ),
        }
    }

    pub(crate) fn write_place(&mut self, p: &Place, v: Value) {
        match *p {
            Place::Var(var, _) => self.set_var(var, v),
            Place::Ref(r, _) => {
                self.ins(InstData::RefStore { ptr: r, value: v }, &[]);
            }
            Place::Elem(a, i, _) => {
                self.ins(
                    InstData::Store {
                        array: a,
                        index: i,
                        value: v,
                        checked: true,
                    },
                    &[],
                );
            }
        }
    }

    /// An array argument of a call: a named array or a view of one
    /// (`a[lo..hi]`, `a[lo..]`), as (value, element type, writable, the
    /// named array's value).
    pub(crate) fn array_arg(&mut self, e: &Expr) -> Option<(Value, ScalarType, bool, Value)> {
        let ExprKind::View(base, lo, hi) = &e.kind else {
            return self.array_named(e).map(|(v, t, w)| (v, t, w, v));
        };
        let (array, elem, writable) = self.array_named(base)?;
        let lo = self.expr_as(lo, ScalarType::I64);
        let hi = match hi {
            Some(hi) => self.expr_as(hi, ScalarType::I64),
            None => {
                self.span = e.span;
                self.ins1(InstData::ArrayLen { array }, Type::I64)
            }
        };
        self.span = e.span;
        let view = self.ins1(InstData::ArrayView { array, lo, hi }, Type::Array(elem));
        Some((view, elem, writable, array))
    }

    /// An array named by `e`: (value, element type, writable).
    pub(super) fn array_named(&mut self, e: &Expr) -> Option<(Value, ScalarType, bool)> {
        if let ExprKind::Var(name) = &e.kind {
            match self.lookup(name) {
                Some(Binding::Array {
                    source,
                    elem,
                    writable,
                }) => {
                    let v = match source {
                        ArraySource::Param(v) => v,
                        ArraySource::Local(var) => self.var(var),
                    };
                    return Some((v, elem, writable));
                }
                None => {
                    self.error(self.unknown_name(name, e.span));
                    return None;
                }
                Some(_) => (),
            }
        }
        self.error(Diagnostic::error("E0123", "expected an array", e.span));
        None
    }
}
