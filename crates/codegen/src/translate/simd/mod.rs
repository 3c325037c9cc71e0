//! Two-lane vectors (`f64x2`) for the four-copy loops `unroll-inner`
//! makes of elementwise loops (`t[i] = y[i] + h * k[i]`, `z[i] = x[i] *
//! y[i - 1]`, an adjoint's `dx[i] += dz[i] * y[i]`).
//! (Vector mode's lanes pair in `lanes.rs`.)
//!
//! Pattern: a block `U` that loops to itself, whose back edge passes a
//! parameter `i` as `i + 4`, and that computes `i + 1`, `i + 2` and
//! `i + 3` in this order. They cut the instructions before `i + 4` into
//! four copies of equal length; copy `k` must be copy 0 instruction by
//! instruction, with `i + k` for `i` and its own results for copy 0's
//! (`unroll-inner`'s copies, as the later passes left them). Counting
//! down (a reverse sweep), the back edge passes `i - 4`, and copy `k`
//! counts with `i - (k + 1)`, computed right before it. Copy 0 may
//! hold only
//!
//! - index arithmetic: `i64` `add`/`sub` of an index value (`i` or another
//!   of these; the first operand of a `sub`) and a value defined outside
//!   `U`; index values are used only as indices and by index arithmetic,
//!   so copy `k + 1`'s indices are copy `k`'s plus one;
//! - unchecked `load`s and `store`s of `f64` elements of arrays defined
//!   outside `U`, at index values;
//! - `f64` `add sub mul div mulz divz`, `neg`, `no_diff`, `sqrt`, `abs` of its
//!   own values and of values defined outside `U` (none of `U`'s
//!   parameters: no copy depends on another);
//! - counting down, one `f64` `tape.pop` (copy `k` pops before copy
//!   `k + 1`, so a pair's two cells are adjacent, the lower lane's below);
//!   counting up, one `tape.push` of an `f64` (copy `k` pushes before copy
//!   `k + 1`, so the lower lane's cell comes first);
//!
//! and no value of a copy is used outside that copy (in `U` or elsewhere).
//! Memory: every array copy 0 stores to is either the same array value, at
//! the same index value, as each other access of copy 0 to it, or a
//! different object (`Function::is_distinct_array_object`: an array parameter, which
//! docs/arrays.md#the-aliasing-rule keeps apart from every other array parameter a function
//! writes, or an array made by `new` or `copy`) than the other array.
//!
//! Then copies 0 and 1 run as one copy on `f64x2` values, and after them
//! copies 2 and 3: a load or store moves the two adjacent elements of both
//! copies (counting down, the second copy's elements come first, so it
//! is the lower lane), an operation works on both lanes (exactly the scalar operation
//! in each lane: IEEE arithmetic is lane by lane). Each copy's own
//! operations keep their order; copy `k + 1`'s accesses move before copy
//! `k`'s later ones, which touch other elements (the memory condition).

mod chains;
pub(crate) mod lanes;

use super::{plus_constant, FuncTranslator};
use crate::CodegenError;
use adc_ir::{
    BinaryOp, Block, Function, Inst, InstData, MathFunc, ScalarType, Type, UnaryOp, Value, ValueDef,
};
use chains::Chain;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{self as clif, types, InstBuilder, MemFlagsData};
use cranelift_module::Module;
use std::collections::{BTreeMap, BTreeSet};

/// Vector accesses: unaligned (no `aligned` flag: Cranelift would fold
/// them into SSE instructions that fault on unaligned addresses).
const VECTOR: MemFlagsData = MemFlagsData::new().with_notrap();

/// A block of four copies that runs as two pairs.
pub(crate) struct Pairs {
    /// `i + 1`, `i + 2`, `i + 3` (or `i - 1` to `i - 4`).
    counters: Vec<Inst>,
    /// Of copies 0 and 1, and of copies 2 and 3, the one whose elements
    /// come first (the lower lane).
    first: [Vec<Inst>; 2],
    /// Where the rest of the block starts.
    rest: usize,
    /// The reductions of the copies (`chains.rs`).
    chains: Vec<Chain>,
    /// Counting down: a pair's lower lane is the later copy.
    down: bool,
    /// Counting up, whether the counter may enter with a value that
    /// differs from one run of the loop to the next (`drifts`). (A reverse
    /// sweep's loops enter where the forward loop left its counter, which
    /// the sweep computes in the loop's reverse exit: their start is
    /// usually the same in each run, and element by element their loads
    /// took ode's gradient 1.3x as long.)
    drifts: bool,
}

