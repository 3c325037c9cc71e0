//! `unzip`: splits a linearized reverse request into a primal part and a
//! differential part that replays the same control flow.
//!
//! Assumes: `func` is the output of `linearize` (+ `propagate`, +
//! `lower-pairs`) for a reverse request: no DifferentialPair is left.
//! Guarantees (check with `adc ir --after unzip`):
//! - All returns go through one exit block, and the exit edge of each
//!   counted loop (`crate::loops`) through a block of its own. The primal
//!   part is the source's
//!   CFG with the primal instructions only; a call of a derivative becomes
//!   the primal call, after copies of the arguments the callee may change
//!   (writable arrays are `copy`'d, references `rload`'d).
//! - The primal exit ends in the only `mixed` jump, to the differential
//!   entry. The differential part is the CFG again (`block` for `block`,
//!   in the same order, with the same edges), holding the `diff`
//!   instructions and the derivative calls, and branching on the same
//!   conditions.
//! - Primal values the differential part needs reach it directly when they
//!   are defined once per call (a block outside every loop that dominates
//!   the exit); all others are pushed on the tape at the end of their
//!   primal block and read back (`tape.read`) at the start of the block's
//!   differential twin, in push order. So values of loop iterations are
//!   kept per iteration, and the tape follows the actual trip count.
//!   Values cheap to compute again from what the twin has (constants,
//!   integer and float arithmetic, comparisons, conversions, math
//!   functions of operands the twin has anyway, at most two calls of the
//!   math library per value, loads from array parameters the function
//!   never writes) are computed again there instead: the tape-minimality
//!   rule, a value is taped only when computing it again from values taped
//!   anyway (or available in the twin) would cost more, and never when it
//!   would tape more. So `y = sin(y) * y` in a loop tapes `y` alone, not
//!   `sin(y)` and `cos(y)` too (`recompute::MAX_MATH_CALLS`). Math
//!   functions only in loops, whose tape grows with the trip count. Inside a counted loop, such a value may also be
//!   computed from scalars defined before the loop, which are taped
//!   instead of it: `transpose` pushes those once per run of the loop.
//! - Every primal `slot` is defined in the entry block (a store of zero
//!   stands where it was: `shape::hoist_slots`), so no stack address goes
//!   on the tape, where it would outlive its frame in split mode.
//! - Tape instructions already in the input (code that is, or calls
//!   inlined, a reverse derivative: reverse over reverse) move up one tape
//!   level; the tape this pass pushes to and reads from is tape 0.
//! - A counted loop's counter is a parameter of the header's twin too (the
//!   same start constant, the same step on the back edge), so it is not
//!   taped inside the loop; the loop's exit block tapes it first.
//! - A block with several predecessors (other than a counted loop's
//!   header) gets a parameter in the primal
//!   part, the index of the edge taken (in `incoming_edges` order; a `bool`
//!   for two edges, `true` for the second, else an `i64`);
//!   it is the first value taped for the block, and `transpose` pops it to
//!   find its way back.
//!
//! The result runs (forward replay): it computes the same as the
//! linearized function.

mod block;
mod calls;
mod recompute;
mod shape;

use shape::{every_block_returns, hoist_slots, shift_tapes, single_exit, split_exit};

use crate::ad::{diff_values, AdError};
use crate::cfg::incoming_edges;
use crate::loops::{counted_loops, CountedLoop};
use adc_ir::dom::DomTree;
use adc_ir::{Block, Constant, FuncId, Function, Inst, InstData, Module, Tag, Type, Value};
use std::collections::{BTreeMap, BTreeSet};

/// `split`: whether calls of qualifying callees use split mode
/// (`ad::split`); their split functions are declared here if new.
pub fn run(module: &mut Module, id: FuncId, split: bool) -> Result<(), AdError> {
    let mut g = module.func(id).clone();
    if crate::ad::lower_pairs::has_pairs(&g) {
        let span = g.deriv_span;
        return Err(AdError::internal(
            "internal error: unzip needs its input's pairs lowered (`lower-pairs`)",
            span,
        ));
    }
    // Code that is (or inlines) a reverse derivative already uses tapes:
    // they move up a level, so the tape this derivative keeps (level 0)
    // is a stack of its own.
    shift_tapes(&mut g)?;
    every_block_returns(&g)?;
    single_exit(&mut g);
    hoist_slots(&mut g);
    let all: BTreeSet<Block> = g.layout.iter().copied().collect();
    for lp in counted_loops(&g, &all) {
        split_exit(&mut g, lp.header, lp.exit);
    }
    let counted = counted_loops(&g, &all);
    let kinds = diff_values(module, &g);
    let mut split_of = BTreeMap::new();
    if split {
        for &b in &g.layout {
            for &i in &g.dfg.block(b).insts {
                if let (Tag::Mixed, InstData::Call { func, .. }) = (g.tag(i), g.dfg.inst(i)) {
                    let src = crate::ad::jvp_source(module, *func);
                    if let Some(src) = src.filter(|s| crate::ad::split::qualifies(module, *s)) {
                        let parts = crate::ad::split::declare(module, src, *func);
                        split_of.insert(*func, parts);
                    }
                }
            }
        }
    }
    // `transpose` cuts this function in two (split mode) when it is the
    // internal derivative of a qualifying function.
    let split_half = split
        && g.name
            .strip_prefix("__adc_vjp_")
            .and_then(|src| module.find(src))
            .is_some_and(|src| crate::ad::split::qualifies(module, src));
    let mut unzipper = Unzipper::new(module, &g, kinds, split_half);
    unzipper.counted = counted;
    unzipper.split_of = split_of;
    let out = unzipper.build()?;
    *module.func_mut(id) = out;
    Ok(())
}

