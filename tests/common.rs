//! Helpers shared by the integration tests: paths ([`root`],
//! [`kumo_reference`]), one way to run the binary ([`TestCommand`]) and
//! the tiny fixture's generate command ([`generate_tiny`]).

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/kumo-reference`, or `None` (with a note) when it is absent
/// on a developer machine. Under CI (`CI` set to anything but `false`/`0`)
/// a missing reference fails the test: a skipped conformance test is a test
/// that cannot fail.
#[allow(dead_code)]
pub fn kumo_reference() -> Option<PathBuf> {
    let dir = root().join("../shared/kumo-reference");
    if dir.is_dir() {
        return Some(dir);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.as_str(), "" | "0" | "false"));
    assert!(
        !ci,
        "{} is missing; CI=true requires KUMO's reference data beside the repository \
         (clone the shared folder next to it, or unset CI to skip these tests locally)",
        dir.display()
    );
    eprintln!(
        "skipping: {} is absent (set CI=true to make this an error)",
        dir.display()
    );
    None
}

/// The built `kumo-gen` binary as an assert_cmd command. Prefer
/// [`TestCommand`], whose failures show the working directory, the files
/// the run left and both streams; this stays for tests written against
/// assert_cmd.
#[allow(dead_code)]
/// The lines of a JSONL file, parsed.
pub fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The clinic fixture domain (3 truths, 3 actions), by its path from the
/// repository root.
pub const CLINIC: &str = "tests/fixtures/ok/clinic.yaml";

/// The clinic fixture domain, compiled.
pub fn clinic() -> kumo_gen::domain::Domain {
    let text = std::fs::read_to_string(root().join(CLINIC)).unwrap();
    kumo_gen::domain::Domain::from_yaml(CLINIC, &text)
        .unwrap()
        .0
}

/// `kumo-gen generate --domain DOMAIN --truths T --actions A -n N --out
/// OUT`, then `extra`: the setup run most tests start from.
pub fn generate_in(
    domain: &str,
    (truths, actions): (usize, usize),
    out: &Path,
    n: u64,
    extra: &[&str],
) -> TestCommand {
    let mut command = TestCommand::new();
    command
        .args(["generate", "--domain", domain])
        .args(["--truths", &truths.to_string()])
        .args(["--actions", &actions.to_string()])
        .args(["-n", &n.to_string(), "--out"])
        .arg(out)
        .args(extra);
    command
}

/// `kumo-gen generate` of `n` clinic 3x3 instances into `out`, then
/// `extra`.
pub fn generate_clinic(out: &Path, n: u64, extra: &[&str]) -> TestCommand {
    generate_in(CLINIC, (3, 3), out, n, extra)
}

/// `kumo-gen eval --player PLAYER --data DATA --out RESULTS`, then
/// `extra`, with no API key in its environment (an offline player never
/// needs one).
pub fn eval_player(player: &str, data: &Path, results: &Path, extra: &[&str]) -> TestCommand {
    let mut command = TestCommand::new();
    command
        .args(["eval", "--player", player, "--data"])
        .arg(data)
        .arg("--out")
        .arg(results)
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("KUMO_API_KEY");
    command
}

pub fn kumo_gen() -> assert_cmd::Command {
    assert_cmd::Command::new(env!("CARGO_BIN_EXE_kumo-gen"))
}

/// One run of the `kumo-gen` binary, built like a `std::process::Command`
/// (`arg`, `args`, `current_dir`, `env`, `env_remove`, `stdout`, `stderr`;
/// `stdin` takes the bytes to read) and run by
/// what the test expects of it: [`ok`](Self::ok) (exit 0),
/// [`expect_code`](Self::expect_code) or [`run`](Self::run) (no
/// expectation). An unexpected exit code panics with everything needed to
/// see why without re-running: the command line, the working directory,
/// a short tree of every directory the command names (and of the working
/// directory when it is not the repository root), and stdout and stderr.
///
/// The working directory is the repository root unless `current_dir` says
/// otherwise; stdin is empty unless `stdin` gives it bytes.
pub struct TestCommand {
    args: Vec<OsString>,
    cwd: PathBuf,
    env: Vec<(OsString, Option<OsString>)>,
    stdin: Option<Vec<u8>>,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
    timeout: Option<Duration>,
}

impl Default for TestCommand {
    fn default() -> Self {
        Self::new()
    }
}

#[allow(dead_code)]
impl TestCommand {
    /// `kumo-gen` with no arguments, run from the repository root.
    pub fn new() -> Self {
        TestCommand {
            args: Vec::new(),
            cwd: root(),
            env: Vec::new(),
            stdin: None,
            stdout: None,
            stderr: None,
            timeout: None,
        }
    }

    pub fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(&mut self, args: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cwd = dir.as_ref().to_path_buf();
        self
    }

