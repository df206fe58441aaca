//! Builds the Valgrind tool and links the system's Tcl 8.6 library.
fn main() {
    println!("cargo:rustc-link-lib=tcl8.6");
}
