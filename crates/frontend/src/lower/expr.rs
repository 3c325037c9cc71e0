//! Expressions: typing with the conversion rules of LANGUAGE.md §2, calls,
//! built-ins, places (assignable locations) and function attributes.
//!
//! Implicit conversions: `int -> float -> double`, per operation. An
//! unsuffixed floating literal adapts to `float` when its context (the other
//! operand, the declared or parameter type) is `float`.

use super::alias::RefArg;
use super::items::{is_float_literal, Globals, RetTy};
use super::{type_name, ArraySource, Binding, FnLowerer, VarId};
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{
    Activity, AdMode, BinaryOp, BlockCall, CmpCond, Constant, DerivSpec, InstData, MathFunc,
    ScalarType, Span, Type, UnaryOp, Value,
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
    match text.strip_suffix('f') {
        Some(t) => t.parse::<f32>().map(Constant::F32).map_err(|_| bad()),
        None => text.parse::<f64>().map(Constant::F64).map_err(|_| bad()),
    }
}

impl FnLowerer<'_> {
    /// Converts `v` from `from` to `to` where §2 allows it implicitly.
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
            .with_note(format!("convert explicitly: `{}(...)`", type_name(to))),
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
                    .with_note("bind it with `auto [a, b] = ...;`"),
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
                        .with_note("index it (`a[i]`), take `len(a)`, or pass it to a function"),
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
                let Some((v, from)) = self.scalar_expr(a, Some(to)) else {
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
    fn operands(
        &mut self,
        a: &Expr,
        b: &Expr,
        expected: Option<ScalarType>,
    ) -> Option<((Value, ScalarType), (Value, ScalarType))> {
        if is_float_literal(a) && !is_float_literal(b) {
            let rb = self.scalar_expr(b, expected);
            let ra = self.scalar_expr(a, rb.map(|r| r.1).or(expected));
            Some((ra?, rb?))
        } else {
            let ra = self.scalar_expr(a, expected);
            let rb = self.scalar_expr(b, ra.map(|r| r.1).or(expected));
            Some((ra?, rb?))
        }
    }

    fn unify(
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
                        .with_note("use `fmod` for floating-point remainders"),
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
                        .with_note("declare the parameter `inout` or `out` to write to it"),
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
    fn array_named(&mut self, e: &Expr) -> Option<(Value, ScalarType, bool)> {
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

    fn call(&mut self, f: &Ident, args: &[Expr], span: Span) -> ExprVal {
        if let Some(sig) = self.globals.funcs.get(&f.name).cloned() {
            return self.user_call(f, &sig, args, span);
        }
        self.builtin(f, args, span)
    }

    fn arity(&mut self, f: &Ident, args: &[Expr], n: usize, span: Span) -> bool {
        if args.len() != n {
            self.error(Diagnostic::error(
                "E0124",
                format!(
                    "`{}` takes {n} argument{}, but {} were given",
                    f.name,
                    if n == 1 { "" } else { "s" },
                    args.len()
                ),
                span,
            ));
            return false;
        }
        true
    }

    fn builtin(&mut self, f: &Ident, args: &[Expr], span: Span) -> ExprVal {
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
                let Some(func) = MathFunc::from_name(name) else {
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

    fn user_call(
        &mut self,
        f: &Ident,
        sig: &super::items::Signature,
        args: &[Expr],
        span: Span,
    ) -> ExprVal {
        if !self.arity(f, args, sig.params.len(), span) {
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

/// What a well-formed function attribute asks for.
pub(crate) enum AttrRequest {
    /// Generate function `name` by differentiating the function.
    Generate(Ident, DerivSpec),
    /// Use `g` as the function's custom derivative in this mode.
    Custom(AdMode, Ident),
    /// `[checkpoint]`: reverse-mode callers re-run the function.
    Checkpoint,
}

/// Checks a function attribute (§5) against the signature it stands on.
pub(crate) fn check_function_attr(
    f: &FuncDecl,
    a: &Attr,
    globals: &Globals,
    diags: &mut Vec<Diagnostic>,
    claim_name: &mut dyn FnMut(&Ident, &mut Vec<Diagnostic>) -> bool,
) -> Option<AttrRequest> {
    let name = a.name.name.as_str();
    let args = a.args.clone().unwrap_or_default();
    match name {
        "autodiff_reverse" | "autodiff_forward" => {
            let reverse = name == "autodiff_reverse";
            let Some(AttrArg::Ident(gen)) = args.first() else {
                diags.push(Diagnostic::error(
                    "E0301",
                    format!("`{name}` needs the generated function's name first"),
                    a.span,
                ));
                return None;
            };
            let has_ret = f.ret != ReturnType::Void;
            let want = f.params.len() + usize::from(has_ret);
            let acts = &args[1..];
            if acts.len() != want {
                diags.push(
                    Diagnostic::error("E0302", format!("`{}` has {} parameter{}{}, so `{name}` needs {want} activities, found {}", f.name.name, f.params.len(), if f.params.len() == 1 { "" } else { "s" }, if has_ret { " and a return value" } else { "" }, acts.len()), a.span)
                        .with_note("give one activity per parameter, then one for the return value (none for `void`)"),
                );
                return None;
            }
            let mut ok = true;
            let mut activities = Vec::new();
            for (i, act) in acts.iter().enumerate() {
                let AttrArg::Ident(act) = act else {
                    diags.push(Diagnostic::error("E0303", "expected an activity", a.span));
                    ok = false;
                    continue;
                };
                let allowed: &[&str] = if i < f.params.len() {
                    let p = &f.params[i];
                    let float = matches!(p.ty, BaseType::Double | BaseType::Float);
                    let by_ref = p.is_array || p.mode != Mode::Value;
                    match (reverse, float, by_ref) {
                        (_, false, _) => &["Const"],
                        (true, true, false) => &["Const", "Active"],
                        (true, true, true) => &["Const", "Duplicated", "DuplicatedOnly"],
                        (false, true, _) => &["Const", "Dual", "DualOnly"],
                    }
                } else {
                    match (&f.ret, reverse) {
                        (ReturnType::Base(BaseType::Double | BaseType::Float), true) => {
                            &["Const", "Active", "ActiveOnly"]
                        }
                        (ReturnType::Base(BaseType::Double | BaseType::Float), false) => {
                            &["Const", "Dual", "DualOnly"]
                        }
                        _ => &["Const"],
                    }
                };
                activities.push(Activity::from_name(&act.name).unwrap_or(Activity::Const));
                if !allowed.contains(&act.name.as_str()) {
                    let what = if i < f.params.len() {
                        format!("parameter `{}`", f.params[i].name.name)
                    } else {
                        "the return value".to_string()
                    };
                    diags.push(
                        with_suggestion(
                            Diagnostic::error(
                                "E0303",
                                format!("activity `{}` does not fit {what}", act.name),
                                act.span,
                            ),
                            &act.name,
                            allowed.iter().copied(),
                        )
                        .with_note(format!("allowed here: {}", allowed.join(", "))),
                    );
                    ok = false;
                }
            }
            if ok && claim_name(gen, diags) {
                let ret = if has_ret { activities.pop() } else { None };
                return Some(AttrRequest::Generate(
                    gen.clone(),
                    DerivSpec {
                        mode: if reverse {
                            AdMode::Reverse
                        } else {
                            AdMode::Forward
                        },
                        of: f.name.name.clone(),
                        params: activities,
                        ret: ret.unwrap_or(Activity::Const),
                    },
                ));
            }
            None
        }
        "reverse_derivative" | "forward_derivative" => match args.as_slice() {
            [AttrArg::Ident(g)] if globals.funcs.contains_key(&g.name) => {
                let mode = if name == "reverse_derivative" {
                    AdMode::Reverse
                } else {
                    AdMode::Forward
                };
                Some(AttrRequest::Custom(mode, g.clone()))
            }
            [AttrArg::Ident(g)] => {
                diags.push(with_suggestion(
                    Diagnostic::error(
                        "E0306",
                        format!("cannot find function `{}`", g.name),
                        g.span,
                    ),
                    &g.name,
                    globals.funcs.keys().map(String::as_str),
                ));
                None
            }
            _ => {
                diags.push(Diagnostic::error(
                    "E0306",
                    format!("`{name}` takes the name of one function"),
                    a.span,
                ));
                None
            }
        },
        "checkpoint" if a.args.is_none() => Some(AttrRequest::Checkpoint),
        "checkpoint" => {
            diags.push(Diagnostic::error(
                "E0305",
                "a function's `checkpoint` takes no arguments",
                a.span,
            ));
            None
        }
        other => {
            diags.push(with_suggestion(
                Diagnostic::error("E0304", format!("unknown attribute `{other}`"), a.name.span),
                other,
                FUNCTION_ATTRIBUTES.iter().copied(),
            ));
            None
        }
    }
}

/// The attributes a function may carry (§5).
const FUNCTION_ATTRIBUTES: &[&str] = &[
    "autodiff_reverse",
    "autodiff_forward",
    "reverse_derivative",
    "forward_derivative",
    "checkpoint",
];

/// `d` with a "did you mean" note when a candidate is close to `name`.
pub(crate) fn with_suggestion<'a>(
    d: Diagnostic,
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Diagnostic {
    match crate::suggest::did_you_mean(name, candidates) {
        Some(note) => d.with_note(note),
        None => d,
    }
}
