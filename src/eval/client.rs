//! A blocking OpenAI-compatible chat-completions client with a hard
//! per-request timeout and retries.
//!
//! Two kinds of trouble, handled differently:
//! - *transport* (timeout, connection error, HTTP 408/429/5xx): retried with
//!   exponential backoff and jitter (`Retry-After` honoured when longer), up
//!   to `retries` times; after that the call fails with [`CallError::Gave`]
//!   and the runner leaves the instance unfinished, to be resumed later.
//! - a 200 whose body is not a chat completion at all (truncated JSON, an
//!   HTML error page, no `choices`) is the server's fault, not the
//!   model's: handled as transport trouble (retried, then the instance is
//!   left unfinished), never recorded as a parse error;
//! - *reply* (a completion whose `finish_reason` is not `stop`, or another
//!   4xx such as a context overflow):
//!   KUMO's client tries 5 times in all and then hands the agent `None`,
//!   which ends the trial as a parse error. Same here ([`Reply::text`] is
//!   `None`, tokens 0).
//! - 401/403/404 mean the key, the model or the URL is wrong: fatal.
//!
//! Every wait before a retry is logged on stderr with its reason;
//! `Retry-After` is honoured up to [`MAX_RETRY_AFTER`] (a server asking
//! for days is not waited for silently).
//!
//! ureq (rustls) rather than a hand-rolled HTTP/1.1: hosted APIs need TLS,
//! and ureq is small, blocking (no async runtime) and has a global timeout.

use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::progress::{Event, Progress};

/// KUMO's `call_llm(num_trials=5)`.
const REPLY_ATTEMPTS: usize = 5;

/// Longest `Retry-After` honoured.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Client settings.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// Base URL, e.g. `http://localhost:8001/v1`.
    pub api_base: String,
    pub model: String,
    /// Bearer token; never printed.
    pub api_key: Option<String>,
    pub temperature: Option<f64>,
    /// Hard limit for one request, connect to last byte.
    pub timeout: Duration,
    /// Transport retries per call.
    pub retries: u32,
    /// First backoff delay; doubles per retry up to `backoff_cap`.
    pub backoff: Duration,
    pub backoff_cap: Duration,
}

/// A model reply as KUMO's agent sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub text: Option<String>,
    pub tokens: u64,
    /// Transport retries this call needed.
    pub retried: u32,
}

/// A reply that may have been cut off for length
/// ([`Client::complete_continuable`]): the caller continues it.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    pub text: Option<String>,
    /// `finish_reason` was `length`: the text stops mid-way.
    pub truncated: bool,
    pub tokens: u64,
    pub retried: u32,
}

/// Why a call produced no reply at all.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("gave up after {attempts} attempts: {last}")]
    Gave { attempts: u32, last: String },
    #[error("{0}")]
    Fatal(String),
}

/// One worker's client: its own connection pool and jitter stream, and
/// where it reports each retry.
pub struct Client<'r> {
    config: ClientConfig,
    agent: ureq::Agent,
    rng: ChaCha8Rng,
    reporter: &'r dyn Progress,
}

enum Attempt {
    Ok {
        text: Option<String>,
        tokens: u64,
        /// Cut off for length (only when the caller accepts that).
        truncated: bool,
    },
    /// A reply KUMO's client would retry (then hand over `None`).
    Reply,
    Transport {
        why: String,
        retry_after: Option<Duration>,
    },
    Fatal(String),
}

