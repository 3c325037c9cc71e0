//! `adc explain CODE`: the entry of `docs/errors.md` for one diagnostic
//! code, embedded in the binary so it works without the repository.

/// The error index, `## EXXXX: title` headings each followed by its entry.
const ERRORS: &str = include_str!("../../../docs/errors.md");

/// The entry of `code` (case-insensitive): its heading without `## `, then
/// its text up to the next heading, or `None` for an unknown code.
pub fn entry(code: &str) -> Option<String> {
    let code = code.trim().to_ascii_uppercase();
    let mut lines = ERRORS.lines();
    let heading = lines.by_ref().find_map(|l| {
        let h = l.strip_prefix("## ")?;
        (h.split(':').next()?.trim() == code).then_some(h)
    })?;
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("## ")).collect();
    Some(format!("{heading}\n{}\n", body.join("\n").trim_end()))
}
