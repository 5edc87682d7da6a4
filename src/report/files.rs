//! Writing outputs so that a reader never sees half of them: single files through a
//! temporary sibling renamed over the target, sets of files (a run's, a sweep's) through a
//! staging folder whose files are swapped in together ([`FileSet`]), and every temporary
//! name registered so that a signal handler can remove them ([`remove_temporaries`]).
//!
//! # Swapping a set in, and what each failure leaves
//!
//! A set is written into `DIR/.tmp-<random>-<name>/` (the *stage*, its name from the operating system's randomness), every file complete
//! and synced, before anything in `DIR` changes. [`FileSet::commit`] then, holding the
//! registry's lock (so that a signal waits for it):
//! 1. moves every file of the previous set (the names written now, and the names this set
//!    may replace, see [`FileSet::replacing`]) from `DIR` aside into `STAGE/.old/`;
//! 2. moves every new file from the stage into `DIR`;
//! 3. removes the stage with the old files.
//!
//! A failure in 1 or 2 moves back what had moved (new files out, old files in) and reports
//! the error: `DIR` holds the previous set as it was. A failure in 3 leaves the new set in
//! place and only litter, which is reported too. Anything else in `DIR` (other commands'
//! files, the `variants/` and `runs/` folders) is never touched, which is why the unit
//! swapped is a set of files and not the folder.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// The temporary files and folders alive now; [`remove_temporaries`] removes them.
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set once the process is ending on a signal: nothing new may be created.
static CLOSING: AtomicBool = AtomicBool::new(false);
/// Tells apart the stages of one process (`brink all` writes many at once).
static STAGES: AtomicU64 = AtomicU64::new(0);

fn live() -> MutexGuard<'static, Vec<PathBuf>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Creates a temporary file or folder with `create` and registers it, both under the
/// registry's lock, so that a signal cannot come between the two and leave it behind.
fn register(path: &Path, create: impl FnOnce() -> std::io::Result<()>) -> std::io::Result<()> {
    let mut live = live();
    if CLOSING.load(Ordering::SeqCst) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::Interrupted,
            "brink is stopping on a signal",
        ));
    }
    create()?;
    live.push(path.to_path_buf());
    Ok(())
}

fn unregister(path: &Path) {
    live().retain(|p| p != path);
}

/// Removes every temporary file and folder still registered and keeps anything new from
/// being created; for a signal handler, which then ends the process. It waits for a set
/// being swapped in to finish (the swap holds the same lock), so a set is either wholly in
/// place or not at all. Returns how many it removed.
pub fn remove_temporaries() -> usize {
    let live = live();
    CLOSING.store(true, Ordering::SeqCst);
    for p in live.iter() {
        let _ = if p.is_dir() {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        };
    }
    let n = live.len();
    // Held until the process ends: a writer still running blocks rather than create.
    std::mem::forget(live);
    n
}

/// 64 bits from the operating system's randomness (the keys of a fresh `RandomState`), so
/// that a temporary name cannot be foreseen from the process id and a link planted there
/// in advance (output folders are shared on clusters) is not met by chance.
fn unforeseeable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(STAGES.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// The temporary sibling used while `path` is written, under a name not foreseeable from
/// the process id; it keeps the extension so that writers choosing a format by extension
/// (PNG) still work.
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".tmp-{:016x}-{name}", unforeseeable()))
}

/// Creates `path` for writing only if nothing is there: never through a link planted at
/// the name (`O_EXCL`, which refuses a dangling link too), never over an existing file.
pub fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Creates `tmp` (exclusively, [`create_new`]), registered, and writes and syncs `bytes`
/// into it.
fn write_temp(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = None;
    register(tmp, || {
        file = Some(create_new(tmp)?);
        Ok(())
    })?;
    let mut f = file.ok_or_else(|| std::io::Error::other("temporary file not created"))?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Removes `tmp` (if there) and forgets it.
fn discard(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
    unregister(tmp);
}

/// Writes `bytes` to `path` atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = write_temp(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    discard(&tmp);
    result
}

/// Writes `bytes` to `path` atomically, refusing to replace an existing file: the
/// temporary sibling is linked to `path` (which fails if `path` exists) rather than renamed
/// over it. Where hard links are not supported, it checks, then renames. An existing
/// `path` gives an `AlreadyExists` error and is left as it was.
pub fn write_new_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let exists = || std::io::Error::new(std::io::ErrorKind::AlreadyExists, "file exists");
    // `symlink_metadata`, not `exists`: a dangling link is something there too.
    if path.symlink_metadata().is_ok() {
        return Err(exists());
    }
    let tmp = temp_path(path);
    let result = write_temp(&tmp, bytes).and_then(|()| match std::fs::hard_link(&tmp, path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(e),
        Err(_) if path.symlink_metadata().is_ok() => Err(exists()),
        // No hard links on this file system: checked above, now renamed.
        Err(_) => std::fs::rename(&tmp, path),
    });
    // Gone already after a rename; the link's other name otherwise.
    discard(&tmp);
    result
}

