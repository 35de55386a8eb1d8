//! `kumo-gen completions SHELL` and `kumo-gen man`: shell completion
//! scripts (clap_complete) and roff man pages (clap_mangen), both written
//! from the clap definitions `--help` and docs/flags.md come from, so
//! they cannot drift from the flags.

use std::path::{Path, PathBuf};

use clap_complete::Shell;

use super::{Error, Report, out};

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// The command whose page to print (`generate` prints kumo-gen-generate(1));
    /// none prints kumo-gen(1), which lists the commands.
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
    /// Write every page (kumo-gen.1 and kumo-gen-COMMAND.1 for each command)
    /// into DIR (created if missing) instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "command")]
    dir: Option<PathBuf>,
}

/// The binary's name, which completion scripts register.
const BIN: &str = "kumo-gen";

/// Prints the completion script of `args.shell` to stdout.
pub fn completions(args: &CompletionsArgs) -> Result<Report, Error> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut super::command(), BIN, &mut script);
    let mut script = String::from_utf8_lossy(&script).into_owned();
    if args.shell == Shell::Bash {
        script = bash_fixed(&script);
    }
    out(&script)?;
    Ok(Report::Done)
}

/// clap_complete's bash script for a binary whose name has a hyphen never
/// completes a subcommand's flags: the loop that tracks the subcommand
/// builds `kumo__gen__subcmd__score`, while the `case` arms holding each
/// subcommand's flags are named with the hyphen read as a subcommand
/// separator, `kumo__subcmd__gen__subcmd__score`, so no arm matches
/// (clap_complete 4.6). Naming the arms as the loop does fixes it; a test
/// runs bash on the script (`tests/messages.rs`).
fn bash_fixed(script: &str) -> String {
    script.replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"))
}

/// The root command as its pages show it: built, so each command knows
/// its full name (`kumo-gen generate`, page kumo-gen-generate(1)).
fn built() -> clap::Command {
    let mut root = super::command().disable_help_subcommand(true);
    root.build();
    root
}

fn render(command: clap::Command) -> Result<(String, Vec<u8>), Error> {
    let page = clap_mangen::Man::new(command);
    let mut roff = Vec::new();
    page.render(&mut roff)?;
    Ok((page.get_filename(), roff))
}

/// Prints one man page, or writes them all into `--dir`.
pub fn man(args: &ManArgs) -> Result<Report, Error> {
    let root = built();
    let commands: Vec<clap::Command> = root
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .cloned()
        .collect();
    if let Some(dir) = &args.dir {
        super::flags::check_out_dir(dir, "--dir")?;
        std::fs::create_dir_all(dir).map_err(|e| in_dir(dir, e))?;
        let mut written = 0;
        for command in std::iter::once(root.clone()).chain(commands) {
            let (name, roff) = render(command)?;
            crate::files::write_atomic(&dir.join(name), &roff)?;
            written += 1;
        }
        crate::stderr_line!("{written} man pages -> {}", dir.display());
        return Ok(Report::Done);
    }
    let page = match &args.command {
        None => root,
        Some(name) => match commands.into_iter().find(|c| c.get_name() == name) {
            Some(command) => command,
            None => {
                return Err(Error::Usage {
                    message: format!("`kumo-gen man {name}`: there is no command `{name}`"),
                    help: Some(
                        "`kumo-gen --help` lists the commands; `kumo-gen man` without one prints the main page".into(),
                    ),
                });
            }
        },
    };
    let (_, roff) = render(page)?;
    out(&String::from_utf8_lossy(&roff))?;
    Ok(Report::Done)
}

fn in_dir(path: &Path, e: std::io::Error) -> Error {
    Error::File(crate::files::FileError::io(path, e))
}
