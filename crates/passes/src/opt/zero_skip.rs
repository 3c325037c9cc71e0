//! Zero-adjoint loop skipping: a loop of derivative code whose every
//! effect is adding, to an array element, an increment that is zero when
//! some values computed before the loop are zero, is not entered when they
//! are. A reverse sweep runs such loops wherever an adjoint is zero on one
//! path: the reverse of `best = min(best, dist)` over the `d` terms of
//! `dist` (kmeans: only the nearest centroid's terms get a nonzero adjoint),
//! a ReLU row whose pre-activation was negative.
//!
//! Pattern: a natural loop (header `h`, blocks `B`) that holds a `mulz`
//! (derivative code: its trip count is a forward loop's, which has run) and
//!
//! - is entered by one edge, from a block `P` outside `B`, and left by one
//!   edge, to a block `X`;
//! - has no effect but `store.unchecked a, i, add(load.unchecked a, i, x)`
//!   (either operand order; the load inside the loop, on the same `a` and
//!   `i` as the store):
//!   no call, tape operation, allocation, checked access, integer division,
//!   slot or reference;
//! - whose every increment `x` is zero when the values of a set `S` are,
//!   by these rules: a constant zero is zero; a float value defined before
//!   the loop is zero when it is (it joins `S`); `add`, `sub`, `min`, `max`,
//!   `select` are zero when both operands are; `neg` and `no_diff` when
//!   their operand is; `mulz a, b` when `a` is (`mulz` is exactly zero
//!   then, whatever `b`); a block parameter of `B` when every argument
//!   passed to it is (a fixed point over the loop's edges);
//! - and whose exit edge passes values defined before the loop (that
//!   dominate `P`) or values zero by the same rules; no other value of the
//!   loop is used outside it.
//!
//! Rewrite: `P`'s edge to `h` goes to a new block that branches to `X`
//! (with the exit edge's values; zeros for the zero ones) when every value
//! of `S` equals zero, and to `h` otherwise. `S` holds at most `MAX_GUARD`
//! values.
//!
//! Why it is the same program: with `S` zero, every store writes back the
//! value loaded from its element in the loop plus zero, so, by induction
//! over the loop's stores, every load reads the memory the loop was
//! entered with and memory stays unchanged (up to the sign of a zero
//! element, which compares equal). A load before the loop would not do:
//! `v = a[0]; a[0] = 5; loop { a[0] = v + t; }` writes `v` back. The loop
//! computes nothing else that is used after it, and the exit receives the
//! same values, up to the sign of zero: a value zero by the rules above
//! gets `+0.0`, where running the loop might have left `-0.0` (derivatives
//! are exact up to the sign of a zero; docs/derivatives.md). The loop
//! cannot trap (no checked access, no integer division); in derivative
//! code its trip count is a forward loop's, which has run. A loop that only
//! holds a `mulz` because a forward derivative was inlined into user code
//! might not terminate; skipping it then is what C11 (6.8.5p6) allows a
//! compiler for a loop without I/O or volatile accesses, and
//! docs/derivatives.md says so. Only the opt stage's late passes run this (never code that is
//! differentiated again: a branch on an adjoint would be differentiated as
//! a branch on data).
//!
//! Assumes: verified input. Guarantees: verified output; `adc ir --after
//! opt` shows the guard block before each skipped loop.

use crate::cfg::{incoming_edges, Edge};
use crate::loops::natural_loop;
use adc_ir::dom::DomTree;
use adc_ir::{
    BinaryOp, Block, BlockCall, CmpCond, Constant, Function, Inst, InstData, ScalarType, Tag, Type,
    UnaryOp, Value, ValueDef,
};
use std::collections::{BTreeMap, BTreeSet};

/// Most values a guard compares with zero.
const MAX_GUARD: usize = 8;
/// Most loops rewritten in one function (each rewrite recomputes the CFG's
/// edges and dominators).
const MAX_LOOPS: usize = 256;
/// Most instructions in a loop this pass looks at. The loops it is for are
/// small (a reverse sweep over centroids or a row), and `ZeroFacts::solve`
/// takes rounds over the whole loop, as many as its parameters' facts take
/// to settle: this bounds that work in loops around nests of generated
/// code.
const MAX_BODY_INSTS: usize = 2_000;

