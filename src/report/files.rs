//! Atomic file writes: write a temporary sibling, then rename over the target.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary sibling used while `path` is written; it keeps the extension so that
/// writers choosing a format by extension (PNG) still work.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".tmp-{}-{name}", std::process::id()))
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` atomically, refusing to replace an existing file: the
/// temporary sibling is linked to `path` (which fails if `path` exists) rather than renamed
/// over it. Where hard links are not supported, it checks, then renames. An existing
/// `path` gives an `AlreadyExists` error and is left as it was.
pub fn write_new_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let exists = || std::io::Error::new(std::io::ErrorKind::AlreadyExists, "file exists");
    if path.exists() {
        return Err(exists());
    }
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
            Err(_) if path.exists() => Err(exists()),
            // No hard links on this file system: checked above, now renamed.
            Err(_) => std::fs::rename(&tmp, path),
        }
    })();
    // Gone already after a rename; the link's other name otherwise.
    let _ = std::fs::remove_file(&tmp);
    result
}

/// Runs `write` against a temporary path, then renames it to `path`.
pub fn with_temp<F>(path: &Path, write: F) -> std::io::Result<()>
where
    F: FnOnce(&Path) -> std::io::Result<()>,
{
    let tmp = temp_path(path);
    match write(&tmp).and_then(|_| std::fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
