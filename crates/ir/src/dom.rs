//! Dominators: immediate dominators (Cooper, Harvey and Kennedy, "A
//! Simple, Fast Dominance Algorithm") and a dominator tree numbered in
//! depth-first pre- and post-order, so that "does `a` dominate `b`" is two
//! comparisons however deep the tree (walking up the `idom` chain made
//! every pass that asked it once per edge or operand quadratic on long
//! `if` chains).

use crate::{Block, Function};

/// Immediate dominators over reachable blocks (Cooper, Harvey and Kennedy,
/// "A Simple, Fast Dominance Algorithm"). Returns (rpo, idom by block index).
pub fn dominators(func: &Function) -> (Vec<Block>, Vec<Option<Block>>) {
    let n = func.dfg.num_blocks();
    let Some(entry) = func.entry_block() else {
        return (Vec::new(), vec![None; n]);
    };
    // Each reached block's successors, read once into one list:
    // `succ[span[b].0..span[b].1]`.
    let mut succ: Vec<Block> = Vec::new();
    let mut span = vec![(0usize, 0usize); n];
    let read = |b: Block, succ: &mut Vec<Block>, span: &mut [(usize, usize)]| {
        let start = succ.len();
        if let Some(t) = func.terminator(b) {
            succ.extend(func.dfg.inst(t).successor_calls().map(|c| c.block));
        }
        span[b.index()] = (start, succ.len());
    };
    // Iterative post-order so that deep CFGs cannot overflow the stack.
    let mut post = Vec::new();
    let mut visited = vec![false; n];
    let mut stack = vec![(entry, 0usize)];
    visited[entry.index()] = true;
    read(entry, &mut succ, &mut span);
    while let Some((b, i)) = stack.pop() {
        let (start, end) = span[b.index()];
        if start + i < end {
            stack.push((b, i + 1));
            let s = succ[start + i];
            if s.index() < n && !visited[s.index()] {
                visited[s.index()] = true;
                read(s, &mut succ, &mut span);
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    let rpo: Vec<Block> = post.iter().rev().copied().collect();
    let mut order = vec![usize::MAX; n];
    for (i, b) in rpo.iter().enumerate() {
        order[b.index()] = i;
    }
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); n];
    for &b in &rpo {
        let (start, end) = span[b.index()];
        for &s in &succ[start..end] {
            if s.index() < n {
                preds[s.index()].push(b);
            }
        }
    }
    let mut idom: Vec<Option<Block>> = vec![None; n];
    idom[entry.index()] = Some(entry);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in rpo.iter().skip(1) {
            let mut new_idom: Option<Block> = None;
            for &p in &preds[b.index()] {
                if idom[p.index()].is_none() {
                    continue;
                }
                new_idom = Some(match new_idom {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while order[a.index()] > order[c.index()] {
                                a = idom[a.index()]
                                    .expect("invariant: processed blocks have an idom");
                            }
                            while order[c.index()] > order[a.index()] {
                                c = idom[c.index()]
                                    .expect("invariant: processed blocks have an idom");
                            }
                        }
                        a
                    }
                });
            }
            if new_idom.is_some() && idom[b.index()] != new_idom {
                idom[b.index()] = new_idom;
                changed = true;
            }
        }
    }
    (rpo, idom)
}

/// The dominator tree of a function's reachable blocks.
pub struct DomTree {
    /// Reachable blocks in reverse post-order (the entry first).
    pub rpo: Vec<Block>,
    /// Immediate dominator by block index; the entry's is itself,
    /// unreachable blocks' is `None`.
    pub idom: Vec<Option<Block>>,
    /// Pre- and post-order numbers in the dominator tree, by block index.
    pre: Vec<u32>,
    post: Vec<u32>,
}

impl DomTree {
    pub fn new(func: &Function) -> DomTree {
        let (rpo, idom) = dominators(func);
        let n = idom.len();
        let mut children: Vec<Vec<Block>> = vec![Vec::new(); n];
        for &b in rpo.iter().skip(1) {
            if let Some(d) = idom[b.index()] {
                children[d.index()].push(b);
            }
        }
        let mut pre = vec![u32::MAX; n];
        let mut post = vec![u32::MAX; n];
        let (mut next_pre, mut next_post) = (0u32, 0u32);
        // Iterative, so that deep trees cannot overflow the stack.
        let mut stack: Vec<(Block, usize)> = rpo.first().map(|&e| (e, 0)).into_iter().collect();
        while let Some((b, i)) = stack.pop() {
            if i == 0 {
                pre[b.index()] = next_pre;
                next_pre += 1;
            }
            match children[b.index()].get(i) {
                Some(&c) => {
                    stack.push((b, i + 1));
                    stack.push((c, 0));
                }
                None => {
                    post[b.index()] = next_post;
                    next_post += 1;
                }
            }
        }
        DomTree {
            rpo,
            idom,
            pre,
            post,
        }
    }

