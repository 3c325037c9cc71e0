//! The names a function body may assign after their declaration, read
//! before the body is lowered: a scalar local or by-value parameter whose
//! name is none of them keeps its declaration's value wherever it is in
//! scope, so the join blocks take no parameter for it (maximal SSA's
//! parameter per variable per join was quadratic: a function of 500
//! parameters with 2,000 joins, a Jacobian's wrapper, had a million).
//!
//! A variable's value changes only through an assignment or `++`/`--` of
//! its name, or as the argument of a user function's `inout`/`out` scalar
//! parameter (`FnLowerer::set_var`'s callers). The scan looks at names,
//! not bindings: a name assigned anywhere counts for every variable of
//! that name, whatever the scope (shadowing only makes it cautious).
//!
//! Guarantees: every name a `Place::Var` write reaches is in the set
//! (checked in the lowering: a write to a variable this set called fixed
//! makes it lower the function again with every variable in the joins).

use super::items::Globals;
use crate::ast::*;
use std::collections::HashSet;

/// The names `body` may write as variables (see the module comment).
pub(super) fn assigned_names(body: &[Stmt], globals: &Globals) -> HashSet<String> {
    let mut scan = Scan {
        globals,
        names: HashSet::new(),
    };
    scan.stmts(body);
    scan.names
}

struct Scan<'g> {
    globals: &'g Globals,
    names: HashSet<String>,
}

impl Scan<'_> {
    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn target(&mut self, target: &Expr) {
        if let ExprKind::Var(name) = &target.kind {
            self.names.insert(name.clone());
        }
        self.expr(target);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Decl { init, .. } => init.iter().for_each(|e| self.expr(e)),
            Stmt::ArrayDecl { len, init, .. } => len
                .iter()
                .chain(init.iter().flatten())
                .for_each(|e| self.expr(e)),
            Stmt::Destructure { value, .. } | Stmt::Expr(value) => self.expr(value),
            Stmt::Assign { target, value, .. } => {
                self.target(target);
                self.expr(value);
            }
            Stmt::IncDec { target, .. } => self.target(target),
            Stmt::If {
                cond,
                then_branch,
                else_branch,
                ..
            } => {
                self.expr(cond);
                self.stmts(then_branch);
                self.stmts(else_branch.as_deref().unwrap_or(&[]));
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond);
                self.stmts(body);
            }
            Stmt::For {
                init,
                cond,
                step,
                body,
                ..
            } => {
                init.iter().chain(step.iter()).for_each(|s| self.stmt(s));
                cond.iter().for_each(|e| self.expr(e));
                self.stmts(body);
            }
            Stmt::Return(e, _) => e.iter().for_each(|e| self.expr(e)),
            Stmt::Block(body) => self.stmts(body),
            Stmt::Attributed { stmt, .. } => self.stmt(stmt),
            Stmt::Break(_) | Stmt::Continue(_) | Stmt::Error => (),
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Var(_)
            | ExprKind::Error => (),
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => self.expr(a),
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Ternary(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            ExprKind::View(a, lo, hi) => {
                self.expr(a);
                self.expr(lo);
                hi.iter().for_each(|h| self.expr(h));
            }
            ExprKind::Tuple(items) => items.iter().for_each(|e| self.expr(e)),
            ExprKind::Call(f, args) => {
                // Built-ins write no variable; a user function writes the
                // variables passed to its `inout`/`out` scalars.
                if let Some(sig) = self.globals.funcs.get(&f.name) {
                    for (p, a) in sig.params.iter().zip(args) {
                        if let (false, Mode::Inout | Mode::Out, ExprKind::Var(name)) =
                            (p.is_array, p.mode, &a.kind)
                        {
                            self.names.insert(name.clone());
                        }
                    }
                }
                args.iter().for_each(|a| self.expr(a));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::compile_to_ir;

    /// The block parameters of `name` after lowering (the entry's left out).
    fn join_params(source: &str, name: &str) -> usize {
        let m = compile_to_ir(source).expect("compiles").module;
        let f = m.funcs.iter().find(|f| f.name == name).expect("defined");
        f.layout[1..]
            .iter()
            .map(|b| f.dfg.block_params(*b).len())
            .sum()
    }

    /// 40 parameters and a local array, read in 20 loops: only the loop
    /// counters and `s` (assigned) go through the joins, not the
    /// parameters (maximal SSA: 42 per join, hundreds of joins).
    #[test]
    fn variables_never_assigned_take_no_join_parameters() {
        let n = 40;
        let params: Vec<String> = (0..n).map(|i| format!("double x{i}")).collect();
        let mut s = format!(
            "double f({}) {{\n  double a[4];\n  double s = 0.0;\n",
            params.join(", ")
        );
        for i in 0..20 {
            s += &format!(
                "  for (int i = 0; i < 4; i++) {{ a[i] = x{i}; s = s + a[i] * x{}; }}\n",
                i + 1
            );
        }
        s += "  return s;\n}\n";
        // Per loop: header, body join and exit carry `s` and the counter.
        let params = join_params(&s, "f");
        assert!(params <= 20 * 6, "{params} join parameters");
        // A parameter assigned once goes through every join after all.
        let assigned = s.replace("double s = 0.0;", "double s = 0.0; x0 = x0 * 2.0;");
        assert!(join_params(&assigned, "f") > params);
    }

    /// `inout` arguments and `++` write their variables: those keep their
    /// join parameters, and the program's value is right.
    #[test]
    fn writes_through_calls_and_increments_are_seen() {
        let src = "void twice(inout double v) { v = v * 2.0; }\n\
                   double f(double x) {\n  double y = x;\n  int k = 0;\n\
                   for (int i = 0; i < 3; i++) { twice(y); k++; }\n  return y + k;\n}\n";
        assert!(join_params(src, "f") >= 3 * 2);
    }
}
