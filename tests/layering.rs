//! The house's layering, checked over the sources so that a new import
//! cycle or a reach across stages fails the build:
//!
//! - inside each stage (`src/trace/`, `src/filter/`, `src/vis/`,
//!   `src/shell/`), the files' imports form no cycle. A folder's `mod.rs`
//!   is its facade and is left out of the graph; a path through a facade
//!   (`crate::trace::record::TraceReader`, re-exported by
//!   `src/trace/record/mod.rs` from `reader.rs`) is followed to the file
//!   that defines the item, so the rooms of `trace/` (`record/`,
//!   `naming/`, `heap/`) are checked as one graph of files;
//! - the stages below the figures (`trace/`, `filter/`) import neither
//!   `vis/` nor `shell/`, `trace/` does not import `filter/`, and `vis/`
//!   does not import `shell/`;
//! - the shell names each stage only by its facade: `crate::filter::X`,
//!   `crate::trace::X` and `crate::vis::X`, where X is an item of the
//!   stage's `mod.rs`, never an inner module;
//! - the analysis (`filter/`) and the figures (`vis/`) name the tracing
//!   stage by its rooms' facades: `crate::trace::ROOM::X`, where ROOM is
//!   `record`, `naming` or `heap` and `src/trace/ROOM/mod.rs` re-exports
//!   X; never a file inside a room, and not the stage's own facade
//!   (`crate::trace::X`), which is the shell's.
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

/// The file module `path` (from the crate root) lands in: the longest
/// prefix that is a file's module, if any.
fn resolve(path: &[String], mods: &BTreeSet<Module>) -> Option<Module> {
    (1..=path.len())
        .rev()
        .map(|k| path[..k].to_vec())
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
    // A folder's `mod.rs` is the folder's module.
    let cur: &[String] = match cur.last() {
        Some(s) if s == "mod" => &cur[..cur.len() - 1],
        _ => cur,
    };
    let mut base: Module = match path[0].as_str() {
        "crate" => vec![],
        "self" => cur.to_vec(),
        _ => cur[..cur.len().saturating_sub(1)].to_vec(),
    };
    let mut rest = &path[1..];
    if path[0] == "super" {
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
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

/// The import edges among the files of `stage`, `mod.rs` left out: a
/// path through a facade counts as a path to the file behind it.
fn stage_edges(stage: &str) -> BTreeMap<Module, BTreeSet<Module>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join(stage), &mut files);
    let facades = facades();
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
                .map(|p| through_facades(absolute(m, p), &facades))
                .filter_map(|p| resolve(&p, &mods))
                .filter(|t| t != m)
                .collect();
            (m.clone(), to)
        })
        .collect()
}

/// What a facade re-exports: each name it gives, with the path (from the
/// crate root) of what the name stands for.
type Facade = BTreeMap<String, Module>;

/// The `use` items of `text` that are re-exported (`pub use`,
/// `pub(crate) use`, `pub(super) use`), each as (the path it names, the
/// name it gives); a group gives one per member, `self` in a group the
/// group's path, and `as` the name.
fn reexports(text: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices("use ") {
        let line_start = text[..i].rfind('\n').map_or(0, |k| k + 1);
        let head = text[line_start..i].trim();
        if !(head == "pub" || head.starts_with("pub(")) {
            continue;
        }
        let end = text[i..].find(';').map_or(text.len(), |k| i + k);
        use_tree(&text[i + 4..end], &[], &mut out);
    }
    out
}

/// One use tree (`a::{b, c::d as e, self}`) under `prefix`.
fn use_tree(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let close = tree.rfind('}').unwrap_or(tree.len());
        let mut path = prefix.to_vec();
        path.extend(
            tree[..open]
                .split("::")
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
        );
        let inner = &tree[open + 1..close];
        let (mut depth, mut start) = (0, 0);
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    use_tree(&inner[start..k], &path, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        use_tree(&inner[start..], &path, out);
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (item, alias) = match tree.split_once(" as ") {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (tree, None),
    };
    let mut path = prefix.to_vec();
    path.extend(
        item.split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| s != "self"),
    );
    let Some(last) = path.last().cloned() else {
        return;
    };
    out.push((path, alias.unwrap_or(&last).to_string()));
}

