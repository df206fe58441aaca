//! The access figures: every drawn access of every variable
//! (`complete.rs`), and one variable as a 2D or 3D array or a table of
//! fields (`array.rs`), with its exact scatter (`array_exact.rs`), its
//! grouped scatter above the point budget (`array_groups.rs`), its
//! heatmaps and replays (`array_maps.rs`) and the accesses they are drawn
//! from (`array_points.rs`).

pub(in crate::vis) mod array;
pub(in crate::vis) mod array_exact;
pub(in crate::vis) mod array_groups;
pub(in crate::vis) mod array_maps;
pub(in crate::vis) mod array_points;
pub(in crate::vis) mod complete;

pub use array::{
    array_2d, array_3d, array_fields, array_pattern_of, Array2d, Array3d, ArrayFields, ArrayLayout,
};
pub use complete::{complete_memory_access_pattern, complete_pattern_of};
