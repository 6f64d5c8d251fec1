//! Row files as Parquet (`lahar run --format parquet`): a finished CSV is
//! transcoded by its schema ([`crate::schema`]) into `<name>.parquet` with the
//! same column names. Text columns are required UTF-8 strings (an empty field is
//! an empty string, a name such as `007` stays `007`); number columns are
//! optional 64-bit integers when every value of the file is one, else doubles,
//! an empty field a null. Each column's unit is in the file's key-value metadata
//! as `lahar.unit.<column>`. Rows go in groups of [`ROW_GROUP`], so a file of
//! any length is transcoded in bounded memory (the CSV is read twice: once for
//! the column types, once for the rows).

use crate::schema::Column;
use parquet::basic::{LogicalType, Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// Rows per row group.
pub const ROW_GROUP: usize = 65_536;

/// What a column holds in the Parquet file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Float,
}

fn bad(path: &Path, msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{}: {msg}", path.display()))
}

fn pq(e: ParquetError) -> io::Error {
    io::Error::other(e)
}

/// The CSV's reader and its columns: its header, each name a column of `cols`
/// (timeseries.csv leaves the fault columns out of runs without faults).
fn reader(path: &Path, cols: &[Column]) -> io::Result<(csv::Reader<File>, Vec<Column>)> {
    let mut r = csv::Reader::from_path(path).map_err(|e| bad(path, e.to_string()))?;
    let header = r.headers().map_err(|e| bad(path, e.to_string()))?;
    let mut found = Vec::with_capacity(header.len());
    for name in header {
        match cols.iter().find(|c| c.name == name) {
            Some(c) if !found.contains(c) => found.push(*c),
            _ => return Err(bad(path, format!("its header has `{name}`, not a column of the file's schema"))),
        }
    }
    Ok((r, found))
}

/// The kind of each column: text by the schema; a number column is `Int` while
/// every value parses as an integer, `Float` once one does not.
fn kinds(path: &Path, cols: &[Column]) -> io::Result<(Vec<Column>, Vec<Kind>)> {
    let (mut r, cols) = reader(path, cols)?;
    let mut kinds: Vec<Kind> = cols.iter().map(|c| if c.text { Kind::Text } else { Kind::Int }).collect();
    let mut rec = csv::StringRecord::new();
    let mut line = 1u64;
    while r.read_record(&mut rec).map_err(|e| bad(path, e.to_string()))? {
        line += 1;
        for (i, f) in rec.iter().enumerate() {
            if f.is_empty() || kinds[i] == Kind::Text {
                continue;
            }
            if kinds[i] == Kind::Int && f.parse::<i64>().is_ok() {
                continue;
            }
            if f.parse::<f64>().is_err() {
                return Err(bad(path, format!("line {line}, column `{}`: `{f}` is not a number", cols[i].name)));
            }
            kinds[i] = Kind::Float;
        }
    }
    Ok((cols, kinds))
}

/// Writes the CSV at `csv_path` (its columns among `cols`) as Parquet at `out`.
pub fn transcode(csv_path: &Path, cols: &[Column], out: &Path, created_by: &str) -> io::Result<()> {
    let (cols, kinds) = kinds(csv_path, cols)?;
    let mut fields = Vec::with_capacity(cols.len());
    for (c, k) in cols.iter().zip(&kinds) {
        let b = match k {
            Kind::Text => Type::primitive_type_builder(c.name, Physical::BYTE_ARRAY)
                .with_repetition(Repetition::REQUIRED)
                .with_logical_type(Some(LogicalType::String)),
            Kind::Int => Type::primitive_type_builder(c.name, Physical::INT64).with_repetition(Repetition::OPTIONAL),
            Kind::Float => Type::primitive_type_builder(c.name, Physical::DOUBLE).with_repetition(Repetition::OPTIONAL),
        };
        fields.push(Arc::new(b.build().map_err(pq)?));
    }
    let schema = Arc::new(Type::group_type_builder("schema").with_fields(fields).build().map_err(pq)?);
    let units = cols
        .iter()
        .filter(|c| !c.unit.is_empty())
        .map(|c| KeyValue::new(format!("lahar.unit.{}", c.name), c.unit.to_string()))
        .collect();
    let props =
        WriterProperties::builder().set_created_by(created_by.to_string()).set_key_value_metadata(Some(units)).build();
    let mut w = SerializedFileWriter::new(File::create(out)?, schema, Arc::new(props)).map_err(pq)?;
    let (mut r, _) = reader(csv_path, &cols)?;
    let mut rows: Vec<csv::StringRecord> = Vec::with_capacity(ROW_GROUP.min(4096));
    loop {
        rows.clear();
        let mut rec = csv::StringRecord::new();
        while rows.len() < ROW_GROUP && r.read_record(&mut rec).map_err(|e| bad(csv_path, e.to_string()))? {
            rows.push(std::mem::take(&mut rec));
        }
        if rows.is_empty() {
            break;
        }
        write_group(&mut w, &rows, &kinds, csv_path)?;
        if rows.len() < ROW_GROUP {
            break;
        }
    }
    w.close().map_err(pq)?;
    Ok(())
}