/// Every facade under `src/`: each folder's `mod.rs`, by the folder's
/// module, with what it re-exports.
fn facades() -> BTreeMap<Module, Facade> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "mod.rs"))
        .map(|f| {
            let m = module_of(&src, f);
            let facade = reexports(&code(f))
                .into_iter()
                .map(|(p, name)| {
                    let target = if ["crate", "super", "self"].contains(&p[0].as_str()) {
                        absolute(&m, &p)
                    } else {
                        // A path from the folder itself (`use run::X`).
                        let mut t = m[..m.len() - 1].to_vec();
                        t.extend(p);
                        t
                    };
                    (name, target)
                })
                .collect();
            (m[..m.len() - 1].to_vec(), facade)
        })
        .collect()
}

/// `path` (from the crate root) with every step through a facade replaced
/// by what the facade re-exports (`trace::TraceReader` is
/// `trace::record::TraceReader`, which is `trace::record::reader::TraceReader`).
fn through_facades(mut path: Module, facades: &BTreeMap<Module, Facade>) -> Module {
    for _ in 0..16 {
        let step = (1..path.len()).find_map(|k| {
            let target = facades.get(&path[..k])?.get(&path[k])?;
            let mut p = target.clone();
            p.extend(path[k + 1..].iter().cloned());
            (p != path).then_some(p)
        });
        match step {
            Some(p) => path = p,
            None => break,
        }
    }
    path
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

/// The names a stage's or a room's facade gives at its root (`dir` under
/// `src/`): what its `mod.rs` re-exports and the items it defines itself,
/// modules left out.
fn facade_names(dir: &str) -> BTreeSet<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(dir)
        .join("mod.rs");
    let text = code(&file);
    let mut names: BTreeSet<String> = reexports(&text).into_iter().map(|(_, n)| n).collect();
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line
            .strip_prefix("pub ")
            .or_else(|| line.strip_prefix("pub(crate) "))
        else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let kind = words.next().unwrap_or("");
        if ["fn", "struct", "enum", "const", "static", "trait", "type"].contains(&kind) {
            let name: String = words
                .next()
                .unwrap_or("")
                .chars()
                .take_while(|c| is_ident(*c))
                .collect();
            names.insert(name);
        }
    }
    names
}

/// The names of the modules inside `dir` under `src/`, at any depth: its
/// files and folders.
fn module_names(dir: &str) -> BTreeSet<String> {
    fn walk(dir: &Path, out: &mut BTreeSet<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.insert(p.file_name().unwrap().to_string_lossy().into_owned());
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.insert(p.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir),
        &mut out,
    );
    out.remove("mod");
    out
}

/// Where `text` writes `head::SEG` (`head` not the end of a longer
/// name), each SEG.
fn segments_after(text: &str, head: &str) -> Vec<String> {
    let pat = format!("{head}::");
    text.match_indices(&pat)
        .filter(|(i, _)| *i == 0 || !is_ident(text[..*i].chars().last().unwrap()))
        .map(|(i, _)| {
            text[i + pat.len()..]
                .chars()
                .take_while(|c| is_ident(*c))
                .collect()
        })
        .collect()
}

