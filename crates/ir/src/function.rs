//! `Module`, `Function` and the data-flow graph.
//!
//! A function owns its instructions, values and blocks in dense tables
//! indexed by entity ids. Values are defined either as an instruction result
//! or as a block parameter (there are no phis). `layout` is the block order;
//! each block lists its instructions in order, the last one a terminator.

use crate::ad::{DerivSpec, Tag};
use crate::entity::{Block, FuncId, Inst, Span, Value};
use crate::inst::InstData;
use crate::types::Type;

/// How a parameter is passed, as written in the source; it decides the C
/// declaration (`const double *` versus `double *`) and, later, AD semantics.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamMode {
    /// A scalar by value or a read-only array.
    In,
    Inout,
    Out,
}

#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub mode: ParamMode,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Linkage {
    /// Defined here and exported under its own name.
    Export,
    /// Declared here, resolved by the linker or the JIT host.
    Import,
    /// Defined here and internal to the module (`static`, docs/language.md#static-functions):
    /// callable from `.ad`, `adc run` and the Rust API, but not exported
    /// from object files nor declared in headers.
    Static,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ValueDef {
    Result(Inst, u32),
    Param(Block, u32),
    /// A number the text skipped, or a value a pass detached.
    Unused,
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
}

#[derive(Clone, Debug, Default)]
pub struct BlockData {
    pub params: Vec<Value>,
    pub insts: Vec<Inst>,
}

#[derive(Clone, Debug, Default)]
pub struct DataFlowGraph {
    insts: Vec<InstData>,
    results: Vec<Vec<Value>>,
    values: Vec<ValueData>,
    blocks: Vec<BlockData>,
}

