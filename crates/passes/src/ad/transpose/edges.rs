//! `transpose`'s reverse edges for values only their own block uses.
//!
//! A value defined in block `P` and used nowhere else, passed by `P`'s
//! terminator as a branch argument, gets adjoint only from the edges `P`
//! takes and from `P` itself. In the reverse sweep the edge block of the
//! edge taken runs right before `P`'s reverse block, so instead of a slot
//! (zeroed at entry, live from there on: quadratic in `else if` chains once
//! `mem2reg` promotes it) the edge block passes the adjoint as an argument
//! of `P`'s reverse block, zero for a value the edge does not carry.

use super::Transposer;
use crate::cfg::Edge;
use adc_ir::{Block, BlockCall, InstData, Value};
use std::collections::{BTreeMap, BTreeSet};

impl Transposer<'_> {
    /// Decides `edge_adjoints`: for each differential block, the values
    /// its terminator passes along edges that are not in `crossing` (used
    /// in no other block), each with a new parameter of its reverse block.
    pub(super) fn edge_adjoint_params(
        &mut self,
        dblocks: &[Block],
        crossing: &BTreeSet<Value>,
        rblock: &BTreeMap<Block, Block>,
    ) {
        let u = self.u;
        for &p in dblocks {
            let Some(term) = u.terminator(p) else {
                continue;
            };
            let mut locals: Vec<Value> = Vec::new();
            for call in u.dfg.inst(term).successors() {
                for &a in &call.args {
                    if self.kinds[a.index()] && !crossing.contains(&a) && !locals.contains(&a) {
                        locals.push(a);
                    }
                }
            }
            let params = locals
                .into_iter()
                .map(|a| {
                    let param = self.out.dfg.append_block_param(rblock[&p], self.ty(a));
                    (a, param)
                })
                .collect();
            self.edge_adjoints.insert(p, params);
        }
    }

    /// The end of edge `e`'s block: `adjs[k]` (the adjoint of the target's
    /// `k`th parameter, if any) is added to the edge's `k`th argument, and
    /// the block jumps to `back`, the reverse block of `e.from`, passing
    /// the adjoints of the values only `e.from` uses.
    pub(super) fn edge_back(&mut self, e: &Edge, adjs: &[Option<Value>], back: Block) {
        let locals: Vec<Value> = self
            .edge_adjoints
            .get(&e.from)
            .into_iter()
            .flatten()
            .map(|&(v, _)| v)
            .collect();
        let mut sums: BTreeMap<Value, Value> = BTreeMap::new();
        for (&a, adj) in e.args.iter().zip(adjs) {
            let Some(adj) = *adj else { continue };
            if locals.contains(&a) {
                let sum = match sums.get(&a) {
                    Some(&old) => self.bin(adc_ir::BinaryOp::Add, old, adj),
                    None => adj,
                };
                sums.insert(a, sum);
            } else {
                self.accumulate(a, adj);
            }
        }
        let args = locals
            .iter()
            .map(|a| match sums.get(a) {
                Some(&s) => s,
                None => self.zero(self.ty(*a)),
            })
            .collect();
        self.emit(
            InstData::Jump {
                dest: BlockCall { block: back, args },
            },
            &[],
        );
    }
}