/// Whether each value is used outside the block that defines it.
pub(crate) fn escaping(func: &Function, inst_block: &[Option<Block>]) -> Vec<bool> {
    let mut out = vec![false; func.dfg.num_values()];
    for &b in &func.layout {
        for &i in &func.dfg.block(b).insts {
            let mut mark = |a: Value| {
                let home = match func.dfg.value_def(a) {
                    ValueDef::Param(p, _) => Some(p),
                    ValueDef::Result(d, _) => inst_block[d.index()],
                    ValueDef::Unused => None,
                };
                if home != Some(b) {
                    out[a.index()] = true;
                }
            };
            func.dfg.inst(i).for_each_arg(&mut mark);
            for call in func.dfg.inst(i).successors() {
                call.args.iter().for_each(|a| mark(*a));
            }
        }
    }
    out
}

fn result(func: &Function, i: Inst) -> Option<Value> {
    match func.dfg.inst_results(i) {
        [r] => Some(*r),
        _ => None,
    }
}

/// `k` when `v` is `add i, k` (or `add k, i`) for a constant `k`.
fn step_of(func: &Function, v: Value, i: Value) -> Option<i64> {
    plus_constant(func, v).and_then(|(x, k)| (x == i).then_some(k))
}

fn is_f64(func: &Function, v: Value) -> bool {
    func.dfg.value_type(v) == Type::Scalar(ScalarType::F64)
}

