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

/// The nesting accepted on a thread whose stack is not one of
/// `with_deep_stack`'s (when no thread can be made at all): what a 2 MiB
/// stack holds at `DEEP_STACK / MAX_DEPTH` bytes a level.
const CALLER_STACK_DEPTH: usize = 90;

std::thread_local! {
    /// The nesting this thread's stack holds (`with_deep_stack` sets it).
    static DEPTH_LIMIT: std::cell::Cell<usize> = const { std::cell::Cell::new(CALLER_STACK_DEPTH) };
}

/// The deepest nesting the current thread accepts: `MAX_DEPTH` on a
/// `DEEP_STACK` thread, proportionally less on the smaller stack
/// `with_deep_stack` settles for when the address space is limited.
pub fn depth_limit() -> usize {
    DEPTH_LIMIT.with(|d| d.get())
}

enum Node<'a> {
    E(&'a Expr),
    S(&'a Stmt),
}

/// The first node nested deeper than `MAX_DEPTH`, as a diagnostic.
/// Iterative, so any depth is safe to check.
pub fn check(items: &[Item]) -> Option<Diagnostic> {
    let limit = depth_limit();
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
            if d > limit {
                return Some(too_deep(node_span(&node), limit));
            }
            push_children(&mut stack, node, d + 1);
        }
    }
    None
}

fn too_deep(span: adc_ir::Span, limit: usize) -> Diagnostic {
    let why = if limit < MAX_DEPTH {
        " for the stack the compiler could get (the address space is limited)"
    } else {
        ""
    };
    Diagnostic::error(
        "E0006",
        format!("nesting too deep (more than {limit} levels of expressions and statements{why})"),
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
/// Where the address space is too small for that stack (a `ulimit -v`, or
/// several compiles at once under one), it settles for a quarter, a
/// sixteenth, ..., and `check` accepts proportionally less nesting
/// (`depth_limit`), so a deep program is E0006, never a stack overflow.
/// On the caller's thread, when no thread can be made at all, it accepts
/// what a 2 MiB stack holds.
pub fn with_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut slot = Some(f);
    let room = address_space_limit().map_or(usize::MAX, |bytes| bytes / 8);
    for shift in [0, 2, 4, 6, 8] {
        let size = DEEP_STACK >> shift;
        if size > room && shift < 8 {
            continue;
        }
        let depth = MAX_DEPTH >> shift;
        let pending = &mut slot;
        let result = std::thread::scope(|scope| {
            let spawned = std::thread::Builder::new()
                .name("adc-compile".into())
                .stack_size(size)
                .spawn_scoped(scope, move || {
                    DEPTH_LIMIT.with(|d| d.set(depth));
                    pending.take().map(|f| f())
                });
            match spawned {
                Ok(handle) => Some(match handle.join() {
                    Ok(r) => r,
                    Err(payload) => std::panic::resume_unwind(payload),
                }),
                Err(_) => None,
            }
        });
        if let Some(r) = result.flatten() {
            return r;
        }
    }
    // No thread could start, so `slot` still holds the closure.
    match slot.take() {
        Some(f) => f(),
        None => unreachable!("a spawned thread ran `f` and returned its result"),
    }
}

/// `RLIMIT_AS`, when there is one: the stack reserved for the compile
/// thread counts against it, and so does every later allocation (a
/// 256 MiB stack under a 300 MB limit left too little for the heap).
fn address_space_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
        if ok && lim.rlim_cur != libc::RLIM_INFINITY {
            return usize::try_from(lim.rlim_cur).ok();
        }
    }
    None
}