/// Why an output folder was refused: its last component is a symbolic link. Carried as the
/// source of an [`std::io::Error`] so that callers can tell it from the operating system's
/// reasons (see [`is_linked_folder`]).
#[derive(Debug)]
pub struct LinkedFolder;

impl std::fmt::Display for LinkedFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a symbolic link, not a folder")
    }
}

impl std::error::Error for LinkedFolder {}

/// True when `e` is [`create_folder`]'s refusal of a folder that is a symbolic link.
pub fn is_linked_folder(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<LinkedFolder>())
}

/// Creates the output folder `dir`: its parents with `create_dir_all` (links among them
/// are followed: the user chose them), the folder itself with `create_dir`, which never
/// follows a link. A folder already there is used; a symbolic link there (dangling or
/// not) is refused ([`LinkedFolder`]) rather than written through, so that a link planted
/// in a shared output folder cannot send brink's files elsewhere.
pub fn create_folder(dir: &Path) -> std::io::Result<()> {
    // `a/b/` names the same folder as `a/b`, but a trailing slash would follow a link.
    let dir = match (dir.parent(), dir.file_name()) {
        (Some(parent), Some(name)) => {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)?;
            }
            parent.join(name)
        }
        _ => dir.to_path_buf(),
    };
    match std::fs::create_dir(&dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let meta = dir.symlink_metadata()?;
            if meta.file_type().is_symlink() {
                Err(std::io::Error::other(LinkedFolder))
            } else if meta.is_dir() {
                Ok(())
            } else {
                Err(e)
            }
        }
        Err(e) => Err(e),
    }
}

/// A set of files written together into a staging folder and swapped into their folder
/// at once by [`commit`](Self::commit) (see the module doc for each step's failure).
/// Dropped without a commit, it removes the stage: the folder is left as it was.
#[derive(Debug)]
pub struct FileSet {
    dir: PathBuf,
    stage: PathBuf,
    replacing: Vec<String>,
}

impl FileSet {
    /// Creates `dir` if needed ([`create_folder`]: a link there is refused) and an empty
    /// stage inside it, named `.tmp-<random>-<name>`, created exclusively (`mkdir` refuses
    /// a link planted at the name, dangling or not).
    pub fn begin(dir: &Path, name: &str) -> std::io::Result<Self> {
        create_folder(dir)?;
        let stage = dir.join(format!(".tmp-{:016x}-{name}", unforeseeable()));
        register(&stage, || std::fs::create_dir(&stage))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            stage,
            replacing: Vec::new(),
        })
    }

    /// Also removes these files of `dir` on commit when this set does not write them (a
    /// previous run's `timeline-zoom.png` when this run has no zoom window).
    pub fn replacing(mut self, names: &[&str]) -> Self {
        self.replacing = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The folder the set goes to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The staging folder: write the set's files here.
    pub fn stage(&self) -> &Path {
        &self.stage
    }

    /// Swaps the staged files into the folder, replacing the previous set; returns the
    /// names swapped in, sorted.
    pub fn commit(self) -> std::io::Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(&self.stage)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.retain(|n| !n.starts_with('.'));
        names.sort();
        let mut old: Vec<&String> = names.iter().chain(&self.replacing).collect();
        old.dedup();
        let aside = self.stage.join(".old");
        let _lock = live();
        std::fs::create_dir(&aside)?;
        let mut moved_aside = Vec::new();
        let mut moved_in = Vec::new();
        let swap = (|| {
            for n in old {
                let p = self.dir.join(n);
                if p.symlink_metadata().is_ok() {
                    std::fs::rename(&p, aside.join(n))?;
                    moved_aside.push(n);
                }
            }
            for n in &names {
                std::fs::rename(self.stage.join(n), self.dir.join(n))?;
                moved_in.push(n);
            }
            Ok(())
        })();
        if let Err(e) = swap {
            for n in moved_in {
                let _ = std::fs::rename(self.dir.join(n), self.stage.join(n));
            }
            for n in moved_aside {
                let _ = std::fs::rename(aside.join(n), self.dir.join(n));
            }
            return Err(e);
        }
        // Best effort: the renames reach the disk with the folder's metadata.
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(names)
    }
}