impl DataFlowGraph {
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    pub fn num_insts(&self) -> usize {
        self.insts.len()
    }

    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v.index()].ty
    }

    /// Gives `v` the type `ty` (a pass that changes a value's
    /// representation, `ad::sets`' `float` handles, fixes its uses).
    pub fn set_value_type(&mut self, v: Value, ty: Type) {
        self.values[v.index()].ty = ty;
    }

    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v.index()].def
    }

    pub fn is_valid_value(&self, v: Value) -> bool {
        v.index() < self.values.len() && self.values[v.index()].def != ValueDef::Unused
    }

    pub fn inst(&self, inst: Inst) -> &InstData {
        &self.insts[inst.index()]
    }

    pub fn inst_mut(&mut self, inst: Inst) -> &mut InstData {
        &mut self.insts[inst.index()]
    }

    pub fn inst_results(&self, inst: Inst) -> &[Value] {
        &self.results[inst.index()]
    }

    pub fn block(&self, block: Block) -> &BlockData {
        &self.blocks[block.index()]
    }

    pub fn block_mut(&mut self, block: Block) -> &mut BlockData {
        &mut self.blocks[block.index()]
    }

    pub fn block_params(&self, block: Block) -> &[Value] {
        &self.blocks[block.index()].params
    }

    pub fn make_block(&mut self) -> Block {
        self.blocks.push(BlockData::default());
        Block::new(self.blocks.len() - 1)
    }

    /// Makes sure block number `block` exists (the text parser keeps numbers).
    pub fn ensure_block(&mut self, block: Block) {
        while self.blocks.len() <= block.index() {
            self.blocks.push(BlockData::default());
        }
    }

    pub fn append_block_param(&mut self, block: Block, ty: Type) -> Value {
        let v = self.make_value(
            ty,
            ValueDef::Param(block, self.blocks[block.index()].params.len() as u32),
        );
        self.blocks[block.index()].params.push(v);
        v
    }

    /// Inserts a parameter at position `index` of `block`; the caller fixes
    /// branch arguments.
    pub fn insert_block_param(&mut self, block: Block, index: usize, ty: Type) -> Value {
        let v = self.make_value(ty, ValueDef::Param(block, index as u32));
        self.blocks[block.index()].params.insert(index, v);
        self.renumber_params(block);
        v
    }

    fn renumber_params(&mut self, block: Block) {
        let params = self.blocks[block.index()].params.clone();
        for (i, p) in params.into_iter().enumerate() {
            self.values[p.index()].def = ValueDef::Param(block, i as u32);
        }
    }

    /// Removes the parameters of `block` whose index `remove` marks (one
    /// renumbering for all); the caller fixes branch arguments.
    pub fn remove_block_params_where(&mut self, block: Block, remove: &[bool]) {
        let params = std::mem::take(&mut self.blocks[block.index()].params);
        let mut kept = Vec::with_capacity(params.len());
        for (i, p) in params.into_iter().enumerate() {
            if remove.get(i).copied().unwrap_or(false) {
                self.values[p.index()].def = ValueDef::Unused;
            } else {
                kept.push(p);
            }
        }
        self.blocks[block.index()].params = kept;
        self.renumber_params(block);
    }

    /// Removes parameter `index` of `block`; the caller fixes branch arguments.
    pub fn remove_block_param(&mut self, block: Block, index: usize) {
        let removed = self.blocks[block.index()].params.remove(index);
        self.values[removed.index()].def = ValueDef::Unused;
        self.renumber_params(block);
    }

    fn make_value(&mut self, ty: Type, def: ValueDef) -> Value {
        self.values.push(ValueData { ty, def });
        Value::new(self.values.len() - 1)
    }

    /// Defines value number `v` (the text parser keeps numbers); false if taken.
    pub fn define_value_at(&mut self, v: Value, ty: Type, def: ValueDef) -> bool {
        while self.values.len() <= v.index() {
            self.values.push(ValueData {
                ty: Type::BOOL,
                def: ValueDef::Unused,
            });
        }
        if self.values[v.index()].def != ValueDef::Unused {
            return false;
        }
        self.values[v.index()] = ValueData { ty, def };
        true
    }

    /// Creates an instruction (not yet placed in a block) with fresh results.
    pub fn make_inst(&mut self, data: InstData, result_types: &[Type]) -> Inst {
        let inst = Inst::new(self.insts.len());
        self.insts.push(data);
        let results = result_types
            .iter()
            .enumerate()
            .map(|(i, ty)| self.make_value(*ty, ValueDef::Result(inst, i as u32)))
            .collect();
        self.results.push(results);
        inst
    }

    /// Creates an instruction whose results are the given, already numbered values.
    pub fn make_inst_with_results(&mut self, data: InstData, results: Vec<Value>) -> Inst {
        let inst = Inst::new(self.insts.len());
        self.insts.push(data);
        for (i, v) in results.iter().enumerate() {
            self.values[v.index()].def = ValueDef::Result(inst, i as u32);
        }
        self.results.push(results);
        inst
    }
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub returns: Vec<crate::types::Type>,
    pub linkage: Linkage,
    pub dfg: DataFlowGraph,
    /// Blocks in layout order; the first is the entry block.
    pub layout: Vec<Block>,
    /// Source span per instruction, indexed by `Inst` (side table).
    pub srclocs: Vec<Span>,
    /// Primal/differential tag per instruction, indexed by `Inst` (side
    /// table; missing entries are primal).
    pub tags: Vec<Tag>,
    /// Set while the body is still to be generated (or turned around) by
    /// the derivative passes.
    pub deriv: Option<DerivSpec>,
    /// Where the request was written (for diagnostics; not printed).
    pub deriv_span: Span,
    /// Where the function is declared: its name in the source (for
    /// diagnostics, such as an `extern` nothing defines; not printed,
    /// undefined in textual IR).
    pub decl_span: Span,
    /// `[forward_derivative(H)]`: callers' derivatives call `H` instead.
    pub custom_forward: Option<String>,
    /// `[reverse_derivative(G)]`.
    pub custom_reverse: Option<String>,
    /// `[checkpoint]` (docs/derivatives.md#checkpointing): reverse-mode callers keep only the
    /// inputs of a call and run it again in the reverse sweep (it is never
    /// inlined into derivative code).
    pub checkpoint: bool,
    /// Array parameters (by position) of which a call reads few elements,
    /// far apart (printed ` cold(i, ...)`): the input shadows of an
    /// element Jacobian's reverse run (docs/jacobians.md#element-jacobians).
    /// `early-loads` starts their first loads early. A hint: any value is
    /// correct.
    pub cold: Vec<usize>,
}

impl Function {
    pub fn new(
        name: impl Into<String>,
        params: Vec<Param>,
        returns: Vec<Type>,
        linkage: Linkage,
    ) -> Function {
        Function {
            name: name.into(),
            params,
            returns,
            linkage,
            dfg: DataFlowGraph::default(),
            layout: Vec::new(),
            srclocs: Vec::new(),
            tags: Vec::new(),
            deriv: None,
            deriv_span: Span::UNDEFINED,
            decl_span: Span::UNDEFINED,
            custom_forward: None,
            custom_reverse: None,
            checkpoint: false,
            cold: Vec::new(),
        }
    }

