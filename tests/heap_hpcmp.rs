//! HPCMP's JSON export of tests/c/hpcmp_two.c, traced for real: checked
//! against HPCMP's schema (its README) and event by event against the
//! program: two threads, one mutex, one block of 48 bytes with known reads
//! and writes per thread and sync interval.
mod common;

use std::collections::BTreeSet;

use mapvis::filter::hpcmp::export_hpcmp;
use mapvis::trace::naming::ProgramNamer;
use mapvis::trace::record::{default_sync_scope, has_pins, sync_request, SyncScope};
use mapvis::trace::record::{find_valgrind, run_trace};
use serde_json::{Map, Value};

/// Traces hpcmp_two with `args` over the whole run and exports it.
fn exported(args: &[&str]) -> (tempfile::TempDir, Vec<Value>) {
    // Bound at load time: otherwise the first thread to call
    // pthread_mutex_unlock pays for resolving its PLT entry, and which
    // thread that is depends on the scheduling.
    let (dir, exe) = common::compile("tests/c/hpcmp_two.c", &["-pthread", "-Wl,-z,now"]);
    assert!(!has_pins(&exe).unwrap());
    assert_eq!(default_sync_scope(&exe).unwrap(), SyncScope::Whole);
    let trace = dir.path().join("h.mvt");
    let req = sync_request(
        find_valgrind(None).expect("valgrind on PATH"),
        exe.clone(),
        args.iter().map(|s| s.to_string()).collect(),
        trace.clone(),
        SyncScope::Whole,
    );
    let outcome = run_trace(&req).expect("trace");
    assert_eq!(outcome.exit_code, Some(0));
    let out = dir.path().join("h.json");
    let mut namer = ProgramNamer::new(Some(&exe), &[]);
    export_hpcmp(&trace, &out, &mut namer).expect("export");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("the export is JSON");
    let events = json.as_array().expect("a list of MpEvent").clone();
    (dir, events)
}

fn keys(o: &Map<String, Value>) -> BTreeSet<&str> {
    o.keys().map(String::as_str).collect()
}

fn u64_of(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not a u64: {v}"))
}

/// BlockUsage: exactly addr, size, r, w, all u64.
fn check_block_usage(v: &Value) {
    let o = v.as_object().expect("BlockUsage is an object");
    assert_eq!(keys(o), BTreeSet::from(["addr", "size", "r", "w"]), "{v}");
    for k in ["addr", "size", "r", "w"] {
        u64_of(&o[k], k);
    }
}

/// One MpEvent, as HPCMP's README defines it.
fn check_event(e: &Value) {
    let o = e.as_object().expect("MpEvent is an object");
    for k in ["thid", "icnt", "id"] {
        u64_of(o.get(k).unwrap_or_else(|| panic!("{k} missing in {e}")), k);
    }
    let rest: BTreeSet<&str> = keys(o)
        .into_iter()
        .filter(|k| !["thid", "icnt", "id"].contains(k))
        .collect();
    if rest == BTreeSet::from(["sync"]) {
        let s = o["sync"].as_object().expect("SyncEv is an object");
        s["usage"]
            .as_array()
            .expect("usage is a list")
            .iter()
            .for_each(check_block_usage);
        let which: Vec<&str> = keys(s).into_iter().filter(|k| *k != "usage").collect();
        match which.as_slice() {
            ["fork"] | ["acq"] | ["rel"] => {
                u64_of(&s[which[0]], which[0]);
            }
            ["join"] => assert!(s["join"].is_null() || s["join"].is_u64(), "{e}"),
            other => panic!("a SyncEv with members {other:?}: {e}"),
        }
    } else if rest == BTreeSet::from(["life"]) {
        let l = o["life"].as_object().expect("LifeEv is an object");
        let which: Vec<&str> = keys(l).into_iter().collect();
        match which.as_slice() {
            ["alloc"] => {
                let a = l["alloc"].as_object().unwrap();
                assert_eq!(keys(a), BTreeSet::from(["addr", "size"]), "{e}");
                u64_of(&a["addr"], "addr");
                u64_of(&a["size"], "size");
            }
            ["free"] => check_block_usage(&l["free"]),
            ["newsync"] | ["delsync"] => {
                let s = l[which[0]].as_object().unwrap();
                assert_eq!(keys(s), BTreeSet::from(["prim", "addr"]), "{e}");
                assert!(s["prim"].is_string(), "{e}");
                u64_of(&s["addr"], "addr");
            }
            other => panic!("a LifeEv with members {other:?}: {e}"),
        }
    } else {
        panic!("an MpEvent that is neither sync nor life: {e}");
    }
}

