//! Where a run's row files go: files in its output directory, or memory (a run
//! from Python, whose tables are read back without touching the disk). The bytes
//! are the same either way.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Where a run's row files go.
#[derive(Clone, Copy, Debug)]
pub enum Dest<'a> {
    /// Files in this directory (which must exist).
    Dir(&'a Path),
    /// Memory: [`crate::RunWriter::finish`] hands the bytes back as [`Tables`].
    Memory,
}

/// One row file's bytes: a file being written, or a buffer.
#[derive(Debug)]
pub enum Sink {
    /// A file.
    File(BufWriter<File>),
    /// A buffer.
    Memory(Vec<u8>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File(f) => f.write(buf),
            Sink::Memory(v) => v.write(buf),
        }
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::File(f) => f.write_all(buf),
            Sink::Memory(v) => v.write_all(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File(f) => f.flush(),
            Sink::Memory(_) => Ok(()),
        }
    }
}

/// The row files of a run written to memory, by file name (`jobs.csv`...), in
/// the order [`crate::Outputs`] lists them; empty for a run that wrote files.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tables {
    /// (file name, its bytes: the file's exact content).
    pub files: Vec<(&'static str, Vec<u8>)>,
}

impl Tables {
    /// Keeps `name`'s bytes, if it has any.
    pub(crate) fn add(&mut self, name: &'static str, bytes: Option<Vec<u8>>) {
        if let Some(b) = bytes {
            self.files.push((name, b));
        }
    }

    /// The bytes of file `name`, when the run wrote it.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.files.iter().find(|(n, _)| *n == name).map(|(_, b)| b.as_slice())
    }
}