struct Unzipper<'a> {
    module: &'a Module,
    g: &'a Function,
    kinds: Vec<bool>,
    out: Function,
    pblock: BTreeMap<Block, Block>,
    dblock: BTreeMap<Block, Block>,
    /// G value -> its primal-part value.
    pmap: Vec<Option<Value>>,
    /// G diff value -> its differential-part value.
    dmap: Vec<Option<Value>>,
    /// Block of G that defines each primal-part value.
    def_block: BTreeMap<Value, Block>,
    once: BTreeMap<Block, bool>,
    /// Blocks on a cycle of the CFG (in a loop): where math functions are
    /// computed again rather than taped (`recompute::math_cost`).
    cyclic: BTreeSet<Block>,
    preds: BTreeMap<Block, usize>,
    /// Entry parameters (by position) whose arrays the function may write.
    written_params: Vec<bool>,
    /// Local arrays whose loads the differential part may repeat
    /// (`recompute::frozen_locals`), with the blocks that may reach a write.
    frozen_locals: BTreeMap<Value, BTreeSet<Block>>,
    /// The primal part's frees of them, made `defer.free`.
    deferred_frees: Vec<Inst>,
    /// The arrays (primal-part roots) the differential part loads again.
    reread: BTreeSet<Value>,
    /// Counted loops of `g`: their counters are replayed, not taped.
    counted: Vec<CountedLoop>,
    /// Per counted loop, the counter's parameter of the header's twin.
    counter_d: Vec<Value>,
    /// Split mode: the callees' split functions, by `__adc_jvp_` callee.
    split_of: BTreeMap<FuncId, crate::ad::split::Split>,
    /// Split calls: the `__adc_lin_` function their differential half calls.
    split_calls: BTreeMap<Inst, FuncId>,
    /// Primal arguments of jumps from blocks outside every loop to blocks
    /// defined once per call: (the jumping block, the argument, the
    /// parameter it goes to), for `block::joined`.
    join_args: Vec<(Block, Value, Value)>,
}

impl<'a> Unzipper<'a> {
    fn new(module: &'a Module, g: &'a Function, kinds: Vec<bool>, split_half: bool) -> Self {
        let mut out = Function::new(
            g.name.clone(),
            g.params.clone(),
            g.returns.clone(),
            g.linkage,
        );
        out.deriv = g.deriv.clone();
        out.deriv_span = g.deriv_span;
        let dom = DomTree::new(g);
        let exit = *g
            .layout
            .last()
            .expect("invariant: single_exit added a block");
        let cyclic = crate::cfg::blocks_on_cycles(g);
        let once: BTreeMap<Block, bool> = g
            .layout
            .iter()
            .map(|&b| (b, dom.dominates(b, exit) && !cyclic.contains(&b)))
            .collect();
        let frozen_locals = recompute::frozen_locals(module, g, &once, split_half);
        let preds = incoming_edges(g)
            .into_iter()
            .map(|(b, e)| (b, e.len()))
            .collect();
        let mut join_args = Vec::new();
        for &l in g.layout.iter().filter(|l| !cyclic.contains(l)) {
            if let Some(InstData::Jump { dest }) = g.terminator(l).map(|t| g.dfg.inst(t)) {
                if once[&dest.block] {
                    let params = g.dfg.block_params(dest.block);
                    join_args.extend(dest.args.iter().zip(params).map(|(a, p)| (l, *a, *p)));
                }
            }
        }
        Unzipper {
            module,
            g,
            kinds,
            out,
            pblock: BTreeMap::new(),
            dblock: BTreeMap::new(),
            pmap: vec![None; g.dfg.num_values()],
            dmap: vec![None; g.dfg.num_values()],
            def_block: BTreeMap::new(),
            once,
            cyclic,
            preds,
            written_params: recompute::written_params(module, g, split_half),
            frozen_locals,
            deferred_frees: Vec::new(),
            reread: BTreeSet::new(),
            counted: Vec::new(),
            counter_d: Vec::new(),
            split_of: BTreeMap::new(),
            split_calls: BTreeMap::new(),
            join_args,
        }
    }

