//! Lowering: name resolution, type checking and SSA construction in one walk.
//!
//! Mutable locals become SSA values with the simplest correct construction:
//! every join block (loop header, loop exit, `if` merge, short-circuit merge)
//! takes one parameter per variable in scope, and every jump passes the
//! variables' current values. The `opt` stage removes the redundant ones.
//! Local arrays are heap arrays held in hidden per-declaration variables,
//! freed when the declaration runs again and at every `return`.
//!
//! Guarantees: when no error diagnostic is produced, the module verifies.

mod alias;
mod expr;
mod items;

use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{Block, BlockCall, Constant, Function, InstData, ScalarType, Span, Type, Value};
pub use items::{function_name_error, lower_program, C_RUNTIME};
use items::{Globals, RetTy};

type VarId = usize;

#[derive(Clone, Debug)]
enum Binding {
    /// A scalar local (or by-value parameter) held in SSA variable `var`.
    Local {
        var: VarId,
        ty: ScalarType,
        is_const: bool,
    },
    /// An `inout`/`out` scalar parameter: a reference.
    Ref {
        value: Value,
        ty: ScalarType,
    },
    /// An array parameter, or a local array held in hidden variable `var`.
    Array {
        source: ArraySource,
        elem: ScalarType,
        writable: bool,
    },
    Const(Constant),
}

/// A name in scope. Names whose reads are tracked (`decl` set: scalar
/// locals, by-value parameters, local arrays, read-only array
/// parameters) are warned about when their scope closes unread.
struct Bound {
    name: String,
    binding: Binding,
    /// Where it was declared and what it is ("variable", "parameter").
    decl: Option<(Span, &'static str)>,
    read: std::cell::Cell<bool>,
}

#[derive(Clone, Copy, Debug)]
enum ArraySource {
    Param(Value),
    Local(VarId),
}

#[derive(Clone, Debug)]
struct Join {
    block: Block,
    vars: Vec<VarId>,
}

struct LoopTargets {
    continue_to: Join,
    break_to: Join,
}

pub(crate) struct FnLowerer<'g> {
    globals: &'g Globals,
    diags: &'g mut Vec<Diagnostic>,
    func: Function,
    ret: RetTy,
    scopes: Vec<Vec<Bound>>,
    /// Where each name in scope is bound, innermost last: (scope, index in
    /// it). Lookups take constant time however many names a block has.
    names: std::collections::HashMap<String, Vec<(usize, usize)>>,
    var_types: Vec<Type>,
    var_values: Vec<Option<Value>>,
    live: Vec<VarId>,
    cur: Block,
    loops: Vec<LoopTargets>,
    /// `[checkpoint(K)]` / `[checkpoint]` read before the loop statement
    /// being lowered (K, or 0 for the compiler's choice): its header gets
    /// the marker.
    loop_checkpoint: Option<u32>,
    /// Each local array declaration's hidden variable, with the span of
    /// the declaration that identifies it.
    array_sites: Vec<(VarId, Span)>,
    span: Span,
}

impl<'g> FnLowerer<'g> {
    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn ins(&mut self, data: InstData, results: &[Type]) -> Vec<Value> {
        let inst = self.func.append_inst(self.cur, data, results, self.span);
        self.func.dfg.inst_results(inst).to_vec()
    }

    fn ins1(&mut self, data: InstData, ty: Type) -> Value {
        self.ins(data, &[ty])[0]
    }

    fn constant(&mut self, c: Constant) -> Value {
        self.ins1(InstData::Const { value: c }, Type::Scalar(c.ty()))
    }

    fn zero(&mut self, ty: ScalarType) -> Value {
        self.constant(Constant::zero(ty))
    }

    /// What `name` is bound to; counts as a read of it.
    fn lookup(&self, name: &str) -> Option<Binding> {
        if let Some(b) = self.bound(name) {
            b.read.set(true);
            return Some(b.binding.clone());
        }
        self.globals.consts.get(name).map(|c| Binding::Const(*c))
    }