/// The shell reaches the tracing and figure stages only through their
/// facades, as it does the analysis: `crate::trace::X` and
/// `crate::vis::X`, X an item of `src/trace/mod.rs` or `src/vis/mod.rs`
/// (re-exported or defined there), never a room or an inner module
/// (`crate::trace::record::…`, `crate::vis::compare::…`), whether in a
/// `use`, a qualified path, a doc link, or a path through a `trace` or
/// `vis` alias (`use crate::vis; vis::runs::…`).
#[test]
fn the_shell_uses_only_the_trace_and_vis_facades() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/shell");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let sources = sources();
    let mut bad = Vec::new();
    for stage in ["trace", "vis"] {
        let names = facade_names(stage);
        let inner = module_names(stage);
        assert!(
            names.len() > 10 && inner.len() > 10,
            "{stage}: too few names read: {names:?} {inner:?}"
        );
        for (m, named) in &sources {
            if m[0] != "shell" {
                continue;
            }
            for p in named {
                if p[0] == stage && p.get(1).is_some_and(|x| !names.contains(x)) {
                    bad.push(format!("{} names {}", m.join("/"), p.join("::")));
                }
            }
        }
        for f in &files {
            for seg in segments_after(&code(f), stage) {
                if inner.contains(&seg) && !names.contains(&seg) {
                    bad.push(format!("{} names {stage}::{seg}", f.display()));
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "the shell names an inner module of trace or vis; re-export what it needs from \
         src/trace/mod.rs or src/vis/mod.rs and name it there:\n{}",
        bad.join("\n")
    );
}

/// The rooms of the tracing stage.
const TRACE_ROOMS: [&str; 3] = ["record", "naming", "heap"];

/// The analysis and the figures name the tracing stage by its rooms'
/// facades only: `crate::trace::ROOM::X`, where `src/trace/ROOM/mod.rs`
/// re-exports X (the files of a room are private to it, so the compiler
/// holds this for `use` lines; this test holds it for doc links and
/// text too). They do not use the stage's own facade (`crate::trace::X`),
/// which is the shell's: one rule, and the room a name comes from stays
/// visible where it is used.
#[test]
fn filter_and_vis_use_the_trace_rooms_facades() {
    let names: BTreeMap<&str, BTreeSet<String>> = TRACE_ROOMS
        .iter()
        .map(|r| (*r, facade_names(&format!("trace/{r}"))))
        .collect();
    let inner: BTreeMap<&str, BTreeSet<String>> = TRACE_ROOMS
        .iter()
        .map(|r| (*r, module_names(&format!("trace/{r}"))))
        .collect();
    for r in TRACE_ROOMS {
        assert!(
            names[r].len() > 5 && !inner[r].is_empty(),
            "{r}: too few names read: {:?} {:?}",
            names[r],
            inner[r]
        );
    }
    let mut bad = Vec::new();
    for (m, named) in sources() {
        if m[0] != "filter" && m[0] != "vis" {
            continue;
        }
        for p in &named {
            if p[0] != "trace" {
                continue;
            }
            let Some(r) = p.get(1).map(String::as_str) else {
                continue;
            };
            if !TRACE_ROOMS.contains(&r) {
                bad.push(format!(
                    "{} names {} (name the room: crate::trace::ROOM::X)",
                    m.join("/"),
                    p.join("::")
                ));
            } else if p.get(2).is_some_and(|x| !names[r].contains(x)) {
                bad.push(format!("{} names {}", m.join("/"), p.join("::")));
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("filter"), &mut files);
    rust_files(&src.join("vis"), &mut files);
    for f in &files {
        let text = code(f);
        for r in TRACE_ROOMS {
            for seg in segments_after(&text, r) {
                if inner[r].contains(&seg) && !names[r].contains(&seg) {
                    bad.push(format!("{} names {r}::{seg}", f.display()));
                }
            }
        }
    }
    bad.sort();
    bad.dedup();
    assert!(
        bad.is_empty(),
        "filter/ or vis/ names a file inside a room of trace/; name the item the room's \
         facade (src/trace/ROOM/mod.rs) re-exports, crate::trace::ROOM::X:\n{}",
        bad.join("\n")
    );
}

/// The reader of re-exports, and paths followed through the facades to
/// the files behind them, as the cycle check follows them.
#[test]
fn facades_are_read_and_followed() {
    let r = reexports("pub use a::{b, c::d as e, self};\npub(crate) use f::g;\nuse h::i;\n");
    let r: Vec<(String, String)> = r.into_iter().map(|(p, n)| (p.join("::"), n)).collect();
    let want = [("a::b", "b"), ("a::c::d", "e"), ("a", "a"), ("f::g", "g")];
    assert_eq!(
        r,
        want.map(|(p, n)| (p.to_string(), n.to_string())).to_vec()
    );
    let f = facades();
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    assert_eq!(
        through_facades(m("trace::TraceReader"), &f),
        m("trace::record::reader::TraceReader")
    );
    assert_eq!(
        through_facades(m("trace::naming::FrameSlot::ReturnAddress"), &f),
        m("trace::naming::dwarf::cfi::FrameSlot::ReturnAddress")
    );
    let edges = stage_edges("trace");
    assert!(
        edges[&m("trace::heap::heapprof")].contains(&m("trace::record::run")),
        "the edges across trace's rooms are not followed: {:?}",
        edges[&m("trace::heap::heapprof")]
    );
}

/// The free functions of `filter`'s facade the shell may call. Everything
/// else it names at `filter`'s root is a type (or a constant), whose
/// methods do the smaller things. A new entry here is a new entry point
/// of the analysis stage: prefer a method of the report it belongs to, or
/// laying the text out in `src/shell/render.rs`.
const SHELL_CALLS: &[&str] = &[
    // Analysing and choosing what to show.
    "analyse_recording",
    "select",
    "selection_batches",
    // Reports.
    "memory_stats",
    "cache_stats",
    "sharing_stats",
    "what_if",
    "what_if_many",
    "advise",
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

/// The layers of `filter/` as `docs/architecture.md` lists them ("## Layers
/// inside `filter/`", a numbered item each, lowest first): each file or
/// folder named in backquotes (`stats.rs`, `locality/`) with its layer's
/// number.
fn documented_filter_layers() -> BTreeMap<String, usize> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let start = doc
        .find("## Layers inside `filter/`")
        .expect("docs/architecture.md has a section on the layers of filter/");
    let section = &doc[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let mut layers = BTreeMap::new();
    let mut current = 0;
    for line in section.lines() {
        let head = line.split('.').next().unwrap_or("");
        if let Ok(n) = head.parse::<usize>() {
            current = n;
        }
        if current == 0 {
            continue;
        }
        for (k, piece) in line.split('`').enumerate() {
            let file = k % 2 == 1 && !piece.contains(' ');
            if file && (piece.ends_with(".rs") || piece.ends_with('/')) {
                let name = piece.trim_end_matches(".rs").trim_end_matches('/');
                layers.entry(name.to_string()).or_insert(current);
            }
        }
    }
    layers
}

/// Every file of `filter/` sits in a layer of `docs/architecture.md`, and
/// imports only files of its own layer or below (a path through the
/// facade counts as a path to the file behind it).
#[test]
fn filter_files_import_only_their_layer_or_below() {
    let layers = documented_filter_layers();
    assert!(
        layers.len() > 20,
        "too few files read from the doc: {layers:?}"
    );
    let layer_of = |m: &Module| layers.get(&m[1]).copied();
    let mut bad = Vec::new();
    for (m, to) in stage_edges("filter") {
        let Some(from) = layer_of(&m) else {
            bad.push(format!(
                "{} is in no layer of docs/architecture.md",
                m.join("/")
            ));
            continue;
        };
        for t in to {
            match layer_of(&t) {
                Some(l) if l > from && t[1] != m[1] => bad.push(format!(
                    "{} (layer {from}) imports {} (layer {l})",
                    m.join("/"),
                    t.join("/")
                )),
                _ => {}
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The items a stage's `mod.rs` defines itself rather than re-exports:
/// anything but `mod`, `use` and attributes, comments and blank lines.
fn definitions_in(facade: &Path) -> Vec<String> {
    let text = code(facade);
    let mut out = Vec::new();
    let mut depth = 0usize;
    for line in text.lines() {
        let t = line.trim();
        let top = depth == 0;
        depth = (depth + t.matches('{').count()).saturating_sub(t.matches('}').count());
        let declaration = [
            "pub mod ",
            "pub(crate) mod ",
            "mod ",
            "pub use ",
            "pub(crate) use ",
            "use ",
        ]
        .iter()
        .any(|k| t.starts_with(k));
        if top && !(t.is_empty() || t.starts_with("//") || t.starts_with("#") || declaration) {
            out.push(t.to_string());
        }
    }
    out
}

/// `filter/mod.rs`, `vis/mod.rs` and `trace/mod.rs` are pure facades: they
/// declare files and re-export, and define nothing. No file of the stage
/// names an item through its own facade (`super::X` or
/// `crate::filter::X` where X is not a file or folder of the stage): the
/// facade is for the other stages, and a file that reaches its siblings
/// through it hides which file it depends on.
#[test]
fn stage_facades_are_pure_and_not_used_from_inside() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut bad = Vec::new();
    for stage in ["filter", "vis", "trace"] {
        for d in definitions_in(&src.join(stage).join("mod.rs")) {
            bad.push(format!("src/{stage}/mod.rs defines `{d}`"));
        }
        let modules = module_names(stage);
        for (m, named) in sources() {
            if m[0] != stage || m.last().is_some_and(|l| l == "mod") && m.len() == 2 {
                continue;
            }
            for p in named {
                let through = p.len() >= 2 && p[0] == stage && !modules.contains(&p[1]);
                if through {
                    bad.push(format!("{} names {}", m.join("/"), p.join("::")));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The figures name the analysis stage by its facade only:
/// `crate::filter::X`, X re-exported by `src/filter/mod.rs` (the access
/// batches, the reports and their rows, the heap series), or
/// `crate::filter::schema`, the columns' names that are the hand-off's
/// contract; never another inner module of `filter/`.
#[test]
fn vis_uses_only_the_filter_facade() {
    let facade = facade_names("filter");
    assert!(facade.contains("AccessBatches"), "{facade:?}");
    let mut bad = Vec::new();
    for (m, named) in sources() {
        if m[0] != "vis" {
            continue;
        }
        for p in named {
            let inner = p.len() >= 2 && p[0] == "filter" && p[1] != "schema";
            if inner && !facade.contains(&p[1]) {
                bad.push(format!("{} names {}", m.join("/"), p.join("::")));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the figures name filter's inner modules; re-export what they need at filter's root \
         (src/filter/mod.rs) instead:\n{}",
        bad.join("\n")
    );
}
