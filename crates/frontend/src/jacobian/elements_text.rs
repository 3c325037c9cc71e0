//! `.ad` text of the expressions of `F` that element Jacobians replay
//! (`elements`): declarations before the loops and the sites' indices,
//! as text in the loop's scope, or `None` where an expression names what
//! the element code cannot evaluate there.

use crate::ast::*;
use std::collections::{BTreeMap, BTreeSet};

/// `e` as text when it uses only `known` names, constants and `len` of
/// `F`'s parameters.
pub(super) fn top_expr(
    e: &Expr,
    known: &BTreeSet<String>,
    consts: &BTreeSet<&str>,
    params: &BTreeSet<String>,
) -> Option<String> {
    let ok = |n: &str| known.contains(n) || consts.contains(n);
    print(e, &|n| ok(n).then(|| n.to_string()), Some(params))
}

/// The initializer `e` of a `float`/`double` declaration before the loops
/// as text: as `top_expr`, with floating literals, casts and the math
/// built-ins too, but naming none of `F`'s `Dual` parameters (`active`,
/// but in `len`), so that its value depends on no input.
pub(super) fn float_expr(
    e: &Expr,
    known: &BTreeSet<String>,
    consts: &BTreeSet<&str>,
    params: &BTreeSet<String>,
    active: &BTreeSet<&str>,
    funcs: &BTreeMap<&str, &FuncDecl>,
) -> Option<String> {
    let ok = |n: &str| (known.contains(n) || consts.contains(n)) && !active.contains(n);
    let name = |n: &str| ok(n).then(|| n.to_string());
    let p = |x: &Expr| float_expr(x, known, consts, params, active, funcs);
    Some(match &e.kind {
        ExprKind::Float(v) => v.clone(),
        ExprKind::Cast(t, a) => format!("{}({})", super::type_name(*t), p(a)?),
        ExprKind::Call(g, args) if is_math(&g.name) && !funcs.contains_key(g.name.as_str()) => {
            let args: Option<Vec<String>> = args.iter().map(p).collect();
            format!("{}({})", g.name, args?.join(", "))
        }
        ExprKind::Unary(UnOp::Neg, a) => format!("(-{})", p(a)?),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", p(a)?, op.spelling(), p(b)?),
        ExprKind::Ternary(c, a, b) => format!("({} ? {} : {})", p(c)?, p(a)?, p(b)?),
        _ => print(e, &name, Some(params))?,
    })
}

/// Whether a floating declaration before the loops may call `name`: the
/// math built-ins of `.ad` source.
fn is_math(name: &str) -> bool {
    matches!(name, "min" | "max") || adc_ir::MathFunc::from_source_name(name).is_some()
}

/// Whether evaluating the `.ad` text of an integer expression can stop
/// where the program would not have evaluated it: it reads an element of
/// an integer array or divides. (The element code evaluates bases and
/// sites' rows at every iteration, whichever path the iteration takes.)
pub(in crate::jacobian) fn may_fail(text: &str) -> bool {
    text.contains(['[', '/', '%'])
}

/// `e` as `.ad` text, each name through `name` (`None`: not allowed);
/// `lens` (the arrays `len` may take) allows indexing and `len` calls,
/// else only arithmetic.
pub(super) fn print(
    e: &Expr,
    name: &dyn Fn(&str) -> Option<String>,
    lens: Option<&BTreeSet<String>>,
) -> Option<String> {
    let p = |x: &Expr| print(x, name, lens);
    let rich = lens.is_some();
    Some(match &e.kind {
        ExprKind::Int(v) => format!("({v})"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Var(n) => name(n)?,
        ExprKind::Unary(UnOp::Neg, a) => format!("(-{})", p(a)?),
        ExprKind::Unary(UnOp::Not, a) => format!("(!{})", p(a)?),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", p(a)?, op.spelling(), p(b)?),
        ExprKind::Ternary(c, a, b) => format!("({} ? {} : {})", p(c)?, p(a)?, p(b)?),
        ExprKind::Index(a, i) if rich => format!("{}[{}]", p(a)?, p(i)?),
        ExprKind::Call(g, args) if rich && g.name == "len" && args.len() == 1 => {
            match &args[0].kind {
                ExprKind::Var(n) if lens.is_some_and(|l| l.contains(n)) => format!("len({n})"),
                _ => format!("len({})", p(&args[0])?),
            }
        }
        _ => return None,
    })
}
