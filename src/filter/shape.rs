//! The arrays the 2D and 3D figures draw: which names they accept, which
//! variable a name the user typed means, and the shape to draw it with
//! when the user gives none (from the variable's type or allocation
//! statement, or its fields for an array of structures).

use super::access::VarId;
use super::analysis::Analysis;
use super::batches::{AccessBatch, AccessBatches, BatchFn};
use super::fields::{struct_fields, StructField};
use super::model::Variable;
use super::pick::is_array;

/// How to lay an array out for a figure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DrawShape {
    /// Rows of `cols` elements of `elem` bytes (with `depth` > 1, planes
    /// of `cols x depth`).
    Grid {
        /// Elements per row.
        cols: u64,
        /// Elements per column of a plane; 1 in 2D.
        depth: u64,
        /// Bytes per element.
        elem: u64,
    },
    /// An array of `elem`-byte structures, one row per element and one
    /// column per field (see [`struct_fields`]).
    Fields {
        /// Bytes per element.
        elem: u64,
        /// The fields, by offset.
        fields: Vec<StructField>,
    },
}

/// A name or shape the figure commands cannot use, in words for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(pub String);

/// The names the 2D and 3D commands accept, sorted: heap blocks and stack
/// or global variables of array type.
pub fn array_names(vars: &[Variable]) -> Vec<&str> {
    let mut arrays: Vec<&str> = vars
        .iter()
        .filter(|v| is_array(v))
        .map(|v| v.name.as_str())
        .collect();
    arrays.sort();
    arrays
}

/// The variable a name means for the 2D and 3D commands: an array of that
/// name first (`v` is the heap array, not the stack pointer `v` that holds
/// its address), then any other variable, which draws if given a shape.
///
/// # Errors
/// The name groups several blocks (the instances are listed), or there is
/// no such variable (the arrays are listed).
pub fn resolve_array(a: &Analysis, name: &str) -> Result<VarId, ShapeError> {
    let arrays = array_names(&a.vars);
    let user = |v: &&Variable| !v.internal;
    if arrays.contains(&name) {
        if let Some(i) = a.vars.iter().position(|v| v.name == name && !v.internal) {
            return Ok(VarId(i as u32));
        }
    }
    // The instances of the name (`C#1`, `C#2`), and the variables of that
    // name in several functions (`main::C`, `kernel_gemm::C`): the only
    // array among them is the one a bare name means.
    let unqualified = |v: &Variable| v.base_name.rsplit("::").next() == Some(name);
    let candidates: Vec<(usize, &str)> = a
        .vars
        .iter()
        .enumerate()
        .filter(|(_, v)| user(v))
        .filter(|(_, v)| {
            (v.base_name == name || unqualified(v)) && arrays.contains(&v.name.as_str())
        })
        .map(|(i, v)| (i, v.name.as_str()))
        .collect();
    if let [(only, _)] = candidates[..] {
        return Ok(VarId(only as u32));
    }
    let instances: Vec<&str> = candidates.iter().map(|c| c.1).collect();
    if !instances.is_empty() {
        return Err(ShapeError(format!(
            "\"{name}\" names {} blocks: choose one of {}.",
            instances.len(),
            instances.join(", ")
        )));
    }
    if let Some(i) = a.vars.iter().position(|v| v.name == name && !v.internal) {
        return Ok(VarId(i as u32));
    }
    Err(ShapeError(format!(
        "there is no array named \"{name}\" in the analysis; the arrays are: {}.",
        if arrays.is_empty() {
            "(none)".to_string()
        } else {
            arrays.join(", ")
        }
    )))
}

/// The shape of variable `var` for an `ndim`-dimensional figure when the
/// user gives none: an array of structures in 2D is drawn by fields; a
/// one-dimensional array of known length in 2D as one row; other arrays
/// take their inner dimensions and element size from their type or
/// allocation statement.
///
/// # Errors
/// Nothing gives the shape; the message says what is known and how to
/// give it.
pub fn infer_shape(a: &Analysis, var: VarId, ndim: usize) -> Result<DrawShape, ShapeError> {
    let v = &a.vars[var.index()];
    if ndim == 2 {
        let fields = struct_fields(a, var).map_err(|e| {
            ShapeError(format!("the fields of \"{}\" cannot be read: {e}.", v.name))
        })?;
        if !fields.is_empty() {
            return Ok(DrawShape::Fields {
                elem: v.elem_size as u64,
                fields,
            });
        }
    }
    // A one-dimensional array whose length is known (its declaration, or a
    // heap block's constant size expression) is drawn as one row. A heap
    // block of unknown length may be a matrix: its shape is asked for.
    let elem = v.elem_size as u64;
    if let (2, [cols]) = (ndim, &v.dims[..]) {
        let cols = *cols;
        if cols > 0 && elem > 0 {
            return Ok(DrawShape::Grid {
                cols,
                depth: 1,
                elem,
            });
        }
    }
    if v.elem_size == 0 || v.dims.len() < ndim {
        let usage = if ndim == 2 {
            "2d_memory_access_pattern NAME COLS TYPEBYTES ?save?"
        } else {
            "3d_memory_access_pattern NAME COLS DEPTH TYPEBYTES ?save?"
        };
        let known = if v.dims.is_empty() {
            "none".to_string()
        } else {
            let d: Vec<String> = v.dims.iter().map(|d| d.to_string()).collect();
            d.join("x")
        };
        return Err(ShapeError(format!(
            "the shape of \"{}\" could not be inferred (known dimensions: {known}): give it, as in {usage}.",
            v.name
        )));
    }
    let d = &v.dims[v.dims.len() - (ndim - 1)..];
    Ok(DrawShape::Grid {
        cols: d[0],
        depth: if ndim == 3 { d[1] } else { 1 },
        elem: v.elem_size as u64,
    })
}

