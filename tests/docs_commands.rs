//! Every shell command of the documents runs, so no example fails when
//! copied verbatim or writes into the repository.
//!
//! The documents are README.md and every `docs/*.md` (found, not listed,
//! so a new page is covered at once). They run one after another in ONE
//! scratch directory, as a reader of a fresh clone follows them from the
//! repository root: README.md first (its main job), then the pages in the
//! order README's "Next steps" table links them, then any other page by
//! name; so every page's commands must work after everything before them
//! ran (a folder holding several datasets, files an earlier page wrote).
//! The directory holds a copy of `tests/fixtures` (which examples name),
//! an empty `generated/` (the repository's holds only a README),
//! `../shared` linked to the repository's when it exists, and `kumo-gen`
//! on `PATH`. A page's fenced blocks run in order:
//!
//! - ` ```console `: each `$ ` line (with `\` continuation lines) is a
//!   command; the lines after it are its expected output: each must be a
//!   line of what it printed (stdout and stderr), floats and rates aside
//!   (they are timings); a line `...` stands for lines not shown. A command whose expected output has an `error:`
//!   line must fail; every other must exit 0.
//! - ` ```sh `: the block is one script, run with `sh -e`.
//! - A block right after a paragraph `*Not run by the docs test: REASON.*`
//!   is skipped by design (a build, the network, a model server); the
//!   reason is shown to the reader.
//! - ` ```bash ` holds job scripts (it must start with `#!`), never
//!   commands; a fence without a language is refused, so no command hides.
//! - `cargo run --release --locked -- ` is run as `kumo-gen `; any other
//!   `cargo` or `pip` command must be marked not run.
//!
//! After each page the scratch directory may hold nothing new but
//! `generated/` (where every example writes, and which git ignores); a
//! page that wrote elsewhere is named.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::root;

/// The marker of a block skipped by design, as the reader sees it.
const SKIP: &str = "*Not run by the docs test:";

/// How long one command or script may run.
const LIMIT: Duration = Duration::from_secs(180);

/// What the runner does with a fenced block.
#[derive(Debug, PartialEq)]
enum Kind {
    Console,
    Script,
    Skipped(String),
    NotCommands,
}

/// A fenced block of a document.
#[derive(Debug)]
struct Block {
    /// 1-based line of the opening fence.
    line: usize,
    kind: Kind,
    text: String,
}

/// The fenced blocks of a Markdown document, each with what to do with it;
/// `Err` names a block that breaks the rules above.
fn blocks(doc: &str, text: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let indent = lines[i].len() - trimmed.len();
        let open = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            let line = lines[i];
            body.push(
                line.get(indent.min(line.len() - line.trim_start().len())..)
                    .unwrap_or(""),
            );
            i += 1;
        }
        i += 1;
        let text = body.join("\n") + "\n";
        let before = lines[..open]
            .iter()
            .rev()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .unwrap_or("");
        let at = format!("{doc}:{}", open + 1);
        let language = info.split_whitespace().next().unwrap_or("");
        let kind = if let Some(reason) = before.strip_prefix(SKIP) {
            let reason = reason.trim().trim_end_matches('*').trim();
            if reason.is_empty() {
                return Err(format!("{at}: a skipped block must say why"));
            }
            Kind::Skipped(reason.to_string())
        } else {
            match language {
                "console" => Kind::Console,
                "sh" => Kind::Script,
                "bash" if text.starts_with("#!") => Kind::NotCommands,
                "bash" => {
                    return Err(format!(
                        "{at}: a `bash` block is a job script and starts with `#!`; commands go in `console` or `sh` blocks"
                    ));
                }
                "" => {
                    return Err(format!(
                        "{at}: a fence without a language; commands go in `console` or `sh` blocks, other text in `text`"
                    ));
                }
                _ => Kind::NotCommands,
            }
        };
        found.push(Block {
            line: open + 1,
            kind,
            text,
        });
    }
    Ok(found)
}

/// One command of a console block and the lines it must print.
struct Step {
    command: String,
    expected: Vec<String>,
}

/// The commands of a console block.
fn console_steps(text: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut continued = false;
    for line in text.lines() {
        if continued {
            let step = steps.last_mut().unwrap();
            step.command.push('\n');
            step.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                command: command.to_string(),
                expected: Vec::new(),
            });
            continued = command.ends_with('\\');
        } else if let Some(step) = steps.last_mut()
            && !line.trim().is_empty()
            && line.trim() != "..."
        {
            step.expected.push(line.to_string());
        }
    }
    steps
}

