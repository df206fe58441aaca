//! The house's layering, checked over the sources so that a new import
//! cycle or a reach across stages fails the build:
//!
//! - inside each stage (`src/trace/`, `src/filter/`, `src/vis/`,
//!   `src/shell/`), the files' imports form no cycle (each folder's
//!   `mod.rs` is the stage's facade and is left out);
//! - the stages below the figures (`trace/`, `filter/`) import neither
//!   `vis/` nor `shell/`, `trace/` does not import `filter/`, and `vis/`
//!   does not import `shell/`.
//!
//! Imports are read from paths in the text (`use` lines and qualified
//! paths, `crate::`, `super::` and `self::`, doc comments included, test
//! modules left out), the same way the project's review checks them.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Module = Vec<String>;

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file under `src/` (`filter/locality/cache`).
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    rel.iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect()
}

/// The text of a file up to its test module.
fn code(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    match text.find("#[cfg(test)]") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths the text names that start at `crate`, `super` or `self`,
/// each as its segments; a group (`super::a::{b, c::d}`) gives one path
/// per member.
fn paths(text: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let at_word = i == 0 || !is_ident(chars[i - 1]);
        let rest: String = chars[i..chars.len().min(i + 7)].iter().collect();
        let head = ["crate::", "super::", "self::"]
            .into_iter()
            .find(|h| rest.starts_with(h));
        match head {
            Some(h) if at_word => {
                let (path, next) = path_at(&chars, i, h);
                out.extend(path);
                i = next;
            }
            _ => i += 1,
        }
    }
    out
}

/// The path (or group of paths) starting at `i`, and where it ends.
fn path_at(chars: &[char], mut i: usize, head: &str) -> (Vec<Vec<String>>, usize) {
    let mut segs = vec![head.trim_end_matches(':').to_string()];
    i += head.len();
    loop {
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i > start {
            segs.push(chars[start..i].iter().collect());
        }
        let sep: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if sep.starts_with("::{") {
            let close = (i..chars.len())
                .find(|&k| chars[k] == '}')
                .unwrap_or(chars.len());
            let inner: String = chars[i + 3..close].iter().collect();
            let group = inner
                .split(',')
                .map(|m| m.split(" as ").next().unwrap_or("").trim().to_string())
                .filter(|m| !m.is_empty())
                .map(|m| {
                    let mut p = segs.clone();
                    if m != "self" {
                        p.extend(m.split("::").map(|s| s.trim().to_string()));
                    }
                    p
                })
                .collect();
            return (group, close + 1);
        }
        if sep.starts_with("::") && i > start {
            i += 2;
            continue;
        }
        return (vec![segs], i);
    }
}

/// The module `path` (named in module `cur`) resolves to: the longest
/// prefix that is a file's module, if any.
fn resolve(cur: &Module, path: &[String], mods: &BTreeSet<Module>) -> Option<Module> {
    let (mut base, rest): (Module, &[String]) = match path[0].as_str() {
        "crate" => (vec![], &path[1..]),
        "self" => (cur.clone(), &path[1..]),
        _ => {
            let mut base = cur[..cur.len() - 1].to_vec();
            let mut rest = &path[1..];
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
            (base, rest)
        }
    };
    base.extend(rest.iter().cloned());
    (1..=base.len())
        .rev()
        .map(|k| base[..k].to_vec())
        .find(|m| mods.contains(m))
}

/// The full paths each file names, with the file's module.
fn sources() -> Vec<(Module, Vec<Module>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .map(|f| {
            let m = module_of(&src, f);
            let named = paths(&code(f))
                .into_iter()
                .map(|p| absolute(&m, &p))
                .collect();
            (m, named)
        })
        .collect()
}

/// `path` named in module `cur`, from the crate root.
fn absolute(cur: &Module, path: &[String]) -> Module {
    let mut base: Module = match path[0].as_str() {
        "crate" => vec![],
        "self" => cur.clone(),
        _ => cur[..cur.len() - 1].to_vec(),
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
    }
    // A file's own `mod.rs` stands for its folder.
    if base.last().is_some_and(|s| s == "mod") {
        base.pop();
    }
    base.extend(rest.iter().cloned());
    base
}