/// The heap blocks one name stands for when it names several (the 200
/// nodes `n` of a list, the buffers of a container that grew), laid side
/// by side for the array figures: block `k` in allocation order becomes
/// row `k` of one virtual array whose rows are `stride` bytes, so the
/// figures draw every block of the site at once instead of asking for one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockStack {
    /// The name the user typed, the virtual array's name (`n`).
    pub name: String,
    /// The blocks, in allocation order; the first stands for them all.
    pub members: Vec<VarId>,
    /// Bytes per row: the largest block's size.
    pub stride: u64,
}

impl BlockStack {
    /// The blocks `name` names when it names several heap blocks
    /// allocated at one site, or `None` (one block, no block, several
    /// sites: [`resolve_array`] then says what to choose).
    pub fn of(a: &Analysis, name: &str) -> Option<BlockStack> {
        let mut members: Vec<VarId> = (0..a.vars.len() as u32)
            .map(VarId)
            .filter(|&i| {
                let v = &a.vars[i.index()];
                !v.internal
                    && v.scope == crate::trace::naming::Scope::Heap
                    && v.base_name == name
                    && v.size > 0
            })
            .collect();
        let first = *members.first()?;
        let site = &a.vars[first.index()].site;
        if members.len() < 2 || members.iter().any(|&m| &a.vars[m.index()].site != site) {
            return None;
        }
        members.sort_by_key(|&m| {
            let v = &a.vars[m.index()];
            (v.alloc_time.unwrap_or(0), v.base)
        });
        let stride = members
            .iter()
            .map(|&m| a.vars[m.index()].size)
            .max()
            .unwrap_or(0);
        Some(BlockStack {
            name: name.to_string(),
            members,
            stride,
        })
    }

    /// The variable that stands for the stack: the first block.
    pub fn first(&self) -> VarId {
        self.members[0]
    }

    /// The variables with the first block grown to the whole stack (named
    /// `name`, `members x stride` bytes, no declared shape), for the
    /// figures' variable table. Cost: a copy of the variables.
    pub fn variables(
        &self,
        a: &Analysis,
    ) -> Result<polars::prelude::DataFrame, super::error::FilterError> {
        let mut vars = a.vars.clone();
        let v = &mut vars[self.first().index()];
        v.name = self.name.clone();
        v.size = self.stride * self.members.len() as u64;
        v.dims.clear();
        Ok(super::model::variable_table(&vars)?)
    }

    /// The element size to draw with: the blocks' element size, else 1.
    pub fn elem(&self, a: &Analysis) -> u64 {
        u64::from(a.vars[self.first().index()].elem_size).max(1)
    }

    /// The accesses of `inner` with each block's moved into its row of the
    /// stack (and named as the first block).
    pub fn batches<'a>(&'a self, a: &Analysis, inner: &'a dyn AccessBatches) -> Stacked<'a> {
        let base0 = a.vars[self.first().index()].base;
        let rows = self
            .members
            .iter()
            .enumerate()
            .map(|(k, &m)| {
                (
                    m.0,
                    (a.vars[m.index()].base, base0 + k as u64 * self.stride),
                )
            })
            .collect();
        Stacked {
            inner,
            first: self.first().0,
            rows,
        }
    }
}

/// Accesses with the blocks of a [`BlockStack`] moved side by side: an
/// access at offset `o` of block `k` is at `base + k * stride + o` of the
/// first block. Time, operation, occurrence and colour stay as recorded
/// (each location moves to a location of its own). Cost: one copy of each
/// batch per pass and a hash probe per access of a block.
pub struct Stacked<'a> {
    inner: &'a dyn AccessBatches,
    /// The first block's id in the `var` column (the batches' columns
    /// keep the bare `u32`).
    first: u32,
    /// Block (as the `var` column has it) -> (its base, its row's base).
    rows: std::collections::HashMap<u32, (u64, u64)>,
}

impl AccessBatches for Stacked<'_> {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn visit(&self, f: &mut BatchFn) -> Result<(), super::error::FilterError> {
        let mut moved = AccessBatch::default();
        self.inner.visit(&mut |b| {
            moved.clone_from(b);
            for k in 0..moved.len() {
                if let Some(&(from, to)) = self.rows.get(&moved.var[k]) {
                    moved.addr[k] = moved.addr[k].wrapping_sub(from).wrapping_add(to);
                    moved.var[k] = self.first;
                }
            }
            f(&moved)
        })
    }

    fn classes(&self) -> Option<&super::batches::ClassNames> {
        self.inner.classes()
    }

    fn unique_times(&self) -> bool {
        self.inner.unique_times()
    }
}

/// What the array figures ask of an analysis about a name.
impl Analysis {
    /// See [`array_names`].
    pub fn array_names(&self) -> Vec<&str> {
        array_names(&self.vars)
    }

    /// See [`resolve_array`].
    pub fn resolve_array(&self, name: &str) -> Result<VarId, ShapeError> {
        resolve_array(self, name)
    }

    /// See [`infer_shape`].
    pub fn infer_shape(&self, var: VarId, ndim: usize) -> Result<DrawShape, ShapeError> {
        infer_shape(self, var, ndim)
    }
}
