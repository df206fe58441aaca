//! A Gleipnir text trace gives the same statistics as the matching binary
//! trace: the binary trace of a real program is rewritten in Gleipnir's text
//! format (allocation sites as `file_c_LINE`, heap accesses as
//! `H H-0 site.offset`, stack accesses as `LV name`), then both are analysed.
mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use common::*;
use mapvis::filter::{stats, MemKind};
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::record::Event;

fn per_var(a: &mapvis::filter::Analysis, kind: MemKind) -> BTreeMap<String, (u64, u64, u64)> {
    let df = stats::per_variable(a, kind).unwrap();
    let n = df.column("variable").unwrap().str().unwrap().clone();
    let acc = df.column("accesses").unwrap().u64().unwrap().clone();
    let lb = df.column("load_bytes").unwrap().u64().unwrap().clone();
    let sb = df.column("store_bytes").unwrap().u64().unwrap().clone();
    (0..df.height())
        .map(|i| {
            (
                n.get(i).unwrap().to_string(),
                (acc.get(i).unwrap(), lb.get(i).unwrap(), sb.get(i).unwrap()),
            )
        })
        .collect()
}

#[test]
fn a_gleipnir_text_trace_gives_the_same_statistics_as_the_binary_trace() {
    let (dir, exe, _o, evs, _end) = trace("tests/c/an_five.c", &[], &[]);
    let src = vec![root().join("tests/c")];
    let mut namer = ProgramNamer::new(Some(&exe), &src);
    let bin = mapvis::filter::analyse(&dir.path().join("t.mvt"), &mut namer).unwrap();

    // Allocation sites as Gleipnir writes them, from the binary analysis.
    let site_of = |addr: u64| -> String {
        let b = bin.allocations.iter().find(|b| b.addr == addr).unwrap();
        let site = &bin.vars[b.var.index()].site; // "an_five.c:9"
        let (file, line) = site.rsplit_once(':').unwrap();
        format!("{}_{}", file.replace('.', "_"), line)
    };
    let mut text = String::from("X START 0:1 at 0\nX THREAD_CREATE 0:1\n");
    let mut live: Vec<(u64, u64, String)> = Vec::new();
    let mut in_region = false;
    let stack_names: BTreeMap<u64, String> = {
        // Stack names of the binary analysis, by address.
        let all = mapvis::filter::select(&bin, mapvis::filter::MemKind::All).unwrap();
        let rows = mapvis::filter::rows(&bin, &all).unwrap();
        let var = rows.column("var").unwrap().u32().unwrap().clone();
        let addr = rows.column("addr").unwrap().u64().unwrap().clone();
        (0..rows.height())
            .filter_map(|i| {
                let v = &bin.vars[var.get(i).unwrap() as usize];
                (v.scope == mapvis::trace::naming::Scope::Stack && !v.name.starts_with('<'))
                    .then(|| (addr.get(i).unwrap(), v.name.clone()))
            })
            .collect()
    };
    for e in &evs {
        match e {
            Event::Alloc(a) => {
                let site = site_of(a.addr);
                writeln!(
                    text,
                    "X {} MALLOC {:09x} {} {site} 0",
                    a.tid, a.addr, a.size
                )
                .unwrap();
                live.push((a.addr, a.size, site));
            }
            Event::Free(f) => {
                writeln!(text, "X {} FREE {:09x} x_c_1 0", f.tid, f.addr).unwrap();
                live.retain(|b| b.0 != f.addr);
            }
            Event::RegionStart(_) => in_region = true,
            Event::RegionStop(_) => in_region = false,
            Event::Access(a) if in_region => {
                let op = a.op.code() as char;
                match live.iter().find(|b| a.addr >= b.0 && a.addr < b.0 + b.1) {
                    Some((base, _, site)) => writeln!(
                        text,
                        "{op} {:09x} {} {} H H-0 {site}.{} ",
                        a.addr,
                        a.size,
                        a.tid,
                        a.addr - base
                    )
                    .unwrap(),
                    None => match stack_names.get(&a.addr) {
                        Some(n) => {
                            writeln!(text, "{op} {:09x} {} {} S LV {n} ", a.addr, a.size, a.tid)
                                .unwrap()
                        }
                        None => {
                            writeln!(text, "{op} {:09x} {} {} S ", a.addr, a.size, a.tid).unwrap()
                        }
                    },
                }
            }
            _ => {}
        }
    }
    let txt = dir.path().join("gleipnir.txt");
    std::fs::write(&txt, &text).unwrap();
    let mut namer = ProgramNamer::new(Some(&exe), &src);
    let gl = mapvis::filter::analyse_gleipnir(&txt, &mut namer).unwrap();

    let want = per_var(&bin, MemKind::Heap);
    assert_eq!(want.len(), 5, "{want:?}");
    assert_eq!(
        per_var(&gl, MemKind::Heap),
        want,
        "heap statistics match, names included"
    );
    // The stack variables named in the text trace match too (the binary
    // analysis drops GL_STOP's own argument stores, which this rewrite
    // also leaves out by taking only accesses inside the region).
    let bs = per_var(&bin, MemKind::Stack);
    let gs = per_var(&gl, MemKind::Stack);
    for (name, v) in &bs {
        if !name.starts_with('<') {
            assert_eq!(gs.get(name), Some(v), "stack variable {name}");
        }
    }
}
