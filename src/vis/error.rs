//! The error type of the figure stage.

use std::path::PathBuf;

/// Everything that can stop a figure from being written.
///
/// Every message is a full sentence that names the table, column, variable or
/// file involved and says what to do about it, because it is shown as-is to
/// the user of the shell.
#[derive(Debug, thiserror::Error)]
pub enum VisError {
    /// A table handed to the figure stage does not follow `filter::schema`.
    #[error("The {table} table does not follow the schema: {detail}. Regenerate it with the analysis stage of the same mapvis version.")]
    Schema {
        /// Which table: `access`, `variable` or `line`.
        table: &'static str,
        /// What is wrong, e.g. the missing column and its expected dtype.
        detail: String,
    },
    /// The accesses to draw could not be read back from the analysis.
    #[error(transparent)]
    Read(#[from] crate::filter::FilterError),
    /// The requested variable id is not a row of the variable table.
    #[error("Variable id {var} is not in the variable table ({rows} rows). Pick a variable listed by the analysis.")]
    UnknownVariable {
        /// The id asked for.
        var: crate::filter::VarId,
        /// Rows in the variable table.
        rows: usize,
    },
    /// A figure option or array shape is unusable.
    #[error("{0}")]
    BadOption(String),
    /// There is nothing to draw.
    #[error("{0}")]
    Empty(String),
    /// Writing a figure, the plotly.js copy or a CSV file failed.
    #[error("{}", crate::workdir::describe_io("write", .path, .source))]
    Io {
        /// The file being written.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Ctrl-C was pressed while the figure was being drawn.
    #[error(
        "the figure was not drawn because Ctrl-C was pressed; the previous page, if any, is kept."
    )]
    Interrupted,
    /// Serializing the figure to JSON failed (should not happen for valid data).
    #[error("Could not serialize the figure {figure} to JSON: {source}. This is a bug in mapvis; please report it with the command that triggered it.")]
    Json {
        /// The figure being built.
        figure: String,
        /// The underlying error.
        source: serde_json::Error,
    },
}

impl VisError {
    /// Wraps an I/O error with the path it happened on.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        VisError::Io {
            path: path.into(),
            source,
        }
    }

    /// Wraps an error of the working folder's file handling.
    pub(crate) fn from_workdir(path: &std::path::Path, e: crate::workdir::WorkdirError) -> Self {
        match e {
            crate::workdir::WorkdirError::Io { source, .. } => VisError::io(path, source),
            other => VisError::io(path, std::io::Error::other(other.to_string())),
        }
    }
}
