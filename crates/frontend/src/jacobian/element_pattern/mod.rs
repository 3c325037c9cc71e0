//! Static element patterns (docs/jacobians.md#element-jacobians): the
//! rows' columns of an element loop, found once from the loop body's text
//! instead of by a dependency sweep per iteration.
//!
//! [`pattern`] runs the body (with the bodies of the functions it calls)
//! abstractly, once, for any iteration: an integer is a linear form over
//! *atoms*, integer expressions as `.ad` text in the loop's scope (the
//! loop variable, the integers before the loop, `F`'s integer scalars,
//! elements of `F`'s integer arrays at such indices, `len` of `F`'s
//! arrays); a floating value is the set of the input elements it depends
//! on, each a read `(parameter, index)`. Loops run their iterations when
//! their bounds are constants; a branch whose condition is not known runs
//! both arms, the rest of the body after each (one run per path), and
//! every path must write the same rows. Paths whose rows depend on
//! different reads must part at branches on integer conditions
//! (`Val::Pred`: comparisons of linear forms, as `.ad` text in the loop's
//! scope): the pattern is then a [`Shape`], those conditions over the
//! paths' rows, which the element loop evaluates per iteration to pick
//! its path's rows (`tree`). A floating
//! operation depends on all its operands, as the dependency sweep's
//! tangents do for the operations allowed here (arithmetic and the smooth
//! math built-ins; anything else, such as `abs`, `floor` or a `while`
//! loop, gives up).
//!
//! It applies when every input array's reads in the rows are one base
//! (the same atoms) plus distinct constants, so that each row's columns
//! are in a known order: the element loop then computes each input's base
//! per iteration and gathers the row's entries in that order, with no
//! sweep, check or plan (`elements_static`). The rows are those of the
//! sweep of the iteration: the same reads, on the iteration's path.

mod shape;
mod values;

use super::elements::{Plan, Top};
use crate::ast::*;
use shape::{finish, tree, Path};
pub(super) use shape::{Pattern, Rows, Shape};
use std::collections::{BTreeMap, BTreeSet};
use values::{binary, combine, convert, logic, not, view, zero, ArrRef, Lin, Read, Val};

/// How many statements and expressions one run may evaluate.
const MAX_STEPS: usize = 20_000;
/// Branches whose conditions are not known, on one path, at most (each
/// path is a run: up to 2^this runs, each within `MAX_STEPS`).
const MAX_BRANCHES: usize = 8;
/// Calls deeper than this give up.
const MAX_DEPTH: usize = 16;

/// The math built-ins whose derivative reaches every operand.
const SMOOTH: &[&str] = &[
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "exp", "expm1",
    "log", "log1p", "log2", "log10", "sqrt", "cbrt", "pow", "hypot", "erf", "erfc",
];

#[derive(Clone, PartialEq)]
struct State {
    scopes: Vec<BTreeMap<String, Val>>,
    arrays: Vec<Vec<Val>>,
    /// Each row written, in order: what its value depends on.
    sites: Vec<BTreeSet<Read>>,
}

struct Interp<'a> {
    f: &'a FuncDecl,
    dual: &'a [bool],
    funcs: BTreeMap<&'a str, &'a FuncDecl>,
    consts: BTreeMap<&'a str, &'a Expr>,
    steps: usize,
    depth: usize,
    /// The arms this run takes at the branches whose conditions are not
    /// known, in the order it meets them (with the condition's text, when
    /// it is a `Val::Pred`), and how many it met.
    decisions: Vec<(bool, Option<String>)>,
    pos: usize,
}