/// One row group of `rows`.
fn write_group(
    w: &mut SerializedFileWriter<File>,
    rows: &[csv::StringRecord],
    kinds: &[Kind],
    path: &Path,
) -> io::Result<()> {
    let mut g = w.next_row_group().map_err(pq)?;
    let mut i = 0;
    while let Some(mut col) = g.next_column().map_err(pq)? {
        let fields = rows.iter().map(|r| r.get(i).unwrap_or_default());
        match kinds[i] {
            Kind::Text => {
                let values: Vec<ByteArray> = fields.map(|f| ByteArray::from(f.as_bytes().to_vec())).collect();
                col.typed::<ByteArrayType>().write_batch(&values, None, None).map_err(pq)?;
            }
            Kind::Int => {
                let (values, defs) =
                    optional(fields, rows.len(), |f| f.parse::<i64>().map_err(|e| bad(path, e.to_string())))?;
                col.typed::<Int64Type>().write_batch(&values, Some(&defs), None).map_err(pq)?;
            }
            Kind::Float => {
                let (values, defs) =
                    optional(fields, rows.len(), |f| f.parse::<f64>().map_err(|e| bad(path, e.to_string())))?;
                col.typed::<DoubleType>().write_batch(&values, Some(&defs), None).map_err(pq)?;
            }
        }
        col.close().map_err(pq)?;
        i += 1;
    }
    g.close().map_err(pq)?;
    Ok(())
}

/// The values of an optional column and its definition levels (0: null, for an
/// empty field).
fn optional<'a, T>(
    fields: impl Iterator<Item = &'a str>,
    n: usize,
    parse: impl Fn(&str) -> io::Result<T>,
) -> io::Result<(Vec<T>, Vec<i16>)> {
    let (mut values, mut defs) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for f in fields {
        defs.push(i16::from(!f.is_empty()));
        if !f.is_empty() {
            values.push(parse(f)?);
        }
    }
    Ok((values, defs))
}

/// Replaces each row file `<name>.csv` of `dir` that `files` names with
/// `<name>.parquet` (written beside it, then the CSV lahar wrote is removed).
pub fn replace_csvs(dir: &Path, files: &[&str], created_by: &str) -> io::Result<()> {
    for (file, cols) in crate::schema::FILES {
        if !files.contains(&file) {
            continue;
        }
        let csv_path = dir.join(file);
        if !csv_path.is_file() {
            continue;
        }
        let stem = file.trim_end_matches(".csv");
        let out = dir.join(format!("{stem}.parquet"));
        let tmp = dir.join(format!(".{stem}.parquet.tmp"));
        transcode(&csv_path, cols, &tmp, created_by)?;
        std::fs::rename(&tmp, &out)?;
        std::fs::remove_file(&csv_path)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    const COLS: [Column; 3] = [
        Column { name: "job", unit: "", doc: "", text: true },
        Column { name: "start_s", unit: "s", doc: "", text: false },
        Column { name: "slowdown", unit: "ratio", doc: "", text: false },
    ];

    #[test]
    fn a_csv_becomes_typed_columns_with_nulls_names_and_units() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        std::fs::write(&csv, "job,start_s,slowdown\n007,10,1.5\nNA,,2\n,30,\n").unwrap();
        let out = dir.path().join("t.parquet");
        transcode(&csv, &COLS, &out, "lahar test").unwrap();
        let r = SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
        let meta = r.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 3);
        let schema = meta.schema_descr();
        assert_eq!(schema.column(0).physical_type(), Physical::BYTE_ARRAY);
        assert_eq!(schema.column(1).physical_type(), Physical::INT64);
        assert_eq!(schema.column(2).physical_type(), Physical::DOUBLE);
        let kv = meta.key_value_metadata().unwrap();
        assert!(kv.iter().any(|k| k.key == "lahar.unit.start_s" && k.value.as_deref() == Some("s")));
        assert!(!kv.iter().any(|k| k.key == "lahar.unit.job"));
        let rows: Vec<Vec<Field>> = r
            .get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().get_column_iter().map(|(_, f)| f.clone()).collect())
            .collect();
        assert_eq!(rows[0], vec![Field::Str("007".into()), Field::Long(10), Field::Double(1.5)]);
        assert_eq!(rows[1], vec![Field::Str("NA".into()), Field::Null, Field::Double(2.0)]);
        assert_eq!(rows[2], vec![Field::Str(String::new()), Field::Long(30), Field::Null]);
    }

    #[test]
    fn row_groups_split_a_long_file_and_bad_values_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        let mut text = String::from("job,start_s,slowdown\n");
        for i in 0..ROW_GROUP + 5 {
            text.push_str(&format!("j{i},{i},0.5\n"));
        }
        std::fs::write(&csv, &text).unwrap();
        let out = dir.path().join("t.parquet");
        transcode(&csv, &COLS, &out, "lahar test").unwrap();
        let r = SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
        assert_eq!(r.metadata().num_row_groups(), 2);
        assert_eq!(r.metadata().file_metadata().num_rows(), (ROW_GROUP + 5) as i64);
        std::fs::write(&csv, "job,start_s,slowdown\na,x,1\n").unwrap();
        let e = transcode(&csv, &COLS, &out, "t").unwrap_err().to_string();
        assert!(e.contains("line 2, column `start_s`: `x` is not a number"), "{e}");
        std::fs::write(&csv, "job,start,slowdown\n").unwrap();
        let e = transcode(&csv, &COLS, &out, "t").unwrap_err().to_string();
        assert!(e.contains("its header has `start`"), "{e}");
        // A header of some of the columns (timeseries.csv without faults).
        std::fs::write(&csv, "job,slowdown\na,1\n").unwrap();
        transcode(&csv, &COLS, &out, "t").unwrap();
        let r = SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
        assert_eq!(r.metadata().file_metadata().schema_descr().num_columns(), 2);
    }
}
