//! Statements: declarations, assignments, `if`, loops (with their
//! attributes), `return` and blocks.

use super::signature::RetTy;
use super::*;
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{BlockCall, Constant, InstData, ScalarType, Span, Type, Value};

impl FnLowerer<'_> {
    pub(super) fn block(&mut self, stmts: &[Stmt]) {
        let saved = self.push_scope();
        for s in stmts {
            self.stmt(s);
        }
        self.pop_scope(saved);
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl {
                is_const,
                ty,
                name,
                init,
                span,
            } => {
                self.span = *span;
                let (value, sty) = match (ty, init) {
                    (DeclType::Base(b), Some(e)) => {
                        let t = scalar_of(*b);
                        (self.expr_as(e, t), t)
                    }
                    (DeclType::Base(b), None) => {
                        let t = scalar_of(*b);
                        (self.zero(t), t)
                    }
                    (DeclType::Auto, Some(e)) => match self.scalar_expr(e, None) {
                        Some((v, t)) => (v, t),
                        None => (self.zero(ScalarType::F64), ScalarType::F64),
                    },
                    (DeclType::Auto, None) => {
                        self.error(Diagnostic::error(
                            "E0101",
                            "`auto` needs an initializer",
                            *span,
                        ));
                        (self.zero(ScalarType::F64), ScalarType::F64)
                    }
                };
                let var = self.new_named_var(Type::Scalar(sty), value, &name.name);
                self.bind(
                    &name.name,
                    Binding::Local {
                        var,
                        ty: sty,
                        is_const: *is_const,
                    },
                    Some((name.span, "variable")),
                );
            }
            Stmt::ArrayDecl {
                ty,
                name,
                len,
                init,
                span,
            } => self.array_decl(*ty, name, len.as_ref(), init.as_deref(), *span),
            Stmt::Destructure { names, value, span } => self.destructure(names, value, *span),
            Stmt::Assign {
                target,
                op,
                value,
                span,
            } => self.assign(target, *op, Some(value), *span),
            Stmt::IncDec {
                target,
                increment,
                span,
            } => {
                let op = if *increment {
                    AssignOp::Add
                } else {
                    AssignOp::Sub
                };
                self.assign(target, op, None, *span)
            }
            Stmt::Expr(e) => {
                self.span = e.span;
                if !matches!(e.kind, ExprKind::Call(..)) {
                    self.diags.push(Diagnostic::warning(
                        "W0002",
                        "this expression's value is never used",
                        e.span,
                    ));
                }
                self.expr(e, None);
            }
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                span,
            } => {
                self.span = *span;
                let c = self.expr_as(cond, ScalarType::Bool);
                self.span = *span;
                let (then_block, else_block) = self.branch_two_ways(c);
                let join = self.new_join(&[]);
                let entry_values = self.var_values.clone();
                self.cur = then_block;
                self.block(then_branch);
                self.jump(&join, &[]);
                self.restore_values(entry_values);
                self.cur = else_block;
                if let Some(e) = else_branch {
                    self.block(e);
                }
                self.jump(&join, &[]);
                self.enter(&join);
            }
            Stmt::While { cond, body, span } => {
                self.span = *span;
                let header = self.new_join(&[]);
                let exit = self.new_join(&[]);
                self.jump(&header, &[]);
                self.enter(&header);
                self.mark_checkpoint();
                let c = self.expr_as(cond, ScalarType::Bool);
                self.loop_body(c, body, header.clone(), exit, None, *span);
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                span,
            } => {
                self.span = *span;
                let saved = self.push_scope();
                if let Some(i) = init {
                    self.stmt(i);
                }
                let header = self.new_join(&[]);
                let exit = self.new_join(&[]);
                let step_join = self.new_join(&[]);
                self.jump(&header, &[]);
                self.enter(&header);
                self.mark_checkpoint();
                let c = match cond {
                    Some(c) => self.expr_as(c, ScalarType::Bool),
                    None => self.constant(Constant::Bool(true)),
                };
                self.loop_body(
                    c,
                    body,
                    step_join,
                    exit,
                    Some((step.as_deref(), header)),
                    *span,
                );
                self.pop_scope(saved);
            }
            Stmt::Break(span) | Stmt::Continue(span) => {
                self.span = *span;
                let is_break = matches!(s, Stmt::Break(_));
                let target = self.loops.last().map(|l| {
                    if is_break {
                        l.break_to.clone()
                    } else {
                        l.continue_to.clone()
                    }
                });
                match target {
                    Some(t) => self.jump(&t, &[]),
                    None => {
                        let what = if is_break { "break" } else { "continue" };
                        self.error(Diagnostic::error(
                            "E0102",
                            format!("`{what}` outside of a loop"),
                            *span,
                        ));
                    }
                }
            }
            Stmt::Return(value, span) => self.ret_stmt(value.as_ref(), *span),
            Stmt::Block(stmts) => self.block(stmts),
            Stmt::Attributed { attrs, stmt } => {
                let is_loop = matches!(**stmt, Stmt::While { .. } | Stmt::For { .. });
                let mut seen = false;
                for a in attrs {
                    if let Some(every) = self.statement_attr(a) {
                        if is_loop && std::mem::replace(&mut seen, true) {
                            self.error(Diagnostic::error(
                                "E0305",
                                "a loop takes one `checkpoint`",
                                a.span,
                            ));
                        } else if is_loop {
                            self.loop_checkpoint = Some(every);
                        } else {
                            self.error(Diagnostic::error(
                                "E0305",
                                "`checkpoint` stands before a `for` or `while` loop, or a function",
                                a.span,
                            ));
                        }
                    }
                }
                self.stmt(stmt);
            }
            Stmt::Error => (),
        }
    }

    /// Branches on `c` into the body, then continues at `exit`. With a
    /// `step`, `continue_to` is the step block, which jumps to `header`.
    pub(super) fn loop_body(
        &mut self,
        c: Value,
        body: &[Stmt],
        continue_to: Join,
        exit: Join,
        step: Option<(Option<&Stmt>, Join)>,
        span: Span,
    ) {
        let body_block = self.plain_block();
        let else_dest = self.call_args(&exit, &[]);
        self.span = span;
        self.ins(
            InstData::Branch {
                cond: c,
                then_dest: BlockCall {
                    block: body_block,
                    args: vec![],
                },
                else_dest,
            },
            &[],
        );
        self.cur = body_block;
        self.loops.push(LoopTargets {
            continue_to: continue_to.clone(),
            break_to: exit.clone(),
        });
        self.block(body);
        self.loops.pop();
        self.jump(&continue_to, &[]);
        if let Some((step, header)) = step {
            self.enter(&continue_to);
            if let Some(s) = step {
                self.stmt(s);
            }
            self.span = span;
            self.jump(&header, &[]);
        }
        self.enter(&exit);
    }

    /// Puts the marker of a pending `[checkpoint]` in the loop header just
    /// entered.
    pub(super) fn mark_checkpoint(&mut self) {
        if let Some(every) = self.loop_checkpoint.take() {
            self.ins(InstData::LoopCheckpoint { every }, &[]);
        }
    }

    /// Checks a statement attribute; a valid `checkpoint` gives its
    /// interval (0 without one: the compiler chooses).
    pub(super) fn statement_attr(&mut self, a: &Attr) -> Option<u32> {
        let too_big = |k: i64| u32::try_from(k).is_err();
        match (a.name.name.as_str(), a.args.as_deref()) {
            ("checkpoint", None) => Some(0),
            ("checkpoint", Some([AttrArg::Int(k, span)])) if *k <= 0 || too_big(*k) => {
                self.error(Diagnostic::error(
                    "E0305",
                    "`checkpoint` needs a positive interval (below 2^32)",
                    *span,
                ));
                None
            }
            ("checkpoint", Some([AttrArg::Int(k, _)])) => Some(*k as u32),
            ("checkpoint", Some([AttrArg::Ident(id)])) => match self.lookup(&id.name) {
                Some(Binding::Const(Constant::I64(k))) if k > 0 && !too_big(k) => Some(k as u32),
                _ => {
                    self.error(Diagnostic::error(
                        "E0305",
                        "`checkpoint` needs a positive integer literal or `const`",
                        id.span,
                    ));
                    None
                }
            },
            ("checkpoint", _) => {
                self.error(Diagnostic::error(
                    "E0305",
                    "a loop's `checkpoint` takes one interval, as in `[checkpoint(8)]`, or none",
                    a.span,
                ));
                None
            }
            (other, _) => {
                self.error(attrs::with_suggestion(
                    Diagnostic::error(
                        "E0304",
                        format!("unknown statement attribute `{other}`"),
                        a.name.span,
                    ),
                    other,
                    ["checkpoint"],
                ));
                None
            }
        }
    }

    pub(super) fn ret_stmt(&mut self, value: Option<&Expr>, span: Span) {
        self.span = span;
        let ret = self.ret.clone();
        let values: Vec<Value> = match (&ret, value) {
            (RetTy::Void, None) => vec![],
            (RetTy::Void, Some(e)) => {
                self.error(Diagnostic::error(
                    "E0103",
                    "a `void` function cannot return a value",
                    e.span,
                ));
                vec![]
            }
            (RetTy::Scalar(t), Some(e)) => vec![self.expr_as(e, *t)],
            (RetTy::Tuple(ts), Some(e)) => self.tuple_value(e, ts),
            (_, None) => {
                self.error(Diagnostic::error(
                    "E0103",
                    "this function must return a value",
                    span,
                ));
                ret.types().iter().map(|t| self.zero(t.elem())).collect()
            }
        };
        self.span = span;
        self.free_local_arrays();
        self.terminate(InstData::Return { args: values });
    }

    pub(super) fn tuple_value(&mut self, e: &Expr, ts: &[ScalarType]) -> Vec<Value> {
        match &e.kind {
            ExprKind::Tuple(items) if items.len() == ts.len() => items
                .iter()
                .zip(ts)
                .map(|(item, t)| self.expr_as(item, *t))
                .collect(),
            _ => {
                let source = self.tuple_source(e);
                let silent = match self.tuple_call(e) {
                    Some((vals, types)) if types == ts => return vals,
                    Some(_) => false,
                    // The call's own error was reported.
                    None => match source {
                        TupleSource::Tuple(types) => types == ts,
                        TupleSource::Unknown => true,
                        TupleSource::NotTuple => false,
                    },
                };
                if silent {
                    return ts.iter().map(|t| self.zero(*t)).collect();
                }
                let want = ts
                    .iter()
                    .map(|t| type_name(*t))
                    .collect::<Vec<_>>()
                    .join(", ");
                self.error(Diagnostic::error(
                    "E0104",
                    format!("expected a tuple `({want})`"),
                    e.span,
                ));
                ts.iter().map(|t| self.zero(*t)).collect()
            }
        }
    }

    pub(super) fn array_decl(
        &mut self,
        ty: BaseType,
        name: &Ident,
        len: Option<&Expr>,
        init: Option<&[Expr]>,
        span: Span,
    ) {
        self.span = span;
        let elem = scalar_of(ty);
        // `T a[__adc_uninit(n)]`: `new.uninit`, elements unspecified until
        // stored (code generated for sparse Hessians, which stores every
        // element it reads first).
        let (len, zeroed) = match len.map(|l| &l.kind) {
            Some(ExprKind::Call(f, args)) if f.name == super::call::UNINIT && args.len() == 1 => {
                (Some(&args[0]), false)
            }
            _ => (len, true),
        };
        let site = match self.array_sites.iter().find(|(_, s)| *s == span) {
            Some((var, _)) => *var,
            None => {
                self.error(Diagnostic::error(
                    "E0900",
                    "internal: local array site not found",
                    span,
                ));
                return;
            }
        };
        let n = match (len, init) {
            (Some(l), _) => self.expr_as(l, ScalarType::I64),
            (None, Some(items)) => self.constant(Constant::I64(items.len() as i64)),
            (None, None) => {
                self.error(Diagnostic::error(
                    "E0105",
                    "a local array needs a length or an initializer",
                    span,
                ));
                self.constant(Constant::I64(0))
            }
        };
        if let (Some(l), Some(items)) = (len, init) {
            // The length must be known here (a literal or a constant) and
            // match the list: a run-time length would leave the count
            // unchecked (zeros padded in, or a write past the end).
            let known = match self.func.dfg.value_def(n) {
                adc_ir::ValueDef::Result(i, _) => match self.func.dfg.inst(i) {
                    InstData::Const {
                        value: Constant::I64(k),
                    } => Some(*k),
                    _ => None,
                },
                _ => None,
            };
            match known {
                Some(k) if k == items.len() as i64 => {}
                Some(k) => self.error(Diagnostic::error(
                    "E0105",
                    format!(
                        "array of length {k} initialized with {} values",
                        items.len()
                    ),
                    l.span,
                )),
                None => self.error(Diagnostic::error(
                    "E0105",
                    "an array with an initializer list needs a constant length (or none)",
                    l.span,
                )),
            }
        }
        self.span = span;
        let old = self.var(site);
        self.ins(InstData::ArrayFree { array: old }, &[]);
        let arr = self.ins1(InstData::ArrayNew { len: n, zeroed }, Type::Array(elem));
        // Not `set_var`: a fixed site is one at the body's top level, whose
        // variable is set here once, before any join it is live at.
        self.var_values[site] = Some(arr);
        if let Some(items) = init {
            for (i, item) in items.iter().enumerate() {
                let v = self.expr_as(item, elem);
                self.span = item.span;
                let idx = self.constant(Constant::I64(i as i64));
                self.ins(
                    InstData::Store {
                        array: arr,
                        index: idx,
                        value: v,
                        checked: true,
                    },
                    &[],
                );
            }
        }
        self.bind(
            &name.name,
            Binding::Array {
                source: ArraySource::Local(site),
                elem,
                writable: true,
            },
            Some((name.span, "variable")),
        );
    }

    pub(super) fn destructure(&mut self, names: &[Ident], value: &Expr, span: Span) {
        self.span = span;
        let source = self.tuple_source(value);
        let call = match (&source, &value.kind) {
            // `failed`: what a rejected attribute would have generated.
            (TupleSource::Unknown, ExprKind::Call(callee, _))
                if self.globals.failed.contains(&callee.name) =>
            {
                None
            }
            _ => self.tuple_call(value),
        };
        let (vals, types) = match (call, source) {
            (Some((vals, types)), _) => (Some(vals), types),
            (None, TupleSource::Tuple(types)) => (None, types),
            (None, TupleSource::Unknown) => {
                self.bind_placeholders(names, &[]);
                return;
            }
            (None, TupleSource::NotTuple) => {
                self.error(Diagnostic::error(
                    "E0106",
                    "`auto [..]` needs a call of a function that returns a tuple",
                    value.span,
                ));
                self.bind_placeholders(names, &[]);
                return;
            }
        };
        if types.len() != names.len() {
            let mut d = Diagnostic::error(
                "E0106",
                format!(
                    "the call returns {} values but {} names are bound",
                    types.len(),
                    names.len()
                ),
                span,
            );
            if let ExprKind::Call(callee, _) = &value.kind {
                if let Some(sig) = self.globals.funcs.get(&callee.name) {
                    d = d.with_note(format!("{} is `{}`", sig.describe(&callee.name), sig.text));
                }
            }
            self.error(d);
            self.bind_placeholders(names, &[]);
            return;
        }
        let Some(vals) = vals else {
            self.bind_placeholders(names, &types);
            return;
        };
        for ((name, v), t) in names.iter().zip(vals).zip(types) {
            let var = self.new_named_var(Type::Scalar(t), v, &name.name);
            self.bind(
                &name.name,
                Binding::Local {
                    var,
                    ty: t,
                    is_const: false,
                },
                Some((name.span, "variable")),
            );
        }
    }

    /// Binds `names` to zeros after an error in their declaration, so
    /// their uses report nothing more: of `types` where known, else
    /// `double`.
    pub(super) fn bind_placeholders(&mut self, names: &[Ident], types: &[ScalarType]) {
        for (i, name) in names.iter().enumerate() {
            let ty = types.get(i).copied().unwrap_or(ScalarType::F64);
            let zero = self.zero(ty);
            let var = self.new_var(Type::Scalar(ty), zero);
            let binding = Binding::Local {
                var,
                ty,
                is_const: false,
            };
            self.bind(&name.name, binding, None);
        }
    }

    pub(super) fn assign(&mut self, target: &Expr, op: AssignOp, value: Option<&Expr>, span: Span) {
        self.span = span;
        let Some(place) = self.place(target, true) else {
            if let Some(v) = value {
                self.expr(v, None);
            }
            return;
        };
        let ty = place.ty();
        if value.is_none() && !matches!(ty, ScalarType::I64 | ScalarType::F32 | ScalarType::F64) {
            self.error(Diagnostic::error(
                "E0107",
                format!("`++`/`--` need a number, found `{}`", type_name(ty)),
                target.span,
            ));
            return;
        }
        let new_value = match (op, value) {
            (AssignOp::Set, Some(v)) => self.expr_as(v, ty),
            (_, rhs) => {
                let old = self.read_place(&place);
                let bop = match op {
                    AssignOp::Add | AssignOp::Set => BinOp::Add,
                    AssignOp::Sub => BinOp::Sub,
                    AssignOp::Mul => BinOp::Mul,
                    AssignOp::Div => BinOp::Div,
                };
                let (r, rt) = match rhs {
                    Some(e) => match self.scalar_expr(e, Some(ty)) {
                        Some(x) => x,
                        None => return,
                    },
                    None => (self.constant(Constant::I64(1)), ScalarType::I64),
                };
                self.span = span;
                let Some((res, res_ty)) = self.arith(bop, (old, ty), (r, rt), span) else {
                    return;
                };
                match self.coerce(res, res_ty, ty, span) {
                    Some(v) => v,
                    None => return,
                }
            }
        };
        self.span = span;
        self.write_place(&place, new_value);
    }
}
