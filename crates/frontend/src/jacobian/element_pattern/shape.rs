//! The shape of a static element pattern (`element_pattern`): the rows
//! of each path through the branches whose conditions are not known, as
//! a tree over the integer conditions where the paths' rows differ, and
//! the pattern made from it when each input's reads share a base.

use super::values::{Lin, Read};
use crate::jacobian::elements_text::may_fail;
use std::collections::{BTreeMap, BTreeSet};

/// What `pattern` found for one element loop.
pub(in crate::jacobian) struct Pattern {
    /// The inputs (indices into `F`'s parameters) that the rows read, each
    /// with its base as `.ad` text in the loop's scope.
    pub bases: BTreeMap<usize, String>,
    /// The rows, per path where the paths read different elements.
    pub shape: Shape<Rows>,
}

/// Per site, in the order of the plan's sites: the row's entries in
/// increasing columns, each an input and an offset from its base.
pub(in crate::jacobian) type Rows = Vec<Vec<(usize, i64)>>;

/// The rows of an iteration (`R`), or of the paths of a branch on an
/// integer condition (`.ad` text in the loop's scope: `Val::Pred`) that
/// lead to different rows.
#[derive(Clone, Debug, PartialEq)]
pub(in crate::jacobian) enum Shape<R> {
    Rows(R),
    Branch {
        cond: String,
        then: Box<Shape<R>>,
        other: Box<Shape<R>>,
    },
}

impl<R> Shape<R> {
    /// Every path's rows.
    pub(in crate::jacobian) fn leaves(&self) -> Vec<&R> {
        match self {
            Shape::Rows(r) => vec![r],
            Shape::Branch { then, other, .. } => {
                let mut out = then.leaves();
                out.extend(other.leaves());
                out
            }
        }
    }

    fn try_map<S>(self, f: &mut dyn FnMut(R) -> Option<S>) -> Option<Shape<S>> {
        Some(match self {
            Shape::Rows(r) => Shape::Rows(f(r)?),
            Shape::Branch { cond, then, other } => Shape::Branch {
                cond,
                then: Box::new(then.try_map(f)?),
                other: Box::new(other.try_map(f)?),
            },
        })
    }
}

/// One run's path: its decisions at the branches whose conditions are not
/// known (the arm, and the condition's text when it has one), and the
/// rows it wrote.
pub(super) struct Path {
    pub decisions: Vec<(bool, Option<String>)>,
    pub rows: Vec<BTreeSet<Read>>,
}

/// How many entries all the rows of one loop may have (the gather is
/// straight-line code, one entry after another).
const MAX_ENTRIES: usize = 512;

/// The shape of `paths` (those past their first `depth` decisions, which
/// they share, in the order of the runs): a branch whose arms lead to the
/// same rows is no branch; one whose arms do not must have an integer
/// condition.
pub(super) fn tree(paths: &[Path], depth: usize) -> Option<Shape<Vec<BTreeSet<Read>>>> {
    let first = paths.first()?;
    let Some((_, cond)) = first.decisions.get(depth) else {
        return (paths.len() == 1).then(|| Shape::Rows(first.rows.clone()));
    };
    // (Every path here met this branch: they share what came before it.)
    let split = paths
        .iter()
        .position(|p| p.decisions.get(depth).is_some_and(|d| !d.0))?;
    let then = tree(&paths[..split], depth + 1)?;
    let other = tree(&paths[split..], depth + 1)?;
    if then == other {
        return Some(then);
    }
    Some(Shape::Branch {
        cond: cond.clone()?,
        then: Box::new(then),
        other: Box::new(other),
    })
}

/// The rows' entries in column order, when each input's reads share a
/// base on every path.
pub(super) fn finish(shape: Shape<Vec<BTreeSet<Read>>>) -> Option<Pattern> {
    let mut bases: BTreeMap<usize, BTreeMap<String, i64>> = BTreeMap::new();
    let mut total = 0;
    for (param, lin) in shape.leaves().into_iter().flatten().flatten() {
        let b = bases.entry(*param).or_insert_with(|| lin.terms.clone());
        (*b == lin.terms).then_some(())?;
        total += 1;
    }
    if total > MAX_ENTRIES {
        return None;
    }
    // The element loop computes each input's base at every iteration: one
    // that some path does not read must not fail where the program would
    // not (an element of an integer array, a division).
    let leaves = shape.leaves();
    for (param, terms) in &bases {
        let everywhere = leaves
            .iter()
            .all(|rows| rows.iter().flatten().any(|(p, _)| p == param));
        let total = !terms.keys().any(|atom| may_fail(atom));
        (everywhere || total).then_some(())?;
    }
    // (A row's reads are a set ordered by parameter, then form: with one
    // base per parameter, by offset; so in increasing columns.)
    let shape = shape.try_map(&mut |sites| {
        Some(
            sites
                .iter()
                .map(|s| s.iter().map(|(p, l)| (*p, l.c)).collect())
                .collect(),
        )
    })?;
    let bases = bases
        .into_iter()
        .map(|(p, terms)| (p, Lin { c: 0, terms }.text()))
        .collect();
    Some(Pattern { bases, shape })
}
