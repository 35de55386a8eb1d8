//! The one rule for where a command may write: never over, or inside,
//! what the same command reads (docs/safety.md "Writing").
//!
//! Every writing flag (`-o`, `--out`, `--svg`, `--curve-svg`, `--hf`,
//! `report --out`, `serve --out`, `play --out`) is checked here against
//! the command's inputs (datasets, results, instances, domain files,
//! books, templates, `--exclude` sets) before anything is written: a
//! target that is an input, lies inside an input folder where the command
//! reads ([`Reads`]), or (for a folder the command fills) holds an input,
//! is refused by [`check`] with both flags named. A path is compared by every place
//! it names: as written (made absolute, `.` and `..` folded), with its
//! folder's links resolved, and (when it exists) with every link
//! resolved; an existing file is also compared by device and inode (a
//! hard link). So `-o D/medical/S.jsonl` is caught whether `D`, `D/medical`
//! or `S.jsonl` is a link.
//!
//! Links at the target itself are never written through: the atomic
//! writer ([`crate::files::write_atomic`]) replaces a link at the target
//! by the new file, and appenders refuse one ([`crate::files::open_for_append`]).

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// How a command writes at a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Written {
    /// One file (`-o FILE`, `--svg FILE`).
    File,
    /// A folder the command fills (`--out DIR`): an input inside it is
    /// refused too.
    Folder,
}

/// What a command reads inside an input that is a folder (an input that
/// is a file is read whole, whatever its kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The file alone (a domain file, an oracle file).
    File,
    /// Every file below (`--exclude` sets, `overlap`, `--templates-dir`).
    Tree,
    /// A dataset's or results' files below: every `*.jsonl`, every
    /// `manifest.json`, and everything in a `knowledge_book` folder
    /// (`--data`, `--instances`, the result paths of `score`). A chart
    /// or a results folder beside them is not read.
    Data,
}

/// A path the command reads, with the flag that named it (`--data`,
/// `--instances`), or what a positional argument is (`results path`).
#[derive(Clone, Debug)]
pub struct Input {
    pub flag: String,
    pub path: PathBuf,
    pub reads: Reads,
}

impl Input {
    pub fn new(flag: impl Into<String>, path: impl Into<PathBuf>, reads: Reads) -> Input {
        Input {
            flag: flag.into(),
            path: path.into(),
            reads,
        }
    }

    /// A file read alone.
    pub fn file(flag: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input::new(flag, path, Reads::File)
    }

    /// A dataset or results folder (or file).
    pub fn data(flag: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input::new(flag, path, Reads::Data)
    }

    /// A folder whose every file is read.
    pub fn tree(flag: impl Into<String>, path: impl Into<PathBuf>) -> Input {
        Input::new(flag, path, Reads::Tree)
    }
}

/// How a target meets an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// The target is the input.
    Same,
    /// The target lies inside the input folder.
    Inside,
    /// The target folder holds the input.
    Holds,
}

/// A target refused: it is, is inside, or holds one of the command's
/// inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverInput {
    pub flag: String,
    /// The flag's value.
    pub target: PathBuf,
    /// Where it writes: the value, or a folder inside it (`OUT/<domain>`).
    pub written: PathBuf,
    pub input_flag: String,
    pub input: PathBuf,
    pub overlap: Overlap,
}

impl fmt::Display for OverInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut target = format!("`{} {}`", self.flag, self.target.display());
        if self.written != self.target {
            target.push_str(&format!(" (its `{}`)", self.written.display()));
        }
        // A flag with its value; a positional argument by what it is.
        let input = if self.input_flag.starts_with('-') {
            format!("`{} {}`", self.input_flag, self.input.display())
        } else {
            format!("the {} `{}`", self.input_flag, self.input.display())
        };
        match self.overlap {
            Overlap::Same => write!(
                f,
                "{target} is {input}, which this command reads: writing it would replace its own input"
            ),
            Overlap::Inside => write!(
                f,
                "{target} is inside {input}, which this command reads: writing it would change its own input"
            ),
            Overlap::Holds => write!(
                f,
                "{target} holds {input}, which this command reads: writing there would change its own input"
            ),
        }
    }
}

impl std::error::Error for OverInput {}

impl OverInput {
    /// How to fix it.
    pub fn help(&self) -> String {
        match self.overlap {
            Overlap::Same => format!("give `{}` another path", self.flag),
            Overlap::Inside | Overlap::Holds => format!(
                "give `{}` a path outside `{}`",
                self.flag,
                self.input.display()
            ),
        }
    }
}