pub fn run(func: &mut Function) -> bool {
    let has_mulz = func.layout.iter().any(|&b| {
        func.dfg.block(b).insts.iter().any(|&i| {
            matches!(
                func.dfg.inst(i),
                InstData::Binary {
                    op: BinaryOp::MulZ | BinaryOp::DivZ,
                    ..
                }
            )
        })
    });
    if !has_mulz {
        return false;
    }
    let mut changed = false;
    let mut tried: BTreeSet<Block> = BTreeSet::new();
    for _ in 0..MAX_LOOPS {
        let cfg = Cfg::new(func);
        let (edges, dom) = (&cfg.edges, &cfg.dom);
        let mut plan = None;
        for h in func.layout.clone() {
            if tried.contains(&h) {
                continue;
            }
            let latches: Vec<Block> = edges[&h]
                .iter()
                .map(|e| e.from)
                .filter(|&f| dom.dominates(h, f))
                .collect();
            if latches.is_empty() {
                continue;
            }
            tried.insert(h);
            let mut body = BTreeSet::new();
            for &l in &latches {
                body.extend(natural_loop(edges, h, l));
            }
            plan = find(func, &cfg, h, &body);
            if plan.is_some() {
                break;
            }
        }
        let Some(plan) = plan else { break };
        rewrite(func, &plan);
        changed = true;
    }
    changed
}

/// The control flow of the function as it is between two rewrites.
struct Cfg {
    edges: BTreeMap<Block, Vec<Edge>>,
    dom: DomTree,
    /// Blocks in dominator order (`cfg::dominator_order`).
    order: Vec<Block>,
    /// The block of every instruction.
    block_of: BTreeMap<Inst, Block>,
}

impl Cfg {
    fn new(func: &Function) -> Cfg {
        let mut block_of = BTreeMap::new();
        for &b in &func.layout {
            for &i in &func.dfg.block(b).insts {
                block_of.insert(i, b);
            }
        }
        Cfg {
            edges: incoming_edges(func),
            dom: DomTree::new(func),
            order: crate::cfg::dominator_order(func),
            block_of,
        }
    }

    /// Whether `v` is defined in the loop `body` (a value without a known
    /// block counts as inside: never hoisted past).
    fn defined_in(&self, func: &Function, body: &BTreeSet<Block>, v: Value) -> bool {
        match func.dfg.value_def(v) {
            ValueDef::Param(b, _) => body.contains(&b),
            ValueDef::Result(i, _) => self.block_of.get(&i).is_none_or(|b| body.contains(b)),
            ValueDef::Unused => true,
        }
    }

    /// Whether `v`'s definition dominates block `b`.
    fn dominates(&self, func: &Function, v: Value, b: Block) -> bool {
        match func.dfg.value_def(v) {
            ValueDef::Param(d, _) => self.dom.dominates(d, b),
            ValueDef::Result(i, _) => self
                .block_of
                .get(&i)
                .is_some_and(|&d| self.dom.dominates(d, b)),
            ValueDef::Unused => false,
        }
    }
}

struct Plan {
    header: Block,
    /// The block of the entry edge.
    entry: Block,
    /// The exit edge's target and arguments (`None`: pass a zero).
    exit: Block,
    exit_args: Vec<Option<Value>>,
    /// The values whose being zero makes the loop a no-op.
    guard: BTreeSet<Value>,
}

