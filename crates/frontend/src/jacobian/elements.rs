//! Element Jacobians for `[jacobian(NAME, sparse)]`
//! (docs/jacobians.md#sparse-jacobians): recognizing a partially
//! separable function (Griewank and Toint's element functions), whose
//! body is a sequence of counted loops whose iterations write disjoint
//! output rows from the inputs alone. [`plan`] decides from the syntax
//! (with the bodies of the functions it calls) and finds where each
//! iteration writes; `elements_source` generates the code, which checks
//! at run time that no two iterations claim a row before it relies on it.
//!
//! The body of `F` qualifies when:
//! - `F` returns nothing, has no `inout` parameter and no `Dual` scalar,
//!   and every `out` parameter is a `Dual` array (a row block);
//! - its statements are declarations of `int`/`bool` scalars, of
//!   `float`/`double` scalars whose initializers depend on no input
//!   (`float_expr`), and `for` loops `for (int i = A; i < B; i++)` (or
//!   `<=`, `i += 1`);
//! - a loop body assigns no variable declared outside it, writes no array
//!   but its own locals and `F`'s `out` arrays, has no `return` and no
//!   `break`/`continue` of the loop itself, and reaches no `while` loop,
//!   recursion or attributed statement (a reverse vector derivative could
//!   not carry them);
//! - every write to an `out` array, in the body or in a function it calls
//!   (the array passed whole to an `out` parameter), is a plain store
//!   `y[e] = v` outside any inner loop whose index `e` depends only on the
//!   loop variable, the integers declared before the loop, `F`'s
//!   read-only parameters and constants (under a branch, reading no
//!   integer array and dividing by nothing: the element code evaluates
//!   every site's row at every iteration); the array is never read (but
//!   `len(y)`).
//!
//! Those stores are the loop's *sites*: iteration `i` writes at most the
//! rows the sites name at `i`, and nothing it computes depends on another
//! iteration, so its rows' derivatives are those of the loop body alone.

use super::elements_text::{float_expr, may_fail, print, top_expr};
use crate::ast::*;
use std::collections::{BTreeMap, BTreeSet};

/// A store of a loop body to an `out` parameter: the parameter's index in
/// `F`'s parameters and the element index, as `.ad` text in the body's
/// scope (the loop variable, the integers before the loop, `F`'s
/// parameters).
pub(super) struct Site {
    pub param: usize,
    pub index: String,
}

/// A statement of `F`'s body as the element code replays it.
pub(super) enum Top {
    /// `ty name = init;`
    Decl {
        ty: BaseType,
        name: String,
        init: String,
    },
    /// `for (int var = from; cond; var++) body`.
    Loop {
        var: String,
        from: String,
        cond: String,
        body: Vec<Stmt>,
        sites: Vec<Site>,
    },
}

pub(super) struct Plan {
    pub tops: Vec<Top>,
    /// Per statement: the loop's static pattern, when it has one
    /// (`element_pattern`; else each iteration sweeps).
    pub statics: Vec<Option<super::element_pattern::Pattern>>,
}

impl Plan {
    /// Whether a loop with sites has no static pattern: it sweeps each
    /// iteration (with `NAME__esame`, `NAME__eplan` and `NAME__egather`).
    pub(super) fn sweeps(&self) -> bool {
        self.tops.iter().zip(&self.statics).any(|(t, st)| {
            matches!(t, Top::Loop { sites, .. } if !sites.is_empty()) && st.is_none()
        })
    }
}

/// At most this many sites per loop (a reverse vector derivative's
/// width).
const MAX_SITES: usize = 64;
/// Calls deeper than this are not followed (no element path).
const MAX_DEPTH: usize = 16;
/// The parameters of `NAME__elems`, where `F`'s declarations before the
/// loops and its loop variables are replayed: no element path when one of
/// them has such a name.
const REPLAYED_NAMES: [&str; 3] = ["vals", "cols", "rows"];

