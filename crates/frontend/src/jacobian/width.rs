//! The chunk width of a dense `[jacobian]` by columns
//! (docs/jacobians.md#chunk-width): `width = W` on the attribute, or else
//! chosen from an estimate of the work of one run of `F`'s forward
//! derivative, made on the syntax of `F` and of the functions it calls.
//!
//! A run does the primal work `P` once (with the partials the derivative
//! needs, such as `cos` beside `sin`) and the differential work `L` once
//! per lane, so a column costs `P / W + L`: wider chunks share the primal
//! among more columns, but their lanes' values no longer fit the float
//! registers, which makes each lane dearer (plain GradBench ht: a lane
//! costs about twice as much at width 32 as at 4). The chunk is the
//! narrowest power of two between [`NARROW`] and [`WIDE`] at which the
//! primal's share of a column is at most a quarter of its lane work
//! (`W >= 4 P / L`): a body of math calls (`P / L` about 8 by this
//! estimate) gets 32, a body of products and sums (`P / L` about 0.8)
//! gets 4. A call the estimate cannot see into (an `extern` function)
//! keeps [`WIDE`]; a call of a generated derivative gets [`NARROW`], as
//! each lane of the chunk multiplies the derivative's own code.
//!
//! The counts are rough instruction counts: a float operation, load or
//! store 1, a division 4, a strong-zero product (`mulz`) 2, a math
//! function with its partial [`math_cost`]. A value is differential when
//! it is a float that depends on a `Dual` parameter or on a local float
//! variable (locals are taken to be active); loops whose bounds are not
//! literals count [`LOOP`] iterations, each arm of a branch half.

use super::is_float;
use crate::ast::*;
use crate::diag::Diagnostic;
use adc_ir::{MathFunc, Span};
use std::collections::HashMap;

/// The narrowest automatic chunk.
pub const NARROW: u32 = 4;
/// The widest automatic chunk.
pub const WIDE: u32 = 32;
/// Iterations counted for a loop whose bounds are not literals.
const LOOP: f64 = 8.0;
/// The largest `width` (the vector mode's, `lower::attrs::MAX_WIDTH`).
const MAX: i64 = 64;

/// The work of one run of a forward derivative: its primal instructions
/// and the differential instructions of one lane.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Work {
    pub primal: f64,
    pub lane: f64,
}

impl Work {
    fn add(&mut self, o: Work, times: f64) {
        self.primal += o.primal * times;
        self.lane += o.lane * times;
    }
}

/// The width of `width = W` on the attribute: a literal or a `const int`
/// of the program, from 1 to 64 (E0308 otherwise, as on a derivative
/// attribute; at 1 one column per run, through the vector-mode
/// signature of width 1).
pub fn given(value: &AttrArg, span: Span, items: &[Item]) -> Result<u32, Diagnostic> {
    let k = match value {
        AttrArg::Int(k, _) => Some(*k),
        AttrArg::Ident(id) => match crate::lower::const_values(items).get(&id.name) {
            Some(adc_ir::Constant::I64(k)) => Some(*k),
            _ => None,
        },
        AttrArg::Named(..) => None,
    };
    match k {
        Some(k) if (1..=MAX).contains(&k) => Ok(k as u32),
        _ => Err(Diagnostic::error(
            "E0308",
            format!(
                "the `width` of a Jacobian needs an integer literal or `const int` from 1 to {MAX}"
            ),
            span,
        )
        .with_note(
            "the number of columns each run of the forward derivative carries, as in `width = 4`",
        )),
    }
}

/// The automatic chunk width of `f`'s Jacobian by columns: [`NARROW`]
/// when `f` (or a function it calls) calls a generated derivative, whose
/// own lanes each of the chunk's lanes multiplies (a `[jacobian]` of a
/// function calling a `[hessian]` chunked 32 would be 32 by 32 lanes).
pub fn choose(items: &[Item], f: &FuncDecl, dual: &[bool]) -> u32 {
    let mut e = Estimator::new(items);
    let work = e.func(f, dual);
    if e.calls_derivative {
        NARROW
    } else {
        work.map_or(WIDE, width_for)
    }
}