/// The static pattern of the `k`th statement of `plan` (an element loop
/// with sites), or `None` (the loop sweeps each iteration).
pub(super) fn pattern(
    items: &[Item],
    f: &FuncDecl,
    dual: &[bool],
    plan: &Plan,
    k: usize,
) -> Option<Pattern> {
    let Top::Loop {
        var, body, sites, ..
    } = &plan.tops[k]
    else {
        return None;
    };
    let mut it = Interp {
        f,
        dual,
        funcs: BTreeMap::new(),
        consts: BTreeMap::new(),
        steps: 0,
        depth: 0,
        decisions: Vec::new(),
        pos: 0,
    };
    for i in items {
        match i {
            Item::Func(g) => {
                it.funcs.insert(g.name.name.as_str(), g);
            }
            Item::Const(c) => {
                it.consts.insert(c.name.name.as_str(), &c.value);
            }
            Item::Error => return None,
        }
    }
    let mut top = BTreeMap::new();
    for (i, p) in f.params.iter().enumerate() {
        let v = if p.is_array {
            Val::Arr(ArrRef::Param {
                param: i,
                off: Lin::constant(0),
                len: None,
            })
        } else {
            scalar_param(p)?
        };
        top.insert(p.name.name.clone(), v);
    }
    for t in &plan.tops[..k] {
        if let Top::Decl { ty, name, .. } = t {
            let v = match ty {
                BaseType::Int => Val::Int(Lin::atom(name.clone())),
                BaseType::Bool => Val::Pred(name.clone()),
                // (Its value depends on no input: `elements::plan`.)
                BaseType::Float | BaseType::Double => Val::Float(BTreeSet::new()),
            };
            top.insert(name.clone(), v);
        }
    }
    top.insert(var.clone(), Val::Int(Lin::atom(var.clone())));
    // One run per path through the branches whose conditions are not
    // known (depth first over their arms, `then` first); every path must
    // write the plan's rows.
    let mut paths = Vec::new();
    loop {
        let mut st = State {
            scopes: vec![top.clone(), BTreeMap::new()],
            arrays: Vec::new(),
            sites: Vec::new(),
        };
        it.pos = 0;
        it.block(body, &mut st)?;
        (st.sites.len() == sites.len() && it.pos == it.decisions.len()).then_some(())?;
        paths.push(Path {
            decisions: it.decisions.clone(),
            rows: st.sites,
        });
        // The next path: the last `then` taken becomes `else`.
        while it.decisions.last().is_some_and(|d| !d.0) {
            it.decisions.pop();
        }
        match it.decisions.last_mut() {
            Some(d) => d.0 = false,
            None => break,
        }
    }
    finish(tree(&paths, 0)?)
}

/// A scalar parameter of `F` (none is `Dual`: `elements::plan`).
fn scalar_param(p: &ParamDecl) -> Option<Val> {
    Some(match p.ty {
        BaseType::Int => Val::Int(Lin::atom(p.name.name.clone())),
        // (`F`'s parameters are never assigned: `elements::plan`.)
        BaseType::Bool => Val::Pred(p.name.name.clone()),
        BaseType::Float | BaseType::Double => Val::Float(BTreeSet::new()),
    })
}