    pub fn entry_block(&self) -> Option<Block> {
        self.layout.first().copied()
    }

    pub fn is_import(&self) -> bool {
        self.linkage == Linkage::Import
    }

    pub fn span(&self, inst: Inst) -> Span {
        self.srclocs
            .get(inst.index())
            .copied()
            .unwrap_or(Span::UNDEFINED)
    }

    /// Appends a new instruction at the end of `block`.
    pub fn append_inst(
        &mut self,
        block: Block,
        data: InstData,
        result_types: &[Type],
        span: Span,
    ) -> Inst {
        let inst = self.dfg.make_inst(data, result_types);
        self.set_span(inst, span);
        self.dfg.block_mut(block).insts.push(inst);
        inst
    }

    pub fn tag(&self, inst: Inst) -> Tag {
        self.tags.get(inst.index()).copied().unwrap_or_default()
    }

    pub fn set_tag(&mut self, inst: Inst, tag: Tag) {
        if self.tags.len() <= inst.index() {
            self.tags.resize(inst.index() + 1, Tag::Primal);
        }
        self.tags[inst.index()] = tag;
    }

    pub fn set_span(&mut self, inst: Inst, span: Span) {
        if self.srclocs.len() <= inst.index() {
            self.srclocs.resize(inst.index() + 1, Span::UNDEFINED);
        }
        self.srclocs[inst.index()] = span;
    }

    /// The array `v` views (through any chain of `view`s), or `v` itself:
    /// writing through a view writes its root.
    pub fn array_root(&self, mut v: Value) -> Value {
        while let ValueDef::Result(inst, 0) = self.dfg.value_def(v) {
            match self.dfg.inst(inst) {
                InstData::ArrayView { array, .. } => v = *array,
                _ => break,
            }
        }
        v
    }

    /// Whether the array `root` (an `array_root`) is an object of its own:
    /// an array parameter (parameters a function writes never share
    /// elements, docs/arrays.md#the-aliasing-rule) or made here by `new` or `copy`. A block
    /// parameter other than the entry's may be any of them, so it is not.
    pub fn is_distinct_array_object(&self, root: Value) -> bool {
        match self.dfg.value_def(root) {
            ValueDef::Param(b, _) => {
                self.entry_block() == Some(b) && matches!(self.dfg.value_type(root), Type::Array(_))
            }
            ValueDef::Result(i, _) => matches!(
                self.dfg.inst(i),
                InstData::ArrayNew { .. } | InstData::ArrayCopy { .. }
            ),
            ValueDef::Unused => false,
        }
    }

    /// The terminator of `block`, if it has one.
    pub fn terminator(&self, block: Block) -> Option<Inst> {
        let last = *self.dfg.block(block).insts.last()?;
        self.dfg.inst(last).is_terminator().then_some(last)
    }

    /// Layout successors of `block`, in terminator order (may repeat).
    pub fn successors(&self, block: Block) -> Vec<Block> {
        match self.terminator(block) {
            Some(t) => self
                .dfg
                .inst(t)
                .successor_calls()
                .map(|c| c.block)
                .collect(),
            None => Vec::new(),
        }
    }

    /// Every block parameter with the arguments its incoming edges pass, in
    /// layout order of the edges' blocks.
    pub fn incoming_args(&self) -> std::collections::BTreeMap<Value, Vec<Value>> {
        let mut incoming: std::collections::BTreeMap<Value, Vec<Value>> = Default::default();
        for &b in &self.layout {
            if let Some(t) = self.terminator(b) {
                for call in self.dfg.inst(t).successors() {
                    for (p, a) in self.dfg.block_params(call.block).iter().zip(&call.args) {
                        incoming.entry(*p).or_default().push(*a);
                    }
                }
            }
        }
        incoming
    }

    /// The results of the `null` instructions (arrays that hold nothing).
    pub fn null_arrays(&self) -> std::collections::BTreeSet<Value> {
        self.layout
            .iter()
            .flat_map(|b| self.dfg.block(*b).insts.iter())
            .filter(|i| matches!(self.dfg.inst(**i), InstData::ArrayNull))
            .map(|i| self.dfg.inst_results(*i)[0])
            .collect()
    }

