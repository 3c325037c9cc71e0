//! `adc explain CODE`: the entry of `docs/errors.md` for one diagnostic
//! code, embedded in the binary so it works without the repository, and
//! printed as plain text (as `rustc --explain` is when piped).

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
    Some(format!(
        "{heading}\n{}\n",
        plain_text(&body.join("\n")).trim_end()
    ))
}

/// Markdown as plain text: a code fence loses its info string (the
/// language and the test suite's tags, as in ```` ```ad error=E0116 ````),
/// and links show their text and target.
fn plain_text(markdown: &str) -> String {
    let mut out = String::new();
    for line in markdown.lines() {
        let line = match line.trim_start().strip_prefix("```") {
            Some(_) => "```".to_string(),
            None => unlink(line),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `[text](target)` as `text (docs/target)`: the docs' links are
/// relative to `docs/`.
fn unlink(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let link = after.find("](").and_then(|close| {
            let target = &after[close + 2..];
            target.find(')').map(|end| (close, close + 2 + end + 1))
        });
        match link {
            Some((close, consumed)) if !after[..close].contains('[') => {
                out.push_str(&rest[..open]);
                out.push_str(&after[..close]);
                let target = &after[close + 2..consumed - 1];
                if target.contains(".md") && !target.contains("://") {
                    out.push_str(&format!(" (docs/{target})"));
                } else {
                    out.push_str(&format!(" ({target})"));
                }
                rest = &after[consumed..];
            }
            _ => {
                out.push_str(&rest[..open + 1]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{entry, unlink};

    #[test]
    fn fences_lose_their_tags_and_links_their_targets() {
        let e = entry("e0116").expect("a code of the index");
        assert!(e.starts_with("E0116: "), "{e}");
        assert!(e.contains("\n```\n"), "{e}");
        assert!(!e.contains("```ad"), "{e}");
        assert_eq!(
            unlink("see [the reference](language.md#names) and a[i]"),
            "see the reference (docs/language.md#names) and a[i]"
        );
    }
}