impl Interp<'_> {
    /// The arm to take at the next branch whose condition is not known
    /// (`cond`: a `Val::Pred`'s text, else `None`): this run's choice there,
    /// the `then` arm at a branch no run reached.
    fn decide(&mut self, cond: Option<String>) -> Option<bool> {
        if self.pos == self.decisions.len() {
            (self.decisions.len() < MAX_BRANCHES).then_some(())?;
            self.decisions.push((true, cond));
        }
        self.pos += 1;
        Some(self.decisions[self.pos - 1].0)
    }

    /// The arm a branch on `c` takes: both, one per run, when `c` is not
    /// known.
    fn arm(&mut self, c: Val) -> Option<bool> {
        match c {
            Val::Bool(Some(b)) => Some(b),
            Val::Bool(None) => self.decide(None),
            Val::Pred(t) => self.decide(Some(t)),
            _ => None,
        }
    }

    fn step(&mut self) -> Option<()> {
        self.steps += 1;
        (self.steps <= MAX_STEPS).then_some(())
    }

    fn block(&mut self, body: &[Stmt], st: &mut State) -> Option<()> {
        st.scopes.push(BTreeMap::new());
        for s in body {
            self.stmt(s, st)?;
        }
        st.scopes.pop();
        Some(())
    }

    fn lookup<'s>(st: &'s mut State, n: &str) -> Option<&'s mut Val> {
        st.scopes.iter_mut().rev().find_map(|s| s.get_mut(n))
    }

    fn stmt(&mut self, s: &Stmt, st: &mut State) -> Option<()> {
        self.step()?;
        match s {
            Stmt::Decl { ty, name, init, .. } => {
                let v = match (init, ty) {
                    (Some(e), DeclType::Base(t)) => convert(self.expr(e, st)?, *t)?,
                    (Some(e), DeclType::Auto) => self.expr(e, st)?,
                    (None, DeclType::Base(t)) => zero(*t),
                    (None, DeclType::Auto) => return None,
                };
                let scalar = matches!(v, Val::Int(_) | Val::Bool(_) | Val::Pred(_) | Val::Float(_));
                scalar.then_some(())?;
                st.scopes.last_mut()?.insert(name.name.clone(), v);
            }
            Stmt::ArrayDecl {
                ty,
                name,
                len,
                init,
                ..
            } => {
                let elems: Vec<Val> = match (len, init) {
                    (_, Some(xs)) => {
                        let mut out = Vec::new();
                        for x in xs {
                            out.push(convert(self.expr(x, st)?, *ty)?);
                        }
                        out
                    }
                    (Some(n), None) => {
                        let Val::Int(n) = self.expr(n, st)? else {
                            return None;
                        };
                        let n = usize::try_from(n.as_const()?).ok()?;
                        (n <= MAX_STEPS).then_some(())?;
                        vec![zero(*ty); n]
                    }
                    (None, None) => return None,
                };
                let id = st.arrays.len();
                let len = elems.len() as i64;
                st.arrays.push(elems);
                let r = ArrRef::Local { id, off: 0, len };
                st.scopes.last_mut()?.insert(name.name.clone(), Val::Arr(r));
            }
            Stmt::Assign {
                target, op, value, ..
            } => {
                let v = self.expr(value, st)?;
                self.assign(target, *op, v, st)?;
            }
            Stmt::IncDec {
                target, increment, ..
            } => {
                let one = Val::Int(Lin::constant(1));
                let op = if *increment {
                    AssignOp::Add
                } else {
                    AssignOp::Sub
                };
                self.assign(target, op, one, st)?;
            }
            Stmt::Expr(e) => {
                self.expr(e, st)?;
            }
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                let c = self.expr(cond, st)?;
                let none = Vec::new();
                let other = else_branch.as_ref().unwrap_or(&none);
                if self.arm(c)? {
                    self.block(then_branch, st)?
                } else {
                    self.block(other, st)?
                }
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                st.scopes.push(BTreeMap::new());
                if let Some(i) = init {
                    self.stmt(i, st)?;
                }
                loop {
                    let go = match cond {
                        Some(c) => self.expr(c, st)?,
                        None => return None,
                    };
                    match go {
                        Val::Bool(Some(true)) => (),
                        Val::Bool(Some(false)) => break,
                        _ => return None,
                    }
                    self.block(body, st)?;
                    if let Some(s) = step {
                        self.stmt(s, st)?;
                    }
                }
                st.scopes.pop();
            }
            Stmt::Block(b) => self.block(b, st)?,
            // (A callee's last `return` is its caller's: `call`.)
            Stmt::Return(..)
            | Stmt::While { .. }
            | Stmt::Break(_)
            | Stmt::Continue(_)
            | Stmt::Destructure { .. }
            | Stmt::Attributed { .. }
            | Stmt::Error => return None,
        }
        Some(())
    }

    fn assign(&mut self, target: &Expr, op: AssignOp, v: Val, st: &mut State) -> Option<()> {
        match &target.kind {
            ExprKind::Var(n) => {
                let old = Self::lookup(st, n)?.clone();
                let new = combine(op, old, v)?;
                *Self::lookup(st, n)? = new;
            }
            ExprKind::Index(a, i) => {
                let Val::Arr(r) = self.expr(a, st)? else {
                    return None;
                };
                let Val::Int(i) = self.expr(i, st)? else {
                    return None;
                };
                match r {
                    ArrRef::Local { id, off, len } => {
                        let at = i.as_const()?;
                        (0..len).contains(&at).then_some(())?;
                        let slot = usize::try_from(off + at).ok()?;
                        let old = st.arrays.get(id)?.get(slot)?.clone();
                        st.arrays[id][slot] = combine(op, old, v)?;
                    }
                    ArrRef::Param { param, .. } => {
                        // A row: an `out` parameter's store (`elements::plan`
                        // allows no other write to `F`'s arrays), on every path.
                        let p = &self.f.params[param];
                        let is_row = p.mode == Mode::Out && self.dual[param];
                        (is_row && op == AssignOp::Set).then_some(())?;
                        let Val::Float(d) = v else {
                            return None;
                        };
                        st.sites.push(d);
                    }
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn expr(&mut self, e: &Expr, st: &mut State) -> Option<Val> {
        self.step()?;
        Some(match &e.kind {
            ExprKind::Int(v) => Val::Int(Lin::constant(*v)),
            ExprKind::Float(_) => Val::Float(BTreeSet::new()),
            ExprKind::Bool(b) => Val::Bool(Some(*b)),
            ExprKind::Var(n) => match Self::lookup(st, n) {
                Some(v) => v.clone(),
                None => {
                    let c = *self.consts.get(n.as_str())?;
                    let mut empty = State {
                        scopes: vec![BTreeMap::new()],
                        arrays: Vec::new(),
                        sites: Vec::new(),
                    };
                    self.expr(c, &mut empty)?
                }
            },
            ExprKind::Unary(UnOp::Neg, a) => match self.expr(a, st)? {
                Val::Int(l) => Val::Int(l.scale(-1)?),
                v @ Val::Float(_) => v,
                _ => return None,
            },
            ExprKind::Unary(UnOp::Not, a) => not(self.expr(a, st)?)?,
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                // (The right operand may not run: it must do nothing, and
                // take no branch, which the element loop would evaluate
                // before the left operand.)
                if calls_functions(b) {
                    return None;
                }
                let x = self.expr(a, st)?;
                let met = self.pos;
                let y = self.expr(b, st)?;
                (self.pos == met).then_some(())?;
                logic(*op == BinOp::And, x, y)?
            }
            ExprKind::Binary(op, a, b) => {
                let x = self.expr(a, st)?;
                let y = self.expr(b, st)?;
                binary(*op, x, y)?
            }
            ExprKind::Ternary(c, a, b) => {
                let c = self.expr(c, st)?;
                let arm = if self.arm(c)? { a } else { b };
                self.expr(arm, st)?
            }
            ExprKind::Cast(t, a) => convert(self.expr(a, st)?, *t)?,
            ExprKind::Index(a, i) => {
                let Val::Arr(r) = self.expr(a, st)? else {
                    return None;
                };
                let Val::Int(i) = self.expr(i, st)? else {
                    return None;
                };
                self.load(r, i, st)?
            }
            ExprKind::View(a, lo, hi) => {
                let Val::Arr(r) = self.expr(a, st)? else {
                    return None;
                };
                let Val::Int(lo) = self.expr(lo, st)? else {
                    return None;
                };
                let hi = match hi {
                    Some(h) => match self.expr(h, st)? {
                        Val::Int(h) => Some(h),
                        _ => return None,
                    },
                    None => None,
                };
                Val::Arr(view(r, lo, hi)?)
            }
            ExprKind::Call(g, args) => self.call(&g.name, args, st)?,
            ExprKind::Tuple(_) | ExprKind::Error => return None,
        })
    }

    /// An element of `r` at `i`.
    fn load(&mut self, r: ArrRef, i: Lin, st: &State) -> Option<Val> {
        match r {
            ArrRef::Local { id, off, len } => {
                let at = i.as_const()?;
                (0..len).contains(&at).then_some(())?;
                st.arrays
                    .get(id)?
                    .get(usize::try_from(off + at).ok()?)
                    .cloned()
            }
            ArrRef::Param { param, off, .. } => {
                let p = &self.f.params[param];
                let at = off.add(&i, 1)?;
                Some(match p.ty {
                    _ if p.mode == Mode::Out => return None,
                    BaseType::Float | BaseType::Double if self.dual[param] => {
                        Val::Float(BTreeSet::from([(param, at)]))
                    }
                    BaseType::Float | BaseType::Double => Val::Float(BTreeSet::new()),
                    BaseType::Int => Val::Int(Lin::atom(format!("{}[{}]", p.name.name, at.text()))),
                    BaseType::Bool => Val::Bool(None),
                })
            }
        }
    }

    fn call(&mut self, g: &str, args: &[Expr], st: &mut State) -> Option<Val> {
        if g == "len" && args.len() == 1 {
            let Val::Arr(r) = self.expr(&args[0], st)? else {
                return None;
            };
            return Some(Val::Int(match r {
                ArrRef::Local { len, .. } => Lin::constant(len),
                ArrRef::Param { len: Some(l), .. } => l,
                ArrRef::Param {
                    param,
                    off,
                    len: None,
                } => {
                    let whole = Lin::atom(format!("len({})", self.f.params[param].name.name));
                    whole.add(&off, -1)?
                }
            }));
        }
        let Some(callee) = self.funcs.get(g).copied() else {
            if !SMOOTH.contains(&g) {
                return None;
            }
            let mut deps = BTreeSet::new();
            for a in args {
                match self.expr(a, st)? {
                    Val::Float(d) => deps.extend(d),
                    Val::Int(_) => (),
                    _ => return None,
                }
            }
            return Some(Val::Float(deps));
        };
        let body = callee.body.as_ref()?;
        (callee.params.len() == args.len() && self.depth < MAX_DEPTH).then_some(())?;
        let mut scope = BTreeMap::new();
        for (p, a) in callee.params.iter().zip(args) {
            let v = self.expr(a, st)?;
            let v = match v {
                Val::Arr(_) if p.is_array => v,
                _ if p.is_array || p.mode != Mode::Value => return None,
                v => convert(v, p.ty)?,
            };
            scope.insert(p.name.name.clone(), v);
        }
        // The callee sees its parameters alone (and the constants).
        let saved = std::mem::replace(&mut st.scopes, vec![scope]);
        self.depth += 1;
        let (last, rest) = match body.split_last() {
            Some((Stmt::Return(e, _), rest)) => (e.as_ref(), rest),
            _ => (None, &body[..]),
        };
        let result = (|| {
            for s in rest {
                self.stmt(s, st)?;
            }
            match last {
                Some(e) => {
                    let v = self.expr(e, st)?;
                    match callee.ret {
                        ReturnType::Base(t) => convert(v, t),
                        _ => None,
                    }
                }
                None => (callee.ret == ReturnType::Void).then_some(Val::Void),
            }
        })();
        self.depth -= 1;
        st.scopes = saved;
        result
    }
}

/// Whether `e` calls a function of the module (which may write).
fn calls_functions(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(g, xs) => {
            !(g.name == "len" || SMOOTH.contains(&g.name.as_str()))
                || xs.iter().any(calls_functions)
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => calls_functions(a),
        ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
            calls_functions(a) || calls_functions(b)
        }
        ExprKind::Ternary(a, b, c) => [a, b, c].iter().any(|x| calls_functions(x)),
        ExprKind::View(a, lo, hi) => {
            calls_functions(a)
                || calls_functions(lo)
                || hi.as_ref().is_some_and(|h| calls_functions(h))
        }
        ExprKind::Tuple(xs) => xs.iter().any(calls_functions),
        _ => false,
    }
}