    /// Replaces every use of values through `map` (an SSA substitution).
    pub fn substitute(&mut self, map: &dyn Fn(Value) -> Value) {
        for b in self.layout.clone() {
            for inst in self.dfg.block(b).insts.clone() {
                self.dfg.inst_mut(inst).map_args(map);
            }
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    pub funcs: Vec<Function>,
    /// `find`'s index: names of `funcs[..n]` for the first `n` functions
    /// it has seen. Functions are only ever appended, never renamed (a
    /// replaced function keeps its name), which `find` checks on each hit.
    name_index: std::cell::RefCell<(usize, std::collections::HashMap<String, FuncId>)>,
}

impl Module {
    pub fn func(&self, id: FuncId) -> &Function {
        &self.funcs[id.index()]
    }

    pub fn func_mut(&mut self, id: FuncId) -> &mut Function {
        &mut self.funcs[id.index()]
    }

    pub fn func_ids(&self) -> impl Iterator<Item = FuncId> {
        (0..self.funcs.len()).map(FuncId::new)
    }

    /// The first function named `name`. Constant time: a lookup per call
    /// site made differentiating many functions quadratic.
    pub fn find(&self, name: &str) -> Option<FuncId> {
        let mut index = self.name_index.borrow_mut();
        let (seen, map) = &mut *index;
        if *seen > self.funcs.len() {
            // `funcs` was shortened behind the index's back: start again.
            *seen = 0;
            map.clear();
        }
        for (k, f) in self.funcs.iter().enumerate().skip(*seen) {
            map.entry(f.name.clone()).or_insert(FuncId::new(k));
        }
        *seen = self.funcs.len();
        match map.get(name) {
            Some(&id) if self.funcs[id.index()].name == name => Some(id),
            // A function was replaced by one of another name: scan.
            Some(_) => {
                *seen = 0;
                map.clear();
                self.funcs
                    .iter()
                    .position(|f| f.name == name)
                    .map(FuncId::new)
            }
            None => {
                // The invariant above: a miss in the index is a miss.
                debug_assert!(
                    self.funcs.iter().all(|f| f.name != name),
                    "a function was renamed to `{name}` behind Module::find's index"
                );
                None
            }
        }
    }

    pub fn push(&mut self, func: Function) -> FuncId {
        self.funcs.push(func);
        FuncId::new(self.funcs.len() - 1)
    }

    /// By `FuncId` index, whether the function is one of adc's own
    /// (`__adc_*`) that no function of the program (any other name)
    /// reaches through calls, directly or not: nothing of the program can
    /// run it (object files leave it out).
    pub fn unreached_internals(&self) -> Vec<bool> {
        let mut reached = vec![false; self.funcs.len()];
        let mut work: Vec<usize> = (0..self.funcs.len())
            .filter(|&k| !self.funcs[k].name.starts_with("__adc_"))
            .collect();
        while let Some(k) = work.pop() {
            if std::mem::replace(&mut reached[k], true) {
                continue;
            }
            let f = &self.funcs[k];
            for b in &f.layout {
                for i in &f.dfg.block(*b).insts {
                    if let InstData::Call { func, .. } = f.dfg.inst(*i) {
                        work.push(func.index());
                    }
                }
            }
        }
        reached.iter().map(|r| !r).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Function, Linkage, Module};

    fn named(name: &str) -> Function {
        Function::new(name.to_string(), Vec::new(), Vec::new(), Linkage::Export)
    }

    /// `find` through its index agrees with a scan: after pushes, with a
    /// repeated name (the first wins), after a function was replaced by
    /// one of another name, and after `funcs` was shortened.
    #[test]
    fn find_agrees_with_a_scan() {
        let mut m = Module::default();
        let a = m.push(named("a"));
        assert_eq!(m.find("a"), Some(a));
        assert_eq!(m.find("b"), None);
        let b = m.push(named("b"));
        m.push(named("a"));
        assert_eq!((m.find("a"), m.find("b")), (Some(a), Some(b)));
        *m.func_mut(b) = named("c");
        assert_eq!(m.find("b"), None);
        assert_eq!(m.find("c"), Some(b));
        m.funcs.truncate(1);
        assert_eq!((m.find("a"), m.find("c")), (Some(a), None));
    }
}
