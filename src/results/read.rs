//! Reading result files in KUMO's format (and ours, the same plus optional
//! fields): what each trial answered and how KUMO counts it.

use std::path::Path;

use serde_json::Value;

use crate::dataset::Setting;

/// What a group of results is about: `results/<model>/<agent>/<domain>/<setting>/`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKey {
    pub model: String,
    pub agent: String,
    pub domain: String,
    pub setting: String,
}

/// One trial as the scorer needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct TrialFacts {
    /// KUMO's count: `len(actions)`.
    pub kumo_actions: usize,
    /// Actions queried (the string entries before the prediction).
    pub queries: usize,
    /// Queries of an action this trial had already queried (WILT counts
    /// them as wasted probes: a repeat shows nothing new).
    pub repeats: usize,
    /// Replies (turns): the entries of `actions` that are not a
    /// `{"predicted_truth"}` object.
    pub turns: usize,
    /// The turn budget of a trial played under the budgeted protocol.
    pub budget: Option<u64>,
    /// The truth named at the end, if any.
    pub predicted: Option<String>,
    /// KUMO's recorded `successful`, if present.
    pub recorded_success: Option<bool>,
    pub parse_error: bool,
    pub tokens: f64,
    /// The trial's string entries in order (the replies' answers: actions,
    /// then the truth it named), for reduction curves.
    pub said: Vec<String>,
    /// Every reply in order: what it named, `None` for an unusable one
    /// (KUMO's `null`), for the report's replay.
    pub replies: Vec<Option<String>>,
    /// The explore-then-predict protocol's outcome, when played under it.
    pub prediction: Option<PredictionFacts>,
}

/// A trial's `predict` record as the scorer needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct PredictionFacts {
    pub turns: usize,
    /// Probes taken.
    pub explored: usize,
    pub tests: usize,
    /// Tests right within the attempts.
    pub right: usize,
}

/// The `predict` object of a trial, if any; an unreadable one is an error.
fn prediction_facts(t: &Value) -> Result<Option<PredictionFacts>, String> {
    let Some(p) = t.get("predict") else {
        return Ok(None);
    };
    let count = |name: &str| {
        p.get(name)
            .and_then(Value::as_u64)
            .map(|n| n as usize)
            .ok_or(format!("`predict.{name}` is not a count"))
    };
    let tests = p
        .get("tests")
        .and_then(Value::as_array)
        .ok_or("`predict.tests` is not a list")?;
    let right = tests
        .iter()
        .filter(|t| t.get("right_at").is_some_and(|r| !r.is_null()))
        .count();
    Ok(Some(PredictionFacts {
        turns: count("turns")?,
        explored: count("explored")?,
        tests: tests.len(),
        right,
    }))
}

/// One line: every trial of one instance.
#[derive(Clone, Debug, PartialEq)]
pub struct LineFacts {
    pub seed: Option<u64>,
    pub trials: Vec<TrialFacts>,
}

/// A parsed result file.
#[derive(Clone, Debug)]
pub struct ResultFile {
    pub path: String,
    pub key: GroupKey,
    pub lines: Vec<LineFacts>,
    /// Lines left out because their seed was already scored (two runs
    /// appended to one file, a copied line): `file:line: ...` warnings.
    /// Lines of one seed with distinct `episode_id`s (`serve` writes one
    /// line per episode) are not repeats: their trials join the seed's
    /// line.
    pub repeated: Vec<String>,
}

/// A result line that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ReadError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

