//! Vector mode's lanes in `f64x2` pairs (docs/jacobians.md#vector-mode).
//!
//! `widen` writes each differential instruction `W` times, one per lane,
//! one after the other, and the later passes keep such runs together (they
//! move or drop whole instructions; `sink` moves a lane's arithmetic, each
//! lane the same way). Here two adjacent `diff` instructions that are the
//! same `f64` operation (`add sub mul div mulz divz`, `neg`, `no_diff`,
//! `sqrt`, `abs`), the second not using the first, run as one operation
//! on an `f64x2` value, the first in lane 0; adjacent `diff` loads (stores)
//! of elements `i` and `i + 1` of one array (a scalar's tangent lanes, the
//! `seed`), unchecked, as one 16-byte access. Pairs are taken left to right
//! in each block. A pair is kept only where its operands are at hand as
//! pairs: each operand pair is one value used in both lanes (a splat), or
//! the lanes of a kept pair or of a paired block parameter; or, for at
//! most one operand (two for `mulz`, `divz`, `div`, `sqrt`), the results
//! of two adjacent `diff` loads of other elements, combined with one
//! shuffle (array tangents' lanes lie `n` elements apart). A 16-byte load
//! is kept only when a pair uses it, a 16-byte store only when its values
//! are a pair. Parameters `j` and `j + 1` of a block other than the entry
//! become one `f64x2` parameter when some edge passes a kept pair there
//! (loop-carried lanes); other edges combine their arguments. Pruning
//! repeats until nothing changes. A `mulz` or `divz` on a loop-carried
//! recurrence stays scalar (its branches add no latency; the mask does).
//!
//! Guarantees: each lane computes exactly its scalar instruction (IEEE
//! arithmetic is lane by lane, no fused multiply-add; `mulz` and `divz`
//! zero a lane whose first operand is zero, as `strong_zero.rs` does);
//! every paired value also has its two scalars (`extractlane`, which
//! Cranelift drops when unused), so any other use sees the scalar code's
//! values. The second instruction of a pair moves up to the first, next
//! to it: nothing runs in between, so no memory access is reordered.

use super::super::{adc_ir_int_const, plus_constant, FuncTranslator};
use super::VECTOR;
use crate::CodegenError;
use adc_ir::{
    BinaryOp, Block, Function, Inst, InstData, MathFunc, ScalarType, Tag, Type, UnaryOp, Value,
};
use cranelift_codegen::ir::{self as clif, types, InstBuilder};
use cranelift_module::Module;
use std::collections::{BTreeMap, BTreeSet};

/// Which instructions run as pairs, and which block parameters are pairs.
#[derive(Default)]
pub(crate) struct LanePlan {
    /// The first instruction of each pair (lane 0), with the second.
    pairs: BTreeMap<Inst, Inst>,
    /// Per block, each `j` whose parameters `j` and `j + 1` are one.
    params: BTreeMap<Block, Vec<usize>>,
}

impl LanePlan {
    pub(crate) fn partner(&self, first: Inst) -> Option<Inst> {
        self.pairs.get(&first).copied()
    }

    pub(crate) fn param_pairs(&self, blk: Block) -> &[usize] {
        self.params.get(&blk).map_or(&[], |v| v.as_slice())
    }

    /// The number of instruction pairs (for tests).
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.pairs.len()
    }
}

/// How two adjacent instructions may pair.
#[derive(PartialEq)]
enum Fit {
    /// One `f64x2` operation (or 16-byte access).
    Pair,
    /// Loads of elements apart: two loads, then one shuffle where used.
    Gather,
}

fn f64_result(func: &Function, i: Inst) -> Option<Value> {
    match func.dfg.inst_results(i) {
        [r] if func.dfg.value_type(*r) == Type::Scalar(ScalarType::F64) => Some(*r),
        _ => None,
    }
}