/// The element plan of `f`, or `None` when its body does not qualify
/// (the sparse Jacobian then colors columns).
pub(super) fn plan(items: &[Item], f: &FuncDecl, dual: &[bool]) -> Option<Plan> {
    if f.ret != ReturnType::Void {
        return None;
    }
    for (p, &d) in f.params.iter().zip(dual) {
        let bad = p.mode == Mode::Inout
            || (p.mode == Mode::Out && !(d && p.is_array))
            || (d && !p.is_array);
        if bad {
            return None;
        }
    }
    let funcs: BTreeMap<&str, &FuncDecl> = items
        .iter()
        .filter_map(|i| match i {
            Item::Func(g) => Some((g.name.name.as_str(), g)),
            _ => None,
        })
        .collect();
    let consts: BTreeSet<&str> = items
        .iter()
        .filter_map(|i| match i {
            Item::Const(c) => Some(c.name.name.as_str()),
            _ => None,
        })
        .collect();
    let outs: BTreeMap<String, usize> = f
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.mode == Mode::Out)
        .map(|(k, p)| (p.name.name.clone(), k))
        .collect();
    // Names a site's index may use besides the loop's own.
    // (`F`'s read-only parameters: they keep their values.)
    let mut known: BTreeSet<String> = f
        .params
        .iter()
        .filter(|p| p.mode == Mode::Value)
        .map(|p| p.name.name.clone())
        .collect();
    let all_params: BTreeSet<String> = f.params.iter().map(|p| p.name.name.clone()).collect();
    // (A floating declaration before the loops must not depend on them.)
    let active: BTreeSet<&str> = f
        .params
        .iter()
        .zip(dual)
        .filter(|(_, &d)| d)
        .map(|(p, _)| p.name.name.as_str())
        .collect();
    let mut tops = Vec::new();
    for s in f.body.as_ref()? {
        let s = match s {
            Stmt::Attributed { .. } => return None,
            s => s,
        };
        match s {
            Stmt::Decl {
                ty: DeclType::Base(ty),
                name,
                init: Some(init),
                ..
            } => {
                let init = match ty {
                    BaseType::Int | BaseType::Bool => top_expr(init, &known, &consts, &all_params)?,
                    BaseType::Float | BaseType::Double => {
                        float_expr(init, &known, &consts, &all_params, &active, &funcs)?
                    }
                };
                (!REPLAYED_NAMES.contains(&name.name.as_str())).then_some(())?;
                known.insert(name.name.clone());
                tops.push(Top::Decl {
                    ty: *ty,
                    name: name.name.clone(),
                    init,
                });
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                let (var, from, cond) = header(init.as_deref(), cond.as_ref(), step.as_deref())?;
                (!REPLAYED_NAMES.contains(&var.as_str())).then_some(())?;
                let from = top_expr(from, &known, &consts, &all_params)?;
                let mut scope = known.clone();
                scope.insert(var.clone());
                let cond = top_expr(cond, &scope, &consts, &all_params)?;
                let mut w = Walk {
                    funcs: &funcs,
                    consts: &consts,
                    params: &all_params,
                    sites: Vec::new(),
                    guarded: 0,
                };
                let locals = declared(body);
                if locals.contains(&var) || locals.iter().any(|l| scope.contains(l)) {
                    return None;
                }
                let top = Scope {
                    tracked: outs.clone(),
                    locals: &locals,
                    subst: Subst::Top(&scope),
                    depth: 0,
                };
                w.stmts(body, &top, 0)?;
                if w.sites.len() > MAX_SITES {
                    return None;
                }
                tops.push(Top::Loop {
                    var,
                    from,
                    cond,
                    body: body.clone(),
                    sites: w.sites,
                });
            }
            _ => return None,
        }
    }
    if !tops
        .iter()
        .any(|t| matches!(t, Top::Loop { sites, .. } if !sites.is_empty()))
    {
        return None;
    }
    let mut plan = Plan {
        tops,
        statics: Vec::new(),
    };
    plan.statics = (0..plan.tops.len())
        .map(|k| super::element_pattern::pattern(items, f, dual, &plan, k))
        .collect();
    Some(plan)
}

