//! Keeping datasets apart: the keys that say two instances are the same
//! game, the excluded sets of `--exclude` ([`Exclusion`]), and
//! `kumo-gen overlap` ([`overlap`]).
//!
//! # Keys
//! Two instances are the same under
//! - [`KeyKind::Exact`]: DESIGN's dedup key — same truths, same valid
//!   truths, same actions and the same observed *state* of each action
//!   (numeric values are compared by the state whose range holds them,
//!   as the dedup of one dataset does);
//! - [`KeyKind::Context`]: same truths, actions and valid truths, whatever
//!   was observed. A model that has trained on the context has seen the
//!   book, the candidates and the answer of the instance.
//! - [`KeyKind::Book`]: same truths and actions, whatever the valid truth
//!   and the observations: the same knowledge book and the same optimal
//!   first action. In small settings most contexts share their book with
//!   another (4 truths and 6 actions: a book has up to 4 valid truths), so
//!   parts kept apart by context still share books; `--split-key book`
//!   and `overlap --key book` keep or count them apart.
//!
//! Keys are built from names (truths, actions) and, with a domain, state
//! indices, so any file that records an instance by name can be compared:
//! KUMO's published instances, our datasets, HF exports and SFT records
//! ([`recorded`]; SFT records give the context key only). A key is held as
//! a 128-bit SipHash of its canonical bytes, so a million keys take 16 MB;
//! two different instances share a hash with probability about n^2/2^129.
//!
//! # Exclusion
//! [`Exclusion::read`] reads the `--exclude` paths against the domain
//! being generated; [`crate::synth::Dedup`] then counts an excluded key as
//! taken, so an excluded draw is redrawn from its own stream exactly like
//! a duplicate and the output still depends only on (domain, parameters,
//! seed, excluded sets). Each set is recorded in the manifest
//! ([`ExcludedSet`]: path, key, digest, size), and a resume, extension or
//! merge with different sets is refused like any other parameter change.

pub mod capacity;
pub mod overlap;
pub mod recorded;
mod sources;
pub mod split;

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

use crate::domain::Domain;
use crate::synth::Key;
use recorded::{Observed, Recorded};
pub use sources::{SourceFile, dataset_files, read_keys};

pub use crate::dataset::excluded::{ExcludedSet, KeyKind, sets_conflict};

/// The keys of one recorded instance: `exact` is `None` when the file does
/// not record every observation (SFT records).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineKeys {
    pub exact: Option<u128>,
    pub context: u128,
    pub book: u128,
}

impl LineKeys {
    /// The key of `kind`, or the context key where the exact one is not
    /// recorded.
    pub fn get(&self, kind: KeyKind) -> u128 {
        match kind {
            KeyKind::Exact => self.exact.unwrap_or(self.context),
            KeyKind::Context => self.context,
            KeyKind::Book => self.book,
        }
    }
}

/// An observation in a key: the state index when the domain resolves it,
/// else the recorded text (numbers as Rust prints the `f64`).
enum Token<'a> {
    State(usize),
    Text(Cow<'a>),
}

type Cow<'a> = std::borrow::Cow<'a, str>;

/// The 128-bit hash of a canonical key: sorted truths, sorted valid
/// truths, then the actions sorted by name, each with its token when
/// `tokens` is given.
fn key_hash(
    truths: &mut [&str],
    valid: &mut [&str],
    actions: &mut [(&str, Option<&Token>)],
) -> u128 {
    truths.sort_unstable();
    valid.sort_unstable();
    actions.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut bytes = Vec::with_capacity(256);
    for group in [&*truths, &*valid] {
        for name in group {
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(0x1f);
        }
        bytes.push(0x1e);
    }
    for (action, token) in actions.iter() {
        bytes.extend_from_slice(action.as_bytes());
        match token {
            None => {}
            Some(Token::State(s)) => {
                bytes.push(0x1d);
                bytes.extend_from_slice(s.to_string().as_bytes());
            }
            Some(Token::Text(t)) => {
                bytes.push(0x1c);
                bytes.extend_from_slice(t.as_bytes());
            }
        }
        bytes.push(0x1f);
    }
    let half = |tag: u8| {
        let mut h = DefaultHasher::new();
        tag.hash(&mut h);
        bytes.hash(&mut h);
        h.finish() as u128
    };
    (half(0) << 64) | half(1)
}

