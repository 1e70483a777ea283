//! A byte-level corpus from the `.rs` files of pinned crates in the local cargo registry.
//!
//! What goes in is named exactly: the packages and versions, the file filter (every regular
//! file whose name ends in `.rs`, anywhere under the package's directory), the order (files
//! sorted by path within a package, packages in the given order), and a content hash
//! (FNV-1a, 64 bits, over `name-version/path`, a 0 byte, the file's bytes and a 0 byte, file
//! after file). The split is fixed: file number k (counted from 0 over the whole ordered
//! list) goes to validation when k mod `val_every` = `val_every` − 1, else to training.
//! Any build of attncheck unpacks these packages (they are pinned in its `Cargo.lock`), so a
//! fresh machine rebuilds the same bytes from crates.io alone.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// One package of the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    /// Crate name, as in `Cargo.lock`.
    pub name: String,
    /// Exact version, as in `Cargo.lock`.
    pub version: String,
}

/// A loaded corpus.
#[derive(Clone, Debug)]
pub struct Corpus {
    /// Training bytes (the concatenated training files).
    pub train: Vec<u8>,
    /// Validation bytes.
    pub val: Vec<u8>,
    /// Number of files read.
    pub files: usize,
    /// FNV-1a 64 content hash (see the module docs), as 16 hex digits.
    pub hash: String,
    /// Each package's `license` field, in order.
    pub licences: Vec<(String, String)>,
    /// Where each package was found.
    pub roots: Vec<PathBuf>,
}

/// The registry source directories searched: `$CARGO_HOME/registry/src/*/` (default
/// `$HOME/.cargo`).
pub fn registry_dirs() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    let mut out = Vec::new();
    if let Some(h) = home {
        if let Ok(rd) = std::fs::read_dir(h.join("registry").join("src")) {
            for e in rd.flatten() {
                if e.path().is_dir() {
                    out.push(e.path());
                }
            }
        }
    }
    out.sort();
    out
}

fn io(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Every `.rs` regular file under `dir`, as paths relative to it, sorted bytewise.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let abs = dir.join(&rel);
        for e in std::fs::read_dir(&abs).map_err(|e| io(&abs, e))? {
            let e = e.map_err(|e| io(&abs, e))?;
            let ft = e.file_type().map_err(|err| io(&e.path(), err))?;
            let r = rel.join(e.file_name());
            if ft.is_dir() {
                stack.push(r);
            } else if ft.is_file() && r.extension().is_some_and(|x| x == "rs") {
                out.push(r);
            }
        }
    }
    out.sort_by(|a, b| {
        a.as_os_str()
            .as_encoded_bytes()
            .cmp(b.as_os_str().as_encoded_bytes())
    });
    Ok(out)
}

/// FNV-1a 64 step over `bytes`.
fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

fn licence_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("Cargo.toml"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let l = l.trim();
                l.strip_prefix("license")
                    .map(str::trim_start)
                    .and_then(|r| r.strip_prefix('='))
                    .map(|r| r.trim().trim_matches('"').to_string())
            })
        })
        .unwrap_or_else(|| "unknown".into())
}

/// [`load`], then the content hash checked against `expected` (a spec pins its corpus by
/// hash): a package whose files changed is an error that names both hashes.
pub fn load_pinned(
    packages: &[Package],
    val_every: usize,
    dirs: &[PathBuf],
    expected: &str,
) -> Result<Corpus> {
    let c = load(packages, val_every, dirs)?;
    if c.hash != expected {
        return Err(Error::Corpus(format!(
            "content hash {} differs from the expected {expected} (a package's files changed)",
            c.hash
        )));
    }
    Ok(c)
}

/// Loads the corpus of `packages` from the registry directories `dirs` (normally
/// [`registry_dirs`]). A missing package is an error that says which and where it was
/// looked for.
pub fn load(packages: &[Package], val_every: usize, dirs: &[PathBuf]) -> Result<Corpus> {
    if val_every < 2 {
        return Err(Error::Config("val_every must be ≥ 2".into()));
    }
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    let (mut train, mut val) = (Vec::new(), Vec::new());
    let mut k = 0usize;
    let mut licences = Vec::new();
    let mut roots = Vec::new();
    for p in packages {
        let dirname = format!("{}-{}", p.name, p.version);
        let Some(root) = dirs.iter().map(|d| d.join(&dirname)).find(|d| d.is_dir()) else {
            return Err(Error::Corpus(format!(
                "package {dirname} not found under {} (run `cargo fetch` in the attncheck checkout; \
                 the corpus packages are pinned in its Cargo.lock)",
                if dirs.is_empty() {
                    "any cargo registry (no $CARGO_HOME/registry/src)".to_string()
                } else {
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )));
        };
        licences.push((dirname.clone(), licence_of(&root)));
        for rel in rust_files(&root)? {
            let abs = root.join(&rel);
            let bytes = std::fs::read(&abs).map_err(|e| io(&abs, e))?;
            let name = format!("{dirname}/{}", rel.to_string_lossy().replace('\\', "/"));
            h = fnv1a(h, name.as_bytes());
            h = fnv1a(h, &[0]);
            h = fnv1a(h, &bytes);
            h = fnv1a(h, &[0]);
            if k % val_every == val_every - 1 {
                val.extend_from_slice(&bytes);
            } else {
                train.extend_from_slice(&bytes);
            }
            k += 1;
        }
        roots.push(root);
    }
    Ok(Corpus {
        train,
        val,
        files: k,
        hash: format!("{h:016x}"),
        licences,
        roots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spec pins its corpus by hash: a package whose files changed is refused by
    /// [`load_pinned`], naming both hashes; the right hash loads.
    #[test]
    fn load_pinned_refuses_a_changed_package_naming_both_hashes() {
        let dir = std::env::temp_dir().join(format!("attncheck-lm-pinned-{}", std::process::id()));
        let root = dir.join("fake-0.1.0/src");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("lib.rs"), "pub fn f() {}\n").unwrap();
        let pk = [Package {
            name: "fake".into(),
            version: "0.1.0".into(),
        }];
        let dirs = [dir.clone()];
        let hash = load(&pk, 2, &dirs).unwrap().hash;
        assert_eq!(load_pinned(&pk, 2, &dirs, &hash).unwrap().hash, hash);
        std::fs::write(root.join("lib.rs"), "pub fn g() {}\n").unwrap();
        let e = load_pinned(&pk, 2, &dirs, &hash).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains(&hash) && e.contains("differs"), "{e}");
    }
}