fn find(func: &Function, cfg: &Cfg, h: Block, body: &BTreeSet<Block>) -> Option<Plan> {
    let entries: Vec<&Edge> = cfg.edges[&h]
        .iter()
        .filter(|e| !body.contains(&e.from))
        .collect();
    let [entry] = entries[..] else { return None };
    let size: usize = body.iter().map(|b| func.dfg.block(*b).insts.len()).sum();
    if size > MAX_BODY_INSTS {
        return None;
    }
    let mut exits = Vec::new();
    let mut has_mulz = false;
    let mut stores = Vec::new();
    for &b in body {
        for &i in &func.dfg.block(b).insts {
            match func.dfg.inst(i) {
                InstData::Store {
                    array,
                    index,
                    value,
                    checked: false,
                } => stores.push((*array, *index, *value)),
                InstData::Binary { op, .. } => {
                    has_mulz |= matches!(op, BinaryOp::MulZ | BinaryOp::DivZ);
                    if matches!(op, BinaryOp::Div | BinaryOp::Rem)
                        && !crate::predicates::is_float_div(func, i)
                    {
                        return None;
                    }
                }
                InstData::Jump { dest } => exits
                    .extend((!body.contains(&dest.block)).then(|| (dest.block, dest.args.clone()))),
                InstData::Branch {
                    then_dest,
                    else_dest,
                    ..
                } => {
                    for d in [then_dest, else_dest] {
                        if !body.contains(&d.block) {
                            exits.push((d.block, d.args.clone()));
                        }
                    }
                }
                InstData::Load { checked: false, .. } | InstData::LoopCheckpoint { .. } => {}
                InstData::Slot | InstData::RefLoad { .. } => return None,
                d if d.has_side_effects() || d.is_terminator() => return None,
                _ => {}
            }
        }
    }
    let [(exit, exit_vals)] = &exits[..] else {
        return None;
    };
    if !has_mulz {
        return None;
    }
    let zero = ZeroFacts::solve(func, cfg, body);
    let mut guard = BTreeSet::new();
    for (array, index, value) in stores {
        let increment = accumulated(func, cfg, body, array, index, value)?;
        guard.extend(zero.of(func, increment)?.iter().copied());
    }
    let defined_in_loop = |v: Value| cfg.defined_in(func, body, v);
    let mut exit_args = Vec::new();
    for &a in exit_vals {
        if !defined_in_loop(a) {
            if !cfg.dominates(func, a, entry.from) {
                return None;
            }
            exit_args.push(Some(a));
        } else {
            guard.extend(zero.of(func, a)?.iter().copied());
            exit_args.push(None);
        }
    }
    if guard.len() > MAX_GUARD || used_outside(func, body, &defined_in_loop) {
        return None;
    }
    Some(Plan {
        header: h,
        entry: entry.from,
        exit: *exit,
        exit_args,
        guard,
    })
}

/// `x` when `value` is `add(load a, i, x)`, `add(x, load a, i)` or
/// `sub(load a, i, x)` (`negate`'s `load + (-x)`) with the load in the
/// loop: a load before it may read what an earlier store has since
/// overwritten, and storing it back plus zero is not a no-op.
fn accumulated(
    func: &Function,
    cfg: &Cfg,
    body: &BTreeSet<Block>,
    array: Value,
    index: Value,
    value: Value,
) -> Option<Value> {
    let is_element = |v: Value| {
        let in_loop = cfg.defined_in(func, body, v);
        in_loop
            && matches!(
                crate::defs::def_data(func, v),
                Some(InstData::Load { array: a, index: i, .. }) if *a == array && *i == index
            )
    };
    match crate::defs::def_data(func, value)? {
        InstData::Binary {
            op: BinaryOp::Add,
            args: [l, x],
        } if is_element(*l) => Some(*x),
        InstData::Binary {
            op: BinaryOp::Add,
            args: [x, l],
        } if is_element(*l) => Some(*x),
        InstData::Binary {
            op: BinaryOp::Sub,
            args: [l, x],
        } if is_element(*l) => Some(*x),
        _ => None,
    }
}

/// Whether an instruction outside `body` uses a value defined in it.
fn used_outside(func: &Function, body: &BTreeSet<Block>, inside: &dyn Fn(Value) -> bool) -> bool {
    func.layout.iter().filter(|b| !body.contains(b)).any(|&b| {
        func.dfg.block(b).insts.iter().any(|&i| {
            let mut hit = false;
            func.dfg.inst(i).for_each_arg(|a| hit |= inside(a));
            hit
        })
    })
}

/// For each value of a loop: the values defined before the loop whose
/// being zero makes it zero (`None`: not known to be zero).
struct ZeroFacts<'a> {
    facts: BTreeMap<Value, Option<BTreeSet<Value>>>,
    cfg: &'a Cfg,
    body: &'a BTreeSet<Block>,
}