/// `v` as a base and a constant offset: `(Some(x), k)` for `x + k` (or
/// `x` itself, `k = 0`), `(None, k)` for a constant `k`.
fn offset(func: &Function, v: Value) -> (Option<Value>, i64) {
    if let Some(k) = adc_ir_int_const(func, v) {
        return (None, k);
    }
    plus_constant(func, v).map_or((Some(v), 0), |(x, k)| (Some(x), k))
}

/// Whether `(b_array, b_index)` is the element after `(a_array, a_index)`.
fn next_element(func: &Function, a: (Value, Value), b: (Value, Value)) -> bool {
    let ((xa, ka), (xb, kb)) = (offset(func, a.1), offset(func, b.1));
    a.0 == b.0 && xa == xb && ka.checked_add(1) == Some(kb)
}

/// The operands a pair's operation takes lane by lane.
fn lane_operands(data: &InstData) -> Vec<Value> {
    match data {
        InstData::Binary { args, .. } => args.to_vec(),
        InstData::Unary { arg, .. } => vec![*arg],
        InstData::Math { args, .. } => args.clone(),
        InstData::Store { value, .. } => vec![*value],
        _ => Vec::new(),
    }
}

fn fit(func: &Function, a: Inst, b: Inst, recurrent: &[bool]) -> Option<Fit> {
    if func.tag(a) != Tag::Diff || func.tag(b) != Tag::Diff {
        return None;
    }
    let (da, db) = (func.dfg.inst(a), func.dfg.inst(b));
    let ra = func.dfg.inst_results(a).first().copied();
    let mut uses_a = false;
    db.for_each_arg(|v| uses_a |= Some(v) == ra);
    if uses_a {
        return None;
    }
    let f64s = f64_result(func, a).is_some() && f64_result(func, b).is_some();
    let is_f64 = |v: Value| func.dfg.value_type(v) == Type::Scalar(ScalarType::F64);
    match (da, db) {
        (InstData::Binary { op, args: x }, InstData::Binary { op: o, args: y })
            if op == o && f64s && is_f64(x[0]) && is_f64(y[0]) =>
        {
            let recurs = |i: Inst| {
                let r = func.dfg.inst_results(i)[0];
                crate::translate::strong_zero::is_recurrent(recurrent, r)
            };
            match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => Some(Fit::Pair),
                BinaryOp::MulZ | BinaryOp::DivZ if !recurs(a) && !recurs(b) => Some(Fit::Pair),
                _ => None,
            }
        }
        (InstData::Unary { op, .. }, InstData::Unary { op: o, .. })
            if op == o && f64s && matches!(op, UnaryOp::Neg | UnaryOp::NoDiff) =>
        {
            Some(Fit::Pair)
        }
        (InstData::Math { func: f, args }, InstData::Math { func: g, .. })
            if f == g && f64s && args.len() == 1 && matches!(f, MathFunc::Sqrt | MathFunc::Abs) =>
        {
            Some(Fit::Pair)
        }
        (InstData::Math { func: f, args }, InstData::Math { func: g, .. })
            if f == g && f64s && *f == MathFunc::Fma && args.iter().all(|&v| is_f64(v)) =>
        {
            Some(Fit::Pair)
        }
        (
            InstData::Load {
                array: xa,
                index: ia,
                checked: false,
            },
            InstData::Load {
                array: xb,
                index: ib,
                checked: false,
            },
        ) if f64s => Some(if next_element(func, (*xa, *ia), (*xb, *ib)) {
            Fit::Pair
        } else {
            Fit::Gather
        }),
        (
            InstData::Store {
                array: xa,
                index: ia,
                value: va,
                checked: false,
            },
            InstData::Store {
                array: xb,
                index: ib,
                value: vb,
                checked: false,
            },
        ) if is_f64(*va) && is_f64(*vb) && next_element(func, (*xa, *ia), (*xb, *ib)) => {
            Some(Fit::Pair)
        }
        _ => None,
    }
}