/// An event reduced to what the hand-worked list states: its kind and
/// object, and its usage of the block at `block` as (r, w). glibc locks
/// mutexes of its own (the dynamic loader's, in pthread_create and at
/// exit): those sync events are not in the list, and the usage they carry
/// is added to the thread's next listed sync event, in `carry`.
fn describe(e: &Value, block: u64, mutex: u64, carry: &mut (u64, u64)) -> Option<String> {
    let usage_of = |list: &Value| -> (u64, u64) {
        list.as_array()
            .unwrap()
            .iter()
            .filter(|u| u["addr"] == block)
            .fold((0, 0), |(r, w), u| {
                (r + u["r"].as_u64().unwrap(), w + u["w"].as_u64().unwrap())
            })
    };
    if let Some(s) = e.get("sync") {
        let (r, w) = usage_of(&s["usage"]);
        let (r, w) = (r + carry.0, w + carry.1);
        *carry = (r, w);
        let what = if let Some(c) = s.get("fork") {
            format!("fork {c}")
        } else if let Some(j) = s.get("join") {
            if j.is_null() {
                "exit".into()
            } else {
                format!("join {j}")
            }
        } else if s.get("acq") == Some(&Value::from(mutex)) {
            "acq m".into()
        } else if s.get("rel") == Some(&Value::from(mutex)) {
            "rel m".into()
        } else {
            return None;
        };
        *carry = (0, 0);
        return Some(format!("{what} r{r} w{w}"));
    }
    let l = &e["life"];
    if let Some(a) = l.get("alloc") {
        return (a["addr"] == block).then(|| format!("alloc {}", a["size"]));
    }
    if let Some(f) = l.get("free") {
        return (f["addr"] == block).then(|| format!("free r{} w{}", f["r"], f["w"]));
    }
    for k in ["newsync", "delsync"] {
        if let Some(s) = l.get(k) {
            return (s["addr"] == mutex).then(|| format!("{k} m"));
        }
    }
    None
}

#[test]
fn hpcmp_json_matches_schema_and_the_program() {
    let (_dir, events) = exported(&[]);
    events.iter().for_each(check_event);
    // Ids are unique: 0, 1, 2, ... in order.
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["id"], i as u64, "{e}");
    }
    // The block: main's only allocation of 48 bytes; the mutex: the one
    // pthread_mutex_init.
    let block = events
        .iter()
        .filter(|e| e["thid"] == 1 && e["life"]["alloc"]["size"] == 48)
        .map(|e| u64_of(&e["life"]["alloc"]["addr"], "addr"))
        .collect::<Vec<_>>();
    assert_eq!(block.len(), 1, "{block:?}");
    let block = block[0];
    let inits: Vec<&Value> = events
        .iter()
        .filter(|e| e["life"].get("newsync").is_some())
        .collect();
    assert_eq!(inits.len(), 1, "{inits:?}");
    assert_eq!(inits[0]["life"]["newsync"]["prim"], "mutex");
    let mutex = u64_of(&inits[0]["life"]["newsync"]["addr"], "addr");

    let per_thread = |tid: u64| -> Vec<String> {
        let mut carry = (0, 0);
        events
            .iter()
            .filter(|e| e["thid"] == tid)
            .filter_map(|e| describe(e, block, mutex, &mut carry))
            .collect()
    };
    // Worked out from the program (see the comment in hpcmp_two.c).
    assert_eq!(
        per_thread(1),
        [
            "newsync m",
            "alloc 48",
            "fork 2 r0 w8",
            "acq m r0 w0",
            "rel m r0 w8",
            "join 2 r0 w0",
            "free r16 w8",
            "delsync m",
            "exit r0 w0",
        ]
    );
    assert_eq!(per_thread(2), ["acq m r0 w0", "rel m r8 w8", "exit r0 w0"]);
    // No other thread, and every event of the worker lies between main's
    // fork and join.
    assert!(events.iter().all(|e| e["thid"] == 1 || e["thid"] == 2));
    let pos = |pred: &dyn Fn(&Value) -> bool| events.iter().position(pred).unwrap();
    let fork = pos(&|e| e["sync"].get("fork").is_some());
    let join = pos(&|e| e["sync"]["join"] == 2);
    let worker: Vec<usize> = (0..events.len())
        .filter(|&i| events[i]["thid"] == 2)
        .collect();
    assert!(fork < worker[0] && *worker.last().unwrap() < join);
    // Exactly one exit per thread, and each thread's last event is it.
    for tid in [1u64, 2] {
        let mine: Vec<&Value> = events.iter().filter(|e| e["thid"] == tid).collect();
        let exits = mine
            .iter()
            .filter(|e| e["sync"].get("join").is_some_and(Value::is_null))
            .count();
        assert_eq!(exits, 1);
        assert!(mine.last().unwrap()["sync"]["join"].is_null());
    }
    // Every instruction is counted somewhere: each thread ran some (a
    // lower bound: thread start-up and exit run libc code of varying size).
    for tid in [1u64, 2] {
        let total: u64 = events
            .iter()
            .filter(|e| e["thid"] == tid)
            .map(|e| e["icnt"].as_u64().unwrap())
            .sum();
        assert!(total > 2000, "thread {tid} ran {total} instructions");
    }
}

