//! Strongly connected components: Tarjan's algorithm with an explicit
//! stack (a chain of a hundred thousand nodes must not overflow the
//! compiler's stack), for the recurrences of `adc_codegen` and the
//! recursive functions of `adc_passes::callgraph`.

/// Which nodes of the graph `succs` (each node's successors) are in a
/// strongly connected component of two or more (a self-loop alone is not).
pub fn in_cycles(succs: &[Vec<usize>]) -> Vec<bool> {
    const UNSEEN: usize = usize::MAX;
    let n = succs.len();
    let (mut index, mut low) = (vec![UNSEEN; n], vec![0; n]);
    let mut on_stack = vec![false; n];
    let (mut stack, mut cyclic) = (Vec::new(), vec![false; n]);
    let mut next = 0;
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        // Frames of (node, next successor to visit).
        let mut frames = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut k)) = frames.last_mut() {
            if let Some(&w) = succs[v].get(*k) {
                *k += 1;
                if index[w] == UNSEEN {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    frames.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut members = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    members.push(w);
                    if w == v {
                        break;
                    }
                }
                if members.len() > 1 {
                    for w in members {
                        cyclic[w] = true;
                    }
                }
            }
        }
    }
    cyclic
}

#[cfg(test)]
mod tests {
    use super::in_cycles;

    #[test]
    fn cycles_are_found_and_chains_are_not() {
        // 0 -> 1 -> 2 -> 0 is a cycle; 3 hangs off it, 4 -> 4 is a
        // self-loop (one node, not counted), 5 -> 6 a chain.
        let succs = vec![
            vec![1],
            vec![2, 3],
            vec![0],
            vec![],
            vec![4],
            vec![6],
            vec![],
        ];
        let cyclic = in_cycles(&succs);
        assert_eq!(cyclic, [true, true, true, false, false, false, false]);
    }
}
