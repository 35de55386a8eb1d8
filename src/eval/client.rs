//! A blocking OpenAI-compatible chat-completions client with a hard
//! per-request timeout and retries.
//!
//! Two kinds of trouble, handled differently:
//! - *transport* (timeout, connection error, HTTP 408/429/5xx): retried with
//!   exponential backoff and jitter (`Retry-After` honoured when longer), up
//!   to `retries` times; after that the call fails with [`CallError::Gave`]
//!   and the runner leaves the instance unfinished, to be resumed later.
//! - *reply* (a 200 whose `finish_reason` is not `stop`, a body that is
//!   not a completion, or another 4xx such as a context overflow):
//!   KUMO's client tries 5 times in all and then hands the agent `None`,
//!   which ends the trial as a parse error. Same here ([`Reply::text`] is
//!   `None`, tokens 0).
//! - 401/403/404 mean the key, the model or the URL is wrong: fatal.
//!
//! ureq (rustls) rather than a hand-rolled HTTP/1.1: hosted APIs need TLS,
//! and ureq is small, blocking (no async runtime) and has a global timeout.

use std::time::Duration;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

/// KUMO's `call_llm(num_trials=5)`.
const REPLY_ATTEMPTS: usize = 5;

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

/// Why a call produced no reply at all.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("gave up after {attempts} attempts: {last}")]
    Gave { attempts: u32, last: String },
    #[error("{0}")]
    Fatal(String),
}

/// One worker's client: its own connection pool and jitter stream.
pub struct Client {
    config: ClientConfig,
    agent: ureq::Agent,
    rng: ChaCha8Rng,
}

enum Attempt {
    Ok {
        text: Option<String>,
        tokens: u64,
    },
    /// A reply KUMO's client would retry (then hand over `None`).
    Reply,
    Transport {
        why: String,
        retry_after: Option<Duration>,
    },
    Fatal(String),
}

impl Client {
    /// `seed` and `stream` fix the jitter sequence (one stream per worker).
    pub fn new(config: ClientConfig, seed: u64, stream: u64) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .build()
            .into();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Client { config, agent, rng }
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.config.api_base.trim_end_matches('/')
        )
    }

    /// Asks for the next reply to `messages`.
    pub fn complete(&mut self, messages: &[Value]) -> Result<Reply, CallError> {
        let mut body = json!({"model": self.config.model, "messages": messages});
        if let Some(t) = self.config.temperature {
            body["temperature"] = json!(t);
        }
        let body = body.to_string();
        let (mut retried, mut reply_failures) = (0u32, 0usize);
        loop {
            match self.attempt(&body) {
                Attempt::Ok { text, tokens } => {
                    return Ok(Reply {
                        text,
                        tokens,
                        retried,
                    });
                }
                Attempt::Reply => {
                    reply_failures += 1;
                    if reply_failures >= REPLY_ATTEMPTS {
                        return Ok(Reply {
                            text: None,
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

    fn attempt(&mut self, body: &str) -> Attempt {
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
            .map(|s| Duration::from_secs_f64(s.min(300.0)));
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
            200..=299 => parse_completion(&text),
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

fn transport_message(e: &ureq::Error) -> String {
    match e {
        ureq::Error::Timeout(_) => "request timed out".into(),
        other => other.to_string(),
    }
}

/// Reads a chat completion: KUMO accepts only `finish_reason == "stop"`.
fn parse_completion(body: &str) -> Attempt {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return Attempt::Reply;
    };
    let choice = &v["choices"][0];
    if choice["finish_reason"] != "stop" {
        return Attempt::Reply;
    }
    // A `stop` without content reaches KUMO's agent as `None` at once.
    Attempt::Ok {
        text: choice["message"]["content"].as_str().map(str::to_string),
        tokens: v["usage"]["total_tokens"].as_u64().unwrap_or(0),
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
            let mut c = Client::new(config(), seed, stream);
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
    fn reads_completions_like_kumo() {
        let ok = r#"{"choices": [{"finish_reason": "stop", "message": {"content": "hi"}}], "usage": {"total_tokens": 12}}"#;
        assert!(
            matches!(parse_completion(ok), Attempt::Ok { text: Some(t), tokens: 12 } if t == "hi")
        );
        let length = r#"{"choices": [{"finish_reason": "length", "message": {"content": "hi"}}]}"#;
        assert!(matches!(parse_completion(length), Attempt::Reply));
        assert!(matches!(parse_completion("<html>"), Attempt::Reply));
        let null = r#"{"choices": [{"finish_reason": "stop", "message": {"content": null}}]}"#;
        assert!(matches!(
            parse_completion(null),
            Attempt::Ok {
                text: None,
                tokens: 0
            }
        ));
    }
}