pub(crate) fn plan(func: &Function, blk: Block, escaping: &[bool]) -> Option<Pairs> {
    let insts = &func.dfg.block(blk).insts;
    let term = *insts.last()?;
    let back = func
        .dfg
        .inst(term)
        .successors()
        .into_iter()
        .find(|c| c.block == blk)?
        .clone();
    let params = func.dfg.block_params(blk);
    let (i, next, step) = params.iter().zip(&back.args).find_map(|(p, a)| {
        let step = step_of(func, *a, *p)?;
        (step.abs() == 4).then_some((*p, *a, step))
    })?;
    let counter_param = i;
    let here: BTreeSet<Inst> = insts.iter().copied().collect();
    let position = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Result(d, 0) => insts.iter().position(|x| *x == d),
        _ => None,
    };
    let end = position(next)?;
    // Where `i + k` is computed, for k = 1, 2, 3 (counting up) or
    // -1, -2, -3 (down; `i - 4` is `next`).
    let mut cuts = [0usize; 3];
    for (k, cut) in cuts.iter_mut().enumerate() {
        let want = (k as i64 + 1) * step.signum();
        *cut = insts[..end]
            .iter()
            .position(|&x| result(func, x).is_some_and(|r| step_of(func, r, i) == Some(want)))?;
    }
    if !(cuts[0] < cuts[1] && cuts[1] < cuts[2]) {
        return None;
    }
    // Each copy's instructions; the counter it starts from and, counting
    // up, the one it may use after its increment.
    let (copies, counters, counter_values, rest): ([Vec<Inst>; 4], Vec<Inst>, Vec<Value>, usize) =
        if step > 0 {
            // Copy k is the part of the body before the increment, from
            // `i + k` (`i` for copy 0), and the part after it, from
            // `i + k + 1`; `i + 4` is the last increment.
            let pre = cuts[0];
            let post = cuts[1].checked_sub(cuts[0] + 1 + pre)?;
            let stops = [cuts[1], cuts[2], end];
            if stops
                .iter()
                .zip(&cuts)
                .any(|(stop, cut)| *stop != cut + 1 + post + pre)
                || end + 1 + post >= insts.len()
            {
                return None;
            }
            let incs = [cuts[0], cuts[1], cuts[2], end];
            let copies = incs.map(|inc| {
                let mut c = insts[inc - pre..inc].to_vec();
                c.extend_from_slice(&insts[inc + 1..inc + 1 + post]);
                c
            });
            let counters: Vec<Inst> = incs.iter().map(|c| insts[*c]).collect();
            let mut values = vec![i];
            for c in &counters {
                values.push(result(func, *c)?);
            }
            (copies, counters, values, end + 1 + post)
        } else {
            // Copy k counts with `i - (k + 1)`, computed right before it.
            let m = cuts[1].checked_sub(cuts[0] + 1)?;
            if cuts[0] != 0 || end + 1 + m >= insts.len() {
                return None;
            }
            let copies = [
                insts[cuts[0] + 1..cuts[1]].to_vec(),
                insts[cuts[1] + 1..cuts[2]].to_vec(),
                insts[cuts[2] + 1..end].to_vec(),
                insts[end + 1..end + 1 + m].to_vec(),
            ];
            let counters: Vec<Inst> = cuts.iter().chain([&end]).map(|c| insts[*c]).collect();
            let mut values = Vec::new();
            for c in &counters {
                values.push(result(func, *c)?);
            }
            (copies, counters, values, end + 1 + m)
        };
    let i = counter_values[0];
    // Counting up, copy k's counter after its increment.
    let after = |k: usize| (step > 0).then(|| counter_values[k + 1]);
    let m = copies[0].len();
    if m == 0 || copies.iter().any(|c| c.len() != m) {
        return None;
    }
    let outside = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => b != blk,
        ValueDef::Result(d, _) => !here.contains(&d),
        ValueDef::Unused => false,
    };
    let chains = chains::chains_of(func, blk, &copies[0], counter_param);
    let chain_pos: BTreeSet<usize> = chains.iter().map(|c| c.1).collect();
    if !copy_zero_is_plain(
        func,
        &copies[0],
        i,
        after(0),
        step < 0,
        &outside,
        &chain_pos,
    ) {
        return None;
    }
    // Copies 1 to 3 repeat copy 0 with their own counter and results; a
    // chain's instruction takes the previous copy's result for the chain's
    // parameter.
    for k in 1..4 {
        let mut map: BTreeMap<Value, Value> = BTreeMap::from([(i, counter_values[k])]);
        for &(param, pos, _) in &chains {
            map.insert(param, result(func, copies[k - 1][pos])?);
        }
        if let (Some(a0), Some(ak)) = (after(0), after(k)) {
            map.insert(a0, ak);
        }
        for (&x0, &xk) in copies[0].iter().zip(&copies[k]) {
            let mut data = func.dfg.inst(x0).clone();
            data.map_args(|v| map.get(&v).copied().unwrap_or(v));
            let (r0, rk) = (func.dfg.inst_results(x0), func.dfg.inst_results(xk));
            if data != *func.dfg.inst(xk) || r0.len() != rk.len() {
                return None;
            }
            for (a, b) in r0.iter().zip(rk) {
                if func.dfg.value_type(*a) != func.dfg.value_type(*b) {
                    return None;
                }
                map.insert(*a, *b);
            }
        }
    }
    // No value of a copy leaves it: not to another block, and not to
    // another copy or the rest of this one.
    for (k, copy) in copies.iter().enumerate() {
        let own: BTreeSet<Value> = copy
            .iter()
            .enumerate()
            .filter(|(n, _)| !chain_pos.contains(n))
            .flat_map(|(_, x)| func.dfg.inst_results(*x).iter().copied())
            .collect();
        if own.iter().any(|v| escaping[v.index()]) {
            return None;
        }
        for (j, other) in copies.iter().enumerate() {
            let foreign = other.iter().any(|x| {
                let mut uses = false;
                func.dfg.inst(*x).for_each_arg(|a| uses |= own.contains(&a));
                uses
            });
            if j != k && foreign {
                return None;
            }
        }
        let in_rest = insts[rest..].iter().chain(&counters).any(|x| {
            let mut uses = false;
            func.dfg.inst(*x).for_each_arg(|a| uses |= own.contains(&a));
            for call in func.dfg.inst(*x).successors() {
                uses |= call.args.iter().any(|a| own.contains(a));
            }
            uses
        });
        if in_rest {
            return None;
        }
    }
    if !chain_pos
        .iter()
        .all(|pos| chains::chain_uses_allowed(func, insts, &copies, *pos, escaping))
    {
        return None;
    }
    if !accesses_commute(func, &copies[0]) {
        return None;
    }
    // A pair's lanes are its copies in the order of their indices: counting
    // down, the second copy's elements come first.
    let lower = usize::from(step < 0);
    let chains = chains
        .iter()
        .map(|&(param, pos, param_first)| Chain {
            param,
            pos,
            param_first,
            last: copies[3][pos],
            free_order: chains::is_free_order(func, &copies, pos),
        })
        .collect();
    Some(Pairs {
        counters,
        first: [copies[lower].clone(), copies[2 + lower].clone()],
        rest,
        chains,
        down: step < 0,
        drifts: step > 0 && drifts(func, blk, counter_param),
    })
}