/// The keys of a recorded instance; `domain` turns observations into state
/// indices (numbers by the range that holds them, as KUMO reads them).
pub fn recorded_keys(recorded: &Recorded, domain: Option<&Domain>) -> LineKeys {
    let mut truths: Vec<&str> = recorded.truths.iter().map(|t| t.as_ref()).collect();
    let mut valid: Vec<&str> = recorded.valid.iter().map(|t| t.as_ref()).collect();
    let mut context: Vec<(&str, Option<&Token>)> = recorded
        .actions
        .iter()
        .map(|a| (a.as_ref(), None))
        .collect();
    let context_hash = key_hash(&mut truths, &mut valid, &mut context);
    let book = key_hash(&mut truths, &mut [], &mut context);
    let exact = recorded.observations.as_ref().map(|observations| {
        let tokens: Vec<(&str, Token)> = observations
            .iter()
            .map(|(action, observed)| (action.as_ref(), token(domain, action, observed)))
            .collect();
        let mut pairs: Vec<(&str, Option<&Token>)> =
            tokens.iter().map(|(a, t)| (*a, Some(t))).collect();
        key_hash(&mut truths, &mut valid, &mut pairs)
    });
    LineKeys {
        exact,
        context: context_hash,
        book,
    }
}

fn token<'a>(domain: Option<&Domain>, action: &str, observed: &'a Observed) -> Token<'a> {
    let state = domain.and_then(|d| {
        let a = d.actions.iter().find(|a| a.name == action)?;
        let seen = match observed {
            Observed::Number(v) => serde_json::Value::from(*v),
            Observed::Label(l) => serde_json::Value::from(l.as_ref()),
        };
        a.observed_state(&seen).flatten()
    });
    match (state, observed) {
        (Some(s), _) => Token::State(s),
        (None, Observed::Number(v)) => Token::Text(Cow::Owned(v.to_string())),
        // HF rows write numbers as text: read them back as numbers.
        (None, Observed::Label(l)) => match l.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => Token::Text(Cow::Owned(v.to_string())),
            _ => Token::Text(Cow::Borrowed(l.as_ref())),
        },
    }
}

/// The keys of an instance of `domain` given by its dedup [`Key`].
pub fn instance_keys(domain: &Domain, key: &Key) -> LineKeys {
    let (truths, valid, pairs) = key.parts();
    let name = |t: &u32| domain.truths[*t as usize].as_str();
    let mut truths: Vec<&str> = truths.iter().map(name).collect();
    let mut valid: Vec<&str> = valid.iter().map(name).collect();
    let tokens: Vec<(&str, Token)> = pairs
        .chunks_exact(2)
        .map(|p| {
            (
                domain.actions[p[0] as usize].name.as_str(),
                Token::State(p[1] as usize),
            )
        })
        .collect();
    let mut context: Vec<(&str, Option<&Token>)> = tokens.iter().map(|(a, _)| (*a, None)).collect();
    let context_hash = key_hash(&mut truths, &mut valid, &mut context);
    let book = key_hash(&mut truths, &mut [], &mut context);
    let mut exact: Vec<(&str, Option<&Token>)> =
        tokens.iter().map(|(a, t)| (*a, Some(t))).collect();
    LineKeys {
        exact: Some(key_hash(&mut truths, &mut valid, &mut exact)),
        context: context_hash,
        book,
    }
}

/// Why an excluded set or an overlap input cannot be read (exit 1).
#[derive(Debug, thiserror::Error)]
#[error("`{}`{}: {problem}", path.display(), line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct ReadError {
    pub path: PathBuf,
    pub line: Option<u64>,
    pub problem: ReadProblem,
}

/// What is wrong with an excluded set or an overlap input.
#[derive(Debug, thiserror::Error)]
pub enum ReadProblem {
    /// The file or directory cannot be read.
    #[error("{0}")]
    Io(#[source] std::io::Error),
    #[error("a directory without instance files (*.jsonl)")]
    NoInstanceFiles,
    #[error("Parquet is not read here")]
    Parquet,
    /// A line is no instance of any supported format.
    #[error(transparent)]
    Line(#[from] recorded::LineError),
    /// `overlap`: an SFT record where the first line was an instance.
    #[error(
        "an SFT record in a file whose first line is an instance: it has no exact key; compare with `--key context`"
    )]
    SftAmongInstances,
}

impl ReadError {
    pub fn help(&self) -> &'static str {
        "pass a dataset directory or a .jsonl file of instances (ours or KUMO's), of Hugging Face rows, or of SFT records"
    }
}

/// The keys of every `--exclude` set, read against the domain being
/// generated.
#[derive(Debug, Default)]
pub struct Exclusion {
    kind: KeyKind,
    exact: HashSet<u128>,
    context: HashSet<u128>,
    book: HashSet<u128>,
    sets: Vec<ExcludedSet>,
    domain: Option<Domain>,
    /// `--split`: contexts outside this part count as excluded.
    part: Option<split::PartFilter>,
}

