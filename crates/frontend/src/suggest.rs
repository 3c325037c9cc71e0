//! "Did you mean": the candidate closest to a misspelt name.
//!
//! Edit distance with transpositions (optimal string alignment), so `yy`
//! finds `y`, `sqr` finds `sqrt` and `Activ` finds `Active`; a candidate
//! that differs only in case always wins. A candidate is offered only when
//! at most a third of the name's characters (at least one) must change,
//! so unrelated names are never suggested.

/// The candidate closest to `name`, if any is close enough.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        if c == name {
            continue;
        }
        let d = if c.eq_ignore_ascii_case(name) {
            0
        } else {
            distance(name, c)
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The note a diagnostic carries for a misspelt name.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    closest(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// Optimal string alignment distance between `a` and `b`, in characters.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Far apart in length: no need to fill the table.
    if a.len().abs_diff(b.len()) > 3 {
        return a.len().abs_diff(b.len());
    }
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, distance};

    #[test]
    fn distances() {
        assert_eq!(distance("sqr", "sqrt"), 1);
        assert_eq!(distance("lenght", "length"), 1);
        assert_eq!(distance("abc", "xyz"), 3);
        assert_eq!(distance("", "ab"), 2);
    }

    #[test]
    fn suggestions_are_close_or_absent() {
        let names = ["sqrt", "exp", "x", "total", "Active", "Duplicated"];
        assert_eq!(closest("sqr", names), Some("sqrt"));
        assert_eq!(closest("totl", names), Some("total"));
        assert_eq!(closest("active", names), Some("Active"));
        assert_eq!(closest("Activ", names), Some("Active"));
        assert_eq!(closest("xx", names), Some("x"));
        assert_eq!(closest("banana", names), None);
        assert_eq!(
            closest("x", names),
            None,
            "the name itself is no suggestion"
        );
    }
}
