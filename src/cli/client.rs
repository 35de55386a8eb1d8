//! The API client's flags, as `eval` and `propose` take them
//! ([`ClientFlags`]): base URL, model, temperature, timeout, retries and
//! backoff, checked as clap reads them, and the one place the client's
//! [`ClientConfig`] is built from them (the key from the environment,
//! never a flag) and the endpoint checked before a run.

use std::time::Duration;

use super::Error;
use super::flags::{parse_api_base, parse_retries, parse_temperature, parse_timeout};
use crate::eval::client::{ClientConfig, api_key_from_env, check_reachable};

/// Longest backoff delay between two retries.
const BACKOFF_CAP: Duration = Duration::from_secs(60);

/// How long the check before a run waits for the endpoint to answer.
const REACHABLE_WITHIN: Duration = Duration::from_secs(10);

/// `--api-base`, `--model`, `--temperature`, `--timeout`, `--retries`,
/// `--backoff-ms`. A command that needs a model makes `--api-base` and
/// `--model` required with `mut_arg` (`propose`); one that can play
/// without a server adds its conflicts the same way (`eval`).
#[derive(clap::Args, Clone, Debug)]
pub struct ClientFlags {
    /// Base URL of the OpenAI-compatible API, e.g. `http://localhost:8001/v1`.
    /// The key comes from `KUMO_API_KEY` or `OPENAI_API_KEY` (never a flag).
    #[arg(long, value_name = "URL", value_parser = parse_api_base)]
    pub api_base: Option<String>,
    /// Model name sent to the API (`eval` files its results under the
    /// name's last `/` component).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// Sampling temperature from 0 to 2 (omitted from requests unless
    /// given, as KUMO).
    #[arg(long, value_name = "X", value_parser = parse_temperature)]
    pub temperature: Option<f64>,
    /// Hard limit for one request, in seconds (up to a day).
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = parse_timeout)]
    pub timeout: f64,
    /// Retries of a request after a timeout, 429 or 5xx (0 to 100).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = parse_retries)]
    pub retries: u32,
    /// First backoff delay in milliseconds (0 to 60 000; doubles per
    /// retry, up to 60 s).
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub backoff_ms: u64,
}

impl ClientFlags {
    /// The client's configuration under these flags, sending `model` (the
    /// results' name in `eval`, where an offline player has no model).
    pub fn config(&self, model: &str) -> ClientConfig {
        ClientConfig {
            api_base: self.api_base.clone().unwrap_or_default(),
            model: model.to_string(),
            api_key: api_key_from_env(),
            temperature: self.temperature,
            timeout: Duration::from_secs_f64(self.timeout),
            retries: self.retries,
            backoff: Duration::from_millis(self.backoff_ms),
            backoff_cap: BACKOFF_CAP,
        }
    }

    /// Says at once when nobody listens at `--api-base`, instead of
    /// retrying in silence (a service error, exit 2).
    pub fn check_reachable(&self) -> Result<(), Error> {
        let api_base = self.api_base.as_deref().unwrap_or_default();
        check_reachable(api_base, REACHABLE_WITHIN).map_err(|e| Error::Service {
            message: e.to_string(),
        })
    }
}