/// The narrowest power of two in `[NARROW, WIDE]` at which the primal's
/// share of a column, `P / W`, is at most a quarter of a lane's work `L`:
/// at least `4 P / L`.
pub fn width_for(w: Work) -> u32 {
    let mut width = NARROW;
    while width < WIDE && 4.0 * w.primal > f64::from(width) * w.lane {
        width *= 2;
    }
    width
}

/// The work of one run of `f`'s forward derivative, `None` when it calls
/// what the estimate cannot see into.
pub fn estimate(items: &[Item], f: &FuncDecl, dual: &[bool]) -> Option<Work> {
    Estimator::new(items).func(f, dual)
}

struct Estimator<'a> {
    funcs: HashMap<&'a str, &'a FuncDecl>,
    consts: std::collections::HashSet<&'a str>,
    memo: HashMap<(String, Vec<bool>), Option<Work>>,
    stack: Vec<String>,
    /// A call of a name that is no function, built-in or math function of
    /// the program: a derivative an attribute generates.
    calls_derivative: bool,
}

impl<'a> Estimator<'a> {
    fn new(items: &'a [Item]) -> Estimator<'a> {
        let funcs = items
            .iter()
            .filter_map(|i| match i {
                Item::Func(g) => Some((g.name.name.as_str(), g)),
                _ => None,
            })
            .collect();
        let consts = items
            .iter()
            .filter_map(|i| match i {
                Item::Const(c) => Some(c.name.name.as_str()),
                _ => None,
            })
            .collect();
        Estimator {
            funcs,
            consts,
            memo: HashMap::new(),
            stack: Vec::new(),
            calls_derivative: false,
        }
    }
}

/// One function's variables (float, differential) and its work so far.
struct Body {
    vars: HashMap<String, (bool, bool)>,
    work: Work,
    blind: bool,
}

/// What an expression is: a float, a differential one.
#[derive(Clone, Copy)]
struct Val {
    float: bool,
    active: bool,
}

const INT: Val = Val {
    float: false,
    active: false,
};

impl<'a> Estimator<'a> {
    /// The work of one call of `f` whose parameters are differential where
    /// `active` says.
    fn func(&mut self, f: &'a FuncDecl, active: &[bool]) -> Option<Work> {
        let key = (f.name.name.clone(), active.to_vec());
        if let Some(w) = self.memo.get(&key) {
            return *w;
        }
        if self.stack.contains(&f.name.name) {
            // Recursion: the calls already counted stand for it.
            return Some(Work::default());
        }
        let body = f.body.as_ref()?;
        let mut b = Body {
            vars: HashMap::new(),
            work: Work::default(),
            blind: false,
        };
        for (p, &a) in f.params.iter().zip(active) {
            let fl = is_float(p.ty);
            b.vars.insert(p.name.name.clone(), (fl, fl && a));
        }
        self.stack.push(f.name.name.clone());
        self.stmts(&mut b, body, 1.0);
        self.stack.pop();
        let w = (!b.blind).then_some(b.work);
        self.memo.insert(key, w);
        w
    }

    fn stmts(&mut self, b: &mut Body, stmts: &'a [Stmt], t: f64) {
        for s in stmts {
            self.stmt(b, s, t);
        }
    }

