//! Whether two array values never share an element, for the passes that
//! keep what memory holds across a write (`rle`, `promote`).
//!
//! Two arrays are disjoint when they are views (through any chain of
//! `view`s, or none) of two different objects of their own
//! (`predicates::is_fresh_array`: parameters never alias,
//! docs/arrays.md#the-aliasing-rule; `new` and `copy` make fresh arrays),
//! or views of one array over element ranges that provably do not overlap.
//! Ranges are linear forms in the function's integer values: vector mode
//! cuts a tangent array of `W` lanes into the views `[k L, (k + 1) L)`
//! with `L` a `len`, built by additions, so lane `k` ends where lane
//! `k + 1` starts. A range `[s1, e1)` lies before `[s2, e2)` when
//! `e1 - s2` is a constant at most 0 plus nonnegative multiples of `len`
//! values, with negative coefficients.
//!
//! Reads only.

use crate::defs::{def_data, int_const};
use crate::predicates::is_fresh_array;
use adc_ir::offset::offset_of;
use adc_ir::{BinaryOp, Function, InstData, Type, Value};
use rustc_hash::FxHashMap as HashMap;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// How many definitions deep a linear form looks (vector mode's 64 lanes
/// at most, each view starting one `add` after the previous).
const MAX_DEPTH: u32 = 80;

/// `c + sum(k * v)`: an integer value as a linear form in other values.
#[derive(Clone, Debug, PartialEq)]
struct Linear {
    terms: BTreeMap<Value, i64>,
    c: i64,
}

impl Linear {
    fn constant(c: i64) -> Linear {
        Linear {
            terms: BTreeMap::new(),
            c,
        }
    }

    fn atom(v: Value) -> Linear {
        Linear {
            terms: BTreeMap::from([(v, 1)]),
            c: 0,
        }
    }

    /// `self + k * other`, or `None` on overflow.
    fn add_scaled(mut self, other: &Linear, k: i64) -> Option<Linear> {
        self.c = self.c.checked_add(other.c.checked_mul(k)?)?;
        for (v, a) in &other.terms {
            let e = self.terms.entry(*v).or_insert(0);
            *e = e.checked_add(a.checked_mul(k)?)?;
        }
        self.terms.retain(|_, a| *a != 0);
        Some(self)
    }

    /// Whether the form is at most 0 whatever its values: a constant at
    /// most 0 and only negative multiples of array lengths.
    fn at_most_zero(&self, func: &Function) -> bool {
        self.c <= 0
            && self.terms.iter().all(|(v, k)| {
                *k < 0 && matches!(def_data(func, *v), Some(InstData::ArrayLen { .. }))
            })
    }
}

/// An array's root, and its range there (`Alias::extent`).
type Extent = (Value, Linear, Option<Linear>);

/// Linear forms and extents, computed once per value for one unchanged
/// function.
pub(crate) struct Alias<'f> {
    func: &'f Function,
    linear: RefCell<HashMap<Value, Linear>>,
    extents: RefCell<HashMap<Value, Rc<Extent>>>,
}