impl<'a> ZeroFacts<'a> {
    fn solve(func: &Function, cfg: &'a Cfg, body: &'a BTreeSet<Block>) -> ZeroFacts<'a> {
        let mut z = ZeroFacts {
            facts: BTreeMap::new(),
            cfg,
            body,
        };
        // Parameters start optimistic (zero with no condition) and only
        // grow their sets or become unknown: a fixed point in at most
        // `MAX_GUARD + 2` changes per parameter (`union`).
        for &b in body {
            for &p in func.dfg.block_params(b) {
                z.facts.insert(p, Some(BTreeSet::new()));
            }
        }
        // Dominator order: every value is computed before its uses but
        // those through a parameter.
        let order: Vec<Block> = cfg
            .order
            .iter()
            .copied()
            .filter(|b| body.contains(b))
            .collect();
        loop {
            for &b in &order {
                for &i in &func.dfg.block(b).insts {
                    let fact = z.inst_fact(func, func.dfg.inst(i));
                    for &r in func.dfg.inst_results(i) {
                        z.facts.insert(r, fact.clone());
                    }
                }
            }
            let mut moved = false;
            for &b in &order {
                for (k, &p) in func.dfg.block_params(b).iter().enumerate() {
                    // Joined with what the parameter had: `Select`'s rule is
                    // not monotone, and two parameters that swap values on
                    // the back edge then traded sets forever (difftest seed
                    // 700,000,134: `__adc_jvp___adc_seg1_gf` never left
                    // this loop, once `bce` had dropped the checks that had
                    // kept the pass off it). Growing only, each set settles
                    // within `MAX_GUARD + 2` changes (`union`).
                    let mut fact = z.facts.get(&p).cloned().unwrap_or(Some(BTreeSet::new()));
                    for e in &cfg.edges[&b] {
                        fact = union(fact, z.of(func, e.args[k]));
                    }
                    if z.facts.get(&p) != Some(&fact) {
                        z.facts.insert(p, fact);
                        moved = true;
                    }
                }
            }
            if !moved {
                return z;
            }
        }
    }

    fn inst_fact(&self, func: &Function, data: &InstData) -> Option<BTreeSet<Value>> {
        match data {
            InstData::Const {
                value: Constant::F64(c),
            } => (*c == 0.0).then(BTreeSet::new),
            InstData::Const {
                value: Constant::F32(c),
            } => (*c == 0.0).then(BTreeSet::new),
            InstData::Binary { op, args: [a, b] } => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Min | BinaryOp::Max => {
                    union(self.of(func, *a), self.of(func, *b))
                }
                BinaryOp::MulZ | BinaryOp::DivZ => self.of(func, *a),
                // What `const-fold` makes of `mulz x, c` for a finite `c`.
                BinaryOp::Mul if finite_constant(func, *b, true) => self.of(func, *a),
                BinaryOp::Div if finite_constant(func, *b, false) => self.of(func, *a),
                _ => None,
            },
            InstData::Unary {
                op: UnaryOp::Neg | UnaryOp::NoDiff,
                arg,
            } => self.of(func, *arg),
            InstData::Select { cond, args: [a, b] } => {
                // `select(x == 0, a, b)` is `a` when `x` is zero (derivative
                // code's strong zero: an adjoint times a partial that may be
                // infinite).
                union(self.of(func, *a), self.of(func, *b)).or_else(|| {
                    let (x, taken) = match crate::defs::def_data(func, *cond) {
                        Some(InstData::Cmp {
                            cond: CmpCond::Eq,
                            args,
                        }) => (zero_compared(func, *args)?, *a),
                        Some(InstData::Cmp {
                            cond: CmpCond::Ne,
                            args,
                        }) => (zero_compared(func, *args)?, *b),
                        _ => return None,
                    };
                    union(self.of(func, x), self.of(func, taken))
                })
            }
            _ => None,
        }
    }

    /// The fact of an operand: a value of the loop has its fact; a float
    /// value defined before it is zero when it is (a constant zero always).
    fn of(&self, func: &Function, v: Value) -> Option<BTreeSet<Value>> {
        if let Some(f) = self.facts.get(&v) {
            return f.clone();
        }
        let in_loop = match func.dfg.value_def(v) {
            ValueDef::Result(i, _) => self
                .cfg
                .block_of
                .get(&i)
                .is_none_or(|b| self.body.contains(b)),
            ValueDef::Param(..) | ValueDef::Unused => false,
        };
        if in_loop {
            // Unreachable in dominator order (a verified use follows its
            // definition there).
            return None;
        }
        if !matches!(
            func.dfg.value_type(v),
            Type::Scalar(ScalarType::F64 | ScalarType::F32)
        ) {
            return None;
        }
        match crate::defs::def_data(func, v) {
            Some(InstData::Const {
                value: Constant::F64(c),
            }) => (*c == 0.0).then(BTreeSet::new),
            Some(InstData::Const {
                value: Constant::F32(c),
            }) => (*c == 0.0).then(BTreeSet::new),
            _ => Some([v].into()),
        }
    }
}