    fn stmt(&mut self, b: &mut Body, s: &'a Stmt, t: f64) {
        match s {
            Stmt::Decl { ty, name, init, .. } => {
                let v = init.as_ref().map_or(INT, |e| self.expr(b, e, t));
                let fl = match ty {
                    DeclType::Base(ty) => is_float(*ty),
                    DeclType::Auto => v.float,
                };
                b.vars.insert(name.name.clone(), (fl, fl));
            }
            Stmt::ArrayDecl {
                ty,
                name,
                len,
                init,
                ..
            } => {
                if let Some(e) = len {
                    self.expr(b, e, t);
                }
                for e in init.iter().flatten() {
                    self.expr(b, e, t);
                    cost(b, t, 1.0, f64::from(u8::from(is_float(*ty))));
                }
                b.vars
                    .insert(name.name.clone(), (is_float(*ty), is_float(*ty)));
            }
            Stmt::Destructure { names, value, .. } => {
                let v = self.expr(b, value, t);
                for n in names {
                    b.vars.insert(n.name.clone(), (true, v.active));
                }
            }
            Stmt::Assign {
                target, op, value, ..
            } => self.assign(b, target, *op, value, t),
            Stmt::IncDec { target, .. } => {
                self.expr(b, target, t);
            }
            Stmt::Expr(e) | Stmt::Return(Some(e), _) => {
                self.expr(b, e, t);
            }
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                self.expr(b, cond, t);
                self.stmts(b, then_branch, t / 2.0);
                self.stmts(b, else_branch.as_deref().unwrap_or_default(), t / 2.0);
            }
            Stmt::While { cond, body, .. } => {
                self.expr(b, cond, t * LOOP);
                self.stmts(b, body, t * LOOP);
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                let n = trips(init.as_deref(), cond.as_ref());
                if let Some(s) = init {
                    self.stmt(b, s, t);
                }
                if let Some(c) = cond {
                    self.expr(b, c, t * n);
                }
                if let Some(s) = step {
                    self.stmt(b, s, t * n);
                }
                self.stmts(b, body, t * n);
            }
            Stmt::Block(body) => self.stmts(b, body, t),
            Stmt::Attributed { stmt, .. } => self.stmt(b, stmt, t),
            Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return(None, _) | Stmt::Error => (),
        }
    }

    fn assign(&mut self, b: &mut Body, target: &'a Expr, op: AssignOp, value: &'a Expr, t: f64) {
        let v = self.expr(b, value, t);
        let old = match &target.kind {
            ExprKind::Index(a, i) => {
                self.expr(b, i, t);
                let (fl, act) = var(b, a);
                if op != AssignOp::Set {
                    cost(b, t, 1.0, f64::from(u8::from(act)));
                }
                // The store, and its tangent's (zero when the value is primal).
                cost(b, t, 1.0, f64::from(u8::from(act || v.active)));
                Val {
                    float: fl,
                    active: act,
                }
            }
            ExprKind::Var(n) => {
                let (fl, act) = b.vars.get(n).copied().unwrap_or((false, false));
                Val {
                    float: fl,
                    active: act,
                }
            }
            _ => INT,
        };
        let bin = match op {
            AssignOp::Set => return,
            AssignOp::Add => BinOp::Add,
            AssignOp::Sub => BinOp::Sub,
            AssignOp::Mul => BinOp::Mul,
            AssignOp::Div => BinOp::Div,
        };
        if old.float || v.float {
            binary(b, t, bin, old.active, v.active);
        }
    }