impl<'f> Alias<'f> {
    pub(crate) fn new(func: &'f Function) -> Alias<'f> {
        Alias {
            func,
            linear: RefCell::new(HashMap::default()),
            extents: RefCell::new(HashMap::default()),
        }
    }

    /// `v` (an `i64`) as a linear form, looking through `add`, `sub` and
    /// products by constants (`MAX_DEPTH` definitions deep).
    fn linear(&self, v: Value, depth: u32) -> Linear {
        if let Some(l) = self.linear.borrow().get(&v) {
            return l.clone();
        }
        let func = self.func;
        let form = if let Some(c) = int_const(func, v) {
            Some(Linear::constant(c))
        } else if depth == 0 || func.dfg.value_type(v) != Type::I64 {
            None
        } else {
            match def_data(func, v) {
                Some(InstData::Binary { op, args }) => {
                    let (a, b) = (args[0], args[1]);
                    match op {
                        BinaryOp::Add | BinaryOp::Sub => {
                            let k = if *op == BinaryOp::Add { 1 } else { -1 };
                            self.linear(a, depth - 1)
                                .add_scaled(&self.linear(b, depth - 1), k)
                        }
                        BinaryOp::Mul => match (int_const(func, a), int_const(func, b)) {
                            (_, Some(k)) => {
                                Linear::constant(0).add_scaled(&self.linear(a, depth - 1), k)
                            }
                            (Some(k), _) => {
                                Linear::constant(0).add_scaled(&self.linear(b, depth - 1), k)
                            }
                            _ => None,
                        },
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        let form = form.unwrap_or_else(|| Linear::atom(v));
        // A form cut short (atoms `MAX_DEPTH` definitions down) is still
        // `v`'s value, only less precise.
        self.linear.borrow_mut().insert(v, form.clone());
        form
    }

    /// The array `a` views and its range there: `(root, start, end)`, the
    /// end `None` for a root itself (its length); computed once per value.
    fn extent(&self, a: Value) -> Rc<Extent> {
        if let Some(e) = self.extents.borrow().get(&a) {
            return Rc::clone(e);
        }
        let e = Rc::new(self.compute_extent(a));
        self.extents.borrow_mut().insert(a, Rc::clone(&e));
        e
    }

    fn compute_extent(&self, mut a: Value) -> Extent {
        let func = self.func;
        let mut start = Linear::constant(0);
        let mut end: Option<Linear> = None;
        for _ in 0..8 {
            let Some(InstData::ArrayView { array, lo, hi }) = def_data(func, a) else {
                break;
            };
            // The range so far is within this view: shifted by where the
            // view starts in its array; the view's own end only for the
            // view itself.
            let lo = self.linear(*lo, MAX_DEPTH);
            let shifted = match &end {
                Some(e) => e.clone().add_scaled(&lo, 1),
                None => Some(self.linear(*hi, MAX_DEPTH)),
            };
            let (Some(s), Some(e)) = (start.add_scaled(&lo, 1), shifted) else {
                return (a, Linear::constant(0), None);
            };
            start = s;
            end = Some(e);
            a = *array;
        }
        (a, start, end)
    }

    /// The object `a` is a view of (through every `view`), or `a` itself.
    pub(crate) fn root(&self, a: Value) -> Value {
        self.extent(a).0
    }

    /// Whether `v` has `n` elements (`n` an `i64`): `v` is a view whose
    /// range is `n` long, or `n` is `len v`.
    pub(crate) fn has_length(&self, v: Value, n: Value) -> bool {
        let e = self.extent(v);
        let (_, start, end) = &*e;
        match end {
            Some(end) => (end.clone().add_scaled(start, -1))
                .and_then(|d| d.add_scaled(&self.linear(n, MAX_DEPTH), -1))
                .is_some_and(|d| d.c == 0 && d.terms.is_empty()),
            None => {
                matches!(def_data(self.func, n), Some(InstData::ArrayLen { array }) if *array == v)
            }
        }
    }

    /// Whether `a` and `b` never share an element (the module comment).
    pub(crate) fn disjoint(&self, a: Value, b: Value) -> bool {
        let func = self.func;
        if a == b {
            return false;
        }
        let (ea, eb) = (self.extent(a), self.extent(b));
        let ((ra, sa, ea), (rb, sb, eb)) = (&*ea, &*eb);
        if ra != rb {
            return is_fresh_array(func, *ra) && is_fresh_array(func, *rb);
        }
        let before = |e: &Option<Linear>, s: &Linear| {
            e.as_ref()
                .and_then(|e| e.clone().add_scaled(s, -1))
                .is_some_and(|d| d.at_most_zero(func))
        };
        before(ea, sb) || before(eb, sa)
    }

    /// Whether the element `a[i]` is never the element `b[j]`: disjoint
    /// arrays, or one array at the same value plus different constants, or
    /// at two different constants (a sweep's count and next bit, `arena[0]`
    /// and `arena[2]`).
    pub(crate) fn apart(&self, (a, i): (Value, Value), (b, j): (Value, Value)) -> bool {
        let func = self.func;
        let ((ib, id), (jb, jd)) = (offset_of(func, i), offset_of(func, j));
        let constants = match (int_const(func, i), int_const(func, j)) {
            (Some(x), Some(y)) => x != y,
            _ => false,
        };
        (a == b && ((ib == jb && id != jd) || constants)) || self.disjoint(a, b)
    }
}

/// Facts about array elements, keyed by (array, index) and grouped by the
/// arrays' roots ([`Alias::root`]): a write to an element of a fresh
/// object (`is_fresh_array`) finds the facts it may touch among its own
/// root's and those of roots that are not fresh, without visiting the
/// other objects' (all of them, a scan per write, was quadratic in a block
/// that writes many parameters: a vector-mode derivative of 500 of them).
pub(crate) struct ElemMap<T> {
    groups: HashMap<Value, HashMap<(Value, Value), T>>,
    /// The roots among `groups`' keys that are not fresh.
    shared: std::collections::BTreeSet<Value>,
}

impl<T> ElemMap<T> {
    pub(crate) fn new() -> ElemMap<T> {
        ElemMap {
            groups: HashMap::default(),
            shared: Default::default(),
        }
    }

    pub(crate) fn get(&self, alias: &Alias, key: (Value, Value)) -> Option<&T> {
        self.groups.get(&alias.root(key.0))?.get(&key)
    }

    pub(crate) fn insert(&mut self, alias: &Alias, key: (Value, Value), fact: T) {
        let root = alias.root(key.0);
        if !is_fresh_array(alias.func, root) {
            self.shared.insert(root);
        }
        self.groups.entry(root).or_default().insert(key, fact);
    }

    pub(crate) fn remove(&mut self, alias: &Alias, key: (Value, Value)) -> Option<T> {
        let root = alias.root(key.0);
        let group = self.groups.get_mut(&root)?;
        let fact = group.remove(&key);
        if group.is_empty() {
            self.groups.remove(&root);
            self.shared.remove(&root);
        }
        fact
    }

    pub(crate) fn clear(&mut self) {
        self.groups.clear();
        self.shared.clear();
    }

    /// Keeps the facts of the elements that are never `a[j]`
    /// ([`Alias::apart`]): what an access to `a[j]` leaves.
    pub(crate) fn retain_apart(&mut self, alias: &Alias, (a, j): (Value, Value)) {
        let root = alias.root(a);
        let roots: Vec<Value> = if is_fresh_array(alias.func, root) {
            // Another fresh root is another object: apart.
            std::iter::once(root)
                .chain(self.shared.iter().copied())
                .collect()
        } else {
            self.groups.keys().copied().collect()
        };
        for r in roots {
            let Some(group) = self.groups.get_mut(&r) else {
                continue;
            };
            group.retain(|k, _| alias.apart(*k, (a, j)));
            if group.is_empty() {
                self.groups.remove(&r);
                self.shared.remove(&r);
            }
        }
    }
}
