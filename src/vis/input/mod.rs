//! What a figure is drawn from: the analysis' tables read into plain
//! slices (`tables.rs`), the access stream aggregated into exact (space,
//! time) bins when a scatter would pass its point budget (`aggregate.rs`),
//! and the locality stage's colour class per access (`classes.rs`).

pub(in crate::vis) mod aggregate;
pub(in crate::vis) mod classes;
pub(in crate::vis) mod tables;
