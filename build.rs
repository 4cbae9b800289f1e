//! Generates one test per golden board script (`tests/scripts/*.board`), so
//! that each runs, passes or fails on its own and can be run by name:
//! `cargo test --test integration scripts::castling_through_check`.

use std::{env, fs, path::Path};

fn main() {
    println!("cargo::rerun-if-changed=tests/scripts");
    let mut names: Vec<String> = fs::read_dir("tests/scripts")
        .map(|dir| {
            dir.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".board"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out =
        format!("/// The golden scripts.\nconst GOLDEN_SCRIPTS: &[&str] = &{names:?};\n\n");
    for name in &names {
        let stem = name.trim_end_matches(".board");
        let mut ident: String = stem
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        if ident.starts_with(|c: char| c.is_ascii_digit()) {
            ident.insert_str(0, "script_");
        }
        out.push_str(&format!(
            "#[test]\nfn {ident}() {{\n    check_script({name:?});\n}}\n\n"
        ));
    }
    let path =
        Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("golden_scripts.rs");
    fs::write(path, out).expect("OUT_DIR is writable");
}
