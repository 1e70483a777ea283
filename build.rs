//! Embeds every claim spec under `theorems/` into the binary, so that an
//! installed `attncheck` (`cargo install --path .`) runs, lists and verifies
//! from any directory; `--theorems DIR` still overrides them.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("theorems");
    println!("cargo:rerun-if-changed=theorems");
    let mut specs = Vec::new();
    if let Ok(papers) = std::fs::read_dir(&root) {
        for p in papers.flatten() {
            println!("cargo:rerun-if-changed={}", p.path().display());
            if let Ok(files) = std::fs::read_dir(p.path()) {
                for f in files.flatten() {
                    let path = f.path();
                    if path.extension().and_then(|e| e.to_str()) == Some("toml") {
                        println!("cargo:rerun-if-changed={}", path.display());
                        let rel = format!(
                            "{}/{}",
                            p.file_name().to_string_lossy(),
                            path.file_name().unwrap().to_string_lossy()
                        );
                        specs.push((rel, path));
                    }
                }
            }
        }
    }
    specs.sort();
    let mut out = String::from(
        "/// Every spec under theorems/ at build time: (path below theorems/, text).\n\
         pub static EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &specs {
        let _ = writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("embedded_specs.rs");
    std::fs::write(dest, out).unwrap();
}