    /// Whether `b` is reachable from the entry.
    pub fn is_reachable(&self, b: Block) -> bool {
        self.pre.get(b.index()).is_some_and(|&p| p != u32::MAX)
    }

    /// True when `a` dominates `b` (every block dominates itself); false
    /// when either is unreachable.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        self.is_reachable(a)
            && self.is_reachable(b)
            && self.pre[a.index()] <= self.pre[b.index()]
            && self.post[b.index()] <= self.post[a.index()]
    }
}

/// The blocks that lie on a cycle of the CFG: those of a strongly connected
/// component with several blocks or a self-edge.
pub fn blocks_on_cycles(func: &Function) -> std::collections::BTreeSet<Block> {
    let comp = components(func);
    let mut size: std::collections::BTreeMap<usize, usize> = Default::default();
    for b in &func.layout {
        *size.entry(comp[b.index()]).or_default() += 1;
    }
    func.layout
        .iter()
        .copied()
        .filter(|&b| size[&comp[b.index()]] > 1 || func.successors(b).contains(&b))
        .collect()
}

/// The strongly connected component of each block (by block index; blocks
/// outside the layout get `usize::MAX`), numbered in a topological order of
/// the components: an edge between two components goes from the smaller
/// number to the larger (Kosaraju, linear time).
pub fn components(func: &Function) -> Vec<usize> {
    let n = func.dfg.num_blocks();
    let mut in_layout = vec![false; n];
    for b in &func.layout {
        in_layout[b.index()] = true;
    }
    let succs: Vec<Vec<Block>> = (0..n)
        .map(|i| {
            let b = Block::new(i);
            if in_layout[i] {
                func.successors(b)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut preds: Vec<Vec<Block>> = vec![Vec::new(); n];
    for (i, ss) in succs.iter().enumerate() {
        for s in ss {
            preds[s.index()].push(Block::new(i));
        }
    }
    // Post-order of the forward graph, iteratively.
    let mut order = Vec::new();
    let mut seen = vec![false; n];
    for &root in &func.layout {
        if std::mem::replace(&mut seen[root.index()], true) {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        while let Some((b, k)) = stack.pop() {
            match succs[b.index()].get(k) {
                Some(&s) => {
                    stack.push((b, k + 1));
                    if !std::mem::replace(&mut seen[s.index()], true) {
                        stack.push((s, 0));
                    }
                }
                None => order.push(b),
            }
        }
    }
    // Components of the reversed graph, in reverse post-order: each one
    // found has no edge from a component found later.
    let mut comp = vec![usize::MAX; n];
    for (c, &root) in order.iter().rev().enumerate() {
        if comp[root.index()] != usize::MAX {
            continue;
        }
        let mut members = vec![root];
        comp[root.index()] = c;
        let mut k = 0;
        while k < members.len() {
            for &p in &preds[members[k].index()] {
                if comp[p.index()] == usize::MAX {
                    comp[p.index()] = c;
                    members.push(p);
                }
            }
            k += 1;
        }
    }
    comp
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `a` dominates `b` by walking up `b`'s idom chain: the definition.
    fn walk(idom: &[Option<Block>], a: Block, mut b: Block) -> bool {
        loop {
            if a == b {
                return true;
            }
            match idom[b.index()] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }

    /// Random CFGs (a linear congruential generator picks each block's
    /// one or two successors): the numbered tree agrees with the walk on
    /// every pair of reachable blocks, and unreachable blocks dominate
    /// nothing.
    #[test]
    fn numbering_agrees_with_the_idom_walk() {
        let mut seed: u64 = 7;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..200 {
            let n = 2 + next(12);
            let mut text = String::from("func @f(c: bool) {\nblock0(v0: bool):\n");
            for b in 0..n {
                if b > 0 {
                    text += &format!("block{b}():\n");
                }
                match next(3) {
                    0 if b + 1 < n => text += "    return\n",
                    1 => text += &format!("    jump block{}()\n", next(n)),
                    _ => text += &format!("    br v0, block{}(), block{}()\n", next(n), next(n)),
                }
            }
            text += "}\n";
            let module = crate::parse_module(&text).expect("generated IR parses");
            let func = &module.funcs[0];
            let dom = DomTree::new(func);
            for &a in &func.layout {
                for &b in &func.layout {
                    let expect =
                        dom.is_reachable(a) && dom.is_reachable(b) && walk(&dom.idom, a, b);
                    assert_eq!(dom.dominates(a, b), expect, "{a} dom {b} in\n{text}");
                }
            }
        }
    }
}
