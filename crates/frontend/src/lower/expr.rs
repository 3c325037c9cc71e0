//! Expressions: typing with the conversion rules of docs/language.md#types (calls
//! are in `call.rs`, places in `place.rs`, function attributes in
//! `attrs.rs`).
//!
//! Implicit conversions: `int -> float -> double`, per operation. An
//! unsuffixed floating literal adapts to `float` when its value is wanted as
//! a `float` (an initializer, argument or return of type `float`, and the
//! operations computing one); elsewhere it is a `double`, as in C.

use super::items::is_float_literal;
use super::{type_name, Binding, FnLowerer, VarId};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{
    BinaryOp, BlockCall, CmpCond, Constant, InstData, ScalarType, Span, Type, UnaryOp, Value,
};

pub(crate) enum Place {
    Var(VarId, ScalarType),
    Ref(Value, ScalarType),
    Elem(Value, Value, ScalarType),
}

impl Place {
    pub(crate) fn ty(&self) -> ScalarType {
        match self {
            Place::Var(_, t) | Place::Ref(_, t) | Place::Elem(_, _, t) => *t,
        }
    }
}

pub(crate) enum ExprVal {
    Scalar(Value, ScalarType),
    Void,
    Tuple(Vec<Value>, Vec<ScalarType>),
    Error,
}

pub(crate) fn rank(t: ScalarType) -> u8 {
    match t {
        ScalarType::Bool => 0,
        ScalarType::I64 => 1,
        ScalarType::F32 => 2,
        ScalarType::F64 => 3,
    }
}

pub(crate) fn float_literal(text: &str, span: Span) -> Result<Constant, Diagnostic> {
    let bad = || Diagnostic::error("E0113", format!("invalid number `{text}`"), span);
    match text.strip_suffix(['f', 'F']) {
        Some(t) => t.parse::<f32>().map(Constant::F32).map_err(|_| bad()),
        None => text.parse::<f64>().map(Constant::F64).map_err(|_| bad()),
    }
}

