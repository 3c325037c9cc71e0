//! Nesting limits: the lowering walk and every later pass recurse over the
//! tree (and its drop glue does too), so a program nested deeper than
//! `MAX_DEPTH` is rejected with E0006 before any of them runs, and the walks
//! that remain run on a thread with a stack sized for that depth
//! (`with_deep_stack`).

use crate::ast::{Expr, ExprKind, FuncDecl, Item, Stmt};
use crate::Diagnostic;

/// Deepest nesting of expressions and statements accepted. A flat sum
/// `x + x + ... + x` of `n` terms is nested `n - 1` deep (binary operators
/// associate to the left), so this allows sums of 200,000 terms.
pub const MAX_DEPTH: usize = 200_000;

/// Stack for the threads that run the compiler's recursive walks: enough
/// for `MAX_DEPTH` levels in a debug build (measured: a few KiB a level).
/// Only the pages touched are committed.
pub const DEEP_STACK: usize = 4 << 30;

enum Node<'a> {
    E(&'a Expr),
    S(&'a Stmt),
}

/// The first node nested deeper than `MAX_DEPTH`, as a diagnostic.
/// Iterative, so any depth is safe to check.
pub fn check(items: &[Item]) -> Option<Diagnostic> {
    let mut stack: Vec<(Node, usize)> = Vec::new();
    for item in items {
        match item {
            Item::Func(FuncDecl { body: Some(b), .. }) => {
                stack.extend(b.iter().map(|s| (Node::S(s), 1)))
            }
            Item::Const(c) => stack.push((Node::E(&c.value), 1)),
            _ => {}
        }
        while let Some((node, d)) = stack.pop() {
            if d > MAX_DEPTH {
                return Some(too_deep(node_span(&node)));
            }
            push_children(&mut stack, node, d + 1);
        }
    }
    None
}

fn too_deep(span: adc_ir::Span) -> Diagnostic {
    Diagnostic::error(
        "E0006",
        format!("nesting too deep (more than {MAX_DEPTH} levels of expressions and statements)"),
        span,
    )
}

fn node_span(node: &Node) -> adc_ir::Span {
    match node {
        Node::E(e) => e.span,
        Node::S(s) => stmt_span(s),
    }
}

fn stmt_span(s: &Stmt) -> adc_ir::Span {
    match s {
        Stmt::Decl { span, .. }
        | Stmt::ArrayDecl { span, .. }
        | Stmt::Destructure { span, .. }
        | Stmt::Assign { span, .. }
        | Stmt::IncDec { span, .. }
        | Stmt::If { span, .. }
        | Stmt::While { span, .. }
        | Stmt::For { span, .. }
        | Stmt::Break(span)
        | Stmt::Continue(span)
        | Stmt::Return(_, span) => *span,
        Stmt::Expr(e) => e.span,
        Stmt::Block(b) => b.first().map_or(adc_ir::Span::UNDEFINED, stmt_span),
        Stmt::Attributed { stmt, .. } => stmt_span(stmt),
        Stmt::Error => adc_ir::Span::UNDEFINED,
    }
}

fn push_children<'a>(stack: &mut Vec<(Node<'a>, usize)>, node: Node<'a>, d: usize) {
    let mut e = |x: &'a Expr| stack.push((Node::E(x), d));
    match node {
        Node::E(x) => match &x.kind {
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => e(a),
            ExprKind::Binary(_, a, b) | ExprKind::Index(a, b) => {
                e(a);
                e(b);
            }
            ExprKind::View(a, b, c) => {
                e(a);
                e(b);
                if let Some(c) = c {
                    e(c);
                }
            }
            ExprKind::Ternary(a, b, c) => {
                e(a);
                e(b);
                e(c);
            }
            ExprKind::Call(_, xs) | ExprKind::Tuple(xs) => xs.iter().for_each(e),
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::Var(_)
            | ExprKind::Error => {}
        },
        Node::S(s) => {
            let mut body = |b: &'a [Stmt]| stack.extend(b.iter().map(|s| (Node::S(s), d)));
            match s {
                Stmt::Decl { init, .. } => {
                    if let Some(x) = init {
                        stack.push((Node::E(x), d));
                    }
                }
                Stmt::ArrayDecl { len, init, .. } => {
                    stack.extend(len.iter().map(|x| (Node::E(x), d)));
                    stack.extend(init.iter().flatten().map(|x| (Node::E(x), d)));
                }
                Stmt::Destructure { value, .. } => stack.push((Node::E(value), d)),
                Stmt::Assign { target, value, .. } => {
                    stack.push((Node::E(target), d));
                    stack.push((Node::E(value), d));
                }
                Stmt::IncDec { target, .. } | Stmt::Expr(target) => {
                    stack.push((Node::E(target), d))
                }
                Stmt::If {
                    cond,
                    then_branch,
                    else_branch,
                    ..
                } => {
                    body(then_branch);
                    if let Some(b) = else_branch {
                        body(b);
                    }
                    stack.push((Node::E(cond), d));
                }
                Stmt::While { cond, body: b, .. } => {
                    body(b);
                    stack.push((Node::E(cond), d));
                }
                Stmt::For {
                    init,
                    cond,
                    step,
                    body: b,
                    ..
                } => {
                    body(b);
                    stack.extend(init.iter().chain(step).map(|s| (Node::S(s), d)));
                    stack.extend(cond.iter().map(|x| (Node::E(x), d)));
                }
                Stmt::Return(x, _) => stack.extend(x.iter().map(|x| (Node::E(x), d))),
                Stmt::Block(b) => body(b),
                Stmt::Attributed { stmt, .. } => stack.push((Node::S(stmt), d)),
                Stmt::Break(_) | Stmt::Continue(_) | Stmt::Error => {}
            }
        }
    }
}

/// Runs `f` on a thread with a `DEEP_STACK` stack, so the compiler's
/// recursive walks survive any program `check` accepts whatever stack the
/// caller has (a 2 MiB thread of a host embedding the library included).
/// Falls back to the caller's thread when no thread can be spawned.
pub fn with_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut slot = Some(f);
    let result = std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("adc-compile".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, || slot.take().map(|f| f()));
        match spawned {
            Ok(handle) => Some(match handle.join() {
                Ok(r) => r,
                Err(payload) => std::panic::resume_unwind(payload),
            }),
            Err(_) => None,
        }
    });
    match result.flatten() {
        Some(r) => r,
        // The thread did not start, so `slot` still holds the closure.
        None => match slot.take() {
            Some(f) => f(),
            None => unreachable!("the spawned thread ran `f` and returned its result"),
        },
    }
}