/// Parses a result file's text. Model, agent, domain and setting come from
/// the path when it has KUMO's layout (`.../<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`),
/// else from the first line's optional fields, else `unknown`.
pub fn parse_result_file(path: &Path, text: &str) -> Result<ResultFile, ReadError> {
    let file = path.display().to_string();
    let mut lines: Vec<LineFacts> = Vec::new();
    let mut repeated = Vec::new();
    // Per seed: its line's position and the episode ids of its lines
    // (`None` once a line of it had none: then nothing joins it).
    let mut seen: std::collections::HashMap<
        u64,
        (usize, Option<std::collections::HashSet<String>>),
    > = std::collections::HashMap::new();
    let mut first: Option<Value> = None;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let err = |message: String| ReadError {
            file: file.clone(),
            line: i + 1,
            message,
        };
        if i == 0 && raw.starts_with('\u{feff}') {
            return Err(err(crate::game::text::bom_message()));
        }
        let value: Value = serde_json::from_str(raw).map_err(|e| err(format!("not JSON ({e})")))?;
        let Some(trajectories) = value.get("trajectories").and_then(Value::as_array) else {
            return Err(err(
                "not a result line: no `trajectories` array (is this an instance file?)".into(),
            ));
        };
        let trials = trajectories
            .iter()
            .enumerate()
            .map(|(j, t)| trial_facts(t).map_err(|m| err(format!("trajectories[{j}]: {m}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let seed = value.get("seed").and_then(|s| {
            s.as_u64()
                .or_else(|| s.as_str().and_then(|s| s.parse().ok()))
        });
        let episode = value
            .get("episode_id")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(s) = seed {
            match seen.get_mut(&s) {
                None => {
                    let episodes = episode.map(|e| std::iter::once(e).collect());
                    seen.insert(s, (lines.len(), episodes));
                }
                Some((at, episodes)) => {
                    // Another served episode of the instance: more trials.
                    let joins = match (episodes.as_mut(), &episode) {
                        (Some(episodes), Some(e)) => episodes.insert(e.clone()),
                        _ => false,
                    };
                    if joins {
                        lines[*at].trials.extend(trials);
                        continue;
                    }
                    // Counting it twice would weigh the instance double.
                    repeated.push(match &episode {
                        Some(e) => format!(
                            "{file}:{}: seed {s}, episode `{e}`, was already scored earlier in the file (a copied line); this line is left out",
                            i + 1
                        ),
                        None => format!(
                            "{file}:{}: seed {s} was already scored earlier in the file; this line is left out",
                            i + 1
                        ),
                    });
                    continue;
                }
            }
        }
        lines.push(LineFacts { seed, trials });
        if first.is_none() {
            first = Some(value);
        }
    }
    let field = |name: &str| {
        first
            .as_ref()
            .and_then(|v| v.get(name))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let key = key_from_path(path).unwrap_or_else(|| GroupKey {
        model: field("model").unwrap_or_else(|| "unknown".into()),
        agent: field("agent").unwrap_or_else(|| crate::game::MODEL_AGENT.into()),
        domain: field("domain").unwrap_or_else(|| "unknown".into()),
        setting: field("setting").unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
    });
    Ok(ResultFile {
        path: file,
        key,
        lines,
        repeated,
    })
}

/// `.../<model>/<agent>/<domain>/<setting>/eval_times=K.jsonl`, recognised
/// by the `eval_times=` file name and a setting directory ([`Setting`]).
fn key_from_path(path: &Path) -> Option<GroupKey> {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let n = parts.len();
    if n < 5 || !parts[n - 1].starts_with("eval_times=") || parts[n - 2].parse::<Setting>().is_err()
    {
        return None;
    }
    Some(GroupKey {
        model: parts[n - 5].clone(),
        agent: parts[n - 4].clone(),
        domain: parts[n - 3].clone(),
        setting: parts[n - 2].clone(),
    })
}

fn trial_facts(t: &Value) -> Result<TrialFacts, String> {
    let actions = t
        .get("actions")
        .and_then(Value::as_array)
        .ok_or("no `actions` array")?;
    let predicted = actions
        .last()
        .and_then(|a| a.get("predicted_truth"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let strings = actions.iter().filter(|a| a.is_string()).count();
    let queries = strings - usize::from(predicted.is_some() && strings > 0);
    let parse_error = match t.get("parse_error") {
        Some(Value::Bool(b)) => *b,
        // Without the flag: KUMO ends a trial on an unusable reply with a `null`.
        _ => actions.last().is_some_and(Value::is_null),
    };
    let said: Vec<String> = actions
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    let mut seen = std::collections::HashSet::new();
    let repeats = said[..queries.min(said.len())]
        .iter()
        .filter(|action| !seen.insert(action.as_str()))
        .count();
    Ok(TrialFacts {
        kumo_actions: crate::game::kumo_action_count(actions),
        queries,
        repeats,
        turns: actions.iter().filter(|a| !a.is_object()).count(),
        budget: t.get("budget").and_then(Value::as_u64),
        predicted,
        recorded_success: t.get("successful").and_then(Value::as_bool),
        parse_error,
        tokens: t
            .get("consumed_tokens")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        said,
        replies: actions
            .iter()
            .filter(|a| !a.is_object())
            .map(|a| a.as_str().map(str::to_string))
            .collect(),
        prediction: prediction_facts(t)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_repeated_queries_but_not_the_named_truth() {
        let text = r#"{"trajectories": [{"actions": ["A", "B", "A", "A", "B", "T", {"predicted_truth": "B"}], "successful": false}, {"actions": ["A", "A"]}], "seed": 0}"#;
        let path = Path::new(
            "results/m/VanillaAgent/E/truth_num=4+action_num=6+valid_truth_num=1/eval_times=1.jsonl",
        );
        let f = parse_result_file(path, text).unwrap();
        let trials = &f.lines[0].trials;
        // A, B, then A, A and B again: three repeats; naming `B` as the
        // truth after querying an action `B` is no repeat.
        assert_eq!((trials[0].queries, trials[0].repeats), (5, 3));
        // No prediction: every string is a query.
        assert_eq!((trials[1].queries, trials[1].repeats), (2, 1));
    }

    #[test]
    fn counts_like_kumo() {
        let text = r#"{"trajectories": [
            {"actions": ["A", "B", "T", {"predicted_truth": "T"}], "successful": true, "parse_error": false, "consumed_tokens": 10},
            {"actions": ["A", null], "successful": false, "parse_error": true, "consumed_tokens": 4}
        ], "seed": 3}"#;
        let path = Path::new(
            "results/m/VanillaAgent/MedicalEnv/truth_num=4+action_num=6+valid_truth_num=1/eval_times=2.jsonl",
        );
        let f = parse_result_file(path, &text.replace('\n', " ")).unwrap();
        assert_eq!(f.key.model, "m");
        assert_eq!(f.key.domain, "MedicalEnv");
        let l = &f.lines[0];
        assert_eq!(l.seed, Some(3));
        assert_eq!(l.trials[0].kumo_actions, 4);
        assert_eq!(l.trials[0].queries, 2);
        assert_eq!(l.trials[0].predicted.as_deref(), Some("T"));
        assert_eq!(l.trials[1].kumo_actions, 2);
        assert_eq!(l.trials[1].queries, 1);
        assert!(l.trials[1].parse_error);
    }

    #[test]
    fn served_episodes_of_one_seed_are_its_trials_and_copies_are_not() {
        let line = |seed: u64, episode: Option<&str>, won: bool| {
            let mut v = serde_json::json!({"trajectories": [{"actions": ["A", "T", {"predicted_truth": "T"}], "successful": won}], "seed": seed});
            if let Some(e) = episode {
                v["episode_id"] = e.into();
            }
            v.to_string()
        };
        let text = [
            line(0, Some("e1"), true),
            line(1, Some("e2"), false),
            line(0, Some("e3"), false),
            line(0, Some("e4"), true),
            // A copied line (the same episode) and a line without an id
            // after served ones: left out, with a warning each.
            line(0, Some("e3"), true),
            line(1, None, true),
        ]
        .join("\n");
        let path = Path::new(
            "r/m/VanillaAgent/E/truth_num=4+action_num=6+valid_truth_num=1/eval_times=1.jsonl",
        );
        let f = parse_result_file(path, &text).unwrap();
        assert_eq!(f.lines.len(), 2);
        let wins = |l: &LineFacts| {
            l.trials
                .iter()
                .map(|t| t.recorded_success == Some(true))
                .collect::<Vec<_>>()
        };
        assert_eq!(wins(&f.lines[0]), [true, false, true]);
        assert_eq!(wins(&f.lines[1]), [false]);
        assert_eq!(f.repeated.len(), 2, "{:?}", f.repeated);
        assert!(f.repeated[0].contains("episode `e3`") && f.repeated[0].contains(":5:"));
        // Lines without ids (two runs appended to one file): the first
        // counts, as before.
        let text = [line(0, None, true), line(0, None, false)].join("\n");
        let f = parse_result_file(path, &text).unwrap();
        assert_eq!((f.lines[0].trials.len(), f.repeated.len()), (1, 1));
    }

    #[test]
    fn our_fields_name_the_group_outside_kumo_layout() {
        let text = r#"{"trajectories": [], "seed": 0, "model": "m", "agent": "HumanAgent", "domain": "tiny", "setting": "truth_num=4+action_num=3+valid_truth_num=1"}"#;
        let f = parse_result_file(Path::new("somewhere/plays.jsonl"), text).unwrap();
        assert_eq!(f.key.model, "m");
        assert_eq!(f.key.agent, "HumanAgent");
        assert_eq!(f.key.domain, "tiny");
        assert_eq!(f.key.setting, "truth_num=4+action_num=3+valid_truth_num=1");
        let err = parse_result_file(Path::new("x.jsonl"), "{\"trajectories\": [{}]}").unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.jsonl:1: trajectories[0]: no `actions` array"
        );
    }
}
