//! The C++ part of the corpus: real public C++ libraries (Debian's
//! header-only packages) driven by harnesses of ours, every array checked
//! against Valgrind's Lackey under its name. How a case is built, measured
//! and checked: `tests/corpus/harness.rs`. The C part is
//! `tests/corpus.rs`.
mod common;
#[path = "corpus/harness.rs"]
mod harness;

use harness::{corpus, deb, Lib, DEB_INC, O0_O2};

#[test]
fn eigen() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..deb("eigen.cpp", &[])
    };
    corpus(&lib, &[&["-O0"], &["-O2"], &["-O3"]]);
}

#[test]
fn glm() {
    let lib = deb("glm.cpp", &[]);
    corpus(&lib, O0_O2);
}

#[test]
fn nanoflann() {
    let lib = deb("nanoflann.cpp", &[]);
    corpus(&lib, O0_O2);
}

#[test]
fn rapidjson() {
    let lib = deb("rapidjson.cpp", &[]);
    corpus(&lib, O0_O2);
}