/// The loop variable, its start and the condition of
/// `for (int v = from; cond; v++)`.
fn header<'a>(
    init: Option<&'a Stmt>,
    cond: Option<&'a Expr>,
    step: Option<&Stmt>,
) -> Option<(String, &'a Expr, &'a Expr)> {
    let Some(Stmt::Decl {
        ty: DeclType::Base(BaseType::Int),
        name,
        init: Some(from),
        ..
    }) = init
    else {
        return None;
    };
    let v = &name.name;
    let is_v = |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if n == v);
    let cond = cond?;
    match &cond.kind {
        ExprKind::Binary(BinOp::Lt | BinOp::Le, a, _) if is_v(a) => (),
        _ => return None,
    }
    let unit = match step? {
        Stmt::IncDec {
            target, increment, ..
        } => *increment && is_v(target),
        Stmt::Assign {
            target,
            op: AssignOp::Add,
            value,
            ..
        } => is_v(target) && matches!(value.kind, ExprKind::Int(1)),
        _ => false,
    };
    unit.then(|| (v.clone(), from, cond))
}

/// Every name declared in `body` (at any depth).
fn declared(body: &[Stmt]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    fn go(s: &Stmt, out: &mut BTreeSet<String>) {
        match s {
            Stmt::Decl { name, .. } | Stmt::ArrayDecl { name, .. } => {
                out.insert(name.name.clone());
            }
            Stmt::Destructure { .. } => (),
            Stmt::If {
                then_branch,
                else_branch,
                ..
            } => {
                then_branch.iter().for_each(|s| go(s, out));
                else_branch.iter().flatten().for_each(|s| go(s, out));
            }
            Stmt::While { body, .. } | Stmt::Block(body) => body.iter().for_each(|s| go(s, out)),
            Stmt::For {
                init, step, body, ..
            } => {
                init.iter().chain(step).for_each(|s| go(s, out));
                body.iter().for_each(|s| go(s, out));
            }
            Stmt::Attributed { stmt, .. } => go(stmt, out),
            _ => (),
        }
    }
    body.iter().for_each(|s| go(s, &mut out));
    out
}

/// How a site's index becomes text in the loop body's scope.
enum Subst<'a> {
    /// In the loop body: names known before the loop, as they are.
    Top(&'a BTreeSet<String>),
    /// In a callee: its integer parameters that it never assigns, as the
    /// caller's text (`None`: not expressible there).
    Call(BTreeMap<String, Option<String>>),
}

struct Scope<'a> {
    /// `out` arrays visible under this name, and the `F` parameter each is.
    tracked: BTreeMap<String, usize>,
    /// Names declared in the body (locals; not usable in a site's index).
    locals: &'a BTreeSet<String>,
    subst: Subst<'a>,
    depth: usize,
}

struct Walk<'a> {
    funcs: &'a BTreeMap<&'a str, &'a FuncDecl>,
    consts: &'a BTreeSet<&'a str>,
    /// `F`'s parameters (their lengths are known before the body runs).
    params: &'a BTreeSet<String>,
    sites: Vec<Site>,
    /// How many branches (an `if`'s arms, a `?:`'s, the right operand of
    /// `&&`, `||`) the walk is in.
    guarded: usize,
}

