//! The idioms of the naming issue that need a compiler's real output to
//! mean anything (-O3, C++ containers, Eigen), each a small program of
//! ours checked as the corpus is (`tests/corpus/harness.rs`): every
//! array's load and store bytes equal Valgrind Lackey's, under the name a
//! user would give it.
mod common;
#[path = "corpus/harness.rs"]
mod harness;

use harness::{corpus, idiom, Lib, DEB_INC};

/// A C++ class with two `std::vector` members and an `Eigen::MatrixXd`:
/// `m.w`, `m.b`, `m.K`, at -O0 and -O3.
#[test]
fn idiom_class_with_vectors_and_an_eigen_matrix() {
    let lib = Lib {
        includes: &[DEB_INC, "root/usr/include/eigen3"],
        ..idiom("idioms/model_eigen.cpp", &[])
    };
    corpus(&lib, &[&["-O0"], &["-O3"]]);
}

/// An array of `std::string` filled by assignment: `sect[i]`.
#[test]
fn idiom_array_of_strings() {
    let lib = idiom("idioms/string_array.cpp", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}

/// A `std::unordered_map`'s nodes: `m`.
#[test]
fn idiom_unordered_map() {
    let lib = idiom("idioms/unordered_map.cpp", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}

/// A 3D array built by nested helpers: `grid`, `grid[i]`, `grid[i][j]`.
#[test]
fn idiom_3d_array_from_nested_helpers() {
    let lib = idiom("idioms/nested3d.c", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}

/// An over-aligned local in a recursive function: every level's `tile`.
#[test]
fn idiom_over_aligned_local_in_recursion() {
    let lib = idiom("idioms/aligned_rec.c", &[]);
    corpus(&lib, &[&["-O0"], &["-O2"]]);
}
