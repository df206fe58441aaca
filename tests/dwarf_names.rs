//! Names of stack and global accesses from DWARF, checked against ground
//! truth printed by the program itself (tests/c/dw_stencil.c).
//!
//! With `-no-pie`, file addresses equal runtime addresses, so the code and
//! data addresses the program prints can be fed straight to the lookups. The
//! program prints its frame address (`rbp`; the CFA is `rbp + 16` at `-O0`),
//! the stack pointer captured by inline asm, a label address in the body, and
//! the addresses of specific elements, keyed by the name they must get.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use mapvis::trace::naming::{DebugVars, DwarfError, FrameSlot, StackAccess, VarLocation};

fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// Compiles `src` with `args` into `dir` and returns the binary's path.
fn compile(dir: &Path, src: &str, out: &str, args: &[&str]) -> PathBuf {
    let bin = dir.join(out);
    let status = Command::new("cc")
        .args(args)
        .arg("-o")
        .arg(&bin)
        .arg(source(src))
        .status()
        .expect("cc must be installed to run the DWARF tests");
    assert!(status.success(), "cc {args:?} {src} failed");
    bin
}

/// Runs the binary and parses its "key hex" lines.
fn run(bin: &Path) -> HashMap<String, u64> {
    let out = Command::new(bin).output().expect("run test program");
    let text = String::from_utf8(out.stdout).expect("utf-8 output");
    text.lines()
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').expect("key value line");
            (
                k.to_owned(),
                u64::from_str_radix(v, 16).expect("hex address"),
            )
        })
        .collect()
}

/// The element names the stencil function prints addresses for.
const STACK_NAMES: &[&str] = &[
    "u[3][4]",
    "u[11][11]",
    "h.nbins",
    "h.counts",
    "h2.counts",
    "view.id",
    "view.data[3].z",
    "grid[1][2].y",
    "rows[2][5]",
    "p",
    "c",
    "vcount",
    "un.i",
    "n",
    "w",
];

const GLOBAL_NAMES: &[&str] = &[
    "garr[10]",
    "garr[63]",
    "gview.data[2].y",
    "gscale",
    "gconst[2]",
    "calls",
];

/// Checks every name of the -O0 stencil binary; `bias` is runtime minus
/// file address for code and globals (0 without PIE).
fn check_o0(bin: &Path, bias_known: bool) {
    let dv = DebugVars::load(bin).expect("load debug info");
    let m = run(bin);
    let stencil = dv
        .functions()
        .iter()
        .find(|f| f.name == "stencil")
        .expect("stencil function");
    let bias = m["stencil"] - stencil.low_pc;
    if bias_known {
        assert_eq!(bias, 0, "-no-pie binary must not be relocated");
    }
    let ip = m["ip"] - bias;
    let sp = m["sp"];
    let cfa = m["fp"] + 16;

    assert_eq!(dv.function_at(ip).map(|f| f.name.as_str()), Some("stencil"));
    assert_eq!(
        dv.function_at(m["main"] - bias).map(|f| f.name.as_str()),
        Some("main")
    );
    assert_eq!(dv.cfa(ip, sp), Some(cfa), "CFA from rsp in the body");
    assert_eq!(dv.cfa_with_fp(ip, sp, m["fp"]), Some(cfa));

    for name in STACK_NAMES {
        let (var, off) = dv
            .local_at(ip, cfa, m[*name])
            .unwrap_or_else(|| panic!("no local covers {name}"));
        assert_eq!(dv.element_name(var, off), *name);
        assert_eq!(var.function.as_deref(), Some("stencil"));
        assert!(!var.is_client_request());
    }
    let (n, _) = dv.local_at(ip, cfa, m["n"]).unwrap();
    assert!(n.is_parameter);
    let (u, _) = dv.local_at(ip, cfa, m["u[3][4]"]).unwrap();
    assert!(!u.is_parameter);
    assert_eq!(u.size, 12 * 12 * 8);
    assert!(matches!(u.location, VarLocation::FrameOffset(o) if o < 0));
    assert_eq!(dv.type_name(u.type_id.unwrap()), "double[12][12]");

    // The block-local array is only visible inside its block.
    let ip_inner = m["ip_inner"] - bias;
    let (inner, off) = dv.local_at(ip_inner, cfa, m["inner[2]"]).unwrap();
    assert_eq!(dv.element_name(inner, off), "inner[2]");
    assert!(dv.locals_at(ip_inner).iter().any(|v| v.name == "inner"));
    assert!(!dv.locals_at(ip).iter().any(|v| v.name == "inner"));
    assert_eq!(dv.locals_at(ip_inner)[0].name, "inner", "innermost first");
    // Outer locals stay visible inside the block.
    let (u2, off) = dv.local_at(ip_inner, cfa, m["u[3][4]"]).unwrap();
    assert_eq!(dv.element_name(u2, off), "u[3][4]");

    for name in GLOBAL_NAMES {
        let (var, off) = dv
            .global_at(m[*name] - bias)
            .unwrap_or_else(|| panic!("no global covers {name}"));
        assert_eq!(dv.element_name(var, off), *name);
    }
    let (calls, _) = dv.global_at(m["calls"] - bias).unwrap();
    assert_eq!(calls.function.as_deref(), Some("stencil"));
    let (garr, _) = dv.global_at(m["garr[10]"] - bias).unwrap();
    assert_eq!(garr.function, None);
    assert_eq!(garr.size, 64 * 4);
    assert!(dv
        .global_at(m["garr[63]"] - bias + 4)
        .is_none_or(|(v, _)| v.name != "garr"));

    let shape = |name: &str| {
        let v = dv
            .locals_at(ip)
            .into_iter()
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name} visible"));
        dv.array_shape(v)
    };
    assert_eq!(shape("u"), Some((vec![12, 12], 8)));
    assert_eq!(
        shape("rows"),
        Some((vec![4, 6], 8)),
        "typedef'd rows flatten"
    );
    assert_eq!(shape("grid"), Some((vec![2, 3], 24)));
    assert_eq!(shape("h"), None);
    assert_eq!(shape("p"), None);
    assert_eq!(dv.array_shape(garr), Some((vec![64], 4)));
    let (gconst, _) = dv.global_at(m["gconst[2]"] - bias).unwrap();
    assert_eq!(dv.array_shape(gconst), Some((vec![3], 4)), "through const");
}

