//! Helpers shared by the `adc` binary's tests.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `adc` binary with `args`.
pub fn adc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_adc"))
        .args(args)
        .output()
        .expect("run adc")
}

/// Writes `text` to `name` in a directory of this test process.
pub fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("adc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