impl<'r> Client<'r> {
    /// `seed` and `stream` fix the jitter sequence (one stream per worker);
    /// each retried request is an [`Event::Retry`] to `reporter`.
    pub fn new(config: ClientConfig, seed: u64, stream: u64, reporter: &'r dyn Progress) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Client {
            config,
            agent,
            rng,
            reporter,
        }
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.config.api_base.trim_end_matches('/')
        )
    }

    /// Asks for the next reply to `messages`.
    pub fn complete(&mut self, messages: &[Value]) -> Result<Reply, CallError> {
        let c = self.call(messages, false)?;
        Ok(Reply {
            text: c.text,
            tokens: c.tokens,
            retried: c.retried,
        })
    }

    /// Like [`Client::complete`], but a reply cut off for length
    /// (`finish_reason: length`) comes back with `truncated` set instead of
    /// being asked again: callers that continue long replies (`propose`)
    /// use it.
    pub fn complete_continuable(&mut self, messages: &[Value]) -> Result<Completion, CallError> {
        self.call(messages, true)
    }

    fn call(&mut self, messages: &[Value], accept_length: bool) -> Result<Completion, CallError> {
        let mut body = json!({"model": self.config.model, "messages": messages});
        if let Some(t) = self.config.temperature {
            body["temperature"] = json!(t);
        }
        let body = body.to_string();
        let (mut retried, mut reply_failures) = (0u32, 0usize);
        loop {
            match self.attempt(&body, accept_length) {
                Attempt::Ok {
                    text,
                    tokens,
                    truncated,
                } => {
                    return Ok(Completion {
                        text,
                        truncated,
                        tokens,
                        retried,
                    });
                }
                Attempt::Reply => {
                    reply_failures += 1;
                    if reply_failures >= REPLY_ATTEMPTS {
                        return Ok(Completion {
                            text: None,
                            truncated: false,
                            tokens: 0,
                            retried,
                        });
                    }
                }
                Attempt::Transport { why, retry_after } => {
                    if retried >= self.config.retries {
                        return Err(CallError::Gave {
                            attempts: retried + 1,
                            last: why,
                        });
                    }
                    let delay = self.backoff(retried).max(retry_after.unwrap_or_default());
                    self.reporter.event(Event::Retry {
                        url: &self.url(),
                        why: &why,
                        attempt: retried + 1,
                        retries: self.config.retries,
                        delay,
                    });
                    std::thread::sleep(delay);
                    retried += 1;
                }
                Attempt::Fatal(why) => return Err(CallError::Fatal(why)),
            }
        }
    }

    /// Exponential backoff with equal jitter: half the delay fixed, half
    /// drawn from the worker's seeded stream.
    fn backoff(&mut self, retry: u32) -> Duration {
        let base = self.config.backoff.as_secs_f64() * 2f64.powi(retry.min(30) as i32);
        let capped = base.min(self.config.backoff_cap.as_secs_f64());
        let jitter: f64 = self.rng.random_range(0.0..1.0);
        Duration::from_secs_f64(capped / 2.0 + capped / 2.0 * jitter)
    }

    fn attempt(&mut self, body: &str, accept_length: bool) -> Attempt {
        let mut request = self
            .agent
            .post(&self.url())
            .header("Content-Type", "application/json");
        if let Some(key) = &self.config.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = match request.send(body) {
            Ok(r) => r,
            Err(e) => {
                return Attempt::Transport {
                    why: transport_message(&e),
                    retry_after: None,
                };
            }
        };
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(|s| Duration::from_secs_f64(s.min(MAX_RETRY_AFTER.as_secs_f64())));
        let text = match response.body_mut().read_to_string() {
            Ok(t) => t,
            Err(e) => {
                return Attempt::Transport {
                    why: transport_message(&e),
                    retry_after: None,
                };
            }
        };
        match status {
            200..=299 => parse_completion(&text, accept_length),
            408 | 429 | 500..=599 => Attempt::Transport {
                why: format!("HTTP {status}"),
                retry_after,
            },
            401 | 403 => Attempt::Fatal(format!(
                "HTTP {status} from the API: check the key in KUMO_API_KEY or OPENAI_API_KEY"
            )),
            404 => Attempt::Fatal(format!(
                "HTTP 404 from `{}`: check --api-base (it should end in `/v1`) and --model",
                self.url()
            )),
            _ => Attempt::Reply,
        }
    }
}