impl FnLowerer<'_> {
    /// Converts `v` from `from` to `to` where docs/language.md#types allows it implicitly.
    pub(crate) fn coerce(
        &mut self,
        v: Value,
        from: ScalarType,
        to: ScalarType,
        span: Span,
    ) -> Option<Value> {
        if from == to {
            return Some(v);
        }
        let widening = from != ScalarType::Bool && to != ScalarType::Bool && rank(from) < rank(to);
        if widening {
            self.span = span;
            return Some(self.ins1(InstData::Convert { arg: v }, Type::Scalar(to)));
        }
        self.error(
            Diagnostic::error(
                "E0110",
                format!("expected `{}`, found `{}`", type_name(to), type_name(from)),
                span,
            )
            .with_help(format!("convert explicitly: `{}(...)`", type_name(to))),
        );
        None
    }

    /// Lowers `e` and converts it to `ty`; on error returns a zero of `ty`.
    pub(crate) fn expr_as(&mut self, e: &Expr, ty: ScalarType) -> Value {
        let got = self
            .scalar_expr(e, Some(ty))
            .and_then(|(v, t)| self.coerce(v, t, ty, e.span));
        match got {
            Some(v) => v,
            None => self.zero(ty),
        }
    }

    pub(crate) fn scalar_expr(
        &mut self,
        e: &Expr,
        expected: Option<ScalarType>,
    ) -> Option<(Value, ScalarType)> {
        match self.expr(e, expected) {
            ExprVal::Scalar(v, t) => Some((v, t)),
            ExprVal::Void => {
                self.error(Diagnostic::error(
                    "E0114",
                    "this expression has no value (`void`)",
                    e.span,
                ));
                None
            }
            ExprVal::Tuple(..) => {
                self.error(
                    Diagnostic::error(
                        "E0114",
                        "a tuple can only be returned or destructured",
                        e.span,
                    )
                    .with_help("bind it with `auto [a, b] = ...;`"),
                );
                None
            }
            ExprVal::Error => None,
        }
    }

    /// Lowers a call that returns a tuple, or returns `None` (no diagnostic)
    /// when `e` is something else.
    pub(crate) fn tuple_call(&mut self, e: &Expr) -> Option<(Vec<Value>, Vec<ScalarType>)> {
        if !matches!(e.kind, ExprKind::Call(..)) {
            self.expr(e, None);
            return None;
        }
        match self.expr(e, None) {
            ExprVal::Tuple(vs, ts) => Some((vs, ts)),
            _ => None,
        }
    }

    pub(crate) fn expr(&mut self, e: &Expr, expected: Option<ScalarType>) -> ExprVal {
        self.span = e.span;
        let scalar = |v: Value, t: ScalarType| ExprVal::Scalar(v, t);
        match &e.kind {
            ExprKind::Int(i) => scalar(self.constant(Constant::I64(*i)), ScalarType::I64),
            ExprKind::Float(text) => match float_literal(text, e.span) {
                Ok(Constant::F64(x)) if expected == Some(ScalarType::F32) => {
                    scalar(self.constant(Constant::F32(x as f32)), ScalarType::F32)
                }
                Ok(c) => scalar(self.constant(c), c.ty()),
                Err(d) => {
                    self.error(d);
                    ExprVal::Error
                }
            },
            ExprKind::Bool(b) => scalar(self.constant(Constant::Bool(*b)), ScalarType::Bool),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(Binding::Local { var, ty, .. }) => scalar(self.var(var), ty),
                Some(Binding::Ref { value, ty }) => scalar(
                    self.ins1(InstData::RefLoad { ptr: value }, Type::Scalar(ty)),
                    ty,
                ),
                Some(Binding::Const(c)) => scalar(self.constant(c), c.ty()),
                Some(Binding::Array { .. }) => {
                    self.error(
                        Diagnostic::error(
                            "E0115",
                            format!("`{name}` is an array, not a value"),
                            e.span,
                        )
                        .with_help("index it (`a[i]`), take `len(a)`, or pass it to a function"),
                    );
                    ExprVal::Error
                }
                None => {
                    self.error(self.unknown_name(name, e.span));
                    ExprVal::Error
                }
            },
            ExprKind::Unary(op, a) => {
                let Some((v, t)) = self.scalar_expr(a, expected) else {
                    return ExprVal::Error;
                };
                self.span = e.span;
                match (op, t) {
                    (UnOp::Neg, ScalarType::Bool)
                    | (UnOp::Not, ScalarType::I64 | ScalarType::F32 | ScalarType::F64) => {
                        let sym = if *op == UnOp::Neg { "-" } else { "!" };
                        self.error(Diagnostic::error(
                            "E0117",
                            format!("cannot apply `{sym}` to `{}`", type_name(t)),
                            e.span,
                        ));
                        ExprVal::Error
                    }
                    (UnOp::Neg, _) => scalar(
                        self.ins1(
                            InstData::Unary {
                                op: UnaryOp::Neg,
                                arg: v,
                            },
                            Type::Scalar(t),
                        ),
                        t,
                    ),
                    (UnOp::Not, _) => scalar(
                        self.ins1(
                            InstData::Unary {
                                op: UnaryOp::Not,
                                arg: v,
                            },
                            Type::BOOL,
                        ),
                        t,
                    ),
                }
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                self.short_circuit(*op, a, b, e.span)
            }
            ExprKind::Binary(op, a, b) => {
                let Some(((va, ta), (vb, tb))) = self.operands(a, b, expected) else {
                    return ExprVal::Error;
                };
                self.span = e.span;
                let r = match op {
                    BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                        self.compare(*op, (va, ta), (vb, tb), e.span)
                    }
                    _ => self.arith(*op, (va, ta), (vb, tb), e.span),
                };
                match r {
                    Some((v, t)) => scalar(v, t),
                    None => ExprVal::Error,
                }
            }
            ExprKind::Ternary(c, a, b) => self.ternary(c, a, b, expected, e.span),
            ExprKind::Call(f, args) => self.call(f, args, e.span),
            ExprKind::Cast(t, a) => {
                let to = super::scalar_of(*t);
                // `float(y * 0.1)` computes in `double` and rounds once, as
                // C's `(float)(y * 0.1)`: the operand is not wanted as a
                // `float`, so its literals stay `double`.
                let want = if to == ScalarType::F32 {
                    None
                } else {
                    Some(to)
                };
                let Some((v, from)) = self.scalar_expr(a, want) else {
                    return ExprVal::Error;
                };
                self.span = e.span;
                if from == to {
                    scalar(v, to)
                } else {
                    scalar(
                        self.ins1(InstData::Convert { arg: v }, Type::Scalar(to)),
                        to,
                    )
                }
            }
            ExprKind::Index(..) => match self.place(e, false) {
                Some(p) => {
                    let t = p.ty();
                    scalar(self.read_place(&p), t)
                }
                None => ExprVal::Error,
            },
            ExprKind::View(..) => {
                self.error(
                    Diagnostic::error(
                        "E0128",
                        "an array view can only be passed to a function",
                        e.span,
                    )
                    .with_note("views are call arguments: `f(a[lo..hi])`"),
                );
                ExprVal::Error
            }
            ExprKind::Tuple(_) => {
                self.error(Diagnostic::error(
                    "E0114",
                    "a tuple can only be returned",
                    e.span,
                ));
                ExprVal::Error
            }
            ExprKind::Error => ExprVal::Error,
        }
    }

    /// Lowers two operands; an untyped float literal takes the other's type.
    pub(super) fn operands(
        &mut self,
        a: &Expr,
        b: &Expr,
        expected: Option<ScalarType>,
    ) -> Option<((Value, ScalarType), (Value, ScalarType))> {
        // An unsuffixed literal meeting a `float` operand stays `double`
        // (C's promotion: `y * 0.1` and `y + 1e-10` are `double`) unless
        // the operation's value is wanted as a `float` (`float z = y *
        // 0.5;`, a `float` argument or return), where it adapts instead of
        // asking for a cast.
        let hint = |other: Option<(Value, ScalarType)>| match other.map(|r| r.1) {
            Some(ScalarType::F32) if expected != Some(ScalarType::F32) => expected,
            t => t.or(expected),
        };
        if is_float_literal(a) && !is_float_literal(b) {
            let rb = self.scalar_expr(b, expected);
            let ra = self.scalar_expr(a, hint(rb));
            Some((ra?, rb?))
        } else {
            let ra = self.scalar_expr(a, expected);
            let rb = self.scalar_expr(b, hint(ra));
            Some((ra?, rb?))
        }
    }

    pub(super) fn unify(
        &mut self,
        a: (Value, ScalarType),
        b: (Value, ScalarType),
        span: Span,
    ) -> Option<(Value, Value, ScalarType)> {
        let t = if rank(a.1) >= rank(b.1) { a.1 } else { b.1 };
        let va = self.coerce(a.0, a.1, t, span)?;
        let vb = self.coerce(b.0, b.1, t, span)?;
        Some((va, vb, t))
    }

    pub(crate) fn arith(
        &mut self,
        op: BinOp,
        a: (Value, ScalarType),
        b: (Value, ScalarType),
        span: Span,
    ) -> Option<(Value, ScalarType)> {
        if a.1 == ScalarType::Bool || b.1 == ScalarType::Bool {
            self.error(Diagnostic::error(
                "E0118",
                format!(
                    "cannot apply `{}` to `{}` and `{}`",
                    op.spelling(),
                    type_name(a.1),
                    type_name(b.1)
                ),
                span,
            ));
            return None;
        }
        let (va, vb, t) = self.unify(a, b, span)?;
        let bop = match op {
            BinOp::Add => BinaryOp::Add,
            BinOp::Sub => BinaryOp::Sub,
            BinOp::Mul => BinaryOp::Mul,
            BinOp::Div => BinaryOp::Div,
            BinOp::Rem if t == ScalarType::I64 => BinaryOp::Rem,
            BinOp::Rem => {
                self.error(
                    Diagnostic::error("E0118", "`%` needs `int` operands", span)
                        .with_help("use `fmod` for floating-point remainders"),
                );
                return None;
            }
            _ => return None,
        };
        self.span = span;
        Some((
            self.ins1(
                InstData::Binary {
                    op: bop,
                    args: [va, vb],
                },
                Type::Scalar(t),
            ),
            t,
        ))
    }

    fn compare(
        &mut self,
        op: BinOp,
        a: (Value, ScalarType),
        b: (Value, ScalarType),
        span: Span,
    ) -> Option<(Value, ScalarType)> {
        let cond = match op {
            BinOp::Eq => CmpCond::Eq,
            BinOp::Ne => CmpCond::Ne,
            BinOp::Lt => CmpCond::Lt,
            BinOp::Le => CmpCond::Le,
            BinOp::Gt => CmpCond::Gt,
            _ => CmpCond::Ge,
        };
        let both_bool = a.1 == ScalarType::Bool && b.1 == ScalarType::Bool;
        let any_bool = a.1 == ScalarType::Bool || b.1 == ScalarType::Bool;
        if (any_bool && !both_bool) || (both_bool && !matches!(cond, CmpCond::Eq | CmpCond::Ne)) {
            self.error(Diagnostic::error(
                "E0118",
                format!(
                    "cannot compare `{}` with `{}` by `{}`",
                    type_name(a.1),
                    type_name(b.1),
                    op.spelling()
                ),
                span,
            ));
            return None;
        }
        let (va, vb, _) = self.unify(a, b, span)?;
        self.span = span;
        Some((
            self.ins1(
                InstData::Cmp {
                    cond,
                    args: [va, vb],
                },
                Type::BOOL,
            ),
            ScalarType::Bool,
        ))
    }

    fn short_circuit(&mut self, op: BinOp, a: &Expr, b: &Expr, span: Span) -> ExprVal {
        let va = self.expr_as(a, ScalarType::Bool);
        self.span = span;
        let rhs = self.plain_block();
        let join = self.new_join(&[Type::BOOL]);
        let short = self.constant(Constant::Bool(op == BinOp::Or));
        let skip = self.call_args(&join, &[short]);
        let to_rhs = BlockCall {
            block: rhs,
            args: vec![],
        };
        let (then_dest, else_dest) = if op == BinOp::And {
            (to_rhs, skip)
        } else {
            (skip, to_rhs)
        };
        self.ins(
            InstData::Branch {
                cond: va,
                then_dest,
                else_dest,
            },
            &[],
        );
        self.cur = rhs;
        let vb = self.expr_as(b, ScalarType::Bool);
        self.span = span;
        self.jump(&join, &[vb]);
        let r = self.enter(&join);
        ExprVal::Scalar(r[0], ScalarType::Bool)
    }

    fn ternary(
        &mut self,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        expected: Option<ScalarType>,
        span: Span,
    ) -> ExprVal {
        let vc = self.expr_as(c, ScalarType::Bool);
        self.span = span;
        let (then_block, else_block) = self.branch_two_ways(vc);
        let entry_values = self.var_values.clone();
        self.cur = then_block;
        // A literal arm takes the type the `?:` initialises (`float f() {
        // return c ? 0.1 : 0.2; }`, `float y = c ? 0.5 : x;`).
        let hint_a = expected;
        let ra = self.scalar_expr(a, hint_a);
        let (then_end, then_values) = (self.cur, self.var_values.clone());
        self.restore_values(entry_values);
        self.cur = else_block;
        let rb = self.scalar_expr(b, ra.map(|r| r.1).or(expected));
        let (Some(ra), Some(rb)) = (ra, rb) else {
            return ExprVal::Error;
        };
        let t = if rank(ra.1) >= rank(rb.1) { ra.1 } else { rb.1 };
        if (ra.1 == ScalarType::Bool) != (rb.1 == ScalarType::Bool) {
            self.error(Diagnostic::error(
                "E0119",
                format!(
                    "the arms of `?:` have types `{}` and `{}`",
                    type_name(ra.1),
                    type_name(rb.1)
                ),
                span,
            ));
            return ExprVal::Error;
        }
        let Some(vb) = self.coerce(rb.0, rb.1, t, b.span) else {
            return ExprVal::Error;
        };
        let join = self.new_join(&[Type::Scalar(t)]);
        self.span = span;
        self.jump(&join, &[vb]);
        let dead = self.cur;
        self.cur = then_end;
        self.restore_values(then_values);
        let Some(va) = self.coerce(ra.0, ra.1, t, a.span) else {
            return ExprVal::Error;
        };
        self.span = span;
        let dest = self.call_args(&join, &[va]);
        self.ins(InstData::Jump { dest }, &[]);
        self.cur = dead;
        let r = self.enter(&join);
        ExprVal::Scalar(r[0], t)
    }
}
