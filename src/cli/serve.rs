//! `kumo-gen serve`: episodes of datasets over OpenEnv's HTTP and
//! WebSocket contract, and a page where people play them
//! ([`crate::serve`]). Flags to a checked [`Config`], one library call.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use super::{Error, Globals, Report, out};
use crate::files::target::{Input, Written};
use crate::serve::{self, Config, TOKEN_VAR, catalog::Catalog};

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Dataset directory to serve (repeatable): a dataset (`OUT/<domain>`),
    /// a root of datasets (a generate run's --out) or of `--split` parts.
    #[arg(long, value_name = "DIR", required = true)]
    data: Vec<PathBuf>,
    /// The domain that judges answers (default: each dataset's manifest or
    /// directory name, as for eval).
    #[arg(long, value_name = "NAME|PATH")]
    domain: Option<String>,
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, value_name = "P", default_value_t = 8000)]
    port: u16,
    /// Address to listen on. Anything but loopback lets other machines
    /// play: it needs KUMO_SERVE_TOKEN (or --insecure-no-token).
    #[arg(long, value_name = "ADDR", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    bind: IpAddr,
    /// Serve a non-loopback --bind without a token (refused otherwise):
    /// anyone who can reach the port plays every line to its answer and
    /// writes results.
    #[arg(long)]
    insecure_no_token: bool,
    /// Results root: every finished episode is appended in KUMO's result
    /// format below it (`<player>/<agent>/<dataset>/<setting>/eval_times=1.jsonl`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Open sessions at most (WebSocket connections and HTTP episodes);
    /// past it a client gets CAPACITY_REACHED.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_sessions: u64,
    /// Open connections at most, WebSocket sessions included (default:
    /// --max-sessions + 1024); lowered to what the open-files limit
    /// allows. Past it a connection gets a 503 at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    max_connections: Option<u64>,
    /// A session that sends nothing for this many seconds is closed
    /// (WebSocket pings do not count).
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    idle_timeout: u64,
    /// A request's headers and its body must each arrive within this many
    /// seconds; a keep-alive connection idle this long is closed, and a
    /// client that reads nothing of an answer this long is cut off.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3_600))]
    request_timeout: u64,
    /// Largest request body or WebSocket message, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1024..=(64 << 20)))]
    max_message_bytes: u64,
    /// Replies per episode at most (eval's --max-steps; 1 to 10 000); a
    /// reset's `budget` is at most this too.
    #[arg(long, value_name = "M", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=crate::game::MAX_REPLIES as u64))]
    max_steps: u64,
    #[command(flatten)]
    pool: super::flags::PoolFlags,
    #[command(flatten)]
    templates: super::flags::TemplatesFlags,
}

pub fn run(globals: &Globals, args: &ServeArgs) -> Result<Report, Error> {
    super::flags::check_out_dir(&args.out, "--out")?;
    let mut inputs: Vec<Input> = args.data.iter().map(|d| Input::data("--data", d)).collect();
    inputs.extend(
        args.domain
            .as_deref()
            .and_then(|d| super::flags::domain_input(&globals.registry, "--domain", d)),
    );
    inputs.extend(super::flags::templates_input(&args.templates));
    super::flags::refuse_over_inputs("--out", &args.out, Written::Folder, &inputs)?;
    let templates = args.templates.templates()?;
    let catalog = Catalog::open(
        &globals.registry,
        &args.data,
        args.domain.as_deref(),
        templates,
    )?;
    super::note_unread(&catalog.unread);
    let token = std::env::var(TOKEN_VAR).ok().filter(|t| !t.is_empty());
    let config = Config {
        bind: SocketAddr::new(args.bind, args.port),
        out: args.out.clone(),
        max_sessions: args.max_sessions as usize,
        idle_timeout: Duration::from_secs(args.idle_timeout),
        max_message_bytes: args.max_message_bytes as usize,
        max_steps: args.max_steps as usize,
        threads: args.pool.threads,
        token,
        max_connections: args
            .max_connections
            .unwrap_or(args.max_sessions.saturating_add(1024)) as usize,
        request_timeout: Duration::from_secs(args.request_timeout),
        insecure_no_token: args.insecure_no_token,
    };
    let notices: serve::Notices = Box::new(|notice| crate::stderr_line!("{notice}"));
    let summary = serve::run(catalog, config, notices, |addr, service| {
        for skipped in service.results.skipped() {
            crate::stderr_line!(
                "note: not read (which lines people played is counted without it): {skipped}"
            );
        }
        let envs = service
            .catalog
            .envs
            .iter()
            .map(|e| format!("{} ({} splits)", e.name, e.splits.len()))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = out(&format!(
            "serving http://{addr}/ : {envs}, {} lines; WebSocket ws://{addr}/ws; the page at http://{addr}/ ; results under {}{}\n",
            service.catalog.total_lines(),
            service.results.root().display(),
            if service.config.token.is_some() {
                format!("; token from {TOKEN_VAR}")
            } else {
                String::new()
            }
        ));
    })?;
    let mut report = format!(
        "stopped: {} episode{} recorded",
        summary.episodes_recorded,
        if summary.episodes_recorded == 1 {
            ""
        } else {
            "s"
        }
    );
    if summary.reaped > 0 {
        report.push_str(&format!(
            ", {} idle HTTP episode(s) dropped",
            summary.reaped
        ));
    }
    if summary.open_at_shutdown.is_empty() {
        report.push_str(", none open");
    } else {
        let mut open = summary.open_at_shutdown.clone();
        open.sort();
        report.push_str(&format!(
            "; {} open episode(s) not recorded: {}",
            open.len(),
            open.join(", ")
        ));
    }
    crate::stderr_line!("{report}");
    Ok(Report::Done)
}