/// The API key from the environment: `KUMO_API_KEY`, else
/// `OPENAI_API_KEY` (never a flag: flags show in `ps`).
pub fn api_key_from_env() -> Option<String> {
    ["KUMO_API_KEY", "OPENAI_API_KEY"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

/// An `--api-base` that cannot be used: malformed, or no server answers.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    /// Not an `http://` or `https://` URL with a host and port (`why`).
    #[error("--api-base `{api_base}` {why}; give a URL such as `http://localhost:8001/v1`")]
    Malformed { api_base: String, why: &'static str },
    /// The host does not resolve (`why`: the resolver's words).
    #[error("cannot resolve `{host}` of --api-base `{api_base}`: {why}")]
    Unresolved {
        host: String,
        api_base: String,
        why: String,
    },
    /// Nothing accepts connections there (`why`: the last connect error).
    #[error(
        "cannot reach the server of --api-base `{api_base}` ({host}:{port}): {why}; is it running?"
    )]
    Unreachable {
        api_base: String,
        host: String,
        port: u16,
        why: String,
    },
}

/// Checks `--api-base`: an `http://` or `https://` URL with a host; returns
/// the host and port to connect to.
pub fn parse_api_base(api_base: &str) -> Result<(String, u16), EndpointError> {
    let bad = |why: &'static str| EndpointError::Malformed {
        api_base: api_base.to_string(),
        why,
    };
    let (rest, default_port) = if let Some(rest) = api_base.strip_prefix("http://") {
        (rest, 80)
    } else if let Some(rest) = api_base.strip_prefix("https://") {
        (rest, 443)
    } else {
        return Err(bad("does not start with `http://` or `https://`"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    if authority.is_empty() || authority.chars().any(char::is_whitespace) {
        return Err(bad("has no host"));
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').ok_or_else(|| bad("has a bad host"))?;
        match after.strip_prefix(':') {
            Some(port) => (host, port.parse().map_err(|_| bad("has a bad port"))?),
            None if after.is_empty() => (host, default_port),
            None => return Err(bad("has a bad host")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, port.parse().map_err(|_| bad("has a bad port"))?),
            None => (authority, default_port),
        }
    };
    if host.is_empty() {
        return Err(bad("has no host"));
    }
    Ok((host.to_string(), port))
}

/// Whether the server of `api_base` accepts connections, within `within`:
/// a run against an unreachable server says so at once instead of
/// spending its retries in silence.
pub fn check_reachable(api_base: &str, within: Duration) -> Result<(), EndpointError> {
    use std::net::{TcpStream, ToSocketAddrs};
    let (host, port) = parse_api_base(api_base)?;
    let addrs: Vec<_> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| EndpointError::Unresolved {
            host: host.clone(),
            api_base: api_base.to_string(),
            why: e.to_string(),
        })?
        .collect();
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, within) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    Err(EndpointError::Unreachable {
        api_base: api_base.to_string(),
        host,
        port,
        why: last.map_or_else(|| "no address".to_string(), |e| e.to_string()),
    })
}

fn transport_message(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "request timed out".into(),
        other => other.to_string(),
    }
}

