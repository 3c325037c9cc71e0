//! The preheader test of `version`: instructions that check every
//! qualifying access of every iteration is in bounds, with no overflow
//! possible within the ranges they establish (the module doc of `version`
//! lists the terms).

use super::{Access, Coef, Outer};
use adc_ir::{BinaryOp, Block, CmpCond, Constant, Function, InstData, Span, Tag, Type, Value};

/// Appends instructions to one block.
pub(super) struct At {
    pub(super) block: Block,
    pub(super) span: Span,
}

impl At {
    fn ins(&self, func: &mut Function, data: InstData, ty: Type) -> Value {
        let inst = func.append_inst(self.block, data, &[ty], self.span);
        func.set_tag(inst, Tag::Primal);
        func.dfg.inst_results(inst)[0]
    }
    fn int(&self, func: &mut Function, k: i64) -> Value {
        self.ins(
            func,
            InstData::Const {
                value: Constant::I64(k),
            },
            Type::I64,
        )
    }
    fn bin(&self, func: &mut Function, op: BinaryOp, a: Value, b: Value) -> Value {
        self.ins(func, InstData::Binary { op, args: [a, b] }, Type::I64)
    }
    fn cmp(&self, func: &mut Function, cond: CmpCond, a: Value, b: Value) -> Value {
        self.ins(func, InstData::Cmp { cond, args: [a, b] }, Type::BOOL)
    }
    /// `a && b`, as `select a, b, false` (no boolean `and` in the IR).
    fn and(&self, func: &mut Function, a: Value, b: Value) -> Value {
        let no = self.ins(
            func,
            InstData::Const {
                value: Constant::Bool(false),
            },
            Type::BOOL,
        );
        self.ins(
            func,
            InstData::Select {
                cond: a,
                args: [b, no],
            },
            Type::BOOL,
        )
    }
}

/// The constants the bounds tests compare against, made once per guard.
#[derive(Clone, Copy)]
struct Limits {
    zero: Value,
    one: Value,
    lim31: Value,
    lim62: Value,
    min62: Value,
}

impl Limits {
    fn new(func: &mut Function, at: &At) -> Limits {
        Limits {
            zero: at.int(func, 0),
            one: at.int(func, 1),
            lim31: at.int(func, 1 << 31),
            lim62: at.int(func, 1 << 62),
            min62: at.int(func, -(1 << 62)),
        }
    }
}

/// The test that every qualifying access of every iteration is in bounds.
/// The loop's terms and each access's are conjoined group by group, then
/// the groups: a group that only depends on values an outer loop holds
/// still (an access at a row of the outer counter) leaves its loop whole
/// under `licm`, instead of being chained behind terms that change.
pub(super) fn guard(
    func: &mut Function,
    at: &At,
    init: Value,
    bound: Value,
    accesses: &[Access],
) -> Value {
    let k = Limits::new(func, at);
    let Limits {
        zero,
        one,
        lim31,
        lim62,
        min62,
    } = k;
    let last = at.bin(func, BinaryOp::Sub, bound, one);
    let all = |func: &mut Function, terms: Vec<Value>| {
        terms
            .into_iter()
            .reduce(|ok, c| at.and(func, ok, c))
            .expect("invariant: every group has a term")
    };
    let mut terms = Vec::new();
    for (cond, a, b) in [
        (CmpCond::Ge, init, zero),
        (CmpCond::Lt, init, bound),
        (CmpCond::Lt, last, lim31),
    ] {
        terms.push(at.cmp(func, cond, a, b));
    }
    let mut ok = all(func, terms);
    for acc in accesses {
        let mut terms = Vec::new();
        let c = match acc.coef {
            Coef::Const(k) => at.int(func, k),
            Coef::Value(c) => {
                terms.push(at.cmp(func, CmpCond::Ge, c, zero));
                terms.push(at.cmp(func, CmpCond::Lt, c, lim31));
                c
            }
        };
        let mut end = at.bin(func, BinaryOp::Mul, c, last);
        if let Some(o) = &acc.outer {
            let base_hi = outer_terms(func, at, &k, o, &mut terms);
            end = at.bin(func, BinaryOp::Add, base_hi, end);
        } else if acc.minus != 0 {
            // b = base - k: the indices run from b + c*i0 to b + c*(N-1).
            let k = at.int(func, acc.minus);
            let b = match acc.base {
                Some(base) => at.bin(func, BinaryOp::Sub, base, k),
                None => at.bin(func, BinaryOp::Sub, zero, k),
            };
            terms.push(at.cmp(func, CmpCond::Ge, b, min62));
            terms.push(at.cmp(func, CmpCond::Lt, b, lim62));
            let first = at.bin(func, BinaryOp::Mul, c, init);
            let first = at.bin(func, BinaryOp::Add, b, first);
            terms.push(at.cmp(func, CmpCond::Ge, first, zero));
            end = at.bin(func, BinaryOp::Add, b, end);
        } else if let Some(base) = acc.base {
            terms.push(at.cmp(func, CmpCond::Ge, base, zero));
            terms.push(at.cmp(func, CmpCond::Lt, base, lim62));
            end = at.bin(func, BinaryOp::Add, base, end);
        }
        let len = at.ins(func, InstData::ArrayLen { array: acc.array }, Type::I64);
        terms.push(at.cmp(func, CmpCond::Lt, end, len));
        let fits = all(func, terms);
        ok = at.and(func, ok, fits);
    }
    ok
}

/// The terms that `b + e * j` lies in `[0, 2^62)` for every `j` in
/// `[j0, M)` (no overflow within them); returns `b + e * (M - 1)`.
fn outer_terms(
    func: &mut Function,
    at: &At,
    k: &Limits,
    o: &Outer,
    terms: &mut Vec<Value>,
) -> Value {
    let Limits {
        zero,
        one,
        lim31,
        lim62,
        min62,
    } = *k;
    let last_j = at.bin(func, BinaryOp::Sub, o.bound, one);
    terms.push(at.cmp(func, CmpCond::Ge, o.j0, zero));
    terms.push(at.cmp(func, CmpCond::Lt, o.j0, o.bound));
    terms.push(at.cmp(func, CmpCond::Lt, last_j, lim31));
    let e = match o.e {
        Coef::Const(k) => at.int(func, k),
        Coef::Value(e) => {
            terms.push(at.cmp(func, CmpCond::Ge, e, zero));
            terms.push(at.cmp(func, CmpCond::Lt, e, lim31));
            e
        }
    };
    let mut lo = at.bin(func, BinaryOp::Mul, e, o.j0);
    let mut hi = at.bin(func, BinaryOp::Mul, e, last_j);
    if let Some(b) = o.b {
        terms.push(at.cmp(func, CmpCond::Ge, b, min62));
        terms.push(at.cmp(func, CmpCond::Lt, b, lim62));
        lo = at.bin(func, BinaryOp::Add, b, lo);
        hi = at.bin(func, BinaryOp::Add, b, hi);
    }
    terms.push(at.cmp(func, CmpCond::Ge, lo, zero));
    terms.push(at.cmp(func, CmpCond::Lt, hi, lim62));
    hi
}
