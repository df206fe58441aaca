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
    // With -O2 -flto, main's A, B and C are described in the link-time
    // unit through DW_AT_abstract_origin into the compile-time unit.
    corpus(&lib, ALL4);
}

// FAILS in every build: the map's bucket array and its 400 nodes are
// expected as `m`; mapvis names the bucket array `m.table_.buckets_`
// (allocated at implementation.hpp:3199) and the nodes `a`
// (node_constructor's local in construct_node_pair,
// implementation.hpp:2065; -O0) or `m.table_.buckets_[i]` (-O2, -O3,
// -O2 -flto): Boost's members stay in the path, where the standard
// library's are left out. seq and found are named in
// every build; every array's bytes equal Lackey's.
#[test]
#[ignore = "FAILS: Boost's unordered_map named through the library's members (see the comment)"]
fn boost_unordered() {
    let lib = deb("boost_unordered.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn xtensor() {
    let lib = deb("xtensor.cpp", &[]);
    corpus(&lib, ALL4);
}

// FAILS in every build: the DOM's two arrays (the std::vector buffers of
// doc["rows"] and doc["points"]) are expected as `doc`, the variable that
// holds the tree; mapvis names them `ref_stack.back()->m_value.array` (the
// SAX builder's stack, a helper's local, -O0) or
// `doc.m_value.object[i][j][k]` (-O2, -O3, -O2 -flto), paths through
// nlohmann's members. text and vals are
// named in every build.
#[test]
#[ignore = "FAILS: nlohmann's DOM arrays named through the library's members (see the comment)"]
fn nlohmann_json() {
    let lib = deb("nlohmann_json.cpp", &[]);
    corpus(&lib, ALL4);
}

#[test]
fn toml11() {
    let lib = deb("toml11.cpp", &[]);
    // -O2 once counted 8 load bytes of text that Lackey did not: the tool
    // wrote an access under another instruction's code after a pending
    // block's stale list entry wrote into freed memory that the site
    // table had taken. It is kept as that bug's test.
    corpus(&lib, ALL4);
}

// FAILS in every build: S's three arrays (values, inner indices, outer
// index) are expected as `S`; mapvis names the outer index
// `m_outerIndex` (SparseMatrix.h:634) in every build and, from -O2 on,
// the values and inner indices `m_ptr` (Eigen's scoped_array member,
// Memory.h:696). M is named `m_data` (DenseStorage.h:486) with -O2 and
// -O2 -flto. Every array's bytes equal Lackey's.
#[test]
#[ignore = "FAILS: Eigen's sparse storage named by its members (see the comment)"]
fn eigen_sparse() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..deb("eigen_sparse.cpp", &[])
    };
    corpus(&lib, ALL4);
}

#[test]
fn cli11() {
    let lib = deb("cli11.cpp", &[]);
    corpus(&lib, ALL4);
}
