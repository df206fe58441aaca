//! Column names and codes of the tables the analysis hands to the figures and
//! the shell. These names are the contract between stages: the figure stage
//! reads only these columns, never the analysis' internals.
//!
//! # The access list (one row per access, in time order)
//!
//! The row number is the access' time. The analysis keeps the list without
//! a time column; `select` adds `time` to the rows it keeps.
//!
//! | column       | dtype  | meaning |
//! |--------------|--------|---------|
//! | `time`       | UInt64 | (selections only) 0-based order of the access in the analysed trace |
//! | `op`         | UInt8  | ASCII code of the operation: `b'L'` load, `b'S'` store, `b'M'` modify |
//! | `addr`       | UInt64 | runtime address of the first byte accessed |
//! | `size`       | UInt16 | bytes accessed (wide SIMD accesses keep their real size) |
//! | `tid`        | UInt16 | thread number (1 is the main thread; later threads above 65535 are 65535) |
//! | `var`        | UInt32 | row of the variable table this access belongs to |
//! | `occurrence` | UInt64 | 1-based: this is the n-th access to its location (`addr` in `var`) |
//! | `line`       | UInt32 | row of the line table: source line of the instruction |
//! | `colour`     | UInt8  | (figure selections only, with `set_figure_colour hit` or `reuse`) colour class of the access, an index into the class names handed with it |
//!
//! # The lookup table (one row per unique location: an address in a
//! variable, sorted by address)
//!
//! | column        | dtype  | meaning |
//! |---------------|--------|---------|
//! | `addr`        | UInt64 | runtime address |
//! | `var`         | UInt32 | row of the variable table |
//! | `accesses`    | UInt64 | accesses to the location |
//! | `loads`, `stores`, `modifies` | UInt64 | accesses by operation |
//! | `load_bytes`  | UInt64 | bytes read (loads and modifies) |
//! | `store_bytes` | UInt64 | bytes written (stores and modifies) |
//! | `element`     | String | member path inside a structure (`h.nbins`, `view.data[3].z`); empty for other locations, whose element follows from the variable's shape |
//!
//! # The variable table (one row per named block: heap block instance, stack
//! variable or global)
//!
//! | column      | dtype  | meaning |
//! |-------------|--------|---------|
//! | `var`       | UInt32 | row index, referenced by the access table |
//! | `name`      | String | display name, unique: `arr`, `rows[i]#2`, `u`, `<main frame>` |
//! | `scope`     | String | `H` heap, `S` stack, `G` global |
//! | `base`      | UInt64 | runtime start address of the block |
//! | `size`      | UInt64 | block size in bytes |
//! | `elem_size` | UInt32 | element size in bytes when known from types, else 0 |
//! | `dims`      | String | array dimensions when known, e.g. `12x12`, else empty |
//!
//! # The line table
//!
//! | column   | dtype  | meaning |
//! |----------|--------|---------|
//! | `line`   | UInt32 | row index, referenced by the access table |
//! | `source` | String | `file.c:LINE`, or `?` when unknown |
//!
//! # The pattern table (one row per (variable, source line) pair, for
//! figure hover text)
//!
//! | column    | dtype  | meaning |
//! |-----------|--------|---------|
//! | `var`     | UInt32 | row of the variable table |
//! | `line`    | UInt32 | row of the line table |
//! | `pattern` | String | access-pattern label (`row-wise: unit stride`) |

/// Column names of the access table.
pub mod access {
    /// 0-based order of the access (in selections).
    pub const TIME: &str = "time";
    /// Operation as an ASCII code (`L`, `S`, `M`).
    pub const OP: &str = "op";
    /// Runtime address.
    pub const ADDR: &str = "addr";
    /// Bytes accessed.
    pub const SIZE: &str = "size";
    /// Thread id.
    pub const TID: &str = "tid";
    /// Index into the variable table.
    pub const VAR: &str = "var";
    /// 1-based occurrence index of the location.
    pub const OCCURRENCE: &str = "occurrence";
    /// Index into the line table.
    pub const LINE: &str = "line";
    /// Colour class (figure selections with a colour mode only).
    pub const COLOUR: &str = "colour";
}

/// Column names of the lookup table of unique locations.
pub mod location {
    /// Runtime address.
    pub const ADDR: &str = "addr";
    /// Index into the variable table.
    pub const VAR: &str = "var";
    /// Accesses to the location.
    pub const ACCESSES: &str = "accesses";
    /// Loads.
    pub const LOADS: &str = "loads";
    /// Stores.
    pub const STORES: &str = "stores";
    /// Modifies.
    pub const MODIFIES: &str = "modifies";
    /// Bytes read (loads and modifies).
    pub const LOAD_BYTES: &str = "load_bytes";
    /// Bytes written (stores and modifies).
    pub const STORE_BYTES: &str = "store_bytes";
    /// Member path inside a structure, or empty.
    pub const ELEMENT: &str = "element";
}

/// Column names of the variable table.
pub mod variable {
    /// Row index.
    pub const VAR: &str = "var";
    /// Unique display name.
    pub const NAME: &str = "name";
    /// `H`, `S` or `G`.
    pub const SCOPE: &str = "scope";
    /// Runtime start address.
    pub const BASE: &str = "base";
    /// Size in bytes.
    pub const SIZE: &str = "size";
    /// Element size in bytes, 0 when unknown.
    pub const ELEM_SIZE: &str = "elem_size";
    /// Dimensions such as `12x12`, empty when unknown.
    pub const DIMS: &str = "dims";
    /// For a heap block shown under the name of the object that owns it,
    /// its full path (`x.coefs`, `x.coefs#2`); empty otherwise. Readers
    /// take a table without it as all empty.
    pub const PATH: &str = "path";
}

/// Column names of the line table.
pub mod line {
    /// Row index.
    pub const LINE: &str = "line";
    /// `file.c:LINE` or `?`.
    pub const SOURCE: &str = "source";
}

/// Column names of the pattern table.
pub mod pattern {
    /// Row of the variable table.
    pub const VAR: &str = "var";
    /// Row of the line table.
    pub const LINE: &str = "line";
    /// The label.
    pub const LABEL: &str = "pattern";
}

/// Operation code of a load.
pub const OP_LOAD: u8 = b'L';
/// Operation code of a store.
pub const OP_STORE: u8 = b'S';
/// Operation code of a modify (one instruction loads and stores the same place).
pub const OP_MODIFY: u8 = b'M';