impl Walk<'_> {
    /// `e` as text in the loop body's scope, or `None`.
    fn index(&self, e: &Expr, sc: &Scope) -> Option<String> {
        match &sc.subst {
            Subst::Top(known) => {
                let ok = |n: &str| {
                    !sc.locals.contains(n) && (known.contains(n) || self.consts.contains(n))
                };
                print(e, &|n| ok(n).then(|| n.to_string()), Some(self.params))
            }
            Subst::Call(map) => {
                let get = |n: &str| match map.get(n) {
                    Some(t) => t.clone(),
                    None if !sc.locals.contains(n) && self.consts.contains(n) => {
                        Some(n.to_string())
                    }
                    None => None,
                };
                print(e, &get, None)
            }
        }
    }

    /// Checks `body` (at `loops` inner loops deep) and collects its sites.
    fn stmts(&mut self, body: &[Stmt], sc: &Scope, loops: usize) -> Option<()> {
        for s in body {
            self.stmt(s, sc, loops)?;
        }
        Some(())
    }

    fn stmt(&mut self, s: &Stmt, sc: &Scope, loops: usize) -> Option<()> {
        let local = |n: &str| sc.depth > 0 || sc.locals.contains(n);
        match s {
            Stmt::Decl { init, .. } => init.iter().try_for_each(|e| self.expr(e, sc, loops)),
            Stmt::ArrayDecl { len, init, .. } => {
                len.iter().try_for_each(|e| self.expr(e, sc, loops))?;
                init.iter()
                    .flatten()
                    .try_for_each(|e| self.expr(e, sc, loops))
            }
            Stmt::Destructure { names, value, .. } => {
                names.iter().all(|n| local(&n.name)).then_some(())?;
                self.expr(value, sc, loops)
            }
            Stmt::Assign {
                target, op, value, ..
            } => {
                self.expr(value, sc, loops)?;
                match &target.kind {
                    ExprKind::Var(n) if !sc.tracked.contains_key(n) => local(n).then_some(()),
                    ExprKind::Index(a, i) => {
                        self.expr(i, sc, loops)?;
                        let ExprKind::Var(n) = &a.kind else {
                            return None;
                        };
                        match sc.tracked.get(n) {
                            Some(&param) if *op == AssignOp::Set && loops == 0 => {
                                let index = self.index(i, sc)?;
                                // The element code evaluates every site's row
                                // at every iteration: under a branch, it must
                                // not fail where the branch would not run it
                                // (an element of an integer array, a division).
                                (self.guarded == 0 || !may_fail(&index)).then_some(())?;
                                self.sites.push(Site { param, index });
                                Some(())
                            }
                            Some(_) => None,
                            None => local(n).then_some(()),
                        }
                    }
                    _ => None,
                }
            }
            Stmt::IncDec { target, .. } => match &target.kind {
                ExprKind::Var(n) if !sc.tracked.contains_key(n) => local(n).then_some(()),
                ExprKind::Index(a, i) => {
                    self.expr(i, sc, loops)?;
                    match &a.kind {
                        ExprKind::Var(n) if !sc.tracked.contains_key(n) => local(n).then_some(()),
                        _ => None,
                    }
                }
                _ => None,
            },
            Stmt::Expr(e) => self.expr(e, sc, loops),
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                self.expr(cond, sc, loops)?;
                self.guarded += 1;
                self.stmts(then_branch, sc, loops)?;
                self.stmts(else_branch.as_deref().unwrap_or(&[]), sc, loops)?;
                self.guarded -= 1;
                Some(())
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                let inner = loops + 1;
                init.iter().try_for_each(|s| self.stmt(s, sc, inner))?;
                cond.iter().try_for_each(|e| self.expr(e, sc, inner))?;
                step.iter().try_for_each(|s| self.stmt(s, sc, inner))?;
                self.stmts(body, sc, inner)
            }
            Stmt::Block(b) => self.stmts(b, sc, loops),
            Stmt::Break(_) | Stmt::Continue(_) => (loops > 0).then_some(()),
            Stmt::Return(e, _) => {
                // A callee may return; the loop body may not.
                (sc.depth > 0).then_some(())?;
                e.iter().try_for_each(|e| self.expr(e, sc, loops))
            }
            Stmt::While { .. } | Stmt::Attributed { .. } | Stmt::Error => None,
        }
    }

    /// Checks an expression: tracked arrays only under `len` or passed
    /// whole to an `out` parameter (followed into the callee).
    fn expr(&mut self, e: &Expr, sc: &Scope, loops: usize) -> Option<()> {
        match &e.kind {
            ExprKind::Var(n) => (!sc.tracked.contains_key(n)).then_some(()),
            ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => Some(()),
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => self.expr(a, sc, loops),
            ExprKind::Binary(BinOp::And | BinOp::Or, a, b) => {
                self.expr(a, sc, loops)?;
                self.guarded += 1;
                self.expr(b, sc, loops)?;
                self.guarded -= 1;
                Some(())
            }
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a, sc, loops)?;
                self.expr(b, sc, loops)
            }
            ExprKind::Ternary(a, b, c) => {
                self.expr(a, sc, loops)?;
                self.guarded += 1;
                self.expr(b, sc, loops)?;
                self.expr(c, sc, loops)?;
                self.guarded -= 1;
                Some(())
            }
            ExprKind::View(a, lo, hi) => {
                self.expr(a, sc, loops)?;
                self.expr(lo, sc, loops)?;
                hi.iter().try_for_each(|h| self.expr(h, sc, loops))
            }
            ExprKind::Tuple(xs) => xs.iter().try_for_each(|x| self.expr(x, sc, loops)),
            ExprKind::Call(g, args) => self.call(&g.name, args, sc, loops),
            ExprKind::Error => None,
        }
    }

    fn call(&mut self, g: &str, args: &[Expr], sc: &Scope, loops: usize) -> Option<()> {
        let tracked = |a: &Expr| match &a.kind {
            ExprKind::Var(n) => sc.tracked.get(n).copied(),
            _ => None,
        };
        let Some(callee) = self.funcs.get(g).copied() else {
            // A builtin: only `len` may see an output.
            if g == "len" && args.len() == 1 && tracked(&args[0]).is_some() {
                return Some(());
            }
            return args.iter().try_for_each(|a| self.expr(a, sc, loops));
        };
        if callee.params.len() != args.len() || sc.depth >= MAX_DEPTH {
            return None;
        }
        let body = callee.body.as_ref()?;
        let mut tracked_in = BTreeMap::new();
        for (p, a) in callee.params.iter().zip(args) {
            if let Some(param) = tracked(a) {
                (p.mode == Mode::Out && p.is_array).then_some(())?;
                tracked_in.insert(p.name.name.clone(), param);
                continue;
            }
            self.expr(a, sc, loops)?;
            // What the callee writes must be the body's own.
            if p.mode != Mode::Value {
                let root = match &a.kind {
                    ExprKind::Var(n) => n,
                    ExprKind::View(b, _, _) => match &b.kind {
                        ExprKind::Var(n) => n,
                        _ => return None,
                    },
                    _ => return None,
                };
                (sc.depth > 0 || sc.locals.contains(root)).then_some(())?;
            }
        }
        // The callee is checked for what it reaches (while loops,
        // recursion) even when it writes no output.
        let assigned = assigned_scalars(body);
        let locals = declared(body);
        let mut map = BTreeMap::new();
        for (p, a) in callee.params.iter().zip(args) {
            let n = &p.name.name;
            if p.mode == Mode::Value
                && !p.is_array
                && p.ty == BaseType::Int
                && !assigned.contains(n)
            {
                map.insert(n.clone(), self.index(a, sc).map(|t| format!("({t})")));
            }
        }
        let mut all_locals = locals.clone();
        all_locals.extend(callee.params.iter().map(|p| p.name.name.clone()));
        if tracked_in.keys().any(|n| locals.contains(n)) {
            return None;
        }
        let inner = Scope {
            tracked: tracked_in,
            locals: &all_locals,
            subst: Subst::Call(map),
            depth: sc.depth + 1,
        };
        // Substituted parameters are not locals for a site's index.
        let mut callee_locals = all_locals.clone();
        if let Subst::Call(m) = &inner.subst {
            for k in m.keys() {
                callee_locals.remove(k);
            }
        }
        let inner = Scope {
            locals: &callee_locals,
            ..inner
        };
        self.stmts(body, &inner, loops)
    }
}

/// Scalars assigned anywhere in `body`.
fn assigned_scalars(body: &[Stmt]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    fn go(s: &Stmt, out: &mut BTreeSet<String>) {
        match s {
            Stmt::Assign { target, .. } | Stmt::IncDec { target, .. } => {
                if let ExprKind::Var(n) = &target.kind {
                    out.insert(n.clone());
                }
            }
            Stmt::Destructure { names, .. } => {
                out.extend(names.iter().map(|n| n.name.clone()));
            }
            Stmt::If {
                then_branch,
                else_branch,
                ..
            } => {
                then_branch.iter().for_each(|s| go(s, out));
                else_branch.iter().flatten().for_each(|s| go(s, out));
            }
            Stmt::While { body, .. } | Stmt::Block(body) => body.iter().for_each(|s| go(s, out)),
            Stmt::For {
                init, step, body, ..
            } => {
                init.iter().chain(step).for_each(|s| go(s, out));
                body.iter().for_each(|s| go(s, out));
            }
            Stmt::Attributed { stmt, .. } => go(stmt, out),
            _ => (),
        }
    }
    body.iter().for_each(|s| go(s, &mut out));
    out
}
