//! `tests/it/difftest/campaign.py`, the long random campaign's driver, on a
//! stand-in test binary (a Python script that logs seeds as the real one
//! does) and a stand-in source tree: it resumes where an interrupted run
//! stopped without rerunning a seed, keys its results by the compiler's
//! source, and refuses a test binary older than that source.

use std::path::Path;
use std::process::{Command, Output};

/// Logs every seed of its range but the skipped ones (or those before
/// `FAKE_STOP`, standing in for a session ending): seeds divisible by 5
/// fail the `fd` oracle; each seed also goes to `ran.txt`.
const FAKE_BINARY: &str = r#"#!/usr/bin/env python3
import os
start, n = int(os.environ["ADC_DIFFTEST_START"]), int(os.environ["ADC_DIFFTEST_SEEDS"])
out = os.environ["ADC_DIFFTEST_OUT"]
skip = {int(x) for x in os.environ.get("ADC_DIFFTEST_SKIP", "").split(",") if x}
stop = int(os.environ.get("FAKE_STOP", start + n))
for s in range(start, min(start + n, stop)):
    if s in skip:
        continue
    with open(f"{out}/results-{start}.tsv", "a") as f:
        f.write(f"{s}\t{'fd' if s % 5 == 0 else 'pass'}\t{int(s % 3 == 0)}\t2\t1\t1\n")
    with open(f"{out}/../ran.txt", "a") as f:
        f.write(f"{s}\n")
"#;

fn campaign(root: &Path, binary: &Path, out: &Path, stop: Option<u64>) -> Output {
    let mut c = Command::new("python3");
    c.arg(super::support::root().join("tests/it/difftest/campaign.py"))
        .args([
            binary.to_str().unwrap(),
            "0",
            "10",
            "600",
            out.to_str().unwrap(),
        ])
        .env("ADC_CAMPAIGN_ROOT", root)
        .env_remove("FAKE_STOP");
    if let Some(stop) = stop {
        c.env("FAKE_STOP", stop.to_string());
    }
    c.output().expect("python3 runs")
}

fn write_binary(path: &Path) {
    std::fs::write(path, FAKE_BINARY).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn key_dirs(out: &Path) -> usize {
    std::fs::read_dir(out)
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().starts_with("compiler-")
        })
        .count()
}

#[test]
fn resumes_and_keys_results_by_the_compiler() {
    let tmp = std::env::temp_dir().join(format!("adc-campaign-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let (root, out) = (tmp.join("root"), tmp.join("out"));
    std::fs::create_dir_all(root.join("crates")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&root)
        .status();
    assert!(git.expect("git runs").success());
    for f in ["Cargo.toml", "Cargo.lock", "crates/pass.rs"] {
        std::fs::write(root.join(f), "// version 1\n").unwrap();
    }
    let binary = tmp.join("it-fake");
    write_binary(&binary);

    // Interrupted after four seeds, then resumed: every seed runs once.
    let first = stdout(&campaign(&root, &binary, &out, Some(4)));
    assert!(first.contains("seeds 0..10: 4 programs"), "{first}");
    let second = stdout(&campaign(&root, &binary, &out, None));
    assert!(
        second.contains("seeds 0..10: 10 programs, 8 passed, 2 failed"),
        "{second}"
    );
    assert!(
        second.contains("second-order programs 4, finite-difference comparisons 20 (skipped 10)"),
        "{second}"
    );
    assert!(second.contains("      2  fd"), "{second}");
    let ran = std::fs::read_to_string(out.join("ran.txt")).unwrap();
    let ran: Vec<&str> = ran.lines().collect();
    assert_eq!(ran, (0..10).map(|s| s.to_string()).collect::<Vec<_>>());

    // A source newer than the binary: refused, nothing runs.
    std::fs::write(root.join("crates/pass.rs"), "// version 2\n").unwrap();
    let refused = campaign(&root, &binary, &out, None);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("refused"));

    // Rebuilt on the changed source: its own results, from the start.
    write_binary(&binary);
    let third = stdout(&campaign(&root, &binary, &out, None));
    assert!(third.contains("seeds 0..10: 10 programs"), "{third}");
    assert_eq!(key_dirs(&out), 2);
    let ran = std::fs::read_to_string(out.join("ran.txt")).unwrap();
    assert_eq!(ran.lines().count(), 20);
    let _ = std::fs::remove_dir_all(&tmp);
}
