//! Input and output files, handled the one way lahar trusts: inputs read whole are
//! bounded in size and decoded with a located error (a directory, a device, a
//! UTF-16 file or a stray byte are named as such); names taken from input that
//! become one path component are checked to stay one; outputs are written to a
//! temporary file beside their place and renamed there only when whole.

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The largest text input read whole (scenario, conf, manifest, sweep, model
/// file): 512 MiB. Traces are streamed and have no such bound.
pub const MAX_TEXT_BYTES: u64 = 512 << 20;

fn not_a_directory(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory; expected a file"));
    }
    Ok(())
}

/// Opens an input file for reading.
pub fn open(path: &Path) -> io::Result<File> {
    not_a_directory(path)?;
    File::open(path)
}

/// Opens an input file that is read more than once: a regular file only (a pipe,
/// `/dev/stdin` or a device would give nothing, or something else, the second
/// time).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let not_regular = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "is not a regular file (a pipe, /dev/stdin or a device); lahar reads it twice, so write it to a file first (e.g. `zcat t.gz > t`)",
        )
    };
    // Looked at before opening: opening a named pipe waits for a writer.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return Err(not_regular());
    }
    let f = open(path)?;
    if !f.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(f)
}

/// Reads an input file as UTF-8 text (a leading byte-order mark dropped), at most
/// [`MAX_TEXT_BYTES`].
pub fn read_to_string(path: &Path) -> io::Result<String> {
    not_a_directory(path)?;
    let mut bytes = Vec::new();
    File::open(path)?.take(MAX_TEXT_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_TEXT_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("is larger than {} MiB, the limit for a text input read whole", MAX_TEXT_BYTES >> 20),
        ));
    }
    decode(bytes).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))
}

/// `bytes` as UTF-8 text without a leading byte-order mark, or what is wrong with
/// them, located.
pub fn decode(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(format!(
            "is UTF-16 text (byte-order mark {:02X} {:02X}); expected UTF-8: save it as UTF-8",
            bytes[0], bytes[1]
        ));
    }
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let (line, column) = line_column(&bytes[..at]);
        format!("invalid UTF-8 at line {line}, column {column} (byte 0x{:02X}); expected UTF-8 text", bytes[at])
    })
}

/// The 1-based line and column (in characters) just after `before`, which is
/// valid UTF-8. A line ends at `\n`; `\r\n` is one line end.
fn line_column(before: &[u8]) -> (usize, usize) {
    let text = std::str::from_utf8(before).unwrap_or_default();
    let line = text.matches('\n').count() + 1;
    let last = text.rsplit('\n').next().unwrap_or_default();
    (line, last.chars().count() + 1)
}

/// How every YAML input is parsed: YAML 1.2's booleans only (`true`, `false`).
/// YAML 1.1 also read `y`, `n`, `yes`, `no`, `on`, `off` as booleans, so an axis
/// or a key named `n` became `false`; Kubernetes' own YAML reads them as text.
/// `budget` replaces the parser's default limits (events, nodes, scalar bytes)
/// for files that may legitimately be large.
pub fn yaml_options(budget: Option<serde_saphyr::Budget>) -> serde_saphyr::Options {
    let mut o = serde_saphyr::Options::default();
    o.strict_booleans = true;
    if budget.is_some() {
        o.budget = budget;
    }
    o
}

/// Checks that `name`, taken from input, can be one path component inside the
/// directory it belongs to: not empty, not `.` or `..`, no `/`, `\`, control
/// character or NUL, at most 200 bytes. The error says what was expected.
pub fn component(name: &str) -> Result<(), String> {
    let bad = if name.is_empty() {
        Some("is empty")
    } else if name == "." || name == ".." {
        Some("is `.` or `..`")
    } else if name.contains(['/', '\\']) {
        Some("contains a slash")
    } else if name.chars().any(char::is_control) {
        Some("contains a control character")
    } else if name.len() > 200 {
        Some("is longer than 200 bytes")
    } else {
        None
    };
    match bad {
        Some(why) => Err(format!(
            "`{}` {why}; expected a name that can be one file or directory name (no slash, not `.` or `..`)",
            name.escape_debug()
        )),
        None => Ok(()),
    }
}

/// `rel` in the folder `base`, written without `.` and without a `..` that only
/// undoes the folder before it (`examples/../../tmp/a.conf` is `../tmp/a.conf`):
/// the path users read in messages and opened. Lexical, as Go's `filepath.Join`:
/// a `..` after a symbolic link goes to the folder holding the link, as the
/// shell's `cd` does. An absolute `rel` is itself, cleaned the same way.
pub fn join(base: &Path, rel: impl AsRef<Path>) -> PathBuf {
    use std::path::Component;
    let joined = base.join(rel);
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            // `/..` is `/`.
            Component::ParentDir if matches!(out.last(), Some(Component::RootDir)) => {}
            c => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().map(|c| c.as_os_str()).collect()
}

