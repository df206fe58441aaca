//! One Parquet file of the dataset, and how the dataset is cut into files
//! and row groups.
//!
//! The access list and its by-variable copy are written as files of this
//! kind: every column required, PLAIN pages compressed with LZ4, one row
//! group per write; min/max statistics per column chunk where a reader can
//! skip row groups by them (the by-variable copy; the location table's
//! addresses), none in the time-ordered access list, where every row group
//! spans the whole range of every column.
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::error::FilterError;
use super::io::write_failed;
use super::schema::access as ac;

/// Accesses per file of the dataset: a time window.
pub const WINDOW: u64 = 1 << 24;

/// Rows per row group, and per batch read back: 21 MB of columns.
pub const ROW_GROUP: usize = 1 << 20;

/// How the dataset is cut: accesses per file and rows per row group.
/// [`Layout::DEFAULT`] everywhere but in tests, which use small ones to
/// cross window and row-group boundaries on small traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Accesses per file (time window) at most.
    pub window: u64,
    /// Rows per row group, and per batch read back.
    pub row_group: usize,
}

impl Layout {
    /// [`WINDOW`] and [`ROW_GROUP`].
    pub const DEFAULT: Layout = Layout {
        window: WINDOW,
        row_group: ROW_GROUP,
    };
}

/// One file of the dataset while it is written: PLAIN pages (or an
/// encoding chosen per column) compressed with LZ4, one row group per
/// [`DatasetFile::write`], with min/max statistics per column chunk for
/// the columns that ask for them.
///
/// Why PLAIN and not polars' default (a dictionary tried on every integer
/// column): the dictionary costs about 45 ns per row on one core, two
/// thirds of the whole analysis, while PLAIN costs about 13 ns and, with
/// LZ4 over the loop's repeating rows, comes out as small (0.6 bytes per
/// access on a -O0 matrix multiply, 1.4 on a pointer chase with random
/// updates, against 0.6 and 1.5 with the dictionary). The dataset is
/// written with polars' own Parquet writer, the layer under
/// `ParquetWriter`, which is where the encoding can be chosen per column.
pub(crate) struct DatasetFile {
    path: PathBuf,
    writer: polars_parquet::write::FileWriter<std::io::BufWriter<std::fs::File>>,
    columns: Vec<polars_parquet::write::ColumnWriteOptions>,
    /// The Parquet type of each column.
    fields: Vec<polars_parquet::parquet::schema::types::ParquetType>,
    /// Whether each column gets min/max statistics.
    statistics: Vec<bool>,
    /// The options of every column but its statistics.
    options: polars_parquet::write::WriteOptions,
}

impl DatasetFile {
    /// Creates the file at `path` for frames of `schema` (every column
    /// required: no nulls), every column PLAIN, with min/max statistics.
    pub(crate) fn create(path: PathBuf, schema: &Schema) -> Result<DatasetFile, FilterError> {
        let plain = vec![polars_parquet::write::Encoding::Plain; schema.len()];
        DatasetFile::create_with(path, schema, &plain, &vec![true; schema.len()])
    }

    /// [`DatasetFile::create`] without statistics: for the time-ordered
    /// access list, whose row groups each hold a million accesses of a
    /// loop nest, so that every column's min and max span its whole range
    /// and skip nothing. Computing them cost about 3% of the analysis'
    /// CPU time (a pass over every value of every column).
    pub(crate) fn create_bare(path: PathBuf, schema: &Schema) -> Result<DatasetFile, FilterError> {
        let plain = vec![polars_parquet::write::Encoding::Plain; schema.len()];
        DatasetFile::create_with(path, schema, &plain, &vec![false; schema.len()])
    }

