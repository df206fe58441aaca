//! The analysis stage: trace events to named accesses, lookup table, access
//! list, statistics and order data, as polars tables.

pub mod schema;