/// Strongly connected components of more than one module (Tarjan).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct T<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<Module, usize>,
        low: BTreeMap<Module, usize>,
        stack: Vec<Module>,
        on: BTreeSet<Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit(t: &mut T, v: &Module) {
        let n = t.index.len();
        t.index.insert(v.clone(), n);
        t.low.insert(v.clone(), n);
        t.stack.push(v.clone());
        t.on.insert(v.clone());
        for w in t.edges[v].clone() {
            if !t.index.contains_key(&w) {
                visit(t, &w);
                let lw = t.low[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(&w) {
                let iw = t.index[&w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(&w);
                let done = &w == v;
                comp.push(w);
                if done {
                    break;
                }
            }
            if comp.len() > 1 {
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The import edges among the files of `stage`, `mod.rs` left out.
fn stage_edges(stage: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join(stage), &mut files);
    let files: BTreeMap<Module, PathBuf> = files
        .into_iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "mod.rs"))
        .map(|f| (module_of(&src, &f), f))
        .collect();
    let mods: BTreeSet<Module> = files.keys().cloned().collect();
    files
        .iter()
        .map(|(m, f)| {
            let to = paths(&code(f))
                .iter()
                .filter_map(|p| resolve(m, p, &mods))
                .filter(|t| t != m)
                .collect();
            (m.clone(), to)
        })
        .collect()
}

#[test]
fn no_stage_has_an_import_cycle() {
    let mut found = Vec::new();
    for stage in ["trace", "filter", "vis", "shell"] {
        let edges = stage_edges(stage);
        assert!(edges.len() > 5, "{stage}: too few files read: {edges:?}");
        for c in cycles(&edges) {
            let names: Vec<String> = c.iter().map(|m| m.join("/")).collect();
            found.push(format!("{stage}: {}", names.join(", ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn lower_stages_never_import_higher_ones() {
    let above: [(&str, &[&str]); 3] = [
        ("trace", &["vis", "shell", "filter"]),
        ("filter", &["vis", "shell"]),
        ("vis", &["shell"]),
    ];
    let mut bad = Vec::new();
    for (m, named) in sources() {
        for (stage, higher) in above {
            if m[0] != stage {
                continue;
            }
            for p in &named {
                if p.first().is_some_and(|s| higher.contains(&s.as_str())) {
                    bad.push(format!("{} names {}", m.join("/"), p.join("::")));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The reader itself, on paths written every way the sources write them.
#[test]
fn paths_are_read_as_the_sources_write_them() {
    let p = paths("use super::a::{b, c::d as e, self};\nlet x = crate::filter::stats::f(1);\n/// [`self::g`]\nnot_super::x");
    let s: Vec<String> = p.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        s,
        [
            "super::a::b",
            "super::a::c::d",
            "super::a",
            "crate::filter::stats::f",
            "self::g"
        ]
    );
    let cur: Module = vec!["filter".into(), "locality".into(), "report".into()];
    assert_eq!(
        absolute(&cur, &["super".into(), "super".into(), "io".into()]),
        vec!["filter", "io"]
    );
}

/// The names of `filter/`'s inner modules: its files and folders.
fn filter_modules() -> BTreeSet<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/filter");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "mod")
        .collect()
}

/// The shell reaches the analysis stage only through its facade: the
/// items at `filter`'s root (`crate::filter::cache_stats`), never an inner
/// module (`crate::filter::locality::report::…`), whether in a `use`, a
/// qualified path, a doc link, or a path through a `filter` alias
/// (`use crate::filter; filter::stats::…`).
#[test]
fn the_shell_uses_only_the_filter_facade() {
    let inner = filter_modules();
    assert!(
        ["stats", "locality", "heap", "analysis"]
            .iter()
            .all(|m| inner.contains(*m)),
        "too few modules read: {inner:?}"
    );
    let mut bad = Vec::new();
    for (m, named) in sources() {
        if m[0] != "shell" {
            continue;
        }
        for p in &named {
            if p.first().is_some_and(|s| s == "filter")
                && p.get(1).is_some_and(|s| inner.contains(s))
            {
                bad.push(format!("{} names {}", m.join("/"), p.join("::")));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shell");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    for f in &files {
        let text = code(f);
        for (i, _) in text.match_indices("filter::") {
            if i > 0 && is_ident(text[..i].chars().last().unwrap()) {
                continue;
            }
            let rest = &text[i + "filter::".len()..];
            let seg: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if inner.contains(&seg) {
                bad.push(format!("{} names filter::{seg}", f.display()));
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "the shell names filter's inner modules; re-export what it needs at filter's root \
         (src/filter/mod.rs) instead:\n{}",
        bad.join("\n")
    );
}

/// The free functions of `filter`'s facade the shell may call. Everything
/// else it names at `filter`'s root is a type (or a constant), whose
/// methods do the smaller things. A new entry here is a new entry point
/// of the analysis stage: prefer a method of the report it belongs to, or
/// laying the text out in `src/shell/render.rs`.
const SHELL_CALLS: &[&str] = &[
    // Analysing and choosing what to show.
    "analyse_into",
    "select",
    "selection_batches",
    // Reports.
    "memory_stats",
    "cache_stats",
    "sharing_stats",
    "what_if",
    "compare_runs",
    "metric_by_run",
    // Exports, and the one table writer.
    "export_memtrace",
    "export_ops",
    "export_hpcmp",
    "write_csv",
];

/// The names the shell's file `text` uses at `filter`'s root: members of
/// `use crate::filter::{…}` groups, and the segment after `filter::` or
/// after an alias of `filter` (`use crate::filter as f`, `filter::{self
/// as f}`).
fn filter_names(text: &str) -> BTreeSet<String> {
    let mut heads = vec!["filter".to_string()];
    for pat in ["crate::filter as ", "self as "] {
        for (i, _) in text.match_indices(pat) {
            let rest = &text[i + pat.len()..];
            let alias: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            let is_filter = pat.starts_with("crate") || {
                let before = &text[..i];
                before
                    .rfind("filter::{")
                    .is_some_and(|k| !before[k..].contains('}'))
            };
            if is_filter && !alias.is_empty() {
                heads.push(alias);
            }
        }
    }
    let mut out = BTreeSet::new();
    for p in paths(text) {
        if p.len() == 3 && p[0] == "crate" && p[1] == "filter" {
            out.insert(p[2].clone());
        }
    }
    for head in &heads {
        let pat = format!("{head}::");
        for (i, _) in text.match_indices(&pat) {
            if i > 0 && is_ident(text[..i].chars().last().unwrap()) {
                continue;
            }
            let seg: String = text[i + pat.len()..]
                .chars()
                .take_while(|c| is_ident(*c))
                .collect();
            if !seg.is_empty() {
                out.insert(seg);
            }
        }
    }
    out
}

/// The shell calls a handful of `filter`'s free functions (the reports'
/// entry points, [`SHELL_CALLS`]) and otherwise only the types they
/// return: the facade stays small, and a helper that creeps into the
/// shell's calls fails the build instead of growing it silently.
#[test]
fn the_shell_calls_few_filter_functions() {
    let inner = filter_modules();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shell");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut used = BTreeSet::new();
    let mut bad = Vec::new();
    for f in &files {
        for name in filter_names(&code(f)) {
            let function = name.starts_with(|c: char| c.is_ascii_lowercase());
            if function && !inner.contains(&name) && name != "self" {
                if !SHELL_CALLS.contains(&name.as_str()) {
                    bad.push(format!("{} calls filter::{name}", f.display()));
                }
                used.insert(name);
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the shell calls filter functions outside its short list (tests/layering.rs, \
         SHELL_CALLS): make them methods of the report they belong to, or lay the text out in \
         src/shell/render.rs:\n{}",
        bad.join("\n")
    );
    assert!(
        used.len() >= 8,
        "too few of filter's functions found in the shell's sources: {used:?}"
    );
    let stale: Vec<&&str> = SHELL_CALLS.iter().filter(|n| !used.contains(**n)).collect();
    assert!(
        stale.is_empty(),
        "SHELL_CALLS lists functions the shell no longer calls: {stale:?}"
    );
}

/// The reader of the shell's names, on the ways the shell writes them.
#[test]
fn filter_names_are_read_through_groups_and_aliases() {
    let text = "use crate::filter::{self as f, cache_stats, CacheReport};\n\
                let x = f::what_if(a);\nuse crate::filter as g;\ng::select(a);\n\
                crate::filter::write_csv(d);\nfilter::memory_stats(a);\nmy_filter::nope();";
    let got: Vec<String> = filter_names(text).into_iter().collect();
    assert_eq!(
        got,
        [
            "CacheReport",
            "cache_stats",
            "memory_stats",
            "select",
            "what_if",
            "write_csv"
        ]
    );
}