/// Refuses `target` (named by `flag`, written as `kind`) when it is, is
/// inside, or (a folder) holds one of `inputs`. `-` (standard input or
/// output) is no path and never conflicts.
pub fn check(
    flag: &str,
    target: &Path,
    kind: Written,
    inputs: &[Input],
) -> Result<(), Box<OverInput>> {
    check_within(flag, target, target, kind, inputs)
}

/// [`check`] of `written`, a folder or file the command writes inside the
/// flag's value `given` (`--out OUT` writes `OUT/<domain>`).
pub fn check_within(
    flag: &str,
    given: &Path,
    target: &Path,
    kind: Written,
    inputs: &[Input],
) -> Result<(), Box<OverInput>> {
    if is_stdio(target) {
        return Ok(());
    }
    let targets = places(target);
    for input in inputs.iter().filter(|i| !is_stdio(&i.path)) {
        let sources = places(&input.path);
        let overlap = if same_file(target, &input.path) {
            Some(Overlap::Same)
        } else {
            relation(&targets, &sources, kind, input.reads)
        };
        if let Some(overlap) = overlap {
            return Err(Box::new(OverInput {
                flag: flag.to_string(),
                target: given.to_path_buf(),
                written: target.to_path_buf(),
                input_flag: input.flag.clone(),
                input: input.path.clone(),
                overlap,
            }));
        }
    }
    Ok(())
}

fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// How the places of a target meet those of an input, if they do in a
/// way that matters: a target inside an input folder only where the
/// command reads there ([`Reads`]).
fn relation(
    targets: &[PathBuf],
    sources: &[PathBuf],
    kind: Written,
    reads: Reads,
) -> Option<Overlap> {
    for t in targets {
        for s in sources {
            if t == s {
                return Some(Overlap::Same);
            }
            if kind == Written::Folder && s.starts_with(t) {
                return Some(Overlap::Holds);
            }
            if let Ok(below) = t.strip_prefix(s)
                && read_below(below, kind, reads)
            {
                return Some(Overlap::Inside);
            }
        }
    }
    None
}

/// Whether a target at `below` inside an input folder is where the
/// command reads (a file), or may come to hold what it reads (a folder).
fn read_below(below: &Path, kind: Written, reads: Reads) -> bool {
    let books = below
        .components()
        .any(|c| c.as_os_str() == "knowledge_book");
    match (reads, kind) {
        (Reads::File, _) => false,
        (Reads::Tree, _) => true,
        (Reads::Data, Written::Folder) => books,
        (Reads::Data, Written::File) => {
            let name = below.file_name().map(|n| n.to_string_lossy());
            books || name.is_some_and(|n| n.ends_with(".jsonl") || n.as_ref() == "manifest.json")
        }
    }
}

/// Whether `a` and `b` are one existing file (device and inode; a link
/// to it or a hard link counts).
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    if !ma.is_file() || !mb.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// Every place `path` names: as written (absolute, folded), with its
/// folder resolved (the place of the name itself, a link not followed),
/// and fully resolved when it exists.
fn places(path: &Path) -> Vec<PathBuf> {
    let written = folded(path);
    let mut out = vec![written.clone()];
    if let (Some(parent), Some(name)) = (written.parent(), written.file_name()) {
        out.push(resolved_prefix(parent).join(name));
    }
    if let Ok(full) = std::fs::canonicalize(path) {
        out.push(full);
    }
    out.dedup();
    out
}

/// `path` made absolute with `.` dropped and `..` folded (without
/// looking at the file system).
fn folded(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `dir` with its longest existing ancestor resolved (links followed) and
/// the rest appended as written.
fn resolved_prefix(dir: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = dir;
    loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return dir.to_path_buf(),
        }
    }
}

/// Why an output directory flag's value cannot be a directory written
/// into, with the message and the help that say so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutDirProblem {
    /// A symbolic link on the way whose target does not exist (or a loop
    /// of links): creating the folder would fail with a bare "File
    /// exists". The user's file system.
    DanglingLink { message: String, help: String },
    /// The value is a file, or a path below a file: a misuse of the flag.
    NotADirectory { message: String, help: String },
}