    fn expr(&mut self, b: &mut Body, e: &'a Expr, t: f64) -> Val {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Error => INT,
            ExprKind::Float(_) => Val {
                float: true,
                active: false,
            },
            ExprKind::Var(n) => match b.vars.get(n) {
                Some(&(float, active)) => Val { float, active },
                None => Val {
                    float: self.consts.contains(n.as_str()),
                    active: false,
                },
            },
            ExprKind::Unary(op, a) => {
                let v = self.expr(b, a, t);
                if *op == UnOp::Neg && v.float {
                    cost(b, t, 1.0, f64::from(u8::from(v.active)));
                    return v;
                }
                INT
            }
            ExprKind::Binary(op, x, y) => {
                let (x, y) = (self.expr(b, x, t), self.expr(b, y, t));
                if !(x.float || y.float) {
                    return INT;
                }
                if matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
                ) {
                    binary(b, t, *op, x.active, y.active);
                    return Val {
                        float: true,
                        active: x.active || y.active,
                    };
                }
                cost(b, t, 1.0, 0.0);
                INT
            }
            ExprKind::Ternary(c, x, y) => {
                self.expr(b, c, t);
                let (x, y) = (self.expr(b, x, t / 2.0), self.expr(b, y, t / 2.0));
                let active = x.active || y.active;
                cost(b, t, 1.0, f64::from(u8::from(active)));
                Val {
                    float: x.float || y.float,
                    active,
                }
            }
            ExprKind::Call(name, args) => self.call(b, &name.name, args, t),
            ExprKind::Cast(ty, a) => {
                let v = self.expr(b, a, t);
                let fl = is_float(*ty);
                if fl != v.float {
                    cost(b, t, 1.0, 0.0);
                }
                Val {
                    float: fl,
                    active: fl && v.active,
                }
            }
            ExprKind::Index(a, i) => {
                self.expr(b, i, t);
                let (float, active) = var(b, a);
                if float {
                    cost(b, t, 1.0, f64::from(u8::from(active)));
                }
                Val { float, active }
            }
            ExprKind::View(a, lo, hi) => {
                self.expr(b, lo, t);
                if let Some(hi) = hi {
                    self.expr(b, hi, t);
                }
                let (float, active) = var(b, a);
                Val { float, active }
            }
            ExprKind::Tuple(es) => {
                let mut active = false;
                for e in es {
                    active |= self.expr(b, e, t).active;
                }
                Val {
                    float: true,
                    active,
                }
            }
        }
    }

    fn call(&mut self, b: &mut Body, name: &str, args: &'a [Expr], t: f64) -> Val {
        let vals: Vec<Val> = args.iter().map(|a| self.expr(b, a, t)).collect();
        let any = vals.iter().any(|v| v.active);
        if let Some(&g) = self.funcs.get(name) {
            let active: Vec<bool> = vals.iter().map(|v| v.active).collect();
            match self.func(g, &active) {
                Some(w) => b.work.add(w, t),
                None => b.blind = true,
            }
            let float = matches!(g.ret, ReturnType::Base(ty) if is_float(ty));
            return Val {
                float,
                active: float && any,
            };
        }
        match name {
            "len" | "print" => INT,
            "no_diff" => Val {
                float: vals.first().is_some_and(|v| v.float),
                active: false,
            },
            "min" | "max" => {
                cost(b, t, 1.0, f64::from(u8::from(any)));
                Val {
                    float: vals.iter().any(|v| v.float),
                    active: any,
                }
            }
            _ => match MathFunc::from_source_name(name) {
                Some(m) => {
                    let n = vals.iter().filter(|v| v.active).count() as f64;
                    cost(b, t, math_cost(m), 2.0 * n);
                    Val {
                        float: true,
                        active: any,
                    }
                }
                None => {
                    self.calls_derivative = true;
                    b.blind = true;
                    INT
                }
            },
        }
    }
}

/// Adds `primal` and `lane` instructions run `t` times.
fn cost(b: &mut Body, t: f64, primal: f64, lane: f64) {
    b.work.add(Work { primal, lane }, t);
}

/// A float `x op y`, `x` and `y` differential or not.
fn binary(b: &mut Body, t: f64, op: BinOp, x: bool, y: bool) {
    let both = f64::from(u8::from(x && y));
    let (primal, lane) = match op {
        BinOp::Add => (1.0, both),
        BinOp::Sub => (1.0, f64::from(u8::from(y))),
        // A `mulz` per differential operand, their sum.
        BinOp::Mul => (1.0, 2.0 * f64::from(u8::from(x) + u8::from(y)) + both),
        // dx / y, and -x / y^2 (primal) times dy.
        _ => (
            4.0 + 2.0 * f64::from(u8::from(y)),
            4.0 * f64::from(u8::from(x)) + 2.0 * f64::from(u8::from(y)) + both,
        ),
    };
    cost(b, t, primal, lane);
}

/// Primal instructions of a math function with its partial derivatives.
pub fn math_cost(m: MathFunc) -> f64 {
    use MathFunc::*;
    match m {
        Abs | Floor | Ceil | Round | Trunc => 1.0,
        Sqrt => 8.0,
        Fmod => 10.0,
        // The result is its own partial (`exp`), or the partial a division.
        Exp | Expm1 | Log | Log1p | Log2 | Log10 | Cbrt | Hypot => 24.0,
        _ => 40.0,
    }
}

/// Whether the array expression `a` (a variable) is float, differential.
fn var(b: &Body, a: &Expr) -> (bool, bool) {
    match &a.kind {
        ExprKind::Var(n) => b.vars.get(n).copied().unwrap_or((false, false)),
        _ => (false, false),
    }
}