    fn is_diff(&self, v: Value) -> bool {
        self.kinds[v.index()]
    }

    fn emit(
        &mut self,
        b: Block,
        data: InstData,
        types: &[Type],
        tag: Tag,
        span: adc_ir::Span,
    ) -> Vec<Value> {
        let inst = self.out.append_inst(b, data, types, span);
        self.out.set_tag(inst, tag);
        self.out.dfg.inst_results(inst).to_vec()
    }

    fn p(&self, v: Value) -> Value {
        self.pmap[v.index()].expect("invariant: primal values are defined before use")
    }

    fn build(mut self) -> Result<Function, AdError> {
        let g = self.g;
        for &b in &g.layout {
            let pb = self.out.dfg.make_block();
            self.out.layout.push(pb);
            self.pblock.insert(b, pb);
        }
        for &b in &g.layout {
            let db = self.out.dfg.make_block();
            self.out.layout.push(db);
            self.dblock.insert(b, db);
        }
        // Parameters: the entry keeps the signature; other primal blocks
        // their primal parameters plus the edge index; differential blocks
        // their differential parameters.
        let entry = g.layout[0];
        for &v in g.dfg.block_params(entry) {
            let nv = self
                .out
                .dfg
                .append_block_param(self.pblock[&entry], g.dfg.value_type(v));
            if self.is_diff(v) {
                self.dmap[v.index()] = Some(nv);
            } else {
                self.pmap[v.index()] = Some(nv);
                self.def_block.insert(nv, entry);
            }
        }
        let mut edge_index: BTreeMap<Block, Value> = BTreeMap::new();
        for &b in &g.layout[1..] {
            for &v in g.dfg.block_params(b) {
                let ty = g.dfg.value_type(v);
                if self.is_diff(v) {
                    self.dmap[v.index()] =
                        Some(self.out.dfg.append_block_param(self.dblock[&b], ty));
                } else {
                    let nv = self.out.dfg.append_block_param(self.pblock[&b], ty);
                    self.pmap[v.index()] = Some(nv);
                    self.def_block.insert(nv, b);
                }
            }
            if let Some(k) = self.counted.iter().position(|l| l.header == b) {
                let nv = self.out.dfg.append_block_param(self.dblock[&b], Type::I64);
                debug_assert_eq!(self.counter_d.len(), k, "headers in layout order");
                self.counter_d.push(nv);
            } else if self.preds[&b] > 1 {
                let nv = self
                    .out
                    .dfg
                    .append_block_param(self.pblock[&b], edge_index_type(self.preds[&b]));
                self.def_block.insert(nv, b);
                edge_index.insert(b, nv);
            }
        }
        // Edge numbering, in `incoming_edges` order.
        let mut edge_no: BTreeMap<(Block, Block, usize), i64> = BTreeMap::new();
        for (target, edges) in incoming_edges(g) {
            for (k, e) in edges.iter().enumerate() {
                let nth = edges[..k].iter().filter(|x| x.from == e.from).count();
                edge_no.insert((e.from, target, nth), k as i64);
            }
        }
        // Dominators first, so definitions come before their uses.
        for b in crate::cfg::dominator_order(g) {
            self.block(b, edge_index.get(&b).copied(), &edge_no)?;
        }
        // A deferred free of an array the differential part does not read
        // after all is a plain free again.
        for i in std::mem::take(&mut self.deferred_frees) {
            if let InstData::DeferFree { array } = *self.out.dfg.inst(i) {
                if !self.reread.contains(&self.out.array_root(array)) {
                    *self.out.dfg.inst_mut(i) = InstData::ArrayFree { array };
                }
            }
        }
        Ok(self.out)
    }

    /// Whether a primal-part value is available in every differential block.
    fn direct(&self, v: Value) -> bool {
        self.def_block.get(&v).is_some_and(|b| self.once[b])
    }
}

/// The type of the edge index of a block with `preds` incoming edges: a
/// `bool` (one byte on the tape) for the common two, else an `i64`.
fn edge_index_type(preds: usize) -> Type {
    if preds == 2 {
        Type::BOOL
    } else {
        Type::I64
    }
}

/// Edge index `k` as a constant of the edge index's type (`bool` edge
/// indices are `true` for the second edge); `transpose` compares with it.
pub(crate) fn edge_index_constant(ty: Type, k: i64) -> Constant {
    if ty == Type::BOOL {
        Constant::Bool(k == 1)
    } else {
        Constant::I64(k)
    }
}