/// A printed line with its timings masked: decimal numbers and rates.
fn masked(line: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = line.trim_end().chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let decimal = i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit();
            if decimal {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let rest: String = chars[i..].iter().collect();
            if decimal || rest.starts_with(" instances/s") {
                out.push('#');
            } else {
                out.extend(&chars[start..i]);
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The command as the test runs it: `cargo run --release --locked --`
/// is the built binary; other `cargo` and `pip` commands are refused.
fn runnable(at: &str, command: &str) -> Result<String, String> {
    const RUN: &str = "cargo run --release --locked -- ";
    if let Some(rest) = command.strip_prefix(RUN) {
        return Ok(format!("kumo-gen {rest}"));
    }
    for line in command.lines() {
        let word = line.split_whitespace().next().unwrap_or("");
        if ["cargo", "pip", "pip3", "maturin"].contains(&word) {
            return Err(format!(
                "{at}: `{line}` builds or installs; mark its block `{SKIP} REASON.*`"
            ));
        }
    }
    Ok(command.to_string())
}

/// Runs `script` with `sh -e` in `dir`; (exit code, stdout + stderr).
fn shell(dir: &Path, script: &str) -> (Option<i32>, String) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kumo-gen"));
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut child = std::process::Command::new("sh")
        .arg("-ec")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .env_remove("KUMO_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut err, &mut text).ok();
        text
    });
    let mut text = String::new();
    let started = Instant::now();
    let waiter = std::thread::spawn(move || {
        std::io::Read::read_to_string(&mut out, &mut text).ok();
        text
    });
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = waiter.join().unwrap() + &reader.join().unwrap();
    match status {
        Some(status) => (status.code(), text),
        None => (None, format!("{text}\n(killed after {LIMIT:?})")),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The scratch directory every document runs in (see the module doc),
/// kept alive by the returned guard.
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    copy_dir(&root().join("tests/fixtures"), &work.join("tests/fixtures"));
    // As in the repository, where `generated/` holds a tracked README.
    std::fs::create_dir_all(work.join("generated")).unwrap();
    let shared = root().join("../shared");
    if shared.is_dir() {
        #[cfg(unix)]
        std::os::unix::fs::symlink(
            std::fs::canonicalize(&shared).unwrap(),
            scratch.path().join("shared"),
        )
        .unwrap();
    }
    (scratch, work)
}

/// Runs one document's commands in `work`; the problems found.
fn run_document(path: &Path, work: &Path) -> Vec<String> {
    let doc = path.strip_prefix(root()).unwrap().display().to_string();
    let text = std::fs::read_to_string(path).unwrap();
    let blocks = match blocks(&doc, &text) {
        Ok(blocks) => blocks,
        Err(problem) => return vec![problem],
    };
    let runs = |b: &Block| matches!(b.kind, Kind::Console | Kind::Script);
    if !blocks.iter().any(runs) {
        return Vec::new();
    }
    let needs_shared = blocks
        .iter()
        .any(|b| runs(b) && b.text.contains("../shared"));
    let have_shared = !needs_shared || crate::common::kumo_reference().is_some();
    let started = Instant::now();
    let mut problems = Vec::new();
    for block in &blocks {
        let at = format!("{doc}:{}", block.line);
        if block.text.contains("../shared") && !have_shared {
            eprintln!("skipping {at}: ../shared is absent");
            continue;
        }
        match &block.kind {
            Kind::Console => {
                for step in console_steps(&block.text) {
                    let command = match runnable(&at, &step.command) {
                        Ok(command) => command,
                        Err(problem) => {
                            problems.push(problem);
                            continue;
                        }
                    };
                    let (code, printed) = shell(work, &command);
                    let must_fail = step.expected.iter().any(|l| l.starts_with("error:"));
                    let ok = if must_fail {
                        code.is_some_and(|c| c != 0)
                    } else {
                        code == Some(0)
                    };
                    let printed_lines: Vec<String> = printed.lines().map(masked).collect();
                    let missing: Vec<&String> = step
                        .expected
                        .iter()
                        .filter(|l| !printed_lines.contains(&masked(l)))
                        .collect();
                    if !ok || !missing.is_empty() {
                        problems.push(format!(
                            "{at}: `{}` exited {code:?} ({})\n  lines it did not print: {missing:?}\n  it printed:\n{printed}",
                            step.command,
                            if must_fail { "it must fail" } else { "it must succeed" },
                        ));
                    }
                }
            }
            Kind::Script => {
                if let Err(problem) = runnable(&at, &block.text) {
                    problems.push(problem);
                    continue;
                }
                let (code, printed) = shell(work, &block.text);
                if code != Some(0) {
                    problems.push(format!(
                        "{at}: the block exited {code:?}; it printed:\n{printed}"
                    ));
                }
            }
            Kind::Skipped(_) | Kind::NotCommands => {}
        }
    }
    eprintln!("{doc}: its commands ran in {:.1?}", started.elapsed());
    for entry in std::fs::read_dir(work).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name != "generated" && name != "tests" {
            problems.push(format!(
                "{doc}: its commands wrote `{name}` outside generated/ (a reader's repository would keep it)"
            ));
        }
    }
    problems
}

/// README.md, then the pages under docs/ in the order README.md links
/// them, then any page it does not link, by name.
fn documents() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut linked: Vec<PathBuf> = Vec::new();
    for (at, _) in readme.match_indices("(docs/") {
        let name = &readme[at + 1..];
        let name = &name[..name.find([')', '#']).unwrap_or(name.len())];
        let page = root().join(name);
        if pages.contains(&page) && !linked.contains(&page) {
            linked.push(page);
        }
    }
    let mut docs = vec![root().join("README.md")];
    docs.extend(linked.iter().cloned());
    docs.extend(pages.into_iter().filter(|p| !linked.contains(p)));
    docs
}