/// Copy 0 holds only the instructions the module comment lists.
fn copy_zero_is_plain(
    func: &Function,
    copy: &[Inst],
    i: Value,
    after: Option<Value>,
    down: bool,
    outside: &dyn Fn(Value) -> bool,
    chain_pos: &BTreeSet<usize>,
) -> bool {
    let mut index: BTreeSet<Value> = BTreeSet::from([i]);
    index.extend(after);
    let mut float: BTreeSet<Value> = BTreeSet::new();
    let mut pops = 0;
    let mut pushes = 0;
    for (n, &x) in copy.iter().enumerate() {
        let r = result(func, x);
        let operand = |v: Value, float: &BTreeSet<Value>| {
            float.contains(&v) || (outside(v) && is_f64(func, v))
        };
        if chain_pos.contains(&n) {
            // A chain's step (`chains_of` checked its form): its other
            // operand is a lane or from outside; its result is no lane.
            let InstData::Binary { args, .. } = func.dfg.inst(x) else {
                return false;
            };
            let others = args.iter().filter(|a| operand(**a, &float)).count();
            if others != 1 {
                return false;
            }
            continue;
        }
        let f64_array =
            |a: Value| outside(a) && func.dfg.value_type(a) == Type::Array(ScalarType::F64);
        let float_result = r.is_some_and(|r| is_f64(func, r));
        match (func.dfg.inst(x), r) {
            (
                InstData::Binary {
                    op: op @ (BinaryOp::Add | BinaryOp::Sub),
                    args,
                },
                Some(r),
            ) if func.dfg.value_type(r) == Type::I64 => {
                let ok = (index.contains(&args[0]) && outside(args[1]))
                    || (*op == BinaryOp::Add && outside(args[0]) && index.contains(&args[1]));
                if !ok {
                    return false;
                }
                index.insert(r);
            }
            (
                InstData::Load {
                    array,
                    index: at,
                    checked: false,
                },
                Some(r),
            ) if float_result && f64_array(*array) && index.contains(at) => {
                float.insert(r);
            }
            (
                InstData::Store {
                    array,
                    index: at,
                    value,
                    checked: false,
                },
                None,
            ) if f64_array(*array) && index.contains(at) && operand(*value, &float) => {}
            (
                InstData::Binary {
                    op:
                        BinaryOp::Add
                        | BinaryOp::Sub
                        | BinaryOp::Mul
                        | BinaryOp::Div
                        | BinaryOp::MulZ
                        | BinaryOp::DivZ,
                    args,
                },
                Some(r),
            ) if float_result && args.iter().all(|a| operand(*a, &float)) => {
                float.insert(r);
            }
            (
                InstData::Unary {
                    op: UnaryOp::Neg | UnaryOp::NoDiff,
                    arg,
                },
                Some(r),
            ) if float_result && operand(*arg, &float) => {
                float.insert(r);
            }
            (InstData::TapePush { value, .. }, None)
                if !down && pushes == 0 && operand(*value, &float) =>
            {
                pushes += 1;
            }
            (InstData::TapePop { .. }, Some(r)) if down && float_result && pops == 0 => {
                pops += 1;
                float.insert(r);
            }
            (
                InstData::Math {
                    func: MathFunc::Sqrt | MathFunc::Abs,
                    args,
                },
                Some(r),
            ) if float_result && args.len() == 1 && operand(args[0], &float) => {
                float.insert(r);
            }
            (
                InstData::Math {
                    func: MathFunc::Fma,
                    args,
                },
                Some(r),
            ) if float_result && args.iter().all(|a| operand(*a, &float)) => {
                float.insert(r);
            }
            _ => return false,
        }
    }
    true
}

