//! Opening input files with errors that say what is wrong: a directory where a
//! file is expected is named as such (the OS would let it open and fail the first
//! read with "Is a directory (os error 21)").

use std::fs::File;
use std::io;
use std::path::Path;

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

/// Reads an input file as text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    not_a_directory(path)?;
    std::fs::read_to_string(path)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_directory_is_named() {
        let dir = std::env::temp_dir();
        let e = super::read_to_string(&dir).unwrap_err();
        assert_eq!(e.to_string(), "is a directory; expected a file");
        assert!(super::open(&dir).is_err());
    }
}
