//! A row file written beside the run. The run's thread encodes each row as typed
//! fields (text, times, milli-units, counts, decimals) into a chunk; the fields
//! are formatted, quoted and written by a thread of the file's own, started when
//! the first chunk fills. A long run's hundreds of megabytes of CSV then cost the
//! run's thread about a copy of each row, and the formatting and the writes run on
//! another core. A file whose rows fit in one chunk is formatted when it is
//! closed, on the caller's thread, so a small run starts no thread. Either way the
//! rows are formatted by the same code in the order they were written: the bytes
//! are the same.
//!
//! Errors: the first write error stops the file. It is returned by the row that
//! finds it (at the latest, by [`Csv::close`]); later rows are dropped.

use crate::numbers::{push_fixed, push_milli};
use crate::sink::{Dest, Sink};
use lahar_core::util::text::{push_i64, push_u64};
use lahar_core::util::time::push_secs;
use std::fs::File;
use std::io::{self, BufWriter};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

/// Bytes of encoded rows sent to the file's thread at a time.
const CHUNK: usize = 128 * 1024;
/// Chunks on their way to the file's thread at most; the run waits beyond them.
const IN_FLIGHT: usize = 4;

/// One field of a row, as the file writes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Field<'a> {
    /// Nothing (an empty cell).
    Empty,
    /// Text, quoted where CSV needs it.
    Str(&'a str),
    /// Microseconds, written as exact decimal seconds.
    Secs(u64),
    /// Milli-units, written as an exact decimal.
    Milli(i64),
    /// A count.
    U64(u64),
    /// A signed count.
    I64(i64),
    /// A derived number at a precision (see [`crate::numbers::fixed`]).
    Fixed(f64, u8),
}

/// The tags of the encoding: one byte before each field's payload.
mod tag {
    pub const END: u8 = 0;
    pub const STR: u8 = 1;
    pub const SECS: u8 = 2;
    pub const MILLI: u8 = 3;
    pub const U64: u8 = 4;
    pub const I64: u8 = 5;
    pub const FIXED: u8 = 6;
    pub const EMPTY: u8 = 7;
}

/// Appends one field's encoding to `buf`.
fn encode(buf: &mut Vec<u8>, f: Field) {
    match f {
        Field::Empty => buf.push(tag::EMPTY),
        Field::Str(s) => {
            tagged_word(buf, tag::STR, s.len() as u64);
            buf.extend_from_slice(s.as_bytes());
        }
        // Signed values go as their two's-complement bits (`rows` casts them back).
        Field::Secs(v) => tagged_word(buf, tag::SECS, v),
        Field::Milli(v) => tagged_word(buf, tag::MILLI, v as u64),
        Field::U64(v) => tagged_word(buf, tag::U64, v),
        Field::I64(v) => tagged_word(buf, tag::I64, v as u64),
        Field::Fixed(x, d) => {
            tagged_word(buf, tag::FIXED, x.to_bits());
            buf.push(d);
        }
    }
}

/// A tag and eight bytes.
fn tagged_word(buf: &mut Vec<u8>, t: u8, v: u64) {
    buf.push(t);
    buf.extend_from_slice(&v.to_le_bytes());
}

/// The formatting end of a file: its CSV writer and the cells reused row after row.
struct Out {
    csv: csv::Writer<Sink>,
    cells: Vec<Vec<u8>>,
    /// A number's text before it is copied into its cell.
    scratch: String,
}

/// Eight bytes of `chunk` at `at`, as a `u64`.
fn word(chunk: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&chunk[at..at + 8]);
    u64::from_le_bytes(b)
}

impl Out {
    /// Formats and writes every row of `chunk` (whole rows, as [`encode`] made them).
    fn rows(&mut self, chunk: &[u8]) -> io::Result<()> {
        let (mut at, mut n) = (0, 0);
        while at < chunk.len() {
            let t = chunk[at];
            at += 1;
            if t == tag::END {
                self.csv.write_record(&self.cells[..n]).map_err(io::Error::other)?;
                n = 0;
                continue;
            }
            if self.cells.len() == n {
                self.cells.push(Vec::new());
            }
            let cell = &mut self.cells[n];
            cell.clear();
            n += 1;
            let s = &mut self.scratch;
            s.clear();
            match t {
                tag::EMPTY => continue,
                tag::STR => {
                    let len = word(chunk, at) as usize;
                    at += 8;
                    cell.extend_from_slice(&chunk[at..at + len]);
                    at += len;
                    continue;
                }
                tag::FIXED => {
                    push_fixed(s, f64::from_bits(word(chunk, at)), chunk[at + 8].into());
                    at += 9;
                }
                _ => {
                    let v = word(chunk, at);
                    at += 8;
                    match t {
                        tag::SECS => push_secs(s, v),
                        tag::MILLI => push_milli(s, v as i64),
                        tag::U64 => push_u64(s, v),
                        tag::I64 => push_i64(s, v as i64),
                        _ => unreachable!("tag {t} is not one encode writes"),
                    }
                }
            }
            cell.extend_from_slice(s.as_bytes());
        }
        Ok(())
    }

