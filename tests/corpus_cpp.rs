//! The C++ part of the corpus: real public C++ libraries (Debian's
//! header-only packages) driven by harnesses of ours, every array checked
//! against Valgrind's Lackey under its name. How a case is built, measured
//! and checked: `tests/corpus/harness.rs`. The C part is
//! `tests/corpus.rs`.
mod common;
#[path = "corpus/harness.rs"]
mod harness;

use harness::{corpus, deb, Lib, DEB_INC, FOUR};

#[test]
fn eigen() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..deb("eigen.cpp", &[])
    };
    corpus(&lib, FOUR);
}

#[test]
fn glm() {
    let lib = deb("glm.cpp", &[]);
    corpus(&lib, FOUR);
}

#[test]
fn nanoflann() {
    let lib = deb("nanoflann.cpp", &[]);
    corpus(&lib, FOUR);
}

/// Traced by a method of a class template, as built, the pins ignored.
#[test]
fn nanoflann_by_method() {
    let lib = Lib {
        function: Some(("KDTreeSingleIndexAdaptor::knnSearch", "all")),
        ..deb("rg_nanoflann.cpp", &[])
    };
    corpus(&lib, FOUR);
}

#[test]
fn rapidjson() {
    let lib = deb("rapidjson.cpp", &[]);
    corpus(&lib, FOUR);
}

#[test]
fn boost_multi_array() {
    let lib = deb("boost_multi_array.cpp", &[]);
    // With -O2 -flto, main's A, B and C are described in the link-time
    // unit through DW_AT_abstract_origin into the compile-time unit.
    corpus(&lib, FOUR);
}

/// Boost's unordered map: its bucket array and its 400 nodes are `m`.
/// Boost's members (`table_`, private in a system header) are left out of
/// the path, and the nodes the buckets hold are the map's storage too. At
/// -O0 a node's address passes through a dozen of the library's frames
/// before the buckets hold it.
#[test]
fn boost_unordered() {
    let lib = deb("boost_unordered.cpp", &[]);
    corpus(&lib, FOUR);
}

#[test]
fn xtensor() {
    let lib = deb("xtensor.cpp", &[]);
    corpus(&lib, FOUR);
}

/// nlohmann's JSON: the DOM's two arrays (the std::vector buffers of
/// doc["rows"] and doc["points"]) are `doc`, the variable that holds the
/// tree: `m_value` is private to a type of a system header, and what the
/// document's maps and arrays hold is its storage. At -O0 the arrays are
/// built inside the parser's SAX builder, and the statement reader walks
/// out of the library's headers to `json doc = json::parse(text);`.
#[test]
fn nlohmann_json() {
    let lib = deb("nlohmann_json.cpp", &[]);
    corpus(&lib, FOUR);
}

#[test]
fn toml11() {
    let lib = deb("toml11.cpp", &[]);
    // -O2 once counted 8 load bytes of text that Lackey did not: the tool
    // wrote an access under another instruction's code after a pending
    // block's stale list entry wrote into freed memory that the site
    // table had taken. It is kept as that bug's test.
    corpus(&lib, FOUR);
}

/// Eigen's sparse matrix: S's three arrays (values, inner indices, outer
/// index) are `S` (`m_outerIndex` and `m_data.m_values` are protected
/// members of Eigen's types), and the dense matrix factorised in place
/// through an Eigen::Ref is `M`.
#[test]
fn eigen_sparse() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..deb("eigen_sparse.cpp", &[])
    };
    corpus(&lib, FOUR);
}

#[test]
fn cli11() {
    let lib = deb("cli11.cpp", &[]);
    corpus(&lib, FOUR);
}
