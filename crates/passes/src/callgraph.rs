//! The call graph of a module, for the passes that read callees: which
//! functions can call themselves, directly or through others (`inline`
//! never inlines those).
//!
//! Computed once per module in one walk of its calls (Tarjan's strongly
//! connected components, with an explicit stack: a chain of thousands of
//! functions, each calling the next, must not overflow the compiler's
//! stack). A search of the call graph per callee, as `inline` once made,
//! took time quadratic in the length of such a chain (1,000 functions,
//! 15 s).

use adc_ir::{FuncId, InstData, Module};

/// Which functions of one module are recursive, by `FuncId` index.
pub struct Recursive(Vec<bool>);

impl Recursive {
    /// The recursive functions of `module`: those on a cycle of calls.
    pub fn of(module: &Module) -> Self {
        let n = module.funcs.len();
        let callees: Vec<Vec<usize>> = module.funcs.iter().map(callees).collect();
        const UNSEEN: usize = usize::MAX;
        let mut index = vec![UNSEEN; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack: Vec<usize> = Vec::new();
        let mut recursive = vec![false; n];
        let mut next = 0;
        for root in 0..n {
            if index[root] != UNSEEN {
                continue;
            }
            // The depth-first path: a function and how many of its
            // callees it has visited.
            let mut path: Vec<(usize, usize)> = vec![(root, 0)];
            (index[root], low[root], next) = (next, next, next + 1);
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (v, ref mut edge)) = path.last_mut() {
                if let Some(&w) = callees[v].get(*edge) {
                    *edge += 1;
                    if index[w] == UNSEEN {
                        (index[w], low[w], next) = (next, next, next + 1);
                        stack.push(w);
                        on_stack[w] = true;
                        path.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                path.pop();
                if let Some(&(parent, _)) = path.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] != index[v] {
                    continue;
                }
                // `v` roots a component: it is everything above `v` on
                // the stack. One function alone is recursive if it calls
                // itself.
                let at = stack
                    .iter()
                    .rposition(|&x| x == v)
                    .expect("invariant: a component's root is on the stack");
                let cycle = stack.len() - at > 1 || callees[v].contains(&v);
                for x in stack.drain(at..) {
                    on_stack[x] = false;
                    recursive[x] = cycle;
                }
            }
        }
        Recursive(recursive)
    }

    /// Whether `id` can call itself. A function added to the module after
    /// the analysis counts as recursive (it is not inlined).
    pub fn get(&self, id: FuncId) -> bool {
        self.0.get(id.index()).copied().unwrap_or(true)
    }
}

/// The functions `f` calls, each once.
fn callees(f: &adc_ir::Function) -> Vec<usize> {
    let mut out: Vec<usize> = f
        .layout
        .iter()
        .flat_map(|b| f.dfg.block(*b).insts.iter())
        .filter_map(|i| match f.dfg.inst(*i) {
            InstData::Call { func, .. } => Some(func.index()),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::Recursive;
    use adc_ir::FuncId;

    /// `name(n: i64) -> i64`, calling each of `calls` on `n`.
    fn func(name: &str, calls: &[&str]) -> String {
        let mut s = format!("func @{name}(n: i64) -> i64 {{\nblock0(v0: i64):\n");
        for (k, c) in calls.iter().enumerate() {
            s += &format!("    v{}: i64 = call @{c}(v0)\n", k + 1);
        }
        s + &format!("    return v{}\n}}\n", calls.len())
    }

    #[test]
    fn cycles_and_self_calls_are_recursive_chains_are_not() {
        let text = [
            func("a", &["b"]),
            func("b", &["c", "a"]),
            func("c", &["d"]),
            func("d", &[]),
            func("s", &["s", "c"]),
            func("e", &["a", "d"]),
        ]
        .concat();
        let m = adc_ir::parse_module(&text).expect("parses");
        let r = Recursive::of(&m);
        let rec = |name: &str| r.get(m.find(name).expect("defined"));
        assert!(rec("a") && rec("b") && rec("s"));
        assert!(!rec("c") && !rec("d") && !rec("e"));
        assert!(r.get(FuncId::new(m.funcs.len())), "unknown ids count as recursive");
    }

    #[test]
    fn a_chain_of_a_hundred_thousand_functions_keeps_the_stack() {
        let n = 100_000;
        let mut text: String = (0..n)
            .map(|i| func(&format!("f{i}"), &[&format!("f{}", i + 1)]))
            .collect();
        text += &func(&format!("f{n}"), &[]);
        let m = adc_ir::parse_module(&text).expect("parses");
        let r = Recursive::of(&m);
        assert!(m.func_ids().all(|id| !r.get(id)));
    }
}