    /// Flushes the file and hands back where it went.
    fn into_sink(self) -> io::Result<Sink> {
        let mut sink = self.csv.into_inner().map_err(|e| e.into_error())?;
        if let Sink::File(f) = &mut sink {
            io::Write::flush(f)?;
        }
        Ok(sink)
    }
}

/// A CSV writer of file `name` at `dest`, its header written.
pub(crate) fn csv_at(dest: Dest, name: &str, header: &[&str]) -> io::Result<Csv> {
    let sink = match dest {
        Dest::Dir(dir) => Sink::File(BufWriter::new(File::create(dir.join(name))?)),
        Dest::Memory => Sink::Memory(Vec::new()),
    };
    Csv::new(sink, header)
}

/// Where a file's rows are formatted.
enum State {
    /// On the caller's thread, when asked (no chunk has filled yet, or no thread could start).
    Here(Box<Out>),
    /// On the file's thread.
    Away {
        /// Full chunks to the thread.
        to: SyncSender<Vec<u8>>,
        /// Emptied chunks back, to be filled again.
        back: Receiver<Vec<u8>>,
        thread: JoinHandle<io::Result<Sink>>,
    },
    /// A write failed; the error was returned.
    Failed,
}

/// One row file being written (see the module's text).
pub(crate) struct Csv {
    /// Rows encoded and not yet formatted.
    buf: Vec<u8>,
    state: State,
    /// Format every chunk on the caller's thread (see [`Csv::format_here`]).
    here: bool,
}

impl std::fmt::Debug for Csv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.state {
            State::Here(_) => "here",
            State::Away { .. } => "away",
            State::Failed => "failed",
        };
        f.debug_struct("Csv").field("pending_bytes", &self.buf.len()).field("state", &state).finish()
    }
}

impl Csv {
    /// A file written to `sink`, its header written first.
    pub(crate) fn new(sink: Sink, header: &[&str]) -> io::Result<Csv> {
        let mut csv = csv::Writer::from_writer(sink);
        csv.write_record(header).map_err(io::Error::other)?;
        let out = Box::new(Out { csv, cells: Vec::new(), scratch: String::new() });
        Ok(Csv { buf: Vec::with_capacity(CHUNK), state: State::Here(out), here: false })
    }

    /// Formats every chunk on the caller's thread: no thread is started (a sweep
    /// that runs a cell per core has no core to spare for it).
    pub(crate) fn format_here(&mut self) {
        self.here = true;
    }

    /// Writes one row of text fields.
    pub(crate) fn write_record<I, T>(&mut self, fields: I) -> io::Result<()>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<str>,
    {
        if matches!(self.state, State::Failed) {
            return Ok(());
        }
        for f in fields {
            encode(&mut self.buf, Field::Str(f.as_ref()));
        }
        self.end_row()
    }

    /// Writes one row of typed fields.
    pub(crate) fn write_fields(&mut self, fields: &[Field]) -> io::Result<()> {
        if matches!(self.state, State::Failed) {
            return Ok(());
        }
        for &f in fields {
            encode(&mut self.buf, f);
        }
        self.end_row()
    }

    fn end_row(&mut self) -> io::Result<()> {
        self.buf.push(tag::END);
        if self.buf.len() < CHUNK {
            return Ok(());
        }
        let r = self.ship();
        if r.is_err() {
            self.state = State::Failed;
            self.buf = Vec::new();
        }
        r
    }

    /// Hands the full chunk on: to the file's thread (started the first time), or
    /// formats it here when no thread can start.
    fn ship(&mut self) -> io::Result<()> {
        if let (State::Here(_), false) = (&self.state, self.here) {
            let State::Here(out) = std::mem::replace(&mut self.state, State::Failed) else { unreachable!() };
            self.state = start(out)?;
        }
        match &mut self.state {
            State::Here(out) => {
                let r = out.rows(&self.buf);
                self.buf.clear();
                r
            }
            State::Away { to, back, .. } => {
                let fresh = match back.try_recv() {
                    Ok(b) => b,
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => Vec::with_capacity(CHUNK),
                };
                let full = std::mem::replace(&mut self.buf, fresh);
                if to.send(full).is_ok() {
                    return Ok(());
                }
                // The thread stopped at an error: it is in its result.
                let State::Away { thread, .. } = std::mem::replace(&mut self.state, State::Failed) else {
                    unreachable!()
                };
                joined(thread).map(|_| ())
            }
            State::Failed => Ok(()),
        }
    }

    /// Writes the rows left, flushes the file and returns the first error met; a
    /// file written to memory hands back its bytes.
    pub(crate) fn close(self) -> io::Result<Option<Vec<u8>>> {
        let Csv { buf, state, .. } = self;
        let sink = match state {
            State::Here(mut out) => {
                out.rows(&buf)?;
                out.into_sink()?
            }
            State::Away { to, thread, .. } => {
                // A failed send leaves the thread's error in its result.
                let _ = if buf.is_empty() { Ok(()) } else { to.send(buf) };
                drop(to);
                joined(thread)?
            }
            State::Failed => return Err(io::Error::other("an earlier write to this file failed")),
        };
        Ok(match sink {
            Sink::File(_) => None,
            Sink::Memory(v) => Some(v),
        })
    }
}