#[test]
fn every_command_of_the_documents_runs_as_written_in_reading_order() {
    let (_guard, work) = scratch();
    let mut problems = Vec::new();
    for doc in documents() {
        problems.extend(run_document(&doc, &work));
    }
    assert!(
        problems.is_empty(),
        "commands of the documents fail as written, run in reading order after README.md's main job:\n\n{}",
        problems.join("\n\n")
    );
}

#[test]
fn the_reading_order_starts_with_the_readme_and_follows_its_links() {
    let docs = documents();
    let name = |p: &PathBuf| p.strip_prefix(root()).unwrap().display().to_string();
    assert_eq!(name(&docs[0]), "README.md");
    assert_eq!(name(&docs[1]), "docs/install.md");
    assert_eq!(name(&docs[2]), "docs/output.md");
    assert_eq!(name(&docs[3]), "docs/evaluation.md");
    let all = std::fs::read_dir(root().join("docs")).unwrap().count();
    assert_eq!(docs.len(), all + 1, "every page once");
}

#[test]
fn every_skipped_block_says_why_and_commands_hide_nowhere() {
    for doc in documents() {
        let name = doc.display().to_string();
        let text = std::fs::read_to_string(&doc).unwrap();
        let blocks = blocks(&name, &text).unwrap_or_else(|p| panic!("{p}"));
        for block in blocks {
            if let Kind::Skipped(reason) = &block.kind {
                assert!(reason.len() > 10, "{name}:{}: say why", block.line);
            }
        }
    }
}

#[test]
fn the_runner_reads_blocks_as_documented() {
    let text = "text\n\n```console\n$ kumo-gen a \\\n  --b\nout 1.5 s\n\n$ kumo-gen c\n```\n\n*Not run by the docs test: needs a server.*\n\n```sh\nkumo-gen eval\n```\n\n```\nx\n```\n";
    assert!(blocks("t.md", text).unwrap_err().contains("t.md:17"));
    let found = blocks("t.md", &text[..text.find("```\nx").unwrap()]).unwrap();
    assert_eq!(found[0].kind, Kind::Console);
    assert_eq!(found[1].kind, Kind::Skipped("needs a server.".into()));
    let steps = console_steps(&found[0].text);
    assert_eq!(steps[0].command, "kumo-gen a \\\n  --b");
    assert_eq!(steps[0].expected, vec!["out 1.5 s"]);
    assert_eq!(steps[1].command, "kumo-gen c");
    assert_eq!(
        masked("5000 in 1.211 s (4127 instances/s): 1420 resamples"),
        "5000 in # s (# instances/s): 1420 resamples"
    );
    assert!(runnable("t", "cargo build --release").is_err());
    assert_eq!(
        runnable("t", "cargo run --release --locked -- -n 5").unwrap(),
        "kumo-gen -n 5"
    );
}
