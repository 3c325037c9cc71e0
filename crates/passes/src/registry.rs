//! The one registry of passes by name, as the `.adir` filetests (`; test:
//! inline linearize ...`) run them one at a time. It sits above both
//! families: the optimisations by the names of `opt`'s schedule
//! (`PASSES`, `LATE_PASSES`, `SCALAR_PASSES`, `LOOP_SHAPE_PASSES`,
//! `FINAL_PASSES`, `SCHEDULE_PASSES`, `OPT_IN_PASSES`), run on every function with a body,
//! and the module passes below.

use crate::ad::{self, AdError};
use crate::opt::{self, FuncPass};
use adc_ir::{AdMode, FuncId, Function, Module};

/// A pass over a whole module.
pub type ModulePass = fn(&mut Module) -> Result<(), AdError>;

/// A pass by name: over each function with a body, or over the module.
#[derive(Clone, Copy)]
pub enum Pass {
    Function(FuncPass),
    Module(ModulePass),
}

/// The passes that need the module: `inline`, `inline-untaped` and `fast-path` (optimisations
/// that read callees, against the module as it was), `specialize` (which
/// adds clones to it), and the derivative
/// passes. `linearize` generates what is ready; the others apply to every
/// generated function at their stage (`unzip` and `transpose` to reverse
/// ones); `outline` to every function with a body, its checkpointed loops
/// becoming segment functions added to the module.
const MODULE_PASSES: &[(&str, ModulePass)] = &[
    ("inline", |m| {
        let before = m.clone();
        let recursive = crate::callgraph::Recursive::of(&before);
        for f in m.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
            opt::inline::run(f, &before, &recursive);
        }
        Ok(())
    }),
    // The input as the module before the late passes; its functions then
    // get `sroa` and `tape-promote` (with the fixed point) before the inlining.
    ("inline-untaped", |m| {
        let kept_tape = opt::inline::kept_tape(m);
        for f in m.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
            for (_, pass) in opt::SCALAR_PASSES {
                pass(f);
            }
            opt::optimize_function(f);
        }
        let untaped = m.clone();
        let recursive = crate::callgraph::Recursive::of(&untaped);
        for f in m.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
            opt::inline::run_untaped(f, &kept_tape, &untaped, &recursive);
        }
        Ok(())
    }),
    ("fast-path", |m| {
        let conts = opt::fast_path::add_conts(m);
        against_itself(m, opt::fast_path::run)?;
        opt::fast_path::drop_dead_params(m, &conts);
        Ok(())
    }),
    ("specialize", |m| {
        opt::specialize::run(m, None, &mut Default::default());
        Ok(())
    }),
    ("dead-outputs", |m| {
        opt::dead_outputs::run(m);
        Ok(())
    }),
    ("band", ad::band::run),
    ("linearize", |m| ad::linearize::run(m).map(|_| ())),
    ("propagate", |m| {
        generated(m, false)
            .into_iter()
            .try_for_each(|id| ad::propagate::run(m, id))
    }),
    ("lower-pairs", |m| {
        m.funcs.iter_mut().try_for_each(ad::lower_pairs::run)
    }),
    ("widen", |m| {
        generated(m, false)
            .into_iter()
            .try_for_each(|id| ad::widen::run(m, id).map(|_| ()))
    }),
    ("sets", |m| {
        generated(m, false)
            .into_iter()
            .try_for_each(|id| ad::sets::run(m, id))
    }),
    ("unzip", |m| {
        generated(m, true)
            .into_iter()
            .try_for_each(|id| ad::unzip::run(m, id, false))
    }),
    ("transpose", |m| {
        generated(m, true)
            .into_iter()
            .try_for_each(|id| ad::transpose::run(m, id, false))
    }),
    ("outline", outline),
];

/// The pass called `name`.
pub fn find_pass(name: &str) -> Option<Pass> {
    let function = opt::PASSES
        .iter()
        .chain(opt::LATE_PASSES)
        .chain(opt::SCALAR_PASSES)
        .chain(opt::LOOP_SHAPE_PASSES)
        .chain(opt::FINAL_PASSES)
        .chain(opt::SCHEDULE_PASSES)
        .chain(opt::OPT_IN_PASSES)
        .find(|(n, _)| *n == name)
        .map(|(_, p)| Pass::Function(*p));
    function.or_else(|| {
        MODULE_PASSES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, p)| Pass::Module(*p))
    })
}

/// Runs the pass called `name` over `module`; `None` for an unknown name.
pub fn run_pass(name: &str, module: &mut Module) -> Option<Result<(), AdError>> {
    Some(match find_pass(name)? {
        Pass::Function(pass) => {
            for func in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
                pass(func);
            }
            Ok(())
        }
        Pass::Module(pass) => pass(module),
    })
}

/// Runs `pass` on every function with a body, against the module as it was.
fn against_itself(
    module: &mut Module,
    pass: fn(&mut Function, &Module) -> bool,
) -> Result<(), AdError> {
    let before = module.clone();
    for f in module.funcs.iter_mut().filter(|f| !f.layout.is_empty()) {
        pass(f, &before);
    }
    Ok(())
}

/// The generated derivatives with a body (reverse ones only if asked).
fn generated(m: &Module, reverse_only: bool) -> Vec<FuncId> {
    m.func_ids()
        .filter(|id| {
            let f = m.func(*id);
            !f.layout.is_empty()
                && f.deriv
                    .as_ref()
                    .is_some_and(|d| !reverse_only || d.mode == AdMode::Reverse)
        })
        .collect()
}

fn outline(module: &mut Module) -> Result<(), AdError> {
    let ids: Vec<FuncId> = module
        .func_ids()
        .filter(|id| !module.func(*id).layout.is_empty())
        .collect();
    ids.into_iter().try_for_each(|id| {
        let mut f = module.func(id).clone();
        ad::outline::run(module, &mut f)?;
        *module.func_mut(id) = f;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_registered_once() {
        let names: Vec<&str> = opt::PASSES
            .iter()
            .chain(opt::LATE_PASSES)
            .chain(opt::SCALAR_PASSES)
            .chain(opt::LOOP_SHAPE_PASSES)
            .chain(opt::FINAL_PASSES)
            .chain(opt::SCHEDULE_PASSES)
            .chain(opt::OPT_IN_PASSES)
            .map(|(n, _)| *n)
            .chain(MODULE_PASSES.iter().map(|(n, _)| *n))
            .collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "a pass name twice: {names:?}");
        assert!(find_pass("no-such-pass").is_none());
    }

    /// `ad` may use `opt`, never the reverse: no file of `opt` names
    /// `crate::ad`.
    #[test]
    fn opt_does_not_use_ad() {
        let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/opt")];
        let mut files = 0;
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("src/opt is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    files += 1;
                    let text = std::fs::read_to_string(&path).expect("a readable source file");
                    for (n, line) in text.lines().enumerate() {
                        let grouped = line.contains("crate::{")
                            && line
                                .split(|c: char| !c.is_alphanumeric() && c != '_')
                                .any(|w| w == "ad");
                        assert!(
                            !line.contains("crate::ad") && !line.contains("super::ad") && !grouped,
                            "{}:{}: `opt` must not use `ad`: {line}",
                            path.display(),
                            n + 1
                        );
                    }
                }
            }
        }
        assert!(files > 10, "found only {files} files under src/opt");
    }
}
