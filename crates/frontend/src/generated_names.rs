//! Clashes of the names `[jacobian]` and `[hessian]` generate (E0201).
//!
//! Those attributes expand to source (`jacobian::expand`, `hessian::expand`)
//! whose spans mean nothing in the user's file, so a generated function
//! that takes a name the program already defines, or one another attribute
//! generates too, would be reported at a meaningless place and followed by
//! errors about the generated code's calls. This check runs between the
//! expansions and lowering: one error per clashing definition, at the
//! program's definition (or the later attribute), with a label at the
//! attribute that generates the name; the caller stops there.
//!
//! It also names what rejected `[jacobian]` and `[hessian]` attributes would
//! have generated ([`rejected`]): their error (E0309, E0310) was reported,
//! so calls of those names report nothing more. And it makes the
//! expansions' helpers `static` ([`make_helpers_static`]).
//!
//! Assumes: `before` is [`defined_names`] of the items before the
//! expansions, `items` the items after them, `generated` the expansions'
//! names with their attributes' spans. Guarantees: an error for every name
//! defined more often after the expansions than before and more than once
//! (so a clash among the program's own definitions is left to lowering).

use crate::ast::{AttrArg, Item};
use crate::diag::Diagnostic;
use crate::jacobian::Generated;
use adc_ir::{Linkage, Module, Span};
use std::collections::{BTreeMap, BTreeSet};

/// Every name the items define, with its span, in source order: functions,
/// constants, and the derivatives of `autodiff_forward`/`autodiff_reverse`.
pub fn defined_names(items: &[Item]) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Const(c) => out.push((c.name.name.clone(), c.name.span)),
            Item::Func(f) => {
                out.push((f.name.name.clone(), f.name.span));
                for a in &f.attrs {
                    if !matches!(
                        a.name.name.as_str(),
                        "autodiff_forward" | "autodiff_reverse"
                    ) {
                        continue;
                    }
                    if let Some(AttrArg::Ident(id)) = a.args.as_ref().and_then(|v| v.first()) {
                        out.push((id.name.clone(), id.span));
                    }
                }
            }
            Item::Error => {}
        }
    }
    out
}

/// The names `[jacobian(NAME)]` and `[hessian(NAME)]` attributes request.
pub fn requested(items: &[Item]) -> Vec<String> {
    let mut out = Vec::new();
    for item in items {
        let Item::Func(f) = item else { continue };
        for a in &f.attrs {
            if !matches!(a.name.name.as_str(), "jacobian" | "hessian") {
                continue;
            }
            if let Some(AttrArg::Ident(id)) = a.args.as_ref().and_then(|v| v.first()) {
                out.push(id.name.clone());
            }
        }
    }
    out
}

/// Makes `static` every exported function of `module` that the program
/// (`before`: its names before the expansions) did not define and did not
/// request (`NAME` and `NAME_nnz` of each name in `requested`): the
/// expansions' helpers and the derivatives their own attributes generate,
/// so that an object file exports only the program's functions and the
/// derivatives it asked for.
pub fn make_helpers_static(before: &[(String, Span)], requested: &[String], module: &mut Module) {
    let mut keep: BTreeSet<String> = before.iter().map(|(n, _)| n.clone()).collect();
    for n in requested {
        keep.insert(n.clone());
        keep.insert(format!("{n}_nnz"));
    }
    for f in module.funcs.iter_mut() {
        if f.linkage == Linkage::Export && !keep.contains(&f.name) {
            f.linkage = Linkage::Static;
        }
    }
}

/// What the requested names (`requested` before the expansions) that no
/// item defines after them would have been: `NAME` and `NAME_nnz`.
pub fn rejected(requested: &[String], items: &[Item]) -> BTreeSet<String> {
    let defined: BTreeSet<String> = defined_names(items).into_iter().map(|(n, _)| n).collect();
    requested
        .iter()
        .filter(|n| !defined.contains(*n))
        .flat_map(|n| [n.clone(), format!("{n}_nnz")])
        .collect()
}

/// The attributes that generate `name` (its own entries, else those of the
/// longest generated name it extends, as `J__fwd` extends `J`), in order.
fn attributes_of(name: &str, generated: &[Generated]) -> Vec<Span> {
    let exact: Vec<Span> = generated
        .iter()
        .filter(|g| g.name == name)
        .map(|g| g.span)
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    let longest = generated
        .iter()
        .filter(|g| name.starts_with(g.name.as_str()))
        .map(|g| g.name.len())
        .max();
    generated
        .iter()
        .filter(|g| Some(g.name.len()) == longest && name.starts_with(g.name.as_str()))
        .map(|g| g.span)
        .collect()
}

/// The clashes (see the module doc): at most one error per place.
pub fn clashes(
    before: &[(String, Span)],
    items: &[Item],
    generated: &[Generated],
) -> Vec<Diagnostic> {
    let mut user: BTreeMap<&str, Vec<Span>> = BTreeMap::new();
    for (name, span) in before {
        user.entry(name).or_default().push(*span);
    }
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (name, _) in defined_names(items) {
        *count.entry(name).or_default() += 1;
    }
    let mut placed = BTreeSet::new();
    let mut out = Vec::new();
    for (name, n) in &count {
        let own = user.get(name.as_str()).map_or(&[][..], Vec::as_slice);
        if *n <= own.len() || *n < 2 {
            continue;
        }
        let attrs = attributes_of(name, generated);
        let (at, label) = match (own.first(), attrs.first(), attrs.last()) {
            (Some(&u), Some(&a), _) => (
                u,
                Some((a, "an attribute generates a function of this name")),
            ),
            (Some(&u), None, _) => (u, None),
            (None, Some(&first), Some(&last)) if first != last => {
                (last, Some((first, "this attribute generates it too")))
            }
            // Generated twice by one attribute: not the program's doing.
            _ => continue,
        };
        if !placed.insert((at.start, at.end)) {
            continue;
        }
        let mut d = Diagnostic::error("E0201", format!("`{name}` is defined more than once"), at);
        if let Some((span, text)) = label {
            d = d.with_label(span, text);
        }
        out.push(d.with_note(
            "`[jacobian(NAME)]` and `[hessian(NAME)]` define `NAME` and helpers named after it \
             (`NAME__...`, `NAME_nnz`): rename one of the two",
        ));
    }
    out
}