impl Exclusion {
    /// Reads `paths` (dataset directories or .jsonl files of any supported
    /// format) with the keys of `kind`.
    pub fn read(domain: &Domain, paths: &[PathBuf], kind: KeyKind) -> Result<Exclusion, ReadError> {
        let mut exclusion = Exclusion {
            kind,
            domain: Some(domain.clone()),
            ..Exclusion::default()
        };
        for path in paths {
            let files = dataset_files(path)?;
            let mut set = ExcludedSet {
                path: path.display().to_string(),
                key: kind,
                digest: String::new(),
                instances: 0,
                context_only: 0,
            };
            let mut digests = Vec::with_capacity(files.len());
            // Distinct instances by the key in use: a release directory
            // holds each instance twice (the dataset and its HF export),
            // and counts it once.
            let mut distinct: HashSet<(u8, u128)> = HashSet::new();
            let mut sft: HashSet<u128> = HashSet::new();
            for file in files {
                let digest = read_keys(&file.path, Some(domain), |_, keys| {
                    let key = match (kind, keys.exact) {
                        (KeyKind::Exact, Some(exact)) => {
                            exclusion.exact.insert(exact);
                            (0, exact)
                        }
                        (KeyKind::Exact, None) => {
                            sft.insert(keys.context);
                            exclusion.context.insert(keys.context);
                            (1, keys.context)
                        }
                        (KeyKind::Context, _) => {
                            exclusion.context.insert(keys.context);
                            (1, keys.context)
                        }
                        (KeyKind::Book, _) => {
                            exclusion.book.insert(keys.book);
                            (2, keys.book)
                        }
                    };
                    distinct.insert(key);
                })?;
                digests.push((file, digest));
            }
            set.instances = distinct.len() as u64;
            set.context_only = sft.len() as u64;
            set.digest = sources::digest_of(path, &digests);
            exclusion.sets.push(set);
        }
        Ok(exclusion)
    }

    /// No excluded set (yet): the start of a `--split` part without
    /// `--exclude`.
    pub fn none(domain: &Domain) -> Exclusion {
        Exclusion {
            domain: Some(domain.clone()),
            ..Exclusion::default()
        }
    }

    /// The same sets, for one part of a `--split`.
    pub fn for_part(&self, part: split::PartFilter) -> Exclusion {
        Exclusion {
            kind: self.kind,
            exact: self.exact.clone(),
            context: self.context.clone(),
            book: self.book.clone(),
            sets: self.sets.clone(),
            domain: self.domain.clone(),
            part: Some(part),
        }
    }

    /// The part of a `--split` this exclusion keeps, as the manifest
    /// records it.
    pub fn part_label(&self) -> Option<String> {
        self.part.as_ref().map(|p| p.label.clone())
    }

    /// The name of the `--split` part this exclusion keeps.
    pub fn part_name(&self) -> Option<String> {
        self.part.as_ref().map(|p| p.name.clone())
    }

    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// What the manifest records: one entry per path.
    pub fn sets(&self) -> &[ExcludedSet] {
        &self.sets
    }

    /// Distinct excluded keys.
    pub fn len(&self) -> usize {
        self.exact.len() + self.context.len() + self.book.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the instance with dedup key `key` is outside this
    /// exclusion's `--split` part (never without a part).
    pub fn outside_part(&self, key: &Key) -> bool {
        match (&self.domain, &self.part) {
            (Some(domain), Some(part)) => !part.holds(&instance_keys(domain, key)),
            _ => false,
        }
    }

    /// Whether the instance with dedup key `key` is in an excluded set
    /// (whatever the `--split` part).
    pub fn in_sets(&self, key: &Key) -> bool {
        let Some(domain) = &self.domain else {
            return false;
        };
        if self.is_empty() {
            return false;
        }
        let keys = instance_keys(domain, key);
        keys.exact.is_some_and(|k| self.exact.contains(&k))
            || self.context.contains(&keys.context)
            || self.book.contains(&keys.book)
    }

    /// Whether the instance with dedup key `key` is excluded.
    pub fn excludes(&self, key: &Key) -> bool {
        let Some(domain) = &self.domain else {
            return false;
        };
        if self.is_empty() && self.part.is_none() {
            return false;
        }
        let keys = instance_keys(domain, key);
        self.part.as_ref().is_some_and(|p| !p.holds(&keys))
            || keys.exact.is_some_and(|k| self.exact.contains(&k))
            || self.context.contains(&keys.context)
            || self.book.contains(&keys.book)
    }
}

impl crate::synth::Taken for Exclusion {
    fn excludes(&self, key: &Key) -> bool {
        Exclusion::excludes(self, key)
    }
}

/// `path` relative to `root` for messages and digests.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}
