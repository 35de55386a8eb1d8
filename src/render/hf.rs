//! Hugging Face export: rows whose every column has one type, and the
//! dataset card.
//!
//! KUMO's `observations` maps an action to a string *or* a number, which
//! Arrow cannot load as one column, and `valid_truth` is a string or a list
//! depending on N_valid. An HF row therefore has:
//!
//! | column | type |
//! | --- | --- |
//! | `id` | string (`<domain>/<setting>/<seed>`, stable across runs; `<part>/<domain>/<setting>/<seed>` in a `--split` part, so ids are unique across the export) |
//! | `domain`, `setting` | string |
//! | `seed` | int64 |
//! | `truths`, `actions` | list<string> |
//! | `observations` | list<struct<action: string, observation: string>> (instance action order; numbers as text) |
//! | `valid_truths` | list<string> |
//! | `expected_steps` | float64 (null when unknown) |
//! | `optimal_first_action` | string (null when no action is needed) |
//! | `golden_actions` | int64 (actions before the prediction) |
//! | `golden_trajectory` | list<string> (those actions, in order) |
//! | `golden_answer` | string (the predicted truth; null when unknown) |
//! | `knowledge_book` | string |
//!
//! A data file that holds certified lines adds `exact` (bool) and
//! `lower_bound` (float64, null unless certified) after `expected_steps`
//! ([`with_label_columns`]), and its SFT rows `exact` after `seed`
//! ([`with_exact_column`]); a file of exact lines has neither.
//!
//! SFT rows ([`hf_sft_row`]) carry the same `id`, `domain`, `setting`,
//! `seed` and `messages`, every turn the same struct
//! `{role, content, weight}` (`weight` 1 on assistant turns, 0 elsewhere),
//! so Arrow reads one type per column.
//!
//! The card ([`dataset_card`]) is a README.md with the YAML header the Hub
//! reads: `license`, `pretty_name`, `tags`, and `configs:` with one config
//! per (domain, setting) and its data files; then a usage snippet, the
//! columns, the license and the citation. One export (`OUT/hf/`) holds
//! every domain and setting written into one `--out`.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::task::TaskView;

/// One HF row for an instance; `golden` as in SFT, `expected_steps` from
/// the label.
pub fn hf_row(
    task: &TaskView,
    setting: &str,
    golden: &[usize],
    golden_answer: Option<&str>,
    expected_steps: Option<f64>,
    book: &str,
) -> Value {
    let d = task.domain;
    let action_name = |pos: usize| d.actions[task.actions[pos]].name.as_str();
    json!({
        "id": row_id(&d.name, setting, task.seed),
        "domain": d.name,
        "setting": setting,
        "seed": task.seed,
        "truths": task.truths.iter().map(|&t| d.truths[t].as_str()).collect::<Vec<_>>(),
        "actions": (0..task.actions.len()).map(action_name).collect::<Vec<_>>(),
        "observations": (0..task.actions.len())
            .map(|pos| json!({"action": action_name(pos), "observation": task.observation_text(pos)}))
            .collect::<Vec<_>>(),
        "valid_truths": task.valid.iter().map(|&t| d.truths[t].as_str()).collect::<Vec<_>>(),
        "expected_steps": expected_steps.filter(|v| v.is_finite()),
        "optimal_first_action": golden.first().map(|&p| action_name(p)),
        "golden_actions": golden.len(),
        "golden_trajectory": golden.iter().map(|&p| action_name(p)).collect::<Vec<_>>(),
        "golden_answer": golden_answer,
        "knowledge_book": book,
    })
}

/// An instance row of a data file that holds certified lines
/// (docs/output.md, "Certified labels"), with the label's two columns
/// after `expected_steps`: `exact` (bool; null when unlabelled) and
/// `lower_bound` (the certified lower bound; null when exact or
/// unlabelled). `expected_steps` is then the exact value or the
/// certified upper bound. A file of exact lines only has neither column,
/// so its rows are as they always were. The caller reads both from the
/// line's label (`game::Steps`, a floor above this one).
pub fn with_label_columns(mut row: Value, exact: Option<bool>, lower_bound: Option<f64>) -> Value {
    if let Value::Object(map) = &mut row {
        let at = map
            .keys()
            .position(|k| k == "expected_steps")
            .map_or(map.len(), |i| i + 1);
        map.shift_insert(at, "exact".into(), json!(exact));
        map.shift_insert(at + 1, "lower_bound".into(), json!(lower_bound));
    }
    row
}

/// An SFT row of a data file that holds certified lines, with the
/// label's `exact` column after `seed` (false: the messages follow a
/// certified strategy, not a proven optimal one).
pub fn with_exact_column(mut row: Value, exact: bool) -> Value {
    if let Value::Object(map) = &mut row {
        let at = map
            .keys()
            .position(|k| k == "seed")
            .map_or(map.len(), |i| i + 1);
        map.shift_insert(at, "exact".into(), json!(exact));
    }
    row
}

/// The stable id of a row: `medical/truth_num=12+action_num=16+valid_truth_num=1/7`.
pub fn row_id(domain: &str, setting: &str, seed: u64) -> String {
    format!("{domain}/{setting}/{seed}")
}