/// The plan for `func` (`recurrent`: `strong_zero`'s table).
pub(crate) fn plan(func: &Function, recurrent: &[bool]) -> LanePlan {
    let mut pairs = BTreeMap::new();
    let mut gathers = BTreeSet::new();
    for &blk in &func.layout {
        let insts = &func.dfg.block(blk).insts;
        let mut k = 0;
        while k + 1 < insts.len() {
            let (a, b) = (insts[k], insts[k + 1]);
            match fit(func, a, b, recurrent) {
                Some(Fit::Pair) => {
                    pairs.insert(a, b);
                    k += 2;
                }
                Some(Fit::Gather) => {
                    let r = |i: Inst| func.dfg.inst_results(i)[0];
                    gathers.insert((r(a), r(b)));
                    k += 2;
                }
                None => k += 1,
            }
        }
    }
    if pairs.is_empty() {
        return LanePlan::default();
    }
    let edges = incoming_args(func);
    loop {
        let params = param_pairs(func, &pairs);
        let mut lanes: BTreeMap<Value, Value> = BTreeMap::new();
        for (&a, &b) in &pairs {
            if let (Some(x), Some(y)) = (f64_result(func, a), f64_result(func, b)) {
                lanes.insert(x, y);
            }
        }
        // Operand pairs the pairs and paired parameters take.
        let mut used: BTreeSet<(Value, Value)> = BTreeSet::new();
        for (&a, &b) in &pairs {
            let (x, y) = (
                lane_operands(func.dfg.inst(a)),
                lane_operands(func.dfg.inst(b)),
            );
            used.extend(x.into_iter().zip(y));
        }
        for (&blk, js) in &params {
            let ps = func.dfg.block_params(blk);
            for &j in js {
                lanes.insert(ps[j], ps[j + 1]);
                for args in edges.get(&blk).into_iter().flatten() {
                    used.insert((args[j], args[j + 1]));
                }
            }
        }
        let before = pairs.len();
        pairs.retain(|&a, &mut b| {
            let data = func.dfg.inst(a);
            if matches!(data, InstData::Load { .. }) {
                let r = |i: Inst| func.dfg.inst_results(i)[0];
                return used.contains(&(r(a), r(b)));
            }
            let pairs_of = lane_operands(data)
                .into_iter()
                .zip(lane_operands(func.dfg.inst(b)));
            let mut shuffles = 0;
            for (x, y) in pairs_of {
                if x == y || lanes.get(&x) == Some(&y) {
                    continue;
                }
                if !gathers.contains(&(x, y)) {
                    return false;
                }
                shuffles += 1;
            }
            let costly = matches!(
                data,
                InstData::Binary {
                    op: BinaryOp::MulZ | BinaryOp::DivZ | BinaryOp::Div,
                    ..
                } | InstData::Math {
                    func: MathFunc::Sqrt,
                    ..
                }
            );
            shuffles <= if costly { 2 } else { 1 }
        });
        if pairs.len() == before {
            return LanePlan { pairs, params };
        }
    }
}

/// The arguments of every edge into each block, found once: a walk of
/// the function per paired parameter was quadratic (an `else if` chain's
/// thousands of joins, each with its pairs).
fn incoming_args(func: &Function) -> BTreeMap<Block, Vec<&[Value]>> {
    let mut edges: BTreeMap<Block, Vec<&[Value]>> = BTreeMap::new();
    for &b in &func.layout {
        if let Some(t) = func.terminator(b) {
            for call in func.dfg.inst(t).successors() {
                edges.entry(call.block).or_default().push(&call.args);
            }
        }
    }
    edges
}

