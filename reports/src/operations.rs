//! timeline.csv: the operators' actions (`spec.timeline`) as the run carried
//! them out, one row per step in the order they came, with what came of each.
//! The file exists only for runs whose timeline had a step before the run
//! ended, created at its first row.

use crate::pipe::{Csv, csv_at};
use crate::schema::{TIMELINE, at, header};
use crate::sink::{Dest, Tables};
use lahar_core::record::OperationRecord;
use lahar_core::util::time::push_secs;
use std::io;
use std::path::PathBuf;

/// Writes timeline.csv as its rows come.
pub struct OperationWriter {
    /// Where the file goes: a directory, or memory (`None`).
    dir: Option<PathBuf>,
    file: Option<Csv>,
    /// The file formatted on the run's thread (see [`crate::RunWriter::format_rows_here`]).
    here: bool,
}

impl OperationWriter {
    /// A writer of timeline.csv at `dest`, not created yet.
    pub fn new(dest: Dest) -> OperationWriter {
        let dir = match dest {
            Dest::Dir(d) => Some(d.to_path_buf()),
            Dest::Memory => None,
        };
        OperationWriter { dir, file: None, here: false }
    }

    /// Formats the rows on the run's thread.
    pub(crate) fn format_here(&mut self) {
        self.here = true;
        if let Some(w) = &mut self.file {
            w.format_here();
        }
    }

    /// One row.
    pub fn operated(&mut self, r: &OperationRecord) -> io::Result<()> {
        if self.file.is_none() {
            let dest = match &self.dir {
                Some(d) => Dest::Dir(d),
                None => Dest::Memory,
            };
            let mut w = csv_at(dest, "timeline.csv", &header(&TIMELINE))?;
            if self.here {
                w.format_here();
            }
            self.file = Some(w);
        }
        const fn c(name: &str) -> usize {
            at(&TIMELINE, name)
        }
        let mut f: [String; TIMELINE.len()] = Default::default();
        push_secs(&mut f[const { c("t_s") }], r.t.micros());
        f[const { c("step") }].push_str(&r.step);
        f[const { c("action") }].push_str(r.action);
        f[const { c("target") }].push_str(&r.target);
        f[const { c("outcome") }].push_str(r.outcome.as_str());
        f[const { c("note") }].push_str(&r.note);
        self.file.as_mut().expect("made above").write_record(&f)
    }

    /// Flushes the file; a run to memory gets its bytes in `tables`.
    pub fn finish(self, tables: &mut Tables) -> io::Result<()> {
        if let Some(w) = self.file {
            tables.add("timeline.csv", w.close()?);
        }
        Ok(())
    }
}
