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

/// The builds of the newer C++ cases: as a user builds, with and without
/// link-time optimisation.
const ALL4: &[&[&str]] = &[&["-O0"], &["-O2"], &["-O3"], &["-O2", "-flto"]];

#[test]
fn boost_multi_array() {
    let lib = deb("boost_multi_array.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn boost_unordered() {
    let lib = deb("boost_unordered.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn xtensor() {
    let lib = deb("xtensor.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn nlohmann_json() {
    let lib = deb("nlohmann_json.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn toml11() {
    let lib = deb("toml11.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn eigen_sparse() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..deb("eigen_sparse.cpp", &[])
    };
    corpus(&lib, ALL4);
}
