//! The listener of `kumo-gen serve`: its own accept loop over hyper's
//! HTTP/1 (instead of `axum::serve`, which has no timeouts and no cap),
//! so no client can starve the server of connections or open files.
//!
//! - **A cap**: at most `--max-connections` connections are open at once
//!   (WebSocket sessions included: the count is held by the socket, so an
//!   upgraded connection keeps its place until it closes). Past it a
//!   connection is answered at once with a 503 (`CAPACITY_REACHED`) and
//!   closed, so the queue of waiting connections keeps moving.
//! - **Open files**: at start the soft limit is raised to the hard one
//!   ([`raise_open_files`]) and the cap lowered to what it allows, with
//!   room for the result files; both are reported ([`Notice::OpenFiles`]).
//! - **Timeouts** (`--request-timeout`): a request's headers must arrive
//!   within it (hyper's header timeout, which also closes a keep-alive
//!   connection idle that long), its body too (the routes), and a
//!   client that reads nothing of an answer for that long is cut off
//!   ([`Counted`]'s write timeout). An upgraded WebSocket has its own
//!   idle rule (`--idle-timeout`, the session's).
//! - **Accept errors** (out of file descriptors, ...) are reported, at
//!   most once a second with their count, and the loop pauses briefly
//!   instead of spinning.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Files kept open besides connections: the listener, the result files,
/// the runtime's own, the standard streams.
const RESERVED_FILES: u64 = 64;

/// Connections being told "full" at once at most (past it a connection
/// over the cap is closed without a word).
const MAX_REFUSING: usize = 256;

/// What a server tells its operator (the CLI prints each on stderr).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The open-files limit at start.
    OpenFiles(OpenFiles),
    /// The token is short.
    ShortToken { chars: usize },
    /// A non-loopback address and no token (`--insecure-no-token`).
    OpenWithoutToken { bind: SocketAddr },
    /// Accepting connections failed `times` times since the last notice.
    AcceptFailed { error: String, times: u64 },
    /// `times` connections were refused at the cap since the last notice.
    ConnectionsRefused { max: usize, times: u64 },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::OpenFiles(files) => {
                write!(f, "note: open files: limit {}", files.limit)?;
                if let Some(from) = files.raised_from {
                    write!(f, " (raised from {from})")?;
                }
                write!(f, "; at most {} connections", files.connections)?;
                if files.connections < files.asked {
                    write!(
                        f,
                        " (not the {} asked: raise `ulimit -n` to {} or more, or lower --max-connections)",
                        files.asked,
                        files.asked as u64 + RESERVED_FILES
                    )?;
                }
                Ok(())
            }
            Notice::ShortToken { chars } => write!(
                f,
                "note: the token of {} is {chars} characters; {} random characters or more (`openssl rand -hex 16`) resist guessing",
                super::TOKEN_VAR,
                super::SHORT_TOKEN
            ),
            Notice::OpenWithoutToken { bind } => write!(
                f,
                "warning: --insecure-no-token: anyone who can reach {} plays every line to its answer and writes results; set {} instead",
                bind.ip(),
                super::TOKEN_VAR
            ),
            Notice::AcceptFailed { error, times } => write!(
                f,
                "warning: accepting a connection failed ({times} time{} in the last second): {error}",
                if *times == 1 { "" } else { "s" }
            ),
            Notice::ConnectionsRefused { max, times } => write!(
                f,
                "warning: {times} connection{} refused: {max} open, the limit (--max-connections)",
                if *times == 1 { "" } else { "s" }
            ),
        }
    }
}

/// The open-files limit of the process and the connections it allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenFiles {
    /// The soft limit now.
    pub limit: u64,
    /// The soft limit before, when it was raised.
    pub raised_from: Option<u64>,
    /// The connections asked for (`--max-connections`).
    pub asked: usize,
    /// The connections the limit allows (at most `asked`).
    pub connections: usize,
}

/// Raises the soft open-files limit to the hard one (at most 2^20) and
/// returns it with the connections it allows of `asked`; `None` where
/// the limit cannot be read (no limit).
pub fn raise_open_files(asked: usize) -> Option<OpenFiles> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let now = getrlimit(Resource::Nofile);
        let current = now.current?;
        let ceiling = now.maximum.unwrap_or(u64::MAX).min(1 << 20);
        let mut files = OpenFiles {
            limit: current,
            raised_from: None,
            asked,
            connections: asked,
        };
        if ceiling > current
            && setrlimit(
                Resource::Nofile,
                Rlimit {
                    current: Some(ceiling),
                    maximum: now.maximum,
                },
            )
            .is_ok()
        {
            files.limit = ceiling;
            files.raised_from = Some(current);
        }
        let room = files.limit.saturating_sub(RESERVED_FILES).max(1);
        files.connections = asked.min(usize::try_from(room).unwrap_or(usize::MAX));
        Some(files)
    }
    #[cfg(not(unix))]
    {
        let _ = asked;
        None
    }
}