/// `x` when `args` are `x` and a float constant zero (either order).
fn zero_compared(func: &Function, args: [Value; 2]) -> Option<Value> {
    let is_zero = |v: Value| {
        matches!(
            crate::defs::def_data(func, v),
            Some(InstData::Const { value: Constant::F64(c) }) if *c == 0.0
        ) || matches!(
            crate::defs::def_data(func, v),
            Some(InstData::Const { value: Constant::F32(c) }) if *c == 0.0
        )
    };
    match args {
        [x, z] if is_zero(z) => Some(x),
        [z, x] if is_zero(z) => Some(x),
        _ => None,
    }
}

/// The values whose being zero makes both zero; unknown (`None`) past
/// `MAX_GUARD` values, which no guard could test anyway (and which bounds
/// the rounds of `ZeroFacts::solve`: a parameter's set grows at most that
/// often before it is unknown).
fn union(a: Option<BTreeSet<Value>>, b: Option<BTreeSet<Value>>) -> Option<BTreeSet<Value>> {
    let (mut a, b) = (a?, b?);
    a.extend(b);
    (a.len() <= MAX_GUARD).then_some(a)
}

fn rewrite(func: &mut Function, plan: &Plan) {
    let h = plan.header;
    let guard_block = func.dfg.make_block();
    let entry_term = func
        .terminator(plan.entry)
        .expect("invariant: verified blocks end in a terminator");
    let span = func.span(entry_term);
    let mut entry_args = Vec::new();
    for call in func.dfg.inst_mut(entry_term).successors_mut() {
        if call.block == h {
            entry_args = std::mem::take(&mut call.args);
            call.block = guard_block;
        }
    }
    let at = crate::rewrite::Emitter {
        block: guard_block,
        tag: Tag::Primal,
        span,
    };
    // One zero per float type, shared by the comparisons and the exit.
    let mut zeros: BTreeMap<bool, Value> = BTreeMap::new();
    let mut zero_of = |func: &mut Function, ty: Type| {
        let f32 = ty == Type::Scalar(ScalarType::F32);
        *zeros.entry(f32).or_insert_with(|| {
            let c = if f32 {
                Constant::F32(0.0)
            } else {
                Constant::F64(0.0)
            };
            at.constant(func, c)
        })
    };
    let mut all_zero: Option<Value> = None;
    for &v in &plan.guard {
        let zero = zero_of(func, func.dfg.value_type(v));
        let is_zero = at.value(
            func,
            InstData::Cmp {
                cond: CmpCond::Eq,
                args: [v, zero],
            },
            Type::BOOL,
        );
        all_zero = Some(match all_zero {
            None => is_zero,
            Some(prev) => {
                let falsy = at.constant(func, Constant::Bool(false));
                at.value(
                    func,
                    InstData::Select {
                        cond: prev,
                        args: [is_zero, falsy],
                    },
                    Type::BOOL,
                )
            }
        });
    }
    let all_zero = match all_zero {
        Some(v) => v,
        // No condition: the loop never does anything.
        None => at.constant(func, Constant::Bool(true)),
    };
    let exit_params = func.dfg.block_params(plan.exit).to_vec();
    let mut exit_args = Vec::new();
    for (arg, param) in plan.exit_args.iter().zip(exit_params) {
        exit_args.push(match arg {
            Some(v) => *v,
            None => zero_of(func, func.dfg.value_type(param)),
        });
    }
    at.inst(
        func,
        InstData::Branch {
            cond: all_zero,
            then_dest: BlockCall {
                block: plan.exit,
                args: exit_args,
            },
            else_dest: BlockCall {
                block: h,
                args: entry_args,
            },
        },
        None,
    );
    let pos = func.layout.iter().position(|b| *b == h).unwrap_or(0);
    func.layout.insert(pos, guard_block);
}

/// Whether `v` is a finite float constant (and, unless `zero_too`, not
/// zero).
fn finite_constant(func: &Function, v: Value, zero_too: bool) -> bool {
    crate::defs::float_const(func, v).is_some_and(|x| x.is_finite() && (zero_too || x != 0.0))
}