#[test]
fn names_stack_and_globals_dwarf5() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(
        dir.path(),
        "dw_stencil.c",
        "stencil",
        &["-g", "-O0", "-no-pie"],
    );
    check_o0(&bin, true);
}

#[test]
fn names_stack_and_globals_dwarf4() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(
        dir.path(),
        "dw_stencil.c",
        "stencil4",
        &["-gdwarf-4", "-O0", "-no-pie"],
    );
    check_o0(&bin, true);
}

#[test]
fn names_in_pie_after_removing_bias() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(
        dir.path(),
        "dw_stencil.c",
        "stencil_pie",
        &["-g", "-O0", "-fPIE", "-pie"],
    );
    check_o0(&bin, false);
}

#[test]
fn frame_slots_and_prologue_cfa() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(
        dir.path(),
        "dw_stencil.c",
        "stencil",
        &["-g", "-O0", "-no-pie"],
    );
    let dv = DebugVars::load(&bin).unwrap();
    let m = run(&bin);
    let ip = m["ip"];
    let sp = m["sp"];
    let cfa = m["fp"] + 16;
    let low = dv.function_at(ip).unwrap().low_pc;

    // Prologue rows are rsp-based: at entry the CFA is just above the
    // return address, after `push %rbp` 8 bytes further.
    assert_eq!(dv.cfa(low, 0x1000), Some(0x1008));
    assert_eq!(dv.cfa(low + 1, 0x1000), Some(0x1010));

    assert_eq!(
        dv.classify_frame_slot(ip, cfa, cfa - 8),
        Some(FrameSlot::ReturnAddress)
    );
    assert_eq!(
        dv.classify_frame_slot(ip, cfa, cfa - 16),
        Some(FrameSlot::SavedRegister {
            register: 6,
            name: Some("rbp")
        })
    );
    // The push at function entry writes the slot the next row describes.
    assert_eq!(
        dv.classify_frame_slot(low, cfa, cfa - 16),
        Some(FrameSlot::SavedRegister {
            register: 6,
            name: Some("rbp")
        })
    );
    assert_eq!(dv.classify_frame_slot(ip, cfa, cfa), None);
    assert_eq!(dv.classify_frame_slot(ip, cfa, cfa + 8), None);

    // Some byte of the frame is padding no local covers: a spill slot.
    let uncovered: Vec<u64> = (sp..cfa - 16)
        .filter(|&a| dv.local_at(ip, cfa, a).is_none())
        .collect();
    assert!(!uncovered.is_empty(), "the -O0 frame has padding");
    for a in uncovered {
        assert_eq!(dv.classify_frame_slot(ip, cfa, a), Some(FrameSlot::Spill));
    }
    // The one-call form agrees with the pieces.
    match dv.stack_access(ip, sp, m["view.data[3].z"]) {
        Some(StackAccess::Local { var, offset }) => {
            assert_eq!(dv.element_name(var, offset), "view.data[3].z")
        }
        other => panic!("expected a local, got {other:?}"),
    }
    assert_eq!(
        dv.stack_access(ip, sp, cfa - 8),
        Some(StackAccess::Slot(FrameSlot::ReturnAddress))
    );
    assert_eq!(dv.stack_access(ip, sp, sp - 8), None, "red zone");
    assert_eq!(dv.stack_access(ip, sp, cfa), None, "caller frame");
    // Below the saved rbp no local is the return address or saved rbp.
    assert!(dv.local_at(ip, cfa, cfa - 8).is_none());
    assert!(dv.local_at(ip, cfa, cfa - 16).is_none());
}