/// Iterations of `for (int i = A; i < B; ...)` with literal `A` and `B`
/// (`<=` one more), else [`LOOP`].
fn trips(init: Option<&Stmt>, cond: Option<&Expr>) -> f64 {
    let from = match init {
        Some(Stmt::Decl {
            init:
                Some(Expr {
                    kind: ExprKind::Int(a),
                    ..
                }),
            ..
        }) => *a,
        _ => return LOOP,
    };
    match cond.map(|c| &c.kind) {
        Some(ExprKind::Binary(op @ (BinOp::Lt | BinOp::Le), _, to)) => match to.kind {
            ExprKind::Int(to) => {
                let n = to - from + i64::from(*op == BinOp::Le);
                n.clamp(1, 1 << 20) as f64
            }
            _ => LOOP,
        },
        _ => LOOP,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(primal: f64, lane: f64) -> u32 {
        width_for(Work { primal, lane })
    }

    #[test]
    fn the_narrowest_width_at_least_four_primal_over_lane() {
        assert_eq!(w(0.0, 10.0), NARROW);
        assert_eq!(w(10.0, 10.0), 4);
        assert_eq!(w(10.1, 10.0), 8);
        assert_eq!(w(20.0, 10.0), 8);
        assert_eq!(w(40.0, 10.0), 16);
        assert_eq!(w(41.0, 10.0), 32);
        assert_eq!(w(1000.0, 1.0), WIDE);
        assert_eq!(w(1.0, 0.0), WIDE);
    }

    /// A call of a generated derivative (here a Hessian, itself chunked)
    /// gives the narrowest chunk, in the caller and in its callers; an
    /// `extern` the estimate cannot see into keeps the widest.
    #[test]
    fn calls_of_derivatives_get_the_narrowest_chunk() {
        let src =
            "[hessian(H)] double f(double[] x) { return x[0] * x[0] * x[1] + sin(x[1] * x[2]); }
static double g(double[] x) { double h[9]; H(x, h); return h[0] + sin(h[4]); }
double k(double[] x) { return g(x) * exp(x[0]); }
extern double e(double t);
double m(double[] x) { return e(x[0]) + sin(x[1]); }";
        let (items, errs) = crate::parse::parse_program(src);
        assert!(errs.is_empty(), "{errs:?}");
        let func = |name: &str| {
            items
                .iter()
                .find_map(|i| match i {
                    Item::Func(f) if f.name.name == name => Some(f),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{name}"))
        };
        assert_eq!(choose(&items, func("g"), &[true]), NARROW);
        assert_eq!(choose(&items, func("k"), &[true]), NARROW);
        assert_eq!(choose(&items, func("m"), &[true]), WIDE);
        // `f` itself, mostly math: wider than the narrowest.
        assert!(choose(&items, func("f"), &[true]) > NARROW);
    }

    /// A float product of a tangent by a constant, a math call, a loop of
    /// literal bounds, a callee with its arguments' activity.
    #[test]
    fn counts_follow_activity_and_loops() {
        let src = "static double sq(double a, double b) { return a * b; }
void f(double x, double c, out double[] y) {
    for (int i = 0; i < 3; i++) y[i] = sin(x) * c + sq(x, c);
}";
        let (items, errs) = crate::parse::parse_program(src);
        assert!(errs.is_empty(), "{errs:?}");
        let Some(Item::Func(f)) = items.get(1) else {
            panic!("f")
        };
        // Per iteration: sin (40, lane 2), `* c` (1, lane 2), `sq`'s
        // product (1, lane 2), the sum (1, lane 1), the store (1, lane 1).
        let got = estimate(&items, f, &[true, false, true]).expect("seen");
        assert_eq!(
            got,
            Work {
                primal: 3.0 * 44.0,
                lane: 3.0 * 8.0
            }
        );
        // `c` Dual too: both products carry two tangents (5 a lane each).
        let got = estimate(&items, f, &[true, true, true]).expect("seen");
        assert_eq!(
            got,
            Work {
                primal: 3.0 * 44.0,
                lane: 3.0 * 14.0
            }
        );
    }
}