    pub fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        let value = Some(value.as_ref().to_owned());
        self.env.push((key.as_ref().to_owned(), value));
        self
    }

    pub fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    /// Bytes the run reads on stdin (then end of file).
    pub fn stdin(&mut self, bytes: impl Into<Vec<u8>>) -> &mut Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// Sends stdout elsewhere (a closed pipe, `/dev/null`) instead of
    /// capturing it, for the next run only; the failure report then says
    /// it was not captured.
    pub fn stdout(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.stdout = Some(to.into());
        self
    }

    /// Sends stderr elsewhere instead of capturing it, for the next run only.
    pub fn stderr(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.stderr = Some(to.into());
        self
    }

    /// Kills the run after `limit` and fails the test, naming the limit.
    pub fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.timeout = Some(limit);
        self
    }

    /// Runs and requires exit code 0.
    pub fn ok(&mut self) -> Ran {
        self.expect_code(0)
    }

    /// Runs and requires exit code `code`.
    pub fn expect_code(&mut self, code: i32) -> Ran {
        let ran = self.run();
        if ran.status.code() != Some(code) {
            ran.fail(&format!("expected exit code {code}"));
        }
        ran
    }

    /// `std::process::Command::output`, for tests written against it:
    /// prefer [`run`](Self::run), whose result reports itself.
    pub fn output(&mut self) -> std::io::Result<Output> {
        Ok(self.run().output)
    }

    /// `std::process::Command::status`, for tests written against it.
    pub fn status(&mut self) -> std::io::Result<std::process::ExitStatus> {
        Ok(self.run().status)
    }

    /// Runs without expecting any exit code (the test looks at it).
    pub fn run(&mut self) -> Ran {
        let mut child = self.spawn();
        if let Some(bytes) = self.stdin.clone() {
            let mut pipe = child.stdin.take().unwrap();
            // A run that stops reading early closes the pipe: not a failure.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
        }
        let reader = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    pipe.read_to_end(&mut bytes).unwrap();
                }
                bytes
            })
        };
        let stdout = reader(child.stdout.take().map(|p| Box::new(p) as _));
        let stderr = reader(child.stderr.take().map(|p| Box::new(p) as _));
        let started = Instant::now();
        let mut timed_out = None;
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if let Some(limit) = self.timeout.filter(|&l| started.elapsed() > l) {
                child.kill().unwrap();
                timed_out = Some(limit);
                break child.wait().unwrap();
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let ran = Ran {
            output: Output {
                status,
                stdout: stdout.join().unwrap(),
                stderr: stderr.join().unwrap(),
            },
            captured: (self.stdout.is_none(), self.stderr.is_none()),
            command_line: self.command_line(),
            cwd: self.cwd.clone(),
            named_dirs: self.named_dirs(),
        };
        if let Some(limit) = timed_out {
            ran.fail(&format!("killed after the {limit:?} timeout"));
        }
        ran
    }

    /// Starts the run and hands back the child (for tests that kill it or
    /// race it against another run). Its stdout and stderr are captured
    /// pipes unless `stdout`/`stderr` said otherwise.
    pub fn spawn(&mut self) -> Child {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kumo-gen"));
        command.args(&self.args).current_dir(&self.cwd);
        for (key, value) in &self.env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(self.stdout.take().unwrap_or_else(Stdio::piped))
            .stderr(self.stderr.take().unwrap_or_else(Stdio::piped));
        command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.command_line()))
    }

    /// The command line as a shell would take it.
    fn command_line(&self) -> String {
        let quote = |arg: &OsStr| {
            let arg = arg.to_string_lossy();
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_=+./:,@%".contains(c));
            if plain {
                arg.into_owned()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        };
        let mut line = String::from("kumo-gen");
        for (key, value) in &self.env {
            let _ = match value {
                Some(v) => write!(line, " [env {}={}]", key.display(), v.display()),
                None => write!(line, " [env -u {}]", key.display()),
            };
        }
        for arg in &self.args {
            line.push(' ');
            line.push_str(&quote(arg));
        }
        line
    }

    /// The directories whose files a failure report lists: the working
    /// directory unless it is the repository root, and every argument
    /// (or `--flag=value` value) naming a directory outside the repository.
    fn named_dirs(&self) -> Vec<PathBuf> {
        let root = root();
        let mut dirs = Vec::new();
        if self.cwd != root {
            dirs.push(self.cwd.clone());
        }
        for arg in &self.args {
            let arg = arg.to_string_lossy();
            let value = arg.split_once('=').map_or(&*arg, |(_, v)| v);
            let path = self.cwd.join(value);
            if path.is_dir() && !path.starts_with(&root) && !dirs.contains(&path) {
                dirs.push(path);
            }
        }
        dirs
    }
}