/// What is wrong with `path`, the value of the output directory flag
/// `flag` (`--out`, `--out-dir`), if anything, before anything is
/// written.
pub fn out_dir_problem(path: &Path, flag: &str) -> Option<OutDirProblem> {
    // A link whose target is missing (or a loop of links) on the way:
    // creating the folder would fail with a bare "File exists".
    let dangling = path
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| std::fs::symlink_metadata(a).is_ok())
        .filter(|a| std::fs::metadata(a).is_err());
    if let Some(link) = dangling {
        let target = std::fs::read_link(link)
            .map(|t| format!("`{}`", t.display()))
            .unwrap_or_else(|_| "nothing".into());
        let at = if link == path {
            String::new()
        } else {
            format!(" (`{}` is on its way)", link.display())
        };
        return Some(OutDirProblem::DanglingLink {
            message: format!(
                "`{flag} {}`: `{}` is a symbolic link to {target}, which does not exist{at}",
                path.display(),
                link.display()
            ),
            help: format!(
                "create the folder the link points to, remove the link, or give `{flag}` another folder"
            ),
        });
    }
    let file = path
        .ancestors()
        .filter(|a| !a.as_os_str().is_empty())
        .find(|a| a.exists())
        .filter(|a| !a.is_dir());
    let file = file?;
    let message = if file == path {
        format!("`{flag} {}` is a file, not a directory", path.display())
    } else {
        format!(
            "`{flag} {}` is below `{}`, which is a file, not a directory",
            path.display(),
            file.display()
        )
    };
    Some(OutDirProblem::NotADirectory {
        message,
        help: format!(
            "`{flag}` names a directory (created if missing) that the files go into; give a directory, e.g. `{flag} generated`"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(flag: &str, path: &Path) -> Vec<Input> {
        vec![Input::data(flag, path)]
    }

    #[test]
    fn a_target_that_is_inside_or_holds_an_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("D");
        std::fs::create_dir_all(data.join("medical")).unwrap();
        let file = data.join("medical/S.jsonl");
        std::fs::write(&file, "{}\n").unwrap();
        let inputs = input("--data", &data);
        let e = check("-o", &file, Written::File, &inputs).unwrap_err();
        assert_eq!(e.overlap, Overlap::Inside);
        assert!(e.to_string().contains("`--data "), "{e}");
        // A new file inside the input folder, through `..` too.
        let odd = data.join("medical/../new.jsonl");
        assert!(check("-o", &odd, Written::File, &inputs).is_err());
        assert_eq!(
            check("-o", &file, Written::File, &input("--instances", &file))
                .unwrap_err()
                .overlap,
            Overlap::Same
        );
        // A folder written that holds the input.
        let e = check("--out", dir.path(), Written::Folder, &inputs).unwrap_err();
        assert_eq!(e.overlap, Overlap::Holds);
        // Beside it: fine, and so is standard output; inside it where the
        // command does not read (a chart, a results folder) too.
        let beside = dir.path().join("pairs.jsonl");
        assert!(check("-o", &beside, Written::File, &inputs).is_ok());
        let chart = data.join("chart.svg");
        assert!(check("--svg", &chart, Written::File, &inputs).is_ok());
        let results = data.join("results");
        assert!(check("--out", &results, Written::Folder, &inputs).is_ok());
        let book = data.join("medical/knowledge_book/S/seed=0.txt");
        assert!(check("-o", &book, Written::File, &inputs).is_err());
        let tree = vec![Input::tree("--exclude", &data)];
        assert!(check("--svg", &chart, Written::File, &tree).is_err());
        assert!(check("--out", &results, Written::Folder, &tree).is_err());
        let alone = vec![Input::file("--domain", &file)];
        assert!(check("-o", &beside, Written::File, &alone).is_ok());
        assert!(check("-o", Path::new("-"), Written::File, &inputs).is_ok());
        assert!(check("--out", &dir.path().join("R"), Written::Folder, &inputs).is_ok());
    }

    #[cfg(unix)]
    #[test]
    fn links_on_either_side_do_not_hide_an_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir_all(real.join("medical")).unwrap();
        let file = real.join("medical/S.jsonl");
        std::fs::write(&file, "{}\n").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        // Input through the link, target by the real path, and back.
        assert!(check("-o", &file, Written::File, &input("--data", &link)).is_err());
        let through = link.join("medical/S.jsonl");
        assert!(check("-o", &through, Written::File, &input("--data", &real)).is_err());
        // A file link to the input, and a hard link to it.
        let file_link = dir.path().join("out.jsonl");
        std::os::unix::fs::symlink(&file, &file_link).unwrap();
        assert!(check("-o", &file, Written::File, &input("PATH", &file_link)).is_err());
        let hard = dir.path().join("hard.jsonl");
        std::fs::hard_link(&file, &hard).unwrap();
        assert_eq!(
            check("-o", &hard, Written::File, &input("--instances", &file))
                .unwrap_err()
                .overlap,
            Overlap::Same
        );
        // A link inside the input folder pointing elsewhere is still inside.
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, real.join("away")).unwrap();
        let via = real.join("away/x.jsonl");
        assert!(check("-o", &via, Written::File, &input("--data", &real)).is_err());
    }
}