/// The paired parameters: per block but the entry, left to right, `j`
/// where some edge passes the lanes of a pair as arguments `j`, `j + 1`.
fn param_pairs(func: &Function, pairs: &BTreeMap<Inst, Inst>) -> BTreeMap<Block, Vec<usize>> {
    let second: BTreeMap<Value, Value> = pairs
        .iter()
        .filter_map(|(&a, &b)| Some((f64_result(func, a)?, f64_result(func, b)?)))
        .collect();
    let mut wanted: BTreeMap<Block, BTreeSet<usize>> = BTreeMap::new();
    for &b in &func.layout {
        let Some(t) = func.terminator(b) else {
            continue;
        };
        for call in func.dfg.inst(t).successors() {
            for (j, w) in call.args.windows(2).enumerate() {
                if second.get(&w[0]) == Some(&w[1]) {
                    wanted.entry(call.block).or_default().insert(j);
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    for (blk, js) in wanted {
        if blk == func.layout[0] {
            continue;
        }
        let mut taken = Vec::new();
        for j in js {
            if taken.last().is_none_or(|&t| t + 1 < j) {
                taken.push(j);
            }
        }
        out.insert(blk, taken);
    }
    out
}

impl<M: Module> FuncTranslator<'_, '_, M> {
    /// Appends the Cranelift parameters of IR block `blk` (not the entry):
    /// one `f64x2` for each parameter pair.
    pub(crate) fn append_params(&mut self, blk: Block) {
        let cb = self.blocks[&blk];
        let pairs = self.lanes.param_pairs(blk).to_vec();
        let params = self.func.dfg.block_params(blk);
        let mut j = 0;
        while j < params.len() {
            if pairs.contains(&j) {
                let p = self.b.append_block_param(cb, types::F64X2);
                self.lane_vec[params[j].index()] = Some((p, 0));
                self.lane_vec[params[j + 1].index()] = Some((p, 1));
                j += 2;
                continue;
            }
            let vals = super::super::clif_types(self.func.dfg.value_type(params[j]))
                .into_iter()
                .map(|ty| self.b.append_block_param(cb, ty))
                .collect();
            self.values[params[j].index()] = vals;
            j += 1;
        }
    }

    /// At the start of `blk`: the scalars of its parameter pairs.
    pub(crate) fn enter_block_lanes(&mut self, blk: Block) {
        self.gathered.clear();
        let params = self.func.dfg.block_params(blk);
        for &j in self.lanes.param_pairs(blk) {
            for p in [params[j], params[j + 1]] {
                // Invariant: `append_params` gave both their vector.
                let (v, lane) = self.lane_vec[p.index()].expect("paired parameter");
                self.values[p.index()] = vec![self.b.ins().extractlane(v, lane)];
            }
        }
    }

    /// The arguments of an edge into a block with parameter pairs.
    pub(crate) fn paired_block_args(&mut self, call: &adc_ir::BlockCall) -> Vec<clif::BlockArg> {
        let pairs = self.lanes.param_pairs(call.block).to_vec();
        let mut out = Vec::new();
        let mut j = 0;
        while j < call.args.len() {
            if pairs.contains(&j) {
                let v = self.pair_value(call.args[j], call.args[j + 1]);
                out.push(clif::BlockArg::Value(v));
                j += 2;
                continue;
            }
            out.extend(self.vs(call.args[j]).into_iter().map(clif::BlockArg::Value));
            j += 1;
        }
        out
    }

    /// `x` in lane 0 and `y` in lane 1: their pair's vector, a splat, or
    /// the two scalars combined (once per block).
    fn pair_value(&mut self, x: Value, y: Value) -> clif::Value {
        if x == y {
            let s = self.v(x);
            return self.b.ins().splat(types::F64X2, s);
        }
        let (vx, vy) = (self.lane_vec[x.index()], self.lane_vec[y.index()]);
        if let (Some((v, 0)), Some((w, 1))) = (vx, vy) {
            // Where a loop uses a copy of a value (`homes`), the copy.
            if v == w && !self.homes.stands_in(x) && !self.homes.stands_in(y) {
                return v;
            }
        }
        if let Some(v) = self.gathered.get(&(x, y)) {
            return *v;
        }
        let (lo, hi) = (self.v(x), self.v(y));
        let v = self.b.ins().scalar_to_vector(types::F64X2, lo);
        let v = self.b.ins().insertlane(v, hi, 1);
        self.gathered.insert((x, y), v);
        v
    }

    /// Emits the pair of `a` (lane 0) and `b` (lane 1).
    pub(crate) fn lane_pair(&mut self, a: Inst, b: Inst) -> Result<(), CodegenError> {
        let (da, db) = (self.func.dfg.inst(a).clone(), self.func.dfg.inst(b).clone());
        let (xs, ys) = (lane_operands(&da), lane_operands(&db));
        let v = match &da {
            InstData::Load { array, index, .. } => {
                let addr = self.elem_addr(a, *array, *index, false)?;
                self.b.ins().load(types::F64X2, VECTOR, addr, 0)
            }
            InstData::Store { array, index, .. } => {
                let v = self.pair_value(xs[0], ys[0]);
                let addr = self.elem_addr(a, *array, *index, false)?;
                self.b.ins().store(VECTOR, v, addr, 0);
                return Ok(());
            }
            InstData::Binary { op, .. } => {
                let x = self.pair_value(xs[0], ys[0]);
                let y = self.pair_value(xs[1], ys[1]);
                self.vector_binary(*op, x, y)
            }
            InstData::Unary { op, .. } => {
                let x = self.pair_value(xs[0], ys[0]);
                match op {
                    UnaryOp::Neg => self.b.ins().fneg(x),
                    _ => x,
                }
            }
            InstData::Math { func, .. } => {
                let x = self.pair_value(xs[0], ys[0]);
                match func {
                    MathFunc::Sqrt => self.b.ins().sqrt(x),
                    MathFunc::Fma => {
                        let y = self.pair_value(xs[1], ys[1]);
                        let z = self.pair_value(xs[2], ys[2]);
                        self.b.ins().fma(x, y, z)
                    }
                    _ => self.b.ins().fabs(x),
                }
            }
            _ => unreachable!("invariant: `plan` pairs only the kinds above"),
        };
        for (i, lane) in [(a, 0u8), (b, 1)] {
            let s = self.b.ins().extractlane(v, lane);
            self.def(i, vec![s]);
            let r = self.func.dfg.inst_results(i)[0];
            self.lane_vec[r.index()] = Some((v, lane));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::plan;
    use adc_ir::{Block, Function};

    /// A width-4 loop as `adc ir --after final` prints vector mode: each
    /// lane's tangent of `x` (views `n` apart), times `c`, summed in a
    /// block parameter per lane; the sums stored to adjacent elements.
    /// `SWAP` stands for the first two products' loads, in lane order
    /// or swapped.
    const LOOP: &str = "func @g(x: arr<f64>, d_x: arr<f64>, c: f64, inout t: arr<f64>) {
block0(v0: arr<f64>, v1: arr<f64>, v2: f64, v3: arr<f64>):
    v4: i64 = const 0
    v5: i64 = len v0
    v6: arr<f64> = view v1, v4, v5
    v7: i64 = add v5, v5
    v8: arr<f64> = view v1, v5, v7
    v9: i64 = add v7, v5
    v10: arr<f64> = view v1, v7, v9
    v11: i64 = add v9, v5
    v12: arr<f64> = view v1, v9, v11
    v13: f64 = const 0.0
    v14: i64 = const 1
    jump block1(v13, v13, v13, v13, v4)
block1(v20: f64, v21: f64, v22: f64, v23: f64, v24: i64):
    v25: f64 = diff load.unchecked v6, v24
    v26: f64 = diff load.unchecked v8, v24
    v27: f64 = diff load.unchecked v10, v24
    v28: f64 = diff load.unchecked v12, v24
    v29: f64 = diff mulz SWAP
    v31: f64 = diff mulz v27, v2
    v32: f64 = diff mulz v28, v2
    v33: f64 = diff add v20, v29
    v34: f64 = diff add v21, v30
    v35: f64 = diff add v22, v31
    v36: f64 = diff add v23, v32
    v37: i64 = add v24, v14
    v38: bool = cmp lt v37, v5
    br v38, block1(v33, v34, v35, v36, v37), block2()
block2():
    diff store.unchecked v3, v4, v33
    diff store.unchecked v3, v14, v34
    return
}
";

    fn function(swap: &str) -> Function {
        let text = LOOP.replace("SWAP", swap);
        let m = adc_ir::parse_module(&text).expect("parses");
        m.funcs[0].clone()
    }

    #[test]
    fn lanes_in_order_pair_through_the_loop() {
        let f = function("v25, v2\n    v30: f64 = diff mulz v26, v2");
        let p = plan(&f, &[]);
        // Two pairs of products, two of sums, the two stores; the loads
        // of lanes `n` apart stay scalar (combined where used).
        assert_eq!(p.count(), 5);
        assert_eq!(p.param_pairs(Block::new(1)), [0, 2]);
        assert!(p.param_pairs(Block::new(0)).is_empty());
    }

    #[test]
    fn lanes_out_of_order_stay_scalar() {
        // Lane 0's product takes lane 1's tangent and the other way round:
        // that pair and everything it feeds stay scalar.
        let f = function("v26, v2\n    v30: f64 = diff mulz v25, v2");
        let p = plan(&f, &[]);
        assert_eq!(p.count(), 2);
        assert_eq!(p.param_pairs(Block::new(1)), [2]);
    }

    /// `adc ir --after final` of a width-2 reverse derivative,
    /// `a * x[1] + a * a` (`transpose` interleaves the lanes' adjoints,
    /// lane 0 first, and loads the seed's lanes as `diff`).
    const REVERSE: &str = "func @g(a: f64, out d_a: arr<f64>, x: arr<f64>, inout d_x: arr<f64>, seed: arr<f64>) -> f64 {
block0(v0: f64, v1: arr<f64>, v2: arr<f64>, v3: arr<f64>, v44: arr<f64>):
    v45: i64 = const 2
    lencheck v45, v44
    v46: i64 = const 0
    v47: i64 = const 1
    v48: f64 = diff load.unchecked v44, v46
    v49: f64 = diff load.unchecked v44, v47
    lencheck v45, v1
    v8: f64 = const 0.0
    store.unchecked v1, v46, v8
    store.unchecked v1, v47, v8
    v13: i64 = len v2
    v15: i64 = mul v13, v45
    lencheck v15, v3
    v18: arr<f64> = view v3, v46, v13
    v19: i64 = add v13, v13
    v20: arr<f64> = view v3, v13, v19
    v22: f64 = load v2, v47
    v23: f64 = mul v0, v22
    v24: f64 = mul v0, v0
    v25: f64 = add v23, v24
    v53: f64 = diff mulz v48, v0
    v52: f64 = diff mulz v49, v0
    v57: f64 = diff add v53, v53
    v55: f64 = diff add v52, v52
    v62: f64 = diff mulz v48, v22
    v60: f64 = diff mulz v49, v22
    v63: f64 = diff add v57, v62
    v61: f64 = diff add v55, v60
    v66: f64 = diff load.unchecked v18, v47
    v64: f64 = diff load.unchecked v20, v47
    v67: f64 = diff add v66, v53
    v65: f64 = diff add v64, v52
    diff store.unchecked v18, v47, v67
    diff store.unchecked v20, v47, v65
    v70: f64 = diff load.unchecked v1, v46
    v71: f64 = diff add v70, v63
    v69: f64 = diff add v8, v61
    diff store.unchecked v1, v46, v71
    diff store.unchecked v1, v47, v69
    diff return v25
}";

    #[test]
    fn reverse_lanes_pair_from_the_seed_on() {
        let m = adc_ir::parse_module(REVERSE).expect("parses");
        let p = plan(&m.funcs[0], &[]);
        // The seed's two loads (one 16-byte load), the products and sums
        // of both lanes, the sums into `d_x`'s lanes (loaded `n` apart);
        // not the last sums (lane 1's load of `d_a[1]` is forwarded).
        assert_eq!(p.count(), 6);
    }
}