/// The worker's Release counts the instructions since its Acquire: the
/// spin loop is 2 N + 1 of them, so N = 3000 instead of 1000 adds exactly
/// 4000, whatever the rest costs.
#[test]
fn hpcmp_instruction_counts_are_exact() {
    let release_icnt = |n: &str| -> u64 {
        let (_dir, events) = exported(&[n]);
        let rel: Vec<u64> = events
            .iter()
            .filter(|e| e["thid"] == 2 && e["sync"].get("rel").is_some())
            .map(|e| e["icnt"].as_u64().unwrap())
            .collect();
        assert_eq!(rel.len(), 1, "{rel:?}");
        rel[0]
    };
    let short = release_icnt("1000");
    let long = release_icnt("3000");
    assert_eq!(long - short, 4000);
    // The spin loop's 2 N + 1 plus whatever the compiler emitted around it.
    assert!(short > 2001, "{short}");
}

/// The whole run of a program with pins is one region: GL_START and
/// GL_STOP change nothing, so the accesses after GL_STOP are kept too.
#[test]
fn whole_scope_ignores_the_pins() {
    use mapvis::trace::record::Event;
    let (dir, exe) = common::compile("tests/c/trace_threads.c", &[]);
    assert!(has_pins(&exe).unwrap());
    assert_eq!(default_sync_scope(&exe).unwrap(), SyncScope::Pins);
    let trace = dir.path().join("w.mvt");
    let req = sync_request(
        find_valgrind(None).unwrap(),
        exe,
        vec![],
        trace.clone(),
        SyncScope::Whole,
    );
    run_trace(&req).unwrap();
    let (evs, _) = common::read_events(&trace);
    let starts = evs
        .iter()
        .filter(|e| matches!(e, Event::RegionStart(_)))
        .count();
    assert_eq!(starts, 1);
    assert!(!evs
        .iter()
        .any(|e| matches!(e, Event::RegionStop(_) | Event::Warning { .. })));
    // The free of both blocks comes after GL_STOP, and accesses follow it
    // (libc's exit path).
    let last_free = evs
        .iter()
        .rposition(|e| matches!(e, Event::Free(_)))
        .unwrap();
    assert!(evs[last_free..]
        .iter()
        .any(|e| matches!(e, Event::Access(_))));
}

/// Traces the test program `src` (built with -pthread) over its whole run
/// and exports it: its events and the export's summary.
fn traced_whole(src: &str) -> (tempfile::TempDir, Vec<Value>, String) {
    let (dir, exe) = common::compile(src, &["-pthread"]);
    let trace = dir.path().join("t.mvt");
    let req = sync_request(
        find_valgrind(None).expect("valgrind on PATH"),
        exe.clone(),
        vec![],
        trace.clone(),
        SyncScope::Whole,
    );
    assert_eq!(run_trace(&req).expect("trace").exit_code, Some(0));
    let out = dir.path().join("t.json");
    let mut namer = ProgramNamer::new(Some(&exe), &[]);
    let summary = export_hpcmp(&trace, &out, &mut namer).expect("export");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let events = json.as_array().expect("a list of MpEvent").clone();
    (dir, events, summary)
}

