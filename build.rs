//! Names the commit a binary was built from: `lahar --version` and summary.json's
//! `lahar_version` read `VERSION+COMMIT` (`-dirty` when tracked files differ from
//! it), so every published number can be traced to its code. Without git (a
//! source archive) the version stands alone.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let build = match (commit.is_empty(), dirty) {
        (true, _) => String::new(),
        (false, false) => format!("+{commit}"),
        (false, true) => format!("+{commit}-dirty"),
    };
    println!("cargo:rustc-env=LAHAR_BUILD={build}");
    // Run again when the commit or the code changes (paths that exist only: a
    // missing one would rerun every build). Docs and tests are not watched, so an
    // edit of those alone does not mark a build dirty until the code changes.
    let watched = [
        ".git/HEAD",
        ".git/refs/heads",
        ".git/packed-refs",
        ".git/index",
        "Cargo.toml",
        "src",
        "sim-core",
        "policies",
        "workloads",
        "traces",
        "reports",
        "benches/src",
    ];
    for p in watched.iter().filter(|p| Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={p}");
    }
}
