//! The README's second command must not compile polars again.
//!
//! `cargo run --release` builds mapvis's dependencies with the features the
//! library asks for; `cargo test --release` adds the dev-dependencies, and
//! cargo unifies features across everything one build needs. A crate shared by
//! both builds but with more features in the test build is compiled twice, and
//! so is everything above it: proptest once turned on two features of
//! getrandom 0.4, which uuid brings into polars-core, and the test build took
//! ten more minutes. This test asks cargo itself (`cargo tree`, from the
//! lockfile, offline) for the features of every package in each build and
//! fails on any shared package whose features differ.

use std::collections::BTreeMap;
use std::process::Command;

/// Package ("name vX.Y.Z") -> its enabled features, as `cargo tree` resolves
/// them for the given dependency kinds.
fn features(edges: &str) -> BTreeMap<String, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = Command::new(cargo)
        .args(["tree", "--offline", "--locked", "--prefix", "none"])
        .args(["--manifest-path", manifest, "-e", edges, "-f", "{p}|{f}"])
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo tree -e {edges} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut map = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.trim_end_matches(" (*)");
        let Some((pkg, feats)) = line.split_once('|') else {
            continue;
        };
        // A path package prints its folder after the version; keep the name.
        let pkg = pkg.split(" (").next().unwrap_or(pkg).to_string();
        map.insert(pkg, feats.trim().to_string());
    }
    map
}

#[test]
fn the_test_build_shares_every_dependency_with_the_main_build() {
    let main = features("normal,build");
    let test = features("normal,build,dev");
    assert!(
        main.keys().any(|p| p.starts_with("polars-core ")),
        "cargo tree listed no polars-core: {} packages",
        main.len()
    );
    let differ: Vec<String> = main
        .iter()
        .filter_map(|(pkg, f)| {
            let t = test.get(pkg)?;
            (t != f).then(|| format!("{pkg}: main [{f}], test [{t}]"))
        })
        .collect();
    assert!(
        differ.is_empty(),
        "these dependencies get other features in `cargo test` than in `cargo run`, \
         so the test build compiles them (and all above them) again; name the \
         features in Cargo.toml's [dependencies]:\n{}",
        differ.join("\n")
    );
}