/// Every kind of sync object, counted exactly (tests/c/hpcmp_prims.c's
/// comment works the counts out from the source): the JSON holds the
/// program's five objects and nothing else (the loader's own lock, taken
/// inside pthread_create, is left out and said so), each object's
/// acquires, releases and threads are the program's, the two mutexes set
/// up with PTHREAD_MUTEX_INITIALIZER get a NewSync at their first use,
/// and the summary names every object by its variable. Threads keep their
/// own numbers when Valgrind reuses a slot.
#[test]
fn every_kind_of_sync_object_is_counted_exactly_and_named() {
    let (_dir, events, summary) = traced_whole("tests/c/hpcmp_prims.c");
    events.iter().for_each(check_event);
    // Four threads, numbered in order of creation: the signaller starts
    // after both workers were joined, in the slot Valgrind freed for
    // reuse, and is still a thread of its own (4), not a worker again.
    let thids: BTreeSet<u64> = events.iter().map(|e| e["thid"].as_u64().unwrap()).collect();
    assert_eq!(thids, BTreeSet::from([1, 2, 3, 4]));
    // Per object: prim (from its NewSync), acquires, releases, threads.
    let mut objs: std::collections::BTreeMap<u64, (String, u64, u64, BTreeSet<u64>, u64)> =
        Default::default();
    for e in events {
        let tid = e["thid"].as_u64().unwrap();
        if let Some(n) = e["life"].get("newsync") {
            let o = objs.entry(n["addr"].as_u64().unwrap()).or_default();
            o.0 = n["prim"].as_str().unwrap().to_string();
            o.4 += 1;
        }
        for (k, i) in [("acq", 1), ("rel", 2)] {
            if let Some(a) = e["sync"].get(k) {
                let o = objs.entry(a.as_u64().unwrap()).or_default();
                if i == 1 {
                    o.1 += 1
                } else {
                    o.2 += 1
                }
                o.3.insert(tid);
            }
        }
    }
    let mut got: Vec<(String, u64, u64, usize, u64)> = objs
        .values()
        .map(|(p, a, r, t, n)| (p.clone(), *a, *r, t.len(), *n))
        .collect();
    got.sort();
    // (prim, acquires, releases, threads, NewSync events)
    let want = vec![
        ("cond".to_string(), 1, 1, 2, 1),
        ("mutex".to_string(), 3, 3, 2, 1),
        ("mutex".to_string(), 8, 8, 2, 1),
        ("rwlock".to_string(), 8, 8, 2, 1),
        ("sem".to_string(), 2, 2, 3, 1),
    ];
    assert_eq!(got, want, "{summary}");
    for line in [
        "lock (mutex, 0x",
        "): 8 acquires, 8 releases, by 2 threads",
        "rw (rwlock, 0x",
        "done (sem, 0x",
        "): 2 acquires, 2 releases, by 3 threads",
        "cm (mutex, 0x",
        "): 3 acquires, 3 releases, by 2 threads",
        "cv (cond, 0x",
        "2 sync object(s) were first used without an init call",
        "of the system's libraries",
    ] {
        assert!(summary.contains(line), "{line:?} not in:\n{summary}");
    }
}

/// A thread joined after its Valgrind slot went to a thread created
/// later (tests/c/join_late.c): each join names the thread it waited for,
/// 2 then 3, as the program's pthread_t values say. The tool found the
/// joined thread by its slot only, and the first join named no thread
/// (0).
#[test]
fn a_join_after_slot_reuse_names_the_thread() {
    let (_dir, events, _) = traced_whole("tests/c/join_late.c");
    let thids: BTreeSet<u64> = events.iter().map(|e| e["thid"].as_u64().unwrap()).collect();
    assert_eq!(thids, BTreeSet::from([1, 2, 3]));
    let joins: Vec<u64> = events
        .iter()
        .filter(|e| e["thid"] == 1)
        .filter_map(|e| e["sync"].get("join").and_then(Value::as_u64))
        .collect();
    assert_eq!(joins, [2, 3]);
}
