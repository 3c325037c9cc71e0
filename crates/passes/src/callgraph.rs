//! The call graph of a module, for the passes that read callees: which
//! functions can call themselves, directly or through others (`inline`
//! never inlines those).
//!
//! Computed once per module in one walk of its calls (`adc_ir::scc`,
//! with an explicit stack: a chain of thousands of functions, each calling
//! the next, must not overflow the compiler's stack). A search of the call
//! graph per callee, as `inline` once made, took time quadratic in the
//! length of such a chain (1,000 functions, 15 s).

use adc_ir::{FuncId, InstData, Module};

/// Which functions of one module are recursive, by `FuncId` index.
pub struct Recursive(Vec<bool>);

impl Recursive {
    /// The recursive functions of `module`: those on a cycle of calls.
    pub fn of(module: &Module) -> Self {
        let callees: Vec<Vec<usize>> = module.funcs.iter().map(callees).collect();
        let mut recursive = adc_ir::scc::in_cycles(&callees);
        // One function alone is recursive if it calls itself.
        for (v, r) in recursive.iter_mut().enumerate() {
            *r |= callees[v].binary_search(&v).is_ok();
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
        assert!(
            r.get(FuncId::new(m.funcs.len())),
            "unknown ids count as recursive"
        );
    }

    #[test]
    fn a_chain_of_twenty_thousand_functions_keeps_the_stack() {
        // Each defined before its caller (a call of a function not yet
        // defined costs the parser a scan of the module in debug builds).
        let n = 20_000;
        let mut text = func(&format!("f{n}"), &[]);
        for i in (0..n).rev() {
            text += &func(&format!("f{i}"), &[&format!("f{}", i + 1)]);
        }
        let m = adc_ir::parse_module(&text).expect("parses");
        let r = Recursive::of(&m);
        assert!(m.func_ids().all(|id| !r.get(id)));
    }
}