    /// What `name` is bound to, as the target of an assignment (not a read).
    fn lookup_for_write(&self, name: &str) -> Option<Binding> {
        if let Some(b) = self.bound(name) {
            return Some(b.binding.clone());
        }
        self.globals.consts.get(name).map(|c| Binding::Const(*c))
    }

    /// The innermost binding of `name` in scope, with its scope's depth.
    fn bound_at(&self, name: &str) -> Option<(usize, &Bound)> {
        let &(s, i) = self.names.get(name)?.last()?;
        Some((s, &self.scopes[s][i]))
    }

    fn bound(&self, name: &str) -> Option<&Bound> {
        self.bound_at(name).map(|(_, b)| b)
    }

    /// W0001 for each tracked name of `scope` never read.
    fn warn_unread(&mut self, scope: Vec<Bound>) {
        for b in scope {
            let Some((span, what)) = b.decl else { continue };
            if b.read.get() || b.name.starts_with('_') {
                continue;
            }
            self.diags.push(
                Diagnostic::warning("W0001", format!("unused {what} `{}`", b.name), span)
                    .with_note(format!(
                        "its value is never read; if that is intended, name it `_{}`",
                        b.name
                    )),
            );
        }
    }

    /// E0116 for a name nothing binds, with the closest visible name.
    fn unknown_name(&self, name: &str, span: Span) -> Diagnostic {
        let visible = self
            .scopes
            .iter()
            .flatten()
            .map(|b| b.name.as_str())
            .chain(self.globals.consts.keys().map(String::as_str));
        let d = Diagnostic::error("E0116", format!("cannot find `{name}` in this scope"), span);
        if self.globals.funcs.contains_key(name) {
            return d.with_note(format!("`{name}` is a function: call it, `{name}(...)`"));
        }
        expr::with_suggestion(d, name, visible)
    }

    /// E0126 for a call of a function that does not exist, with the
    /// closest function or built-in.
    fn unknown_function(&self, name: &str, span: Span) -> Option<Diagnostic> {
        // The attribute that would have made it was reported already.
        if self.globals.failed.contains(name) {
            return None;
        }
        let known = self
            .globals
            .funcs
            .keys()
            .map(String::as_str)
            .chain(["len", "print", "min", "max"])
            .chain(adc_ir::MathFunc::ALL.iter().map(|m| m.name()));
        let d = Diagnostic::error("E0126", format!("cannot find function `{name}`"), span);
        Some(expr::with_suggestion(d, name, known))
    }

