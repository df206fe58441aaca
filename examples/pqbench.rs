use polars::prelude::*;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trace = std::path::Path::new(&args[1]);
    let exe = std::path::Path::new(&args[2]);
    let mut namer = mapvis::trace::naming::ProgramNamer::new(Some(exe), &[]);
    let a = mapvis::filter::analyse(trace, &mut namer).expect("analyse");
    let all = mapvis::filter::select(&a, mapvis::filter::MemKind::All).unwrap();
    let df = mapvis::filter::rows(&a, &all)
        .unwrap()
        .drop("time")
        .unwrap()
        .drop("occurrence")
        .unwrap();
    let n = df.height();
    let schema = df.schema().clone();
    for (name, c, stats) in [
        ("lz4 stats", ParquetCompression::Lz4Raw, true),
        ("lz4 nostats", ParquetCompression::Lz4Raw, false),
        ("none nostats", ParquetCompression::Uncompressed, false),
        ("snappy nostats", ParquetCompression::Snappy, false),
    ] {
        let p = "/tmp/pqb.parquet";
        let t = Instant::now();
        let f = std::fs::File::create(p).unwrap();
        let mut w = ParquetWriter::new(f)
            .with_compression(c)
            .with_row_group_size(Some(1 << 20))
            .with_statistics(if stats {
                StatisticsOptions::default()
            } else {
                StatisticsOptions::empty()
            })
            .batched(&schema)
            .unwrap();
        let mut off = 0;
        while off < n {
            w.write_batch(&df.slice(off as i64, 1 << 20)).unwrap();
            off += 1 << 20;
        }
        w.finish().unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!(
            "{name}: {:.1} M rows/s, {:.2} B/row",
            n as f64 / dt / 1e6,
            std::fs::metadata(p).unwrap().len() as f64 / n as f64
        );
    }
}