/// The id of a row of `--split` part `part`:
/// `test/medical/truth_num=4+action_num=6+valid_truth_num=1/7`. Every part
/// numbers its seeds from 0, so the part keeps ids unique across the
/// export's parts, domains and settings.
pub fn part_row_id(part: &str, domain: &str, setting: &str, seed: u64) -> String {
    format!("{part}/{}", row_id(domain, setting, seed))
}

/// The HF row of an SFT record (`{"messages": [...]}` as written to
/// `sft/`): `id`, `domain`, `setting`, `seed`, and `messages` with
/// `weight` on every turn (0 where the record has none).
pub fn hf_sft_row(domain: &str, setting: &str, seed: u64, record: &Value) -> Value {
    let messages: Vec<Value> = record["messages"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .map(|m| {
            json!({
                "role": m["role"],
                "content": m["content"],
                "weight": m.get("weight").and_then(Value::as_u64).unwrap_or(0),
            })
        })
        .collect();
    json!({
        "id": row_id(domain, setting, seed),
        "domain": domain,
        "setting": setting,
        "seed": seed,
        "messages": messages,
    })
}

/// The config name of a (domain, setting): `medical-t12-a16-v1`.
pub fn config_name(domain: &str, truths: usize, actions: usize, valid: usize) -> String {
    format!("{domain}-t{truths}-a{actions}-v{valid}")
}

/// One config of the card: its name, its one split and its data files
/// (SFT records have other columns, so they are a config of their own, e.g.
/// `medical-t12-a16-v1-sft`), relative to the card (`data/medical/truth_num=12+action_num=16+valid_truth_num=1.jsonl`).
#[derive(Clone, Debug, PartialEq)]
pub struct CardConfig {
    pub name: String,
    /// What the rows are, for the card's table (`instances`, `sft chat`).
    pub kind: String,
    /// The split name (`train`; a `--split` part's own name).
    pub split: String,
    pub files: Vec<String>,
    pub rows: u64,
}

/// What the dataset card says.
#[derive(Clone, Debug, PartialEq)]
pub struct Card {
    pub pretty_name: String,
    /// SPDX id, lower-case as the Hub expects (`apache-2.0`).
    pub license: String,
    pub generator: String,
    pub configs: Vec<CardConfig>,
    /// Generation parameters, in the order to print them.
    pub parameters: Vec<(String, String)>,
    /// Domain name and title, per domain.
    pub domains: Vec<(String, String)>,
    /// How each instance config is labelled, when some config holds
    /// certified lines (docs/output.md, "Certified labels"); empty when
    /// every label is exact, and the card then says so in one sentence.
    pub labels: Vec<ConfigLabels>,
}

/// How the lines of one instance config are labelled.
#[derive(Clone, Debug, PartialEq)]
pub struct ConfigLabels {
    pub config: String,
    pub exact: u64,
    pub certified: u64,
    /// Rows without a label (`expected_steps` null: `--exact-only`).
    pub unlabelled: u64,
    /// Mean and largest relative gap `(upper - lower) / lower` of the
    /// certified lines (0 without one).
    pub mean_gap: f64,
    pub max_gap: f64,
}

/// A YAML scalar: a JSON string is valid YAML.
fn yaml(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// The README.md dataset card.
pub fn dataset_card(card: &Card) -> String {
    let mut out = front_matter(card);
    let _ = writeln!(out, "# {}\n", card.pretty_name);
    out.push_str(
        "KUMO-style interactive reasoning tasks (Lin et al., \"Generative evaluation of \
         complex reasoning in large language models\"): find the one valid truth by choosing \
         actions whose observed outcomes rule candidates out, in as few actions as possible. \
         Every instance is freshly generated and verified, ",
    );
    out.push_str(if card.labels.is_empty() {
        "with an exact optimal-play label"
    } else {
        "with an optimal-play label (exact, or certified where the exact search ran over \
         its budget: see Labels)"
    });
    out.push_str(
        " and a knowledge book rendered from the domain's rule-out table (checked to state \
         every rule-out and no false one).\n\n",
    );
    let _ = writeln!(out, "Generated by {}.\n", card.generator);
    out.push_str("## Configs\n\n| config | kind | rows | files |\n| --- | --- | ---: | --- |\n");
    for config in &card.configs {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            config.name,
            config.kind,
            config.rows,
            config
                .files
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !card.labels.is_empty() {
        out.push_str(
            "\n## Labels\n\nA label is *exact* (`exact` true: `expected_steps` is the optimal \
             expected number of actions, and the golden trajectory follows an optimal policy) or \
             *certified* (`exact` false: the exact search ran over its budget; the optimum is at \
             least `lower_bound` and at most `expected_steps`, the value of the strategy the \
             golden trajectory and the SFT transcript follow, which is not proven optimal). \
             Relative gap: (upper - lower) / lower.\n\n\
             | config | exact | certified | unlabelled | mean gap | largest gap |\n\
             | --- | ---: | ---: | ---: | ---: | ---: |\n",
        );
        for l in &card.labels {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {:.4}% | {:.4}% |",
                l.config,
                l.exact,
                l.certified,
                l.unlabelled,
                100.0 * l.mean_gap,
                100.0 * l.max_gap
            );
        }
    }
    if !card.domains.is_empty() {
        out.push_str("\n## Domains\n\n");
        for (name, title) in &card.domains {
            if title.is_empty() {
                let _ = writeln!(out, "- `{name}`");
            } else {
                let _ = writeln!(out, "- `{name}`: {title}");
            }
        }
    }
    if !card.parameters.is_empty() {
        out.push_str("\n## Generation parameters\n\n");
        for (key, value) in &card.parameters {
            let _ = writeln!(out, "- `{key}`: {value}");
        }
    }
    usage_and_columns(&mut out, card);
    out
}

/// The card's YAML front matter: license, name, tags and every config's
/// files (the first config the default).
fn front_matter(card: &Card) -> String {
    let mut out = String::from("---\n");
    let _ = writeln!(out, "license: {}", yaml(&card.license));
    let _ = writeln!(out, "pretty_name: {}", yaml(&card.pretty_name));
    out.push_str("language:\n- en\ntask_categories:\n- text-generation\n");
    out.push_str("tags:\n- reasoning\n- interactive\n- kumo\n- synthetic\n");
    out.push_str("configs:\n");
    for (i, config) in card.configs.iter().enumerate() {
        let _ = writeln!(out, "- config_name: {}", yaml(&config.name));
        if i == 0 {
            out.push_str("  default: true\n");
        }
        out.push_str("  data_files:\n");
        // Split names are letters, digits and `_`: plain YAML.
        let _ = writeln!(out, "  - split: {}\n    path:", config.split);
        for file in &config.files {
            let _ = writeln!(out, "    - {}", yaml(file));
        }
    }
    out.push_str("---\n\n");
    out
}

/// The card's usage example, the columns of its configs, license and
/// citation.
fn usage_and_columns(out: &mut String, card: &Card) {
    let (first, split) = card
        .configs
        .first()
        .map_or(("CONFIG", "train"), |c| (c.name.as_str(), c.split.as_str()));
    let _ = write!(
        out,
        "\n## Usage\n\n```python\nfrom datasets import load_dataset\n\n\
         tasks = load_dataset(\"path/to/this/folder\", \"{first}\", split=\"{split}\")\n\
         print(tasks[0][\"truths\"], tasks[0][\"expected_steps\"])\n```\n\n\
         Each config is one (domain, setting), with one split `train`; a part of a \
         `--split` run is a config named after the part (`test`, or `test-<domain>-<setting>` \
         when the export holds several), its split named after the part too, and no \
         instance context is in two parts. Configs ending in `-sft` hold the chat \
         transcripts for fine-tuning (train on turns with `weight` 1).\n"
    );
    out.push_str(
        "\n## Columns (instance configs)\n\n\
         - `id` (string): `<domain>/<setting>/<seed>`, stable for the same generator, domain \
         file, parameters and seed.\n\
         - `domain`, `setting` (string): the domain and KUMO's setting name.\n\
         - `seed` (int): instance index within its setting.\n\
         - `truths`, `actions` (list of string): the candidates and the available actions.\n\
         - `observations` (list of {action, observation}): the outcome each action shows, as text \
         (numbers in shortest decimal form).\n\
         - `valid_truths` (list of string): the answer(s).\n\
         - `expected_steps` (float): expected number of actions under optimal play.\n\
         - `optimal_first_action` (string or null): the optimal policy's first action.\n\
         - `golden_actions` (int), `golden_trajectory` (list of string), `golden_answer` \
         (string): how many actions the optimal policy takes on this instance, which, and the \
         truth it then names.\n\
         - `knowledge_book` (string): the rule-out book given to the player.\n\n\
         Configs ending in `-sft` hold chat transcripts: `id`, `domain`, `setting`, `seed` and \
         `messages` (a list of {role, content, weight}; `weight` is 1 on assistant turns and 0 \
         on the others).\n",
    );
    if !card.labels.is_empty() {
        out.push_str(
            "\nA config that holds certified lines adds `exact` (bool) and `lower_bound` (float, \
             null unless certified) after `expected_steps`, which is then the certified upper \
             bound, and the policy the golden columns name is the certified strategy; its `-sft` \
             config adds `exact` after `seed` (false: the transcript follows that strategy). \
             Filter on `exact` for proven-optimal rows only.\n",
        );
    }
    let _ = writeln!(
        out,
        "\n## License\n\n`{}`. Domains imported from KUMO keep KUMO's license \
         (Apache-2.0, github.com/linhaowei1/kumo).",
        card.license
    );
    out.push_str(
        "\n## Citation\n\n```bibtex\n@article{lin2025kumo,\n  \
         title={Generative Evaluation of Complex Reasoning in Large Language Models},\n  \
         author={Lin, Haowei and others},\n  journal={arXiv preprint arXiv:2504.02810},\n  \
         year={2025}\n}\n```\n",
    );
}