    /// [`DatasetFile::create`] with an encoding per column (`Plain`, or
    /// `DeltaBinaryPacked` for integer columns that mostly step by small
    /// amounts, such as a variable's access times and addresses), and
    /// min/max statistics for the columns whose `statistics` hold: those
    /// a reader skips row groups by, as each costs a pass over its values.
    pub(crate) fn create_with(
        path: PathBuf,
        schema: &Schema,
        encodings: &[polars_parquet::write::Encoding],
        statistics: &[bool],
    ) -> Result<DatasetFile, FilterError> {
        use polars_parquet::write as pw;
        assert_eq!(encodings.len(), schema.len(), "an encoding per column");
        assert_eq!(
            statistics.len(),
            schema.len(),
            "a statistics flag per column"
        );
        let f = std::fs::File::create(&path).map_err(|source| FilterError::Write {
            path: path.clone(),
            source,
        })?;
        let schema = schema.to_arrow(CompatLevel::newest());
        let columns: Vec<pw::ColumnWriteOptions> = encodings
            .iter()
            .map(|&encoding| pw::ColumnWriteOptions {
                field_id: None,
                metadata: Vec::new(),
                required: Some(true),
                children: pw::ChildWriteOptions::Leaf(pw::FieldWriteOptions { encoding }),
            })
            .collect();
        let options = pw::WriteOptions {
            statistics: pw::StatisticsOptions::empty(),
            version: pw::Version::V1,
            compression: pw::CompressionOptions::Lz4Raw,
            data_page_size: None,
        };
        let writer = pw::FileWriter::try_new(
            std::io::BufWriter::new(f),
            schema.clone(),
            options,
            &columns,
        )
        .map_err(write_failed(&path))?;
        let fields = pw::to_parquet_schema(&schema, &columns)
            .map_err(write_failed(&path))?
            .fields()
            .to_vec();
        Ok(DatasetFile {
            path,
            writer,
            columns,
            fields,
            statistics: statistics.to_vec(),
            options,
        })
    }

    /// Encodes and writes `df` (the stored columns) as one row group.
    ///
    /// Why the row group is put together here and not by polars'
    /// `RowGroupIterator`: that one takes one set of statistics options
    /// for every column, where this file computes them only for the
    /// columns that want them.
    pub(crate) fn write(&mut self, df: &DataFrame) -> Result<(), FilterError> {
        use polars_parquet::write as pw;
        let fail = write_failed(&self.path);
        if df.width() != self.columns.len() {
            return Err(fail(polars_err!(
                ShapeMismatch: "{} columns given for a file of {}",
                df.width(),
                self.columns.len()
            )));
        }
        let mut chunks = Vec::with_capacity(self.columns.len());
        for (k, c) in df.get_columns().iter().enumerate() {
            let array = c
                .as_materialized_series()
                .rechunk()
                .to_arrow(0, CompatLevel::newest());
            let options = pw::WriteOptions {
                statistics: match self.statistics[k] {
                    true => pw::StatisticsOptions::default(),
                    false => pw::StatisticsOptions::empty(),
                },
                ..self.options
            };
            let pages =
                pw::array_to_columns(array, self.fields[k].clone(), &self.columns[k], options)
                    .map_err(&fail)?;
            for column in pages {
                use polars_parquet::parquet::error::ParquetError;
                use pw::FallibleStreamingIterator;
                let pages = column.map(|p| p.map_err(|e| ParquetError::OutOfSpec(e.to_string())));
                let compressed =
                    pw::Compressor::new(pw::DynIter::new(pages), options.compression, vec![])
                        .map_err(|e| PolarsError::ComputeError(e.to_string().into()));
                chunks.push(Ok(pw::DynStreamingIterator::new(compressed)));
            }
        }
        self.writer
            .write(pw::DynIter::new(chunks.into_iter()))
            .map_err(&fail)
    }

    /// Writes the footer (with the Arrow schema, so readers get the
    /// columns' exact types back) and flushes the file.
    pub(crate) fn finish(mut self) -> Result<(), FilterError> {
        let fail = write_failed(&self.path);
        self.writer.end(None, &self.columns).map_err(&fail)?;
        let mut out = self.writer.into_inner();
        std::io::Write::flush(&mut out).map_err(|source| FilterError::Write {
            path: self.path.clone(),
            source,
        })
    }
}

/// Writes `df` (null-free columns) to `path` as one row group of PLAIN +
/// LZ4 pages, like the dataset's files: for other files of accesses that
/// are written once and read back soon (a figure's selection).
pub(crate) fn write_plain(df: &DataFrame, path: &Path) -> Result<(), FilterError> {
    let mut f = DatasetFile::create(path.to_path_buf(), df.schema())?;
    f.write(df)?;
    f.finish()
}

/// The schema of the dataset's files.
pub(crate) fn stored_schema() -> Schema {
    Schema::from_iter([
        Field::new(ac::OP.into(), DataType::UInt8),
        Field::new(ac::ADDR.into(), DataType::UInt64),
        Field::new(ac::SIZE.into(), DataType::UInt16),
        Field::new(ac::TID.into(), DataType::UInt16),
        Field::new(ac::VAR.into(), DataType::UInt32),
        Field::new(ac::LINE.into(), DataType::UInt32),
    ])
}