#[test]
fn optimised_code_never_misnames() {
    for opt in ["-O1", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let bin = compile(
            dir.path(),
            "dw_stencil.c",
            "stencil_opt",
            &["-g", opt, "-no-pie"],
        );
        let dv = DebugVars::load(&bin).unwrap();
        let m = run(&bin);
        let ip = m["ip"];
        let cfa = m["fp"] + 16;
        assert_eq!(dv.function_at(ip).map(|f| f.name.as_str()), Some("stencil"));
        if let Some(c) = dv.cfa(ip, m["sp"]) {
            assert_eq!(c, cfa, "{opt}: a CFA, when given, is right");
        }
        assert_eq!(dv.cfa_with_fp(ip, m["sp"], m["fp"]), Some(cfa), "{opt}");
        for name in STACK_NAMES {
            if let Some((v, off)) = dv.local_at(ip, cfa, m[*name]) {
                assert_eq!(dv.element_name(v, off), *name, "{opt}");
            }
        }
        if let Some((v, off)) = dv.local_at(m["ip_inner"], cfa, m["inner[2]"]) {
            assert_eq!(dv.element_name(v, off), "inner[2]", "{opt}");
        }
        // Arrays whose address is taken keep a frame slot even when optimised.
        let (u, off) = dv.local_at(ip, cfa, m["u[3][4]"]).expect("u has a slot");
        assert_eq!(dv.element_name(u, off), "u[3][4]");
        for name in GLOBAL_NAMES {
            let (v, off) = dv.global_at(m[*name]).expect("globals keep addresses");
            assert_eq!(dv.element_name(v, off), *name, "{opt}");
        }
        // Queries anywhere in the program's code must not panic.
        for f in dv.functions() {
            for ip in f.low_pc..f.high_pc {
                let _ = dv.locals_at(ip);
                let _ = dv.cfa(ip, m["sp"]);
                let _ = dv.local_at(ip, cfa, m["u[3][4]"]);
                let _ = dv.classify_frame_slot(ip, cfa, cfa - 24);
            }
        }
    }
}

#[test]
fn client_request_locals_are_recognised() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(dir.path(), "dw_client.c", "client", &["-g", "-O0"]);
    let dv = DebugVars::load(&bin).unwrap();
    let main = dv
        .functions()
        .iter()
        .find(|f| f.name == "main")
        .expect("main");
    let locals = dv.function_locals(main);
    let zzq: Vec<_> = locals.iter().filter(|v| v.is_client_request()).collect();
    assert!(zzq.iter().any(|v| v.name == "_zzq_args"), "{locals:?}");
    assert!(zzq.iter().any(|v| v.name == "_zzq_result"));
    let args = zzq.iter().find(|v| v.name == "_zzq_args").unwrap();
    assert_eq!(dv.array_shape(args), Some((vec![6], 8)));
    let total = locals.iter().find(|v| v.name == "total").expect("total");
    assert!(!total.is_client_request());
}

