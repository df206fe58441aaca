//! One Parquet file of the dataset, and how the dataset is cut into files
//! and row groups.
//!
//! The access list and its by-variable copy are written as files of this
//! kind: every column required, PLAIN pages compressed with LZ4, one row
//! group per write; min/max statistics per column chunk where a reader can
//! skip row groups by them (the by-variable copy, the location tables),
//! none in the time-ordered access list, where every row group spans the
//! whole range of every column.
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

/// One file of the dataset while it is written: PLAIN pages compressed
/// with LZ4, one row group per [`DatasetFile::write`], with min/max
/// statistics per column chunk.
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
    schema: ArrowSchema,
    columns: Vec<polars_parquet::write::ColumnWriteOptions>,
    options: polars_parquet::write::WriteOptions,
}

impl DatasetFile {
    /// Creates the file at `path` for frames of `schema` (every column
    /// required: no nulls), every column PLAIN, with min/max statistics.
    pub(crate) fn create(path: PathBuf, schema: &Schema) -> Result<DatasetFile, FilterError> {
        let plain = vec![polars_parquet::write::Encoding::Plain; schema.len()];
        DatasetFile::create_with(path, schema, &plain)
    }

    /// [`DatasetFile::create`] without statistics: for the time-ordered
    /// access list, whose row groups each hold a million accesses of a
    /// loop nest, so that every column's min and max span its whole range
    /// and skip nothing. Computing them cost about 3% of the analysis'
    /// CPU time (a pass over every value of every column).
    pub(crate) fn create_bare(path: PathBuf, schema: &Schema) -> Result<DatasetFile, FilterError> {
        let plain = vec![polars_parquet::write::Encoding::Plain; schema.len()];
        DatasetFile::open(path, schema, &plain, false)
    }

    /// [`DatasetFile::create`] with an encoding per column (`Plain`, or
    /// `DeltaBinaryPacked` for integer columns that mostly step by small
    /// amounts, such as a variable's access times and addresses).
    pub(crate) fn create_with(
        path: PathBuf,
        schema: &Schema,
        encodings: &[polars_parquet::write::Encoding],
    ) -> Result<DatasetFile, FilterError> {
        DatasetFile::open(path, schema, encodings, true)
    }

    /// Creates the file with an encoding per column, and min/max
    /// statistics per column chunk when `statistics` holds.
    fn open(
        path: PathBuf,
        schema: &Schema,
        encodings: &[polars_parquet::write::Encoding],
        statistics: bool,
    ) -> Result<DatasetFile, FilterError> {
        use polars_parquet::write as pw;
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
            statistics: if statistics {
                pw::StatisticsOptions::default()
            } else {
                pw::StatisticsOptions::empty()
            },
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
        Ok(DatasetFile {
            path,
            writer,
            schema,
            columns,
            options,
        })
    }

    /// Encodes and writes `df` (the stored columns) as one row group.
    pub(crate) fn write(&mut self, df: &DataFrame) -> Result<(), FilterError> {
        let fail = write_failed(&self.path);
        let arrays = df
            .get_columns()
            .iter()
            .map(|c| {
                c.as_materialized_series()
                    .rechunk()
                    .to_arrow(0, CompatLevel::newest())
            })
            .collect::<Vec<_>>();
        let batch = polars_arrow::record_batch::RecordBatchT::new(
            df.height(),
            std::sync::Arc::new(self.schema.clone()),
            arrays,
        );
        let groups = polars_parquet::write::RowGroupIterator::try_new(
            std::iter::once(Ok(batch)),
            &self.schema,
            self.options,
            self.columns.clone(),
        )
        .map_err(&fail)?;
        for g in groups {
            self.writer.write(g.map_err(&fail)?).map_err(&fail)?;
        }
        Ok(())
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