/// Starts the thread that formats and writes `out`'s chunks; keeps `out` here
/// when no thread can start.
fn start(out: Box<Out>) -> io::Result<State> {
    let (to, from) = sync_channel::<Vec<u8>>(IN_FLIGHT);
    let (give_back, back) = channel::<Vec<u8>>();
    // The thread owns `out` once started; a refused start hands it back.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(out)));
    let theirs = std::sync::Arc::clone(&slot);
    let started = std::thread::Builder::new().name("lahar-rows".into()).spawn(move || {
        let mut out = theirs.lock().map_err(|_| io::Error::other("row writer poisoned"))?.take().expect("given once");
        drop(theirs);
        for mut chunk in from {
            out.rows(&chunk)?;
            chunk.clear();
            let _ = give_back.send(chunk);
        }
        out.into_sink()
    });
    match started {
        Ok(thread) => Ok(State::Away { to, back, thread }),
        Err(_) => {
            let out = slot.lock().map_err(|_| io::Error::other("row writer poisoned"))?.take();
            Ok(State::Here(out.expect("the thread never started")))
        }
    }
}

/// The result of a file's thread.
fn joined(thread: JoinHandle<io::Result<Sink>>) -> io::Result<Sink> {
    thread.join().unwrap_or_else(|_| Err(io::Error::other("the row writer's thread stopped")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(c: Csv) -> String {
        String::from_utf8(c.close().unwrap().unwrap()).unwrap()
    }

    #[test]
    fn typed_fields_are_written_as_their_columns_say() {
        let mut c = Csv::new(Sink::Memory(Vec::new()), &["a", "b", "c", "d", "e", "f", "g"]).unwrap();
        c.write_fields(&[
            Field::Str("x,\"y\""),
            Field::Secs(1_500_000),
            Field::Milli(-1250),
            Field::U64(7),
            Field::I64(-3),
            Field::Fixed(0.1234567, 6),
            Field::Empty,
        ])
        .unwrap();
        c.write_record(["", "p", "", "q", "", "", "r"]).unwrap();
        assert_eq!(text(c), "a,b,c,d,e,f,g\n\"x,\"\"y\"\"\",1.5,-1.25,7,-3,0.123457,\n,p,,q,,,r\n");
    }

    #[test]
    fn rows_past_one_chunk_come_out_whole_and_in_order() {
        // Enough rows for many chunks: the file's thread formats all but the last.
        let mut c = Csv::new(Sink::Memory(Vec::new()), &["i", "t", "name"]).unwrap();
        let mut want = String::from("i,t,name\n");
        for i in 0..40_000u64 {
            let name = format!("job-{i}");
            c.write_fields(&[Field::U64(i), Field::Secs(i * 250_000), Field::Str(&name)]).unwrap();
            let mut t = String::new();
            push_secs(&mut t, i * 250_000);
            want.push_str(&format!("{i},{t},{name}\n"));
        }
        assert!(matches!(c.state, State::Away { .. }), "a chunk filled: the file's thread formats it");
        assert_eq!(text(c), want);
    }

    #[test]
    fn a_file_formatted_here_starts_no_thread_and_writes_the_same() {
        let rows = |c: &mut Csv| {
            for i in 0..40_000u64 {
                c.write_fields(&[Field::U64(i), Field::Milli(i as i64 * 7), Field::Str("a,b")]).unwrap();
            }
        };
        let mut away = Csv::new(Sink::Memory(Vec::new()), &["i", "m", "s"]).unwrap();
        rows(&mut away);
        assert!(matches!(away.state, State::Away { .. }));
        let mut here = Csv::new(Sink::Memory(Vec::new()), &["i", "m", "s"]).unwrap();
        here.format_here();
        rows(&mut here);
        assert!(matches!(here.state, State::Here(_)), "chunks were formatted as they filled");
        assert!(here.buf.len() < CHUNK);
        assert_eq!(text(here), text(away));
    }

    #[test]
    fn a_small_file_starts_no_thread() {
        let mut c = Csv::new(Sink::Memory(Vec::new()), &["a"]).unwrap();
        c.write_record(["1"]).unwrap();
        // A record of one empty field is quoted (it would read as no record).
        c.write_fields(&[Field::Empty]).unwrap();
        assert!(matches!(c.state, State::Here(_)));
        assert_eq!(text(c), "a\n1\n\"\"\n");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_full_disk_is_an_error_not_a_short_file() {
        for rows in [1u64, 100_000] {
            let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
            let mut c = Csv::new(Sink::File(BufWriter::new(full)), &["i", "name"]).unwrap();
            let mut first = None;
            for i in 0..rows {
                if let Err(e) = c.write_fields(&[Field::U64(i), Field::Str("a-job-name")]) {
                    first.get_or_insert(e);
                }
            }
            let closed = c.close();
            let e = first.or(closed.err()).expect("the failed writes are reported");
            assert!(e.to_string().contains("No space left"), "{e}");
        }
    }
}
