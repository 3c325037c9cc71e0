//! The shape `unzip` gives its input before splitting it: tapes moved a
//! level up, one exit block, and an exit block of its own for each counted
//! loop; and the check that every block reaches a `return`.

use crate::ad::AdError;
use crate::cfg::incoming_edges;
use adc_ir::dom::DomTree;
use adc_ir::{Block, BlockCall, Function, InstData, Tag, Value};
use std::collections::BTreeSet;

/// Moves every tape instruction of `g` to the next tape up.
pub(super) fn shift_tapes(g: &mut Function) -> Result<(), AdError> {
    for b in g.layout.clone() {
        for i in g.dfg.block(b).insts.clone() {
            let span = g.span(i);
            match g.dfg.inst_mut(i) {
                InstData::TapePush { tape, .. }
                | InstData::TapePop { tape }
                | InstData::TapeRead { tape } => {
                    *tape = tape.checked_add(1).ok_or_else(|| {
                        AdError::new("reverse derivatives nested more than 255 deep", span)
                    })?;
                }
                _ => (),
            }
        }
    }
    Ok(())
}

/// Every `return` becomes a jump to one new exit block.
/// The reverse sweep starts where the function returns and walks back:
/// a block that cannot reach a `return` (a loop that never exits) has no
/// way back, so its derivative cannot be generated. A diagnostic at the
/// loop (a user's program may mean it: forward mode runs it as the
/// primal does), not an internal error.
pub(super) fn every_block_returns(g: &Function) -> Result<(), AdError> {
    let edges = incoming_edges(g);
    let mut back: BTreeSet<Block> = BTreeSet::new();
    let mut stack: Vec<Block> = g
        .layout
        .iter()
        .copied()
        .filter(|b| {
            g.terminator(*b)
                .is_some_and(|t| matches!(g.dfg.inst(t), InstData::Return { .. }))
        })
        .collect();
    while let Some(b) = stack.pop() {
        if back.insert(b) {
            stack.extend(edges.get(&b).into_iter().flatten().map(|e| e.from));
        }
    }
    let dom = DomTree::new(g);
    let Some(stuck) = dom.rpo.iter().find(|b| !back.contains(b)) else {
        return Ok(());
    };
    let span = g
        .dfg
        .block(*stuck)
        .insts
        .iter()
        .map(|i| g.span(*i))
        .find(|s| s.is_defined())
        .unwrap_or(g.deriv_span);
    Err(AdError::new(
        "a reverse derivative cannot be generated through a loop that never exits (nothing after it \
         returns): the reverse sweep starts from a `return`",
        span,
    ))
}

pub(super) fn single_exit(g: &mut Function) {
    let exit = g.dfg.make_block();
    let params: Vec<Value> = g
        .returns
        .clone()
        .into_iter()
        .map(|t| g.dfg.append_block_param(exit, t))
        .collect();
    for b in g.layout.clone() {
        if let Some(t) = g.terminator(b) {
            if let InstData::Return { args } = g.dfg.inst(t).clone() {
                *g.dfg.inst_mut(t) = InstData::Jump {
                    dest: BlockCall { block: exit, args },
                };
            }
        }
    }
    g.layout.push(exit);
    let r = g.append_inst(
        exit,
        InstData::Return { args: params },
        &[],
        adc_ir::Span::UNDEFINED,
    );
    g.set_tag(r, Tag::Mixed);
}

/// Puts a new block on the edge from `header` to `exit`, so that the
/// loop's exit has a block of its own (where its counter is taped).
pub(super) fn split_exit(g: &mut Function, header: Block, exit: Block) {
    let x = g.dfg.make_block();
    let t = g
        .terminator(header)
        .expect("invariant: a counted loop's header branches");
    let tag = g.tag(t);
    let span = g.span(t);
    let mut args = Vec::new();
    for call in g.dfg.inst_mut(t).successors_mut() {
        if call.block == exit {
            call.block = x;
            args = std::mem::take(&mut call.args);
        }
    }
    let j = g.append_inst(
        x,
        InstData::Jump {
            dest: BlockCall { block: exit, args },
        },
        &[],
        span,
    );
    g.set_tag(j, tag);
    let pos = g
        .layout
        .iter()
        .position(|&b| b == header)
        .expect("invariant: the header is in the layout");
    g.layout.insert(pos + 1, x);
}
