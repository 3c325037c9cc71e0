//! Helpers shared by the `adc` binary's tests.

use std::path::{Path, PathBuf};
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

/// `adc run FILE --entry ENTRY --args ARGS` followed by `extra`.
pub fn run_entry(file: &Path, entry: &str, args: &str, extra: &[&str]) -> Output {
    let file = file.to_str().unwrap(); // (scratch paths are UTF-8)
    let mut all = vec!["run", file, "--entry", entry, "--args", args];
    all.extend_from_slice(extra);
    adc(&all)
}

/// `adc compile FILE -o OBJ`, with `--emit-header HEADER` when given.
pub fn compile(file: &Path, obj: &Path, header: Option<&Path>) -> Output {
    let mut all = vec![
        "compile",
        file.to_str().unwrap(),
        "-o",
        obj.to_str().unwrap(),
    ];
    if let Some(h) = header {
        all.extend(["--emit-header", h.to_str().unwrap()]);
    }
    adc(&all)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `adc compile STEM.ad` with a header, then `cc` with `main_c`; returns
/// the header and the linked program's run, or None (the test is skipped)
/// when there is no C compiler.
pub fn compile_and_link(stem: &str, ad_src: &str, main_c: &str) -> Option<(String, Output)> {
    if !have_cc() {
        eprintln!("skipping: no C compiler");
        return None;
    }
    let lib = scratch(&format!("{stem}.ad"), ad_src);
    let dir = lib.parent().unwrap().to_path_buf();
    let obj = dir.join(format!("{stem}.o"));
    let hdr = dir.join(format!("{stem}.h"));
    let o = compile(&lib, &obj, Some(&hdr));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let main_path = scratch(&format!("{stem}_main.c"), main_c);
    let exe = dir.join(format!("{stem}_linked"));
    let cc = Command::new("cc")
        .args([
            main_path.to_str().unwrap(),
            obj.to_str().unwrap(),
            "-I",
            dir.to_str().unwrap(),
            "-lm",
            "-o",
            exe.to_str().unwrap(),
        ])
        .output()
        .expect("run cc");
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let header = std::fs::read_to_string(&hdr).expect("header");
    let run = Command::new(&exe).output().expect("run linked program");
    Some((header, run))
}

pub fn have_cc() -> bool {
    Command::new("cc")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}