/// Reads a chat completion: KUMO accepts only `finish_reason == "stop"`
/// (and `length` too when `accept_length`, marked truncated).
/// A body that is no completion at all is the server's fault (retried as
/// transport trouble), not the model's.
fn parse_completion(body: &str, accept_length: bool) -> Attempt {
    let not_completion = |what: &str| {
        let shown: String = body.chars().take(80).collect();
        Attempt::Transport {
            why: format!("HTTP 200 but {what} (body starts {shown:?})"),
            retry_after: None,
        }
    };
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return not_completion("the body is not JSON");
    };
    let Some(choice) = v
        .get("choices")
        .and_then(|c| c.get(0))
        .filter(|c| c.is_object())
    else {
        return not_completion("the body has no `choices`");
    };
    let truncated = accept_length && choice["finish_reason"] == "length";
    if choice["finish_reason"] != "stop" && !truncated {
        return Attempt::Reply;
    }
    // A `stop` without content reaches KUMO's agent as `None` at once;
    // content that is not text (a number, a list, an object) is no
    // completion the protocol knows: the server's fault, retried.
    let content = &choice["message"]["content"];
    if !(content.is_string() || content.is_null()) {
        return not_completion("`choices[0].message.content` is not a string");
    }
    Attempt::Ok {
        text: content.as_str().map(str::to_string),
        tokens: v["usage"]["total_tokens"].as_u64().unwrap_or(0),
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ClientConfig {
        ClientConfig {
            api_base: "http://127.0.0.1:9/v1".into(),
            model: "m".into(),
            api_key: None,
            temperature: None,
            timeout: Duration::from_secs(1),
            retries: 3,
            backoff: Duration::from_millis(100),
            backoff_cap: Duration::from_millis(1000),
        }
    }

    #[test]
    fn backoff_doubles_with_seeded_jitter() {
        let delays = |seed, stream| {
            let mut c = Client::new(config(), seed, stream, &crate::progress::Quiet);
            (0..6).map(|r| c.backoff(r)).collect::<Vec<_>>()
        };
        let a = delays(7, 0);
        assert_eq!(a, delays(7, 0), "same seed and stream, same jitter");
        assert_ne!(a, delays(7, 1), "each worker has its own stream");
        for (r, d) in a.iter().enumerate() {
            let full = (100.0 * 2f64.powi(r as i32)).min(1000.0) / 1000.0;
            let s = d.as_secs_f64();
            assert!(
                s >= full / 2.0 - 1e-9 && s <= full + 1e-9,
                "retry {r}: {s} vs {full}"
            );
        }
    }

    #[test]
    fn api_bases_are_checked() {
        assert_eq!(
            parse_api_base("http://localhost:8001/v1").unwrap(),
            ("localhost".to_string(), 8001)
        );
        assert_eq!(
            parse_api_base("https://api.example.com/v1").unwrap(),
            ("api.example.com".to_string(), 443)
        );
        assert_eq!(
            parse_api_base("http://[::1]:9/v1").unwrap(),
            ("::1".to_string(), 9)
        );
        for bad in [
            "localhost:8001/v1",
            "ftp://x/v1",
            "http:///v1",
            "http://h:99999/v1",
            "http://h:x/v1",
        ] {
            assert!(parse_api_base(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_completions_like_kumo() {
        let ok = r#"{"choices": [{"finish_reason": "stop", "message": {"content": "hi"}}], "usage": {"total_tokens": 12}}"#;
        assert!(
            matches!(parse_completion(ok, false), Attempt::Ok { text: Some(t), tokens: 12, truncated: false } if t == "hi")
        );
        let length = r#"{"choices": [{"finish_reason": "length", "message": {"content": "hi"}}]}"#;
        assert!(matches!(parse_completion(length, false), Attempt::Reply));
        assert!(matches!(
            parse_completion(length, true),
            Attempt::Ok { text: Some(t), truncated: true, .. } if t == "hi"
        ));
        assert!(matches!(
            parse_completion("<html>", false),
            Attempt::Transport { .. }
        ));
        assert!(matches!(
            parse_completion(r#"{"choices": [{"finish_rea"#, false),
            Attempt::Transport { .. }
        ));
        assert!(matches!(
            parse_completion(r#"{"object": "error"}"#, false),
            Attempt::Transport { .. }
        ));
        for content in ["42", "[\"hi\"]", "{\"text\": \"hi\"}", "true"] {
            let body = format!(
                r#"{{"choices": [{{"finish_reason": "stop", "message": {{"content": {content}}}}}]}}"#
            );
            assert!(
                matches!(parse_completion(&body, false), Attempt::Transport { .. }),
                "a content of {content} is the server's fault, retried"
            );
        }
        let null = r#"{"choices": [{"finish_reason": "stop", "message": {"content": null}}]}"#;
        assert!(matches!(
            parse_completion(null, false),
            Attempt::Ok {
                text: None,
                tokens: 0,
                truncated: false
            }
        ));
    }
}
