//! The values of `element_pattern`'s abstract run: integers as linear
//! forms over atoms, floating values as the sets of reads they depend on,
//! arrays as references; and the operations on them.

use crate::ast::*;
use std::collections::{BTreeMap, BTreeSet};

/// An integer: `c` plus each atom times its coefficient.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Lin {
    pub c: i64,
    pub terms: BTreeMap<String, i64>,
}

impl Lin {
    pub fn constant(c: i64) -> Lin {
        Lin {
            c,
            terms: BTreeMap::new(),
        }
    }

    pub fn atom(text: String) -> Lin {
        Lin {
            c: 0,
            terms: BTreeMap::from([(text, 1)]),
        }
    }

    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.c)
    }

    pub fn add(&self, o: &Lin, sign: i64) -> Option<Lin> {
        let mut out = self.clone();
        out.c = out.c.checked_add(o.c.checked_mul(sign)?)?;
        for (t, k) in &o.terms {
            let e = out.terms.entry(t.clone()).or_insert(0);
            *e = e.checked_add(k.checked_mul(sign)?)?;
            if *e == 0 {
                out.terms.remove(t);
            }
        }
        Some(out)
    }

    pub fn scale(&self, k: i64) -> Option<Lin> {
        if k == 0 {
            return Some(Lin::constant(0));
        }
        let mut out = Lin::constant(self.c.checked_mul(k)?);
        for (t, v) in &self.terms {
            out.terms.insert(t.clone(), v.checked_mul(k)?);
        }
        Some(out)
    }

    /// The form as `.ad` text.
    pub fn text(&self) -> String {
        let mut s = format!("({}", self.c);
        for (t, k) in &self.terms {
            s += &format!(" + ({k}) * ({t})");
        }
        s + ")"
    }
}

/// A read of `F`'s input parameter at an index.
pub(super) type Read = (usize, Lin);

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Val {
    Int(Lin),
    /// A boolean known for every iteration, or not known (`None`).
    Bool(Option<bool>),
    /// A boolean not known for every iteration, but for each: an integer
    /// condition as `.ad` text in the loop's scope (over the atoms of
    /// `Lin`), which the element loop can evaluate per iteration.
    Pred(String),
    Float(BTreeSet<Read>),
    Arr(ArrRef),
    Void,
}

/// An array: one of `F`'s parameters or a local array of the body, from
/// `off` on (a view's start), `len` elements (`None`: to the end).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ArrRef {
    Param {
        param: usize,
        off: Lin,
        len: Option<Lin>,
    },
    Local {
        id: usize,
        off: i64,
        len: i64,
    },
}

pub(super) fn zero(t: BaseType) -> Val {
    match t {
        BaseType::Int => Val::Int(Lin::constant(0)),
        BaseType::Bool => Val::Bool(Some(false)),
        BaseType::Float | BaseType::Double => Val::Float(BTreeSet::new()),
    }
}

/// `v` as a `t` (a declaration's, a parameter's, a cast's).
pub(super) fn convert(v: Val, t: BaseType) -> Option<Val> {
    Some(match (v, t) {
        (v @ Val::Int(_), BaseType::Int) => v,
        (v @ (Val::Bool(_) | Val::Pred(_)), BaseType::Bool) => v,
        (v @ Val::Float(_), BaseType::Float | BaseType::Double) => v,
        (Val::Int(_), BaseType::Float | BaseType::Double) => Val::Float(BTreeSet::new()),
        _ => return None,
    })
}

/// The value of `old op= v`.
pub(super) fn combine(op: AssignOp, old: Val, v: Val) -> Option<Val> {
    let bin = match op {
        AssignOp::Set => {
            // (The target keeps its type.)
            return match (&old, &v) {
                (Val::Int(_), Val::Int(_)) => Some(v),
                (Val::Bool(_) | Val::Pred(_), Val::Bool(_) | Val::Pred(_)) => Some(v),
                (Val::Float(_), Val::Float(_)) => Some(v),
                (Val::Float(_), Val::Int(_)) => Some(Val::Float(BTreeSet::new())),
                _ => None,
            };
        }
        AssignOp::Add => BinOp::Add,
        AssignOp::Sub => BinOp::Sub,
        AssignOp::Mul => BinOp::Mul,
        AssignOp::Div => BinOp::Div,
    };
    let r = binary(bin, old.clone(), v)?;
    convert(
        r,
        match old {
            Val::Int(_) => BaseType::Int,
            Val::Float(_) => BaseType::Double,
            _ => return None,
        },
    )
}