/// What a [`TestCommand`] run gave: the process output (through `Deref`:
/// `status`, `stdout`, `stderr`) and checks that report like a failed run.
pub struct Ran {
    pub output: Output,
    /// Whether stdout and stderr were captured.
    captured: (bool, bool),
    command_line: String,
    cwd: PathBuf,
    named_dirs: Vec<PathBuf>,
}

impl std::fmt::Debug for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.report())
    }
}

impl Deref for Ran {
    type Target = Output;
    fn deref(&self) -> &Output {
        &self.output
    }
}

#[allow(dead_code)]
impl Ran {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }

    /// Stdout parsed as one JSON value.
    pub fn stdout_json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.output.stdout)
            .unwrap_or_else(|e| self.fail(&format!("stdout is not one JSON value ({e})")))
    }

    pub fn stderr_contains(&self, text: &str) -> &Self {
        if !self.stderr_text().contains(text) {
            self.fail(&format!("expected stderr to contain {text:?}"));
        }
        self
    }

    pub fn stdout_contains(&self, text: &str) -> &Self {
        if !self.stdout_text().contains(text) {
            self.fail(&format!("expected stdout to contain {text:?}"));
        }
        self
    }

    pub fn stdout_lacks(&self, text: &str) -> &Self {
        if self.stdout_text().contains(text) {
            self.fail(&format!("expected stdout not to contain {text:?}"));
        }
        self
    }

    pub fn stderr_lacks(&self, text: &str) -> &Self {
        if self.stderr_text().contains(text) {
            self.fail(&format!("expected stderr not to contain {text:?}"));
        }
        self
    }

    pub fn stdout_starts_with(&self, text: &str) -> &Self {
        if !self.stdout_text().starts_with(text) {
            self.fail(&format!("expected stdout to start with {text:?}"));
        }
        self
    }

    pub fn stdout_is(&self, text: &str) -> &Self {
        if self.stdout_text() != text {
            self.fail(&format!("expected stdout to be {text:?}"));
        }
        self
    }

    /// Fails the test with `what` and the whole report of the run.
    pub fn fail(&self, what: &str) -> ! {
        panic!("{what}\n{}", self.report())
    }

    /// The command line, exit status, working directory, the files under
    /// the directories the command names, stdout and stderr.
    pub fn report(&self) -> String {
        let mut report = format!(
            "command: {}\nexit:    {}\ncwd:     {}\n",
            self.command_line,
            self.output.status,
            self.cwd.display()
        );
        for dir in &self.named_dirs {
            let _ = writeln!(report, "files under {}:", dir.display());
            report.push_str(&tree(dir, 40));
        }
        let stream = |name: &str, captured: bool, bytes: &[u8]| match captured {
            false => format!("{name}: (not captured)\n"),
            true if bytes.is_empty() => format!("{name}: (empty)\n"),
            true => format!("{name}:\n{}\n", String::from_utf8_lossy(bytes).trim_end()),
        };
        report.push_str(&stream("stdout", self.captured.0, &self.output.stdout));
        report.push_str(&stream("stderr", self.captured.1, &self.output.stderr));
        report
    }
}

/// The first `limit` paths under `dir` (depth first, sorted), indented by
/// depth, with file sizes; a last line counts what was left out.
fn tree(dir: &Path, limit: usize) -> String {
    fn walk(dir: &Path, depth: usize, lines: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let indent = "  ".repeat(depth + 1);
            if path.is_symlink() {
                lines.push(format!("{indent}{name} -> (link)"));
            } else if path.is_dir() {
                lines.push(format!("{indent}{name}/"));
                walk(&path, depth + 1, lines);
            } else {
                let size = path.metadata().map_or(0, |m| m.len());
                lines.push(format!("{indent}{name} ({size} B)"));
            }
        }
    }
    let mut lines = Vec::new();
    walk(dir, 0, &mut lines);
    let more = lines.len().saturating_sub(limit);
    lines.truncate(limit);
    let mut text = lines.join("\n");
    if more > 0 {
        let _ = write!(text, "\n  ... and {more} more");
    }
    if text.is_empty() {
        text.push_str("  (empty)");
    }
    text.push('\n');
    text
}

/// The tiny fixture domain, and the setting [`generate_tiny`] writes.
pub const TINY: &str = "tests/fixtures/ok/tiny.yaml";
pub const TINY_SETTING: &str = "truth_num=3+action_num=3+valid_truth_num=1";

/// `kumo-gen generate` of the tiny fixture at 3x3 into `out` (`-n n`),
/// with `extra` flags, run from the repository root.
pub fn generate_tiny(out: &Path, n: u64, extra: &[&str]) -> TestCommand {
    generate_in(TINY, (3, 3), out, n, extra)
}