    /// Binds `name` in the innermost scope; `decl` makes it a name whose
    /// reads are tracked (see `Bound`).
    fn bind(&mut self, name: &str, binding: Binding, decl: Option<(Span, &'static str)>) {
        if let Some((span, "variable")) = decl {
            self.check_redeclaration(name, span);
        }
        let depth = self.scopes.len() - 1;
        let scope = self
            .scopes
            .last_mut()
            .expect("invariant: a function scope is open");
        self.names
            .entry(name.to_string())
            .or_default()
            .push((depth, scope.len()));
        scope.push(Bound {
            name: name.to_string(),
            binding,
            decl,
            read: std::cell::Cell::new(false),
        });
    }

    /// A local declared again in the same block is an error, as in C;
    /// the function body's outermost block shares its scope with the
    /// parameters (scope 0). Inner blocks may hide outer names.
    fn check_redeclaration(&mut self, name: &str, span: Span) {
        let n = self.scopes.len();
        let Some((depth, earlier)) = self.bound_at(name) else {
            return;
        };
        // The same block, or the body's outermost block (scope 1) and the
        // parameters (scope 0).
        if !(depth + 1 == n || (n == 2 && depth == 0)) {
            return;
        }
        let what = match earlier.decl {
            Some((_, what)) => what,
            None => "parameter",
        };
        let mut d = Diagnostic::error(
            "E0205",
            format!("`{name}` is already declared in this block"),
            span,
        )
        .with_note("an inner block may declare the name again, hiding this one");
        if let Some((at, _)) = earlier.decl {
            d = d.with_label(at, format!("the {what} `{name}` is declared here"));
        }
        self.error(d);
    }

    fn new_var(&mut self, ty: Type, init: Value) -> VarId {
        self.var_types.push(ty);
        self.var_values.push(Some(init));
        let id = self.var_types.len() - 1;
        self.live.push(id);
        id
    }

    fn var(&self, var: VarId) -> Value {
        self.var_values[var].expect("invariant: a live variable has a value")
    }

    fn set_var(&mut self, var: VarId, v: Value) {
        self.var_values[var] = Some(v);
    }

    /// Puts back the variables' values saved before a branch. Variables
    /// declared in the branch keep their ids (they are out of scope now);
    /// the saved list is shorter by them.
    fn restore_values(&mut self, mut saved: Vec<Option<Value>>) {
        saved.resize(self.var_values.len().max(saved.len()), None);
        self.var_values = saved;
    }

    fn push_scope(&mut self) -> usize {
        self.scopes.push(Vec::new());
        self.live.len()
    }

    fn pop_scope(&mut self, live_len: usize) {
        if let Some(scope) = self.scopes.pop() {
            for b in &scope {
                if let Some(at) = self.names.get_mut(&b.name) {
                    at.pop();
                }
            }
            self.warn_unread(scope);
        }
        self.live.truncate(live_len);
    }

    /// A block with one parameter per live variable (plus `extra`).
    fn new_join(&mut self, extra: &[Type]) -> Join {
        let block = self.func.dfg.make_block();
        self.func.layout.push(block);
        let vars = self.live.clone();
        for &v in &vars {
            let ty = self.var_types[v];
            self.func.dfg.append_block_param(block, ty);
        }
        for ty in extra {
            self.func.dfg.append_block_param(block, *ty);
        }
        Join { block, vars }
    }

    /// Ends the current block with `br cond` into two fresh blocks,
    /// returned as (then, else).
    fn branch_two_ways(&mut self, cond: Value) -> (Block, Block) {
        let then_block = self.plain_block();
        let else_block = self.plain_block();
        let to = |block| BlockCall {
            block,
            args: vec![],
        };
        self.ins(
            InstData::Branch {
                cond,
                then_dest: to(then_block),
                else_dest: to(else_block),
            },
            &[],
        );
        (then_block, else_block)
    }

    fn plain_block(&mut self) -> Block {
        let block = self.func.dfg.make_block();
        self.func.layout.push(block);
        block
    }

    fn call_args(&self, join: &Join, extra: &[Value]) -> BlockCall {
        let mut args: Vec<Value> = join.vars.iter().map(|v| self.var(*v)).collect();
        args.extend_from_slice(extra);
        BlockCall {
            block: join.block,
            args,
        }
    }

    /// Emits a terminator and continues in a fresh (unreachable) block.
    fn terminate(&mut self, data: InstData) {
        self.ins(data, &[]);
        self.cur = self.plain_block();
    }

    fn jump(&mut self, join: &Join, extra: &[Value]) {
        let dest = self.call_args(join, extra);
        self.terminate(InstData::Jump { dest });
    }

    /// Continues in `join`, its parameters becoming the variables' values.
    fn enter(&mut self, join: &Join) -> Vec<Value> {
        self.cur = join.block;
        let params = self.func.dfg.block_params(join.block).to_vec();
        for (i, &v) in join.vars.iter().enumerate() {
            self.set_var(v, params[i]);
        }
        params[join.vars.len()..].to_vec()
    }

    fn free_local_arrays(&mut self) {
        for (site, _) in self.array_sites.clone() {
            let a = self.var(site);
            self.ins(InstData::ArrayFree { array: a }, &[]);
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        let saved = self.push_scope();
        for s in stmts {
            self.stmt(s);
        }
        self.pop_scope(saved);
    }

    fn stmt(&mut self, s: &Stmt) {
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
                let var = self.new_var(Type::Scalar(sty), value);
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
    fn loop_body(
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
    fn mark_checkpoint(&mut self) {
        if let Some(every) = self.loop_checkpoint.take() {
            self.ins(InstData::LoopCheckpoint { every }, &[]);
        }
    }

    /// Checks a statement attribute; a valid `checkpoint` gives its
    /// interval (0 without one: the compiler chooses).
    fn statement_attr(&mut self, a: &Attr) -> Option<u32> {
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
                self.error(expr::with_suggestion(
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

    fn ret_stmt(&mut self, value: Option<&Expr>, span: Span) {
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

    fn tuple_value(&mut self, e: &Expr, ts: &[ScalarType]) -> Vec<Value> {
        match &e.kind {
            ExprKind::Tuple(items) if items.len() == ts.len() => items
                .iter()
                .zip(ts)
                .map(|(item, t)| self.expr_as(item, *t))
                .collect(),
            _ => {
                if let Some((vals, types)) = self.tuple_call(e) {
                    if types == ts {
                        return vals;
                    }
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

    fn array_decl(
        &mut self,
        ty: BaseType,
        name: &Ident,
        len: Option<&Expr>,
        init: Option<&[Expr]>,
        span: Span,
    ) {
        self.span = span;
        let elem = scalar_of(ty);
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
        let arr = self.ins1(InstData::ArrayNew { len: n }, Type::Array(elem));
        self.set_var(site, arr);
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

    fn destructure(&mut self, names: &[Ident], value: &Expr, span: Span) {
        self.span = span;
        // A call of an unknown function, or of what a rejected attribute
        // would have generated, was reported already (or is now).
        let reported = matches!(&value.kind, ExprKind::Call(callee, _)
            if !self.globals.funcs.contains_key(&callee.name));
        let call = if reported && self.globals.failed.contains(&call_name(value)) {
            None
        } else {
            self.tuple_call(value)
        };
        let Some((vals, types)) = call else {
            if !reported {
                self.error(Diagnostic::error(
                    "E0106",
                    "`auto [..]` needs a call of a function that returns a tuple",
                    value.span,
                ));
            }
            self.bind_placeholders(names);
            return;
        };
        if vals.len() != names.len() {
            self.error(Diagnostic::error(
                "E0106",
                format!(
                    "the call returns {} values but {} names are bound",
                    vals.len(),
                    names.len()
                ),
                span,
            ));
            self.bind_placeholders(names);
            return;
        }
        for ((name, v), t) in names.iter().zip(vals).zip(types) {
            let var = self.new_var(Type::Scalar(t), v);
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

    /// Binds `names` to `double` zeros after an error in their
    /// declaration, so their uses report nothing more.
    fn bind_placeholders(&mut self, names: &[Ident]) {
        for name in names {
            let zero = self.zero(ScalarType::F64);
            let var = self.new_var(Type::Scalar(ScalarType::F64), zero);
            let binding = Binding::Local {
                var,
                ty: ScalarType::F64,
                is_const: false,
            };
            self.bind(&name.name, binding, None);
        }
    }

    fn assign(&mut self, target: &Expr, op: AssignOp, value: Option<&Expr>, span: Span) {
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

pub(crate) fn scalar_of(b: BaseType) -> ScalarType {
    match b {
        BaseType::Double => ScalarType::F64,
        BaseType::Float => ScalarType::F32,
        BaseType::Int => ScalarType::I64,
        BaseType::Bool => ScalarType::Bool,
    }
}

pub(crate) fn type_name(t: ScalarType) -> &'static str {
    match t {
        ScalarType::Bool => "bool",
        ScalarType::I64 => "int",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

/// The called function's name, if `e` is a call.
fn call_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Call(callee, _) => callee.name.clone(),
        _ => String::new(),
    }
}