/// Whether `copy` stores to `array` (then it loads and stores the same
/// elements: `y[j] += a * x[j]`). In a loop whose start `drifts`, its
/// pairs are loaded element by element: when the loop runs again from an
/// index one further on (the rows of a triangular nest, GradBench gmm's
/// `Qtimesx`), a pair straddles two pairs the previous run stored, and a
/// 16-byte load of two stores still in the store buffer waits for them to
/// reach the cache (no store forwarding), where an 8-byte load from half
/// of one store is forwarded: gmm's objective took 1.2x as long at d = 10.
/// A loop that starts from the same index every run (ode's) loads the
/// pairs it stored, which are forwarded, and keeps its 16-byte loads
/// (element by element, ode's gradient took 1.3x as long).
fn stored_in(func: &Function, copy: &[Inst], array: Value) -> bool {
    copy.iter()
        .any(|&x| matches!(func.dfg.inst(x), InstData::Store { array: a, .. } if *a == array))
}

/// Whether the counter `i` of loop block `blk` enters from some block
/// with a value other than a constant or a value of the entry block (a
/// parameter, or computed once per call): one an enclosing loop changes.
fn drifts(func: &Function, blk: Block, i: Value) -> bool {
    let Some(k) = func.dfg.block_params(blk).iter().position(|&p| p == i) else {
        return true;
    };
    let entry = func.layout[0];
    let fixed = |v: Value| match func.dfg.value_def(v) {
        ValueDef::Param(b, _) => b == entry,
        ValueDef::Result(d, _) => {
            matches!(func.dfg.inst(d), InstData::Const { .. })
                || func.dfg.block(entry).insts.contains(&d)
        }
        ValueDef::Unused => false,
    };
    func.layout.iter().filter(|&&b| b != blk).any(|&b| {
        func.terminator(b).is_some_and(|t| {
            func.dfg
                .inst(t)
                .successors()
                .iter()
                .any(|c| c.block == blk && !fixed(c.args[k]))
        })
    })
}