pub(super) fn binary(op: BinOp, x: Val, y: Val) -> Option<Val> {
    use BinOp::*;
    Some(match (x, y) {
        (Val::Int(a), Val::Int(b)) => match op {
            Add => Val::Int(a.add(&b, 1)?),
            Sub => Val::Int(a.add(&b, -1)?),
            Mul => match (a.as_const(), b.as_const()) {
                (Some(k), _) => Val::Int(b.scale(k)?),
                (_, Some(k)) => Val::Int(a.scale(k)?),
                _ => Val::Int(Lin::atom(short(format!("{} * {}", a.text(), b.text()))?)),
            },
            Div | Rem => match (a.as_const(), b.as_const()) {
                (Some(x), Some(y)) => Val::Int(Lin::constant(if op == Div {
                    x.checked_div(y)?
                } else {
                    x.checked_rem(y)?
                })),
                _ => Val::Int(Lin::atom(short(format!(
                    "{} {} {}",
                    a.text(),
                    op.spelling(),
                    b.text()
                ))?)),
            },
            Eq | Ne | Lt | Le | Gt | Ge => match (a.as_const(), b.as_const()) {
                (Some(x), Some(y)) => Val::Bool(Some(match op {
                    Eq => x == y,
                    Ne => x != y,
                    Lt => x < y,
                    Le => x <= y,
                    Gt => x > y,
                    _ => x >= y,
                })),
                _ => pred(format!("({} {} {})", a.text(), op.spelling(), b.text())),
            },
            And | Or => return None,
        },
        (a @ (Val::Bool(_) | Val::Pred(_)), b @ (Val::Bool(_) | Val::Pred(_))) => match op {
            Eq | Ne => Val::Bool(match (a, b) {
                (Val::Bool(Some(x)), Val::Bool(Some(y))) => Some((x == y) == (op == Eq)),
                _ => None,
            }),
            _ => return None,
        },
        (x @ (Val::Float(_) | Val::Int(_)), y @ (Val::Float(_) | Val::Int(_))) => {
            let deps = |v: Val| match v {
                Val::Float(d) => d,
                _ => BTreeSet::new(),
            };
            match op {
                Add | Sub | Mul | Div => {
                    let mut d = deps(x);
                    d.extend(deps(y));
                    Val::Float(d)
                }
                Eq | Ne | Lt | Le | Gt | Ge => Val::Bool(None),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The longest text of an atom or a condition: an expression that names
/// another twice (`p = p * p` in an inner loop) doubles at each step.
const MAX_TEXT: usize = 2048;

/// `text`, when it is no longer than `MAX_TEXT`.
fn short(text: String) -> Option<String> {
    (text.len() <= MAX_TEXT).then_some(text)
}

/// The condition `text`, or a boolean not known when it is too long to
/// evaluate per iteration.
fn pred(text: String) -> Val {
    short(text).map_or(Val::Bool(None), Val::Pred)
}

/// `!v` of a boolean `v`.
pub(super) fn not(v: Val) -> Option<Val> {
    Some(match v {
        Val::Bool(b) => Val::Bool(b.map(|b| !b)),
        Val::Pred(t) => pred(format!("(!{t})")),
        _ => return None,
    })
}

/// `x && y` (`and`) or `x || y` of booleans: known when one operand
/// decides it or both are known, a condition per iteration when both are
/// (or one is, and the other does not decide), else not known.
pub(super) fn logic(and: bool, x: Val, y: Val) -> Option<Val> {
    let decides = |v: &Val| *v == Val::Bool(Some(!and));
    let neutral = |v: &Val| *v == Val::Bool(Some(and));
    let is_bool = |v: &Val| matches!(v, Val::Bool(_) | Val::Pred(_));
    (is_bool(&x) && is_bool(&y)).then_some(())?;
    Some(match (x, y) {
        (x, _) if decides(&x) => x,
        (_, y) if decides(&y) => y,
        (x, y) if neutral(&x) => y,
        (x, y) if neutral(&y) => x,
        (Val::Pred(a), Val::Pred(b)) => {
            pred(format!("({a} {} {b})", if and { "&&" } else { "||" }))
        }
        _ => Val::Bool(None),
    })
}

/// The view `r[lo..hi]`.
pub(super) fn view(r: ArrRef, lo: Lin, hi: Option<Lin>) -> Option<ArrRef> {
    let len = match &hi {
        Some(h) => Some(h.add(&lo, -1)?),
        None => None,
    };
    Some(match r {
        ArrRef::Param { param, off, len: l } => ArrRef::Param {
            param,
            off: off.add(&lo, 1)?,
            len: match (len, l) {
                (Some(n), _) => Some(n),
                (None, Some(l)) => Some(l.add(&lo, -1)?),
                (None, None) => None,
            },
        },
        ArrRef::Local { id, off, len: l } => {
            let lo = lo.as_const()?;
            let n = match len {
                Some(n) => n.as_const()?,
                None => l - lo,
            };
            (lo >= 0 && n >= 0 && lo + n <= l).then_some(())?;
            ArrRef::Local {
                id,
                off: off + lo,
                len: n,
            }
        }
    })
}
