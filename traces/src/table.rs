//! Streaming CSV reading shared by the CSV importers: one reused record, columns
//! found by header name, per-row errors turned into `malformed` skips.

use std::io::BufRead;

use csv::StringRecord;

use crate::ctx::{Ctx, Skip};
use crate::error::{ImportError, Location};

/// Column positions by name.
pub(crate) struct Columns {
    names: Vec<String>,
}

impl Columns {
    pub fn new<S: AsRef<str>>(names: &[S]) -> Columns {
        Columns { names: names.iter().map(|n| n.as_ref().trim().to_string()).collect() }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The position of a required column, or a file error.
    pub fn require(&self, name: &str, ctx: &Ctx<'_>) -> Result<usize, ImportError> {
        self.find(name).ok_or_else(|| {
            ctx.file_error(format!("missing column `{name}` (the header has: {})", self.names.join(",")))
        })
    }
}

/// A data row and where it is, or why the decoder rejected it.
pub(crate) type Row<'t> = (Location, Result<&'t StringRecord, Skip>);

/// Reads CSV records one at a time. With `header`, the first record is returned as
/// [`Columns`] by [`Table::columns`]; data rows are numbered from 1 after it.
pub(crate) struct Table<'r> {
    reader: csv::Reader<lahar_core::util::files::LfLines<&'r mut dyn BufRead>>,
    record: StringRecord,
}

impl<'r> Table<'r> {
    pub fn new(input: &'r mut dyn BufRead) -> Table<'r> {
        let reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).trim(csv::Trim::All).from_reader(
            // Lines counted alike in CRLF and LF files.
            lahar_core::util::files::LfLines::new(input),
        );
        Table { reader, record: StringRecord::new() }
    }

    /// Reads the header row. An empty file has no header: a file error.
    pub fn columns(&mut self, ctx: &Ctx<'_>) -> Result<Columns, ImportError> {
        match self.reader.read_record(&mut self.record) {
            Ok(true) => Ok(Columns::new(&self.record.iter().collect::<Vec<_>>())),
            Ok(false) => Err(ctx.file_error("the file is empty; expected a header row")),
            Err(e) => Err(ctx.file_error(format!("unreadable header: {e}"))),
        }
    }

    /// The next data row: `Ok(None)` at the end; `Ok(Some((at, Err(skip))))` for a row
    /// the CSV decoder rejected (counted as read).
    pub fn next_row(&mut self, ctx: &mut Ctx<'_>) -> Result<Option<Row<'_>>, ImportError> {
        let line = self.reader.position().line();
        match self.reader.read_record(&mut self.record) {
            Ok(false) => Ok(None),
            Ok(true) => {
                ctx.rows_read += 1;
                let line = self.record.position().map_or(line, |p| p.line());
                Ok(Some((Location { line, row: ctx.rows_read }, Ok(&self.record))))
            }
            Err(e) => {
                let at_line = e.position().map_or(line, |p| p.line());
                match e.into_kind() {
                    csv::ErrorKind::Io(io) => Err(ctx.io_error(io)),
                    kind => {
                        ctx.rows_read += 1;
                        let msg = match kind {
                            csv::ErrorKind::Utf8 { .. } => "the row is not valid UTF-8".to_string(),
                            other => format!("unreadable row: {other:?}"),
                        };
                        Ok(Some((Location { line: at_line, row: ctx.rows_read }, Err(Skip::malformed(msg)))))
                    }
                }
            }
        }
    }
}

/// Checks that a row has as many fields as the header.
pub(crate) fn check_width(rec: &StringRecord, width: usize) -> Result<(), Skip> {
    if rec.len() == width {
        Ok(())
    } else {
        Err(Skip::malformed(format!("expected {width} fields, found {}", rec.len())))
    }
}