#[test]
fn binary_without_debug_info_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let bin = compile(dir.path(), "dw_stencil.c", "nodebug", &["-O0"]);
    let err = DebugVars::load(&bin).unwrap_err();
    assert!(matches!(err, DwarfError::NoDebugInfo { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} has no debug information: compile it with -g.",
            bin.display()
        )
    );

    let src = source("dw_stencil.c");
    let err = DebugVars::load(&src).unwrap_err();
    assert!(matches!(err, DwarfError::NotObject { .. }), "{err:?}");
    assert!(err.to_string().contains("dw_stencil.c"));

    let missing = dir.path().join("no-such-program");
    let err = DebugVars::load(&missing).unwrap_err();
    assert!(matches!(err, DwarfError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-program"));
}

/// Over-aligned locals (tests/c/dw_aligned.c): the frame is realigned, so
/// its locals are located from rsp or rbp, which a [`Frame`] carries, and
/// not from the CFA. Checked with gcc and, when installed, clang, at -O0
/// and -O2.
#[test]
fn over_aligned_locals_are_located_from_rsp_or_rbp() {
    let mut stored_cfa = 0;
    for cc in ["cc", "clang"] {
        if Command::new(cc).arg("--version").output().is_err() {
            eprintln!("{cc} is not installed: its realigned frames are not checked");
            continue;
        }
        for opt in ["-O0", "-O2"] {
            let what = format!("{cc} {opt}");
            let dir = tempfile::tempdir().unwrap();
            let bin = dir.path().join("aligned");
            let status = Command::new(cc)
                .args(["-g", opt, "-no-pie", "-o"])
                .arg(&bin)
                .arg(source("dw_aligned.c"))
                .status()
                .expect("run the compiler");
            assert!(status.success(), "{what}: compiling dw_aligned.c failed");
            let dv = DebugVars::load(&bin).unwrap();
            let m = run(&bin);

            // tiles: everything located from rsp (DW_OP_breg7).
            let (ip, sp, fp) = (m["tiles.ip"], m["tiles.sp"], m["tiles.fp"]);
            let frame = dv.frame(ip, sp, fp).expect("tiles' frame");
            assert_eq!(frame.cfa, Some(fp + 16), "{what}: the CFA from rbp");
            assert_eq!(frame.top, fp + 16, "{what}");
            for name in ["tile[5]", "tile[63]", "plain[3]", "s"] {
                let (v, off) = dv
                    .local_in(&frame, m[name])
                    .unwrap_or_else(|| panic!("{what}: no local covers {name}"));
                assert_eq!(dv.element_name(v, off), name, "{what}");
                assert!(
                    matches!(v.location, VarLocation::Register { register: 7, .. }),
                    "{what}: {name} is located from rsp: {:?}",
                    v.location
                );
                assert_eq!(dv.local_base(&frame, v), Some(m[name] - off), "{what}");
                // Not from the CFA, which the realignment put at no fixed
                // distance.
                assert!(dv.local_at(ip, fp + 16, m[name]).is_none(), "{what}");
            }
            // The saved rbp is no local, whatever rsp is.
            assert!(dv.local_in(&frame, fp).is_none(), "{what}");
            assert!(matches!(
                dv.frame_slot_in(&frame, fp),
                Some(FrameSlot::SavedRegister { register: 6, .. })
            ));
            // From sp alone the CFA of a realigned frame is unknown, never
            // a wrong value.
            assert!(
                dv.cfa(ip, sp).is_none_or(|c| c == fp + 16),
                "{what}: {:?}",
                dv.cfa(ip, sp)
            );

            // stacked: gcc keeps the CFA in memory and locates w from rbp
            // (DW_OP_breg6); clang locates it from rsp.
            let (ip, sp, fp) = (m["stacked.ip"], m["stacked.sp"], m["stacked.fp"]);
            let frame = dv.frame(ip, sp, fp).expect("stacked's frame");
            let (w, off) = dv
                .local_in(&frame, m["w[6]"])
                .unwrap_or_else(|| panic!("{what}: no local covers w[6]"));
            assert_eq!(dv.element_name(w, off), "w[6]", "{what}");
            match w.location {
                VarLocation::Register { register: 6, .. } => {
                    assert_eq!(frame.cfa, None, "{what}: the CFA is in memory");
                    assert_eq!(frame.top, fp + 16, "{what}: the frame record's end");
                    assert_eq!(dv.cfa_rule(ip), Some((true, 16)), "{what}");
                    stored_cfa += 1;
                }
                VarLocation::Register { register: 7, .. } => {
                    assert_eq!(frame.cfa, Some(fp + 16), "{what}");
                }
                other => panic!("{what}: w located from {other:?}"),
            }
        }
    }
    // gcc (cc) realigns stacked with DRAP at -O0 and -O2.
    let gcc = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Free Software Foundation"));
    if gcc {
        assert_eq!(stored_cfa, 2, "gcc keeps stacked's CFA in memory");
    }
}