/// The memory condition of the module comment, on copy 0's accesses.
fn accesses_commute(func: &Function, copy: &[Inst]) -> bool {
    let accesses: Vec<(Value, Value, bool)> = copy
        .iter()
        .filter_map(|&x| match func.dfg.inst(x) {
            InstData::Load { array, index, .. } => Some((*array, *index, false)),
            InstData::Store { array, index, .. } => Some((*array, *index, true)),
            _ => None,
        })
        .collect();
    accesses.iter().enumerate().all(|(n, &(a, ia, stores))| {
        !stores
            || accesses.iter().enumerate().all(|(m, &(b, ib, _))| {
                if m == n || a == b {
                    return m == n || ia == ib;
                }
                let (ra, rb) = (func.array_root(a), func.array_root(b));
                ra != rb && func.is_distinct_array_object(ra) && func.is_distinct_array_object(rb)
            })
    })
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// Emits the four copies of `p` as two pairs; returns where the rest
    /// of the block starts.
    pub(crate) fn vector_pairs(&mut self, p: &Pairs) -> Result<usize, CodegenError> {
        for &c in &p.counters {
            self.inst(c)?;
        }
        let mut running: BTreeMap<usize, clif::Value> =
            p.chains.iter().map(|c| (c.pos, self.v(c.param))).collect();
        // A free-order chain's first pair, added to the second's.
        let mut deferred: BTreeMap<usize, clif::Value> = BTreeMap::new();
        for (pair, copy) in p.first.iter().enumerate() {
            let mut lanes: BTreeMap<Value, clif::Value> = BTreeMap::new();
            for (n, &x) in copy.iter().enumerate() {
                let data = self.func.dfg.inst(x).clone();
                let r = self.func.dfg.inst_results(x).first().copied();
                if let Some(c) = p.chains.iter().find(|c| c.pos == n) {
                    let value = if c.free_order {
                        self.free_order_step(c, &data, &lanes, running[&n], p.down, &mut deferred)
                    } else {
                        self.chain_step(c, &data, &lanes, running[&n], p.down)
                    };
                    running.insert(n, value);
                    if pair == 1 {
                        self.def(c.last, vec![value]);
                    }
                    continue;
                }
                let v = match data {
                    InstData::Binary { .. } if r.is_some_and(|r| !is_f64(self.func, r)) => {
                        self.inst(x)?;
                        continue;
                    }
                    InstData::Load { array, index, .. } => {
                        let addr = self.elem_addr(x, array, index, false)?;
                        if p.drifts && stored_in(self.func, copy, array) {
                            // Element by element: see `stored_in`.
                            let lo = self.b.ins().load(types::F64, VECTOR, addr, 0);
                            let hi = self.b.ins().load(types::F64, VECTOR, addr, 8);
                            let v = self.b.ins().scalar_to_vector(types::F64X2, lo);
                            self.b.ins().insertlane(v, hi, 1)
                        } else {
                            self.b.ins().load(types::F64X2, VECTOR, addr, 0)
                        }
                    }
                    InstData::Store {
                        array,
                        index,
                        value,
                        ..
                    } => {
                        let addr = self.elem_addr(x, array, index, false)?;
                        let v = self.both_lanes(&lanes, value);
                        self.b.ins().store(VECTOR, v, addr, 0);
                        continue;
                    }
                    InstData::Binary { op, args } => {
                        let a = self.both_lanes(&lanes, args[0]);
                        let b = self.both_lanes(&lanes, args[1]);
                        self.vector_binary(op, a, b)
                    }
                    InstData::Unary { op, arg } => {
                        let a = self.both_lanes(&lanes, arg);
                        match op {
                            UnaryOp::Neg => self.b.ins().fneg(a),
                            _ => a,
                        }
                    }
                    InstData::TapePop { tape } => self.tape_pop_pair(tape),
                    InstData::TapePush { tape, value } => {
                        let v = self.both_lanes(&lanes, value);
                        self.tape_push(x, tape, &[v])?;
                        continue;
                    }
                    InstData::Math { func, args } => {
                        let a = self.both_lanes(&lanes, args[0]);
                        match func {
                            MathFunc::Sqrt => self.b.ins().sqrt(a),
                            MathFunc::Fma => {
                                let b = self.both_lanes(&lanes, args[1]);
                                let c = self.both_lanes(&lanes, args[2]);
                                self.b.ins().fma(a, b, c)
                            }
                            _ => self.b.ins().fabs(a),
                        }
                    }
                    _ => unreachable!("plan admits only the kinds above"),
                };
                let r = r.expect("invariant: every kind but store has a result");
                lanes.insert(r, v);
            }
        }
        Ok(p.rest)
    }

    /// The pair's value of `v`: its vector, or a value from outside the
    /// loop in both lanes. (The splat is emitted at each use; Cranelift's
    /// egraph merges them and hoists the splat of a loop-invariant value
    /// out of the loop: `objdump -d` shows one `vpshufd` per value, before
    /// the loop.)
    fn both_lanes(&mut self, lanes: &BTreeMap<Value, clif::Value>, v: Value) -> clif::Value {
        match lanes.get(&v) {
            Some(x) => *x,
            None => {
                let x = self.v(v);
                self.b.ins().splat(types::F64X2, x)
            }
        }
    }

    /// A float `add sub mul div mulz divz` on both lanes.
    fn vector_binary(&mut self, op: BinaryOp, a: clif::Value, b: clif::Value) -> clif::Value {
        match op {
            BinaryOp::Add => self.b.ins().fadd(a, b),
            BinaryOp::Sub => self.b.ins().fsub(a, b),
            BinaryOp::Mul => self.b.ins().fmul(a, b),
            BinaryOp::Div => self.b.ins().fdiv(a, b),
            BinaryOp::DivZ => {
                let q = self.b.ins().fdiv(a, b);
                self.strong_zero_mask(a, q)
            }
            _ => {
                let p = self.b.ins().fmul(a, b);
                self.strong_zero_mask(a, p)
            }
        }
    }

    /// `mulz` and `divz` lane by lane: `p`, or zero in a lane where `x` is
    /// zero (`strong_zero.rs`; not-equal is true for NaN, which stays NaN).
    fn strong_zero_mask(&mut self, x: clif::Value, p: clif::Value) -> clif::Value {
        let zero = self.b.ins().f64const(0.0);
        let zeros = self.b.ins().splat(types::F64X2, zero);
        let keep = self.b.ins().fcmp(FloatCC::NotEqual, x, zeros);
        let little = MemFlagsData::new().with_endianness(clif::Endianness::Little);
        let keep = self.b.ins().bitcast(types::F64X2, little, keep);
        self.b.ins().band(p, keep)
    }
}