impl Drop for FileSet {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.stage);
        unregister(&self.stage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_set_replaces_the_previous_one_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sc");
        std::fs::create_dir_all(dir.join("variants/v")).unwrap();
        std::fs::write(dir.join("variants/v/summary.json"), "v").unwrap();
        std::fs::write(dir.join("tipping.csv"), "other command").unwrap();
        std::fs::write(dir.join("summary.json"), "old").unwrap();
        std::fs::write(dir.join("zoom.png"), "old zoom").unwrap();
        let set = FileSet::begin(&dir, "run")
            .unwrap()
            .replacing(&["zoom.png"]);
        std::fs::write(set.stage().join("summary.json"), "new").unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.json")).unwrap(),
            "old"
        );
        assert_eq!(set.commit().unwrap(), ["summary.json"]);
        assert_eq!(names(&dir), ["summary.json", "tipping.csv", "variants"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("summary.json")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("variants/v/summary.json")).unwrap(),
            "v"
        );
    }

    #[test]
    fn a_set_dropped_unfinished_leaves_the_folder_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("summary.json"), "old").unwrap();
        let set = FileSet::begin(tmp.path(), "run").unwrap();
        std::fs::write(set.stage().join("summary.json"), "half").unwrap();
        drop(set);
        assert_eq!(names(tmp.path()), ["summary.json"]);
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("summary.json")).unwrap(),
            "old"
        );
    }

    #[test]
    fn a_failed_swap_puts_the_previous_set_back() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("a.csv"), "old a").unwrap();
        // `sub/b.csv` cannot be moved aside (no `sub` in the stage's `.old`): the swap
        // fails after `a.csv` has moved.
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/b.csv"), "old b").unwrap();
        let set = FileSet::begin(dir, "run")
            .unwrap()
            .replacing(&["sub/b.csv"]);
        std::fs::write(set.stage().join("a.csv"), "new a").unwrap();
        assert!(set.commit().is_err());
        assert_eq!(names(dir), ["a.csv", "sub"]);
        assert_eq!(std::fs::read_to_string(dir.join("a.csv")).unwrap(), "old a");
        assert_eq!(
            std::fs::read_to_string(dir.join("sub/b.csv")).unwrap(),
            "old b"
        );
    }

    #[test]
    fn a_link_planted_at_a_name_is_refused_and_its_target_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, "precious").unwrap();
        let set = FileSet::begin(tmp.path(), "run").unwrap();
        // A link at a staged name, and a dangling one.
        let link = set.stage().join("summary.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(create_new(&link).is_err());
        let dangling = set.stage().join("trace.csv");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        assert!(create_new(&dangling).is_err());
        assert!(!tmp.path().join("nowhere").exists());
        // `brink new`'s file: a link at the name is not replaced, nor written through.
        let new = tmp.path().join("new.toml");
        std::os::unix::fs::symlink(&target, &new).unwrap();
        assert!(write_new_atomic(&new, b"text").is_err());
        let dangling_new = tmp.path().join("dangling.toml");
        std::os::unix::fs::symlink(tmp.path().join("gone"), &dangling_new).unwrap();
        assert!(write_new_atomic(&dangling_new, b"text").is_err());
        assert!(!tmp.path().join("gone").exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }

    #[test]
    fn an_output_folder_that_is_a_link_is_refused_and_its_parents_may_be() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = tmp.path().join("out");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        for dir in [link.clone(), tmp.path().join("out/")] {
            let e = FileSet::begin(&dir, "run").unwrap_err();
            assert!(is_linked_folder(&e), "{e}");
        }
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("gone"), &dangling).unwrap();
        assert!(is_linked_folder(&create_folder(&dangling).unwrap_err()));
        assert!(!tmp.path().join("gone").exists());
        assert_eq!(names(&elsewhere), Vec::<String>::new());
        // A link among the parents is followed; a real folder is used as it is.
        create_folder(&link.join("sc")).unwrap();
        create_folder(&link.join("sc")).unwrap();
        assert_eq!(names(&elsewhere), ["sc"]);
        std::fs::write(tmp.path().join("file"), "").unwrap();
        let e = create_folder(&tmp.path().join("file")).unwrap_err();
        assert!(!is_linked_folder(&e));
    }

    #[test]
    fn temporary_names_are_not_foreseeable_from_the_process_id() {
        let p = Path::new("/d/summary.json");
        let (a, b) = (temp_path(p), temp_path(p));
        assert_ne!(a, b);
        let pid = format!(".tmp-{}-", std::process::id());
        assert!(!a.to_string_lossy().contains(&pid));
        assert!(a.to_string_lossy().ends_with("-summary.json"));
    }
}