/// `path` written relative to the folder `base` (both taken from the current
/// directory when relative; no link is followed): `a/b/c.conf` from `a/d` is
/// `../b/c.conf`. Absolute when they share nothing (another drive).
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let (Ok(p), Ok(b)) = (std::path::absolute(path), std::path::absolute(base)) else {
        return path.to_path_buf();
    };
    fn norm(x: &Path) -> Vec<std::path::Component<'_>> {
        let mut out: Vec<std::path::Component<'_>> = Vec::new();
        for c in x.components() {
            match c {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir if matches!(out.last(), Some(std::path::Component::Normal(_))) => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    let (pc, bc) = (norm(&p), norm(&b));
    let common = pc.iter().zip(&bc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return p;
    }
    let mut out = PathBuf::new();
    for _ in common..bc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// A reader that gives `\n` for every `\r\n` line end, so that a CSV reader counts
/// the lines of a Windows file as it counts a Unix one (the csv crate counts a
/// CRLF record's `\n` with the next record: every error was a line early).
pub struct LfLines<R> {
    inner: R,
    line: Vec<u8>,
    at: usize,
}

impl<R: io::BufRead> LfLines<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> LfLines<R> {
        LfLines { inner, line: Vec::new(), at: 0 }
    }
}

impl<R: io::BufRead> io::Read for LfLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let avail = io::BufRead::fill_buf(self)?;
        let n = avail.len().min(buf.len());
        buf[..n].copy_from_slice(&avail[..n]);
        io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: io::BufRead> io::BufRead for LfLines<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.line.len() {
            self.line.clear();
            self.at = 0;
            self.inner.read_until(b'\n', &mut self.line)?;
            if self.line.ends_with(b"\r\n") {
                let n = self.line.len();
                self.line.remove(n - 2);
            }
        }
        Ok(&self.line[self.at..])
    }
    fn consume(&mut self, n: usize) {
        self.at += n;
    }
}

/// An output file written beside its place under a temporary name and renamed
/// into place by [`AtomicFile::commit`]: a reader never sees it half written, and
/// a failure leaves the earlier file (if any) as it was. Dropped without a commit,
/// the temporary file is removed.
pub struct AtomicFile {
    tmp: PathBuf,
    to: PathBuf,
    file: Option<io::BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `to` (its directory must exist).
    pub fn create(to: &Path) -> io::Result<AtomicFile> {
        let name = to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let tmp = to.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = io::BufWriter::with_capacity(1 << 16, File::create(&tmp)?);
        Ok(AtomicFile { tmp, to: to.to_path_buf(), file: Some(file) })
    }

    /// Flushes the file and renames it into place.
    pub fn commit(mut self) -> io::Result<()> {
        let f = self.file.take().expect("an AtomicFile is committed once");
        // Flushed, not synced: the rename guards against a killed process or a
        // full disk, not against a power cut.
        drop(f.into_inner().map_err(io::IntoInnerError::into_error)?);
        std::fs::rename(&self.tmp, &self.to)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.as_mut().expect("not committed").write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `to` through an [`AtomicFile`].
pub fn write_atomic(to: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(to)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_paths_are_clean() {
        let j = |b: &str, r: &str| join(Path::new(b), r).display().to_string();
        assert_eq!(j("examples", "../../../tmp/toy.conf"), "../../tmp/toy.conf");
        assert_eq!(j("examples/manifests", "./jobs/../queues.yaml"), "examples/manifests/queues.yaml");
        assert_eq!(j("", "a.yaml"), "a.yaml");
        assert_eq!(j("a", ".."), ".");
        assert_eq!(j("a", "/tmp/../etc/x"), "/etc/x");
        assert_eq!(j("/", "../x"), "/x");
        assert_eq!(j("../a", "../../b"), "../../b");
    }

    #[test]
    fn a_directory_is_named() {
        let dir = std::env::temp_dir();
        let e = read_to_string(&dir).unwrap_err();
        assert_eq!(e.to_string(), "is a directory; expected a file");
        assert!(open(&dir).is_err());
    }

    #[test]
    fn bad_text_is_located() {
        assert_eq!(
            decode(b"a: 1\r\nb: \xE9t\xC3\xA9\n".to_vec()).unwrap_err(),
            "invalid UTF-8 at line 2, column 4 (byte 0xE9); expected UTF-8 text"
        );
        assert_eq!(
            decode(b"\xC3\xA9\xFF".to_vec()).unwrap_err(),
            "invalid UTF-8 at line 1, column 2 (byte 0xFF); expected UTF-8 text"
        );
        assert!(decode(b"\xFF\xFEa\x00".to_vec()).unwrap_err().starts_with("is UTF-16 text (byte-order mark FF FE)"));
        assert_eq!(decode(b"\xEF\xBB\xBFkind: x".to_vec()).unwrap(), "kind: x");
    }

    #[test]
    fn paths_are_written_from_a_folder() {
        assert_eq!(relative_to(Path::new("/a/b/c.conf"), Path::new("/a/d")), PathBuf::from("../b/c.conf"));
        assert_eq!(relative_to(Path::new("/a/b/c.conf"), Path::new("/a/b")), PathBuf::from("c.conf"));
        assert_eq!(relative_to(Path::new("/a/./b/../c"), Path::new("/a/")), PathBuf::from("c"));
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(relative_to(Path::new("x/y.conf"), Path::new("")), PathBuf::from("x/y.conf"));
        assert_eq!(relative_to(&cwd.join("s.conf"), &cwd.join("sub")), PathBuf::from("../s.conf"));
    }

    #[test]
    fn components_stay_components() {
        for ok in ["a", "run-1", "x.y", "ünï", "..a"] {
            assert_eq!(component(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "../x", "a\\b", "a\nb", "a\0b", &"x".repeat(201)] {
            assert!(component(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn an_atomic_file_appears_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.csv");
        std::fs::write(&p, "old").unwrap();
        {
            let mut f = AtomicFile::create(&p).unwrap();
            f.write_all(b"new").unwrap();
            // Dropped without a commit: the old file stays, no temporary is left.
        }
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn crlf_line_ends_read_as_lf() {
        let mut out = String::new();
        io::Read::read_to_string(&mut LfLines::new(&b"a,b\r\n1,2\r\n\r\nx\ry\n"[..]), &mut out).unwrap();
        assert_eq!(out, "a,b\n1,2\n\nx\ry\n");
    }

    #[test]
    fn a_pipe_is_refused_where_a_file_is_read_twice() {
        let e = open_regular(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
    }
}