/// How connections are served.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_connections: usize,
    pub request_timeout: Duration,
}

/// Notices of one kind, at most one a second, with the count between.
struct Throttled {
    last: Option<Instant>,
    pending: u64,
}

impl Throttled {
    fn new() -> Throttled {
        Throttled {
            last: None,
            pending: 0,
        }
    }

    /// Counts one event; the count to report now, if a second has passed.
    fn tick(&mut self) -> Option<u64> {
        self.pending += 1;
        let now = Instant::now();
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.pending))
    }
}

/// Accepts connections and serves `router` on each until `stop` turns
/// true; then asks open HTTP connections to finish and waits for them (3
/// s at most). Upgraded WebSocket sessions end on `stop` by themselves.
pub async fn accept_loop(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    service: Arc<super::Service>,
    mut stop: watch::Receiver<bool>,
) {
    let open = Arc::new(AtomicUsize::new(0));
    let refusing = Arc::new(AtomicUsize::new(0));
    let mut connections = JoinSet::new();
    let mut failures = Throttled::new();
    let mut refusals = Throttled::new();
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopping(&mut stop) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                if let Some(times) = failures.tick() {
                    (service.notices)(&Notice::AcceptFailed {
                        error: e.to_string(),
                        times,
                    });
                }
                // Out of descriptors (or another resource): let closing
                // connections give some back instead of spinning.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let counted = match Counted::claim(stream, &open, limits) {
            Ok(counted) => counted,
            Err(stream) => {
                if refusing.load(Ordering::Acquire) < MAX_REFUSING {
                    refusing.fetch_add(1, Ordering::AcqRel);
                    let refusing = refusing.clone();
                    tokio::spawn(async move {
                        refuse(stream, limits.max_connections).await;
                        refusing.fetch_sub(1, Ordering::AcqRel);
                    });
                }
                if let Some(times) = refusals.tick() {
                    (service.notices)(&Notice::ConnectionsRefused {
                        max: limits.max_connections,
                        times,
                    });
                }
                continue;
            }
        };
        let hyper_service = TowerToHyperService::new(router.clone());
        let mut stop = stop.clone();
        connections.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.request_timeout)
                .max_buf_size(16 * 1024);
            let connection = builder
                .serve_connection(TokioIo::new(counted), hyper_service)
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopping(&mut stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(3), connection).await;
                }
            }
        });
    }
    let _ = tokio::time::timeout(Duration::from_secs(3), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
}

/// Answers a connection over the cap with a 503 and closes it (after
/// reading what it sent, briefly, so the answer is not lost to a reset).
async fn refuse(mut stream: TcpStream, max: usize) {
    let body = serde_json::json!({
        "detail": format!("the server has {max} open connections, its limit (--max-connections); try again later"),
        "code": "CAPACITY_REACHED",
    })
    .to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(response.as_bytes()).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        let mut left = 64 * 1024usize;
        loop {
            let n = tokio::io::AsyncReadExt::read(&mut stream, &mut sink).await?;
            if n == 0 || n >= left {
                return io::Result::Ok(());
            }
            left -= n;
        }
    })
    .await;
}

/// A connection that holds its place in the count until it is dropped
/// (after a WebSocket upgrade too: the upgraded stream owns it), and
/// gives up on a client that reads nothing of an answer for the request
/// timeout.
pub struct Counted {
    stream: TcpStream,
    open: Arc<AtomicUsize>,
    write_timeout: Duration,
    /// Since when a write has waited on the client.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Counted {
    /// A place for `stream` (`Ok`), or the stream back when the cap is
    /// reached (`Err`).
    fn claim(
        stream: TcpStream,
        open: &Arc<AtomicUsize>,
        limits: Limits,
    ) -> Result<Counted, TcpStream> {
        let mut now = open.load(Ordering::Acquire);
        loop {
            if now >= limits.max_connections {
                return Err(stream);
            }
            match open.compare_exchange(now, now + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    return Ok(Counted {
                        stream,
                        open: open.clone(),
                        write_timeout: limits.request_timeout,
                        stalled: None,
                    });
                }
                Err(seen) => now = seen,
            }
        }
    }

    /// A write waits on the client: an error once it has waited the
    /// timeout, else `Pending` (woken by the timer or the socket).
    fn wait_on_client<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let timeout = self.write_timeout;
        let sleep = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the client read nothing for {} s (--request-timeout)",
                    timeout.as_secs()
                ),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn progressed<T>(&mut self, ready: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        self.stalled = None;
        ready
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl AsyncRead for Counted {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write(cx, buf) {
            Poll::Pending => this.wait_on_client(cx),
            ready => this.progressed(ready),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_write_vectored(cx, bufs) {
            Poll::Pending => this.wait_on_client(cx),
            ready => this.progressed(ready),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        match Pin::new(&mut this.stream).poll_flush(cx) {
            Poll::Pending => this.wait_on_client(cx),
            ready => this.progressed(ready),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Returns once the server begins to stop.
pub(super) async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|&stopping| stopping).await;
}
