//! Reading an input file of bounded size: a regular file (a FIFO would block, a device such
//! as `/dev/zero` never ends), at most a given number of bytes, counted as they are read
//! (a file may grow after its size was looked at).

use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub enum Unreadable {
    /// The operating system's reason.
    #[error("cannot read the file: {0}")]
    Io(#[from] std::io::Error),
    /// A FIFO, a device, a socket or a folder.
    #[error("not a regular file (a FIFO, a device or a folder); give a file")]
    NotAFile,
    /// More bytes than allowed.
    #[error("it holds more than {max} bytes, the most allowed here")]
    TooLarge {
        /// The bound.
        max: u64,
    },
}

/// The bytes of `path`, a regular file (symbolic links followed) of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Unreadable> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Unreadable::NotAFile);
    }
    if meta.len() > max {
        return Err(Unreadable::TooLarge { max });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)?
        .take(max + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(Unreadable::TooLarge { max });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_a_regular_file_or_too_large() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            read_bounded(dir.path(), 10),
            Err(Unreadable::NotAFile)
        ));
        #[cfg(unix)]
        assert!(matches!(
            read_bounded(Path::new("/dev/zero"), 10),
            Err(Unreadable::NotAFile)
        ));
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_bounded(&f, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read_bounded(&f, 9),
            Err(Unreadable::TooLarge { max: 9 })
        ));
    }
}
