//! Removes redundant block parameters: a parameter whose incoming
//! arguments are all one value `v` (or the parameter itself) is replaced by
//! `v` everywhere. This is the copy propagation of block-parameter SSA and
//! cleans up the frontend's maximal SSA (Braun et al. 2013, "Simple and
//! Efficient Construction of SSA Form", trivial phi removal).
//!
//! Assumes: verified input. Guarantees: verified output; the entry block's
//! parameters are untouched.

use crate::cfg::{incoming_edges, Edge};
use crate::rewrite::substitute;
use adc_ir::{Block, Function, Value};
use std::collections::BTreeMap;

pub fn run(func: &mut Function) -> bool {
    let mut changed_any = false;
    loop {
        let edges = incoming_edges(func);
        // A worklist over parameters: when one is found redundant, the
        // parameters it is passed to are checked again with it replaced
        // (one round then finds what rounds of whole-function rescans
        // found, in time linear in the number of edge arguments).
        let mut params: Vec<(Block, usize, Value)> = Vec::new();
        let mut at: BTreeMap<Value, usize> = BTreeMap::new();
        for &b in func.layout.iter().skip(1) {
            for (i, &p) in func.dfg.block_params(b).iter().enumerate() {
                at.insert(p, params.len());
                params.push((b, i, p));
            }
        }
        // For each parameter, the parameters it is an incoming argument of.
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); params.len()];
        for (k, &(b, i, _)) in params.iter().enumerate() {
            for e in &edges[&b] {
                if let Some(&u) = at.get(&e.args[i]) {
                    users[u].push(k);
                }
            }
        }
        let mut map: BTreeMap<Value, Value> = BTreeMap::new();
        // The end of `v`'s chain in `map`, shortening the chain on the way
        // (as union-find does) so that long chains are walked once.
        let resolve = |map: &mut BTreeMap<Value, Value>, v: Value| {
            let mut end = v;
            let mut steps = 0;
            while let Some(&n) = map.get(&end) {
                end = n;
                steps += 1;
                if steps > map.len() {
                    break;
                }
            }
            let mut x = v;
            while let Some(&n) = map.get(&x) {
                if n == end || x == end {
                    break;
                }
                map.insert(x, end);
                x = n;
            }
            end
        };
        let mut removed = vec![false; params.len()];
        let mut work: Vec<usize> = (0..params.len()).rev().collect();
        while let Some(k) = work.pop() {
            if removed[k] {
                continue;
            }
            let (b, i, p) = params[k];
            // The distinct incoming values other than `p` itself.
            let mut incoming: Vec<Value> = edges[&b]
                .iter()
                .map(|e| resolve(&mut map, e.args[i]))
                .filter(|a| *a != p)
                .collect();
            incoming.sort();
            incoming.dedup();
            if let [only] = incoming[..] {
                map.insert(p, only);
                removed[k] = true;
                work.extend(users[k].iter().rev().copied().filter(|u| !removed[*u]));
            }
        }
        let removals: Vec<(Block, usize)> = params
            .iter()
            .zip(&removed)
            .filter(|(_, r)| **r)
            .map(|(&(b, i, _), _)| (b, i))
            .collect();
        if removals.is_empty() {
            return changed_any;
        }
        changed_any = true;
        substitute(func, &map);
        remove_params(func, &edges, removals);
    }
}

/// Removes the parameters `removals` ((block, index) pairs, any order)
/// and the arguments every edge passes them; `edges` is
/// `incoming_edges(func)`.
pub(crate) fn remove_params(
    func: &mut Function,
    edges: &BTreeMap<Block, Vec<Edge>>,
    mut removals: Vec<(Block, usize)>,
) {
    // Per block, all its removed parameters at once.
    removals.sort();
    let mut k = 0;
    while k < removals.len() {
        let b = removals[k].0;
        let mut remove = vec![false; func.dfg.block_params(b).len()];
        while k < removals.len() && removals[k].0 == b {
            remove[removals[k].1] = true;
            k += 1;
        }
        let mut sources: Vec<Block> = edges[&b].iter().map(|e| e.from).collect();
        sources.dedup();
        for from in sources {
            let term = func
                .terminator(from)
                .expect("invariant: an edge's source ends in a terminator");
            for call in func.dfg.inst_mut(term).successors_mut() {
                if call.block == b {
                    let mut i = 0;
                    call.args.retain(|_| {
                        i += 1;
                        !remove[i - 1]
                    });
                }
            }
        }
        func.dfg.remove_block_params_where(b, &remove);
    }
}
