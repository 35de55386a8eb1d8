//! The Hugging Face export's dataset card, `OUT/hf/README.md`: one config
//! per data file found in the export, so the card depends only on the
//! files present, never on which run wrote it last.
//!
//! Two layouts share one export:
//! - `data/<domain>/<setting>.<fmt>` (and `<setting>-sft.<fmt>`): a
//!   dataset of its own, config `<domain>-t4-a6-v1` (and `...-sft`), one
//!   split `train`;
//! - `parts/<part>/<domain>/<setting>.<fmt>`: part `<part>` of a `--split`
//!   run. Its config is named after the part (`test`, and `train-sft` for
//!   the SFT records of `train`) when every part of the export holds one
//!   (domain, setting) and there is no other data, else
//!   `<part>-<domain>-t4-a6-v1`. Its one split is named after the part too
//!   (`-` read as `_`, which split names allow), so
//!   `load_dataset(dir, "test", split="test")` reads the test part.

use std::path::Path;

use super::DerivedError;
use crate::files::write_below;

/// The HF export's file format: Parquet when built with the `parquet`
/// feature, else JSON Lines (the same rows; `datasets` reads both).
pub const HF_FORMAT: &str = if cfg!(feature = "parquet") {
    "parquet"
} else {
    "jsonl"
};
use super::labels::FileLabels;
use crate::dataset::setting::Setting;
use crate::render::hf::{Card, CardConfig, ConfigLabels, dataset_card};

/// One data file of the export.
struct DataFile {
    /// The `--split` part, if any.
    part: Option<String>,
    domain: String,
    setting: String,
    sft: bool,
    /// Relative to the export.
    path: String,
    rows: u64,
    /// How an instance file's rows are labelled (`None` for SFT rows).
    labels: Option<FileLabels>,
}

/// The sorted names of the visible entries of `dir`.
fn list(dir: &Path) -> Result<Vec<String>, DerivedError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| DerivedError::io(dir, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// The data files of `root/<domain>/` (`root` is `data` or
/// `parts/<part>`), per domain and setting the instances first.
fn data_files(
    export: &Path,
    root: &str,
    part: Option<&str>,
    found: &mut Vec<DataFile>,
) -> Result<(), DerivedError> {
    let dir = export.join(root);
    if !dir.is_dir() {
        return Ok(());
    }
    let suffix = format!(".{HF_FORMAT}");
    for domain in list(&dir)? {
        let domain_dir = dir.join(&domain);
        if !domain_dir.is_dir() {
            continue;
        }
        let mut files: Vec<(String, bool, String)> = list(&domain_dir)?
            .into_iter()
            .filter_map(|file| {
                let stem = file.strip_suffix(&suffix)?.to_string();
                Some(match stem.strip_suffix("-sft") {
                    Some(setting) => (setting.to_string(), true, file),
                    None => (stem, false, file),
                })
            })
            .collect();
        files.sort();
        for (setting, sft, file) in files {
            let path = domain_dir.join(&file);
            #[cfg(feature = "parquet")]
            let (rows, labels) = {
                let (rows, labels) = super::hf_parquet::rows(&path)?;
                (
                    rows,
                    (!sft).then(|| labels.unwrap_or_else(|| all_exact(rows))),
                )
            };
            #[cfg(not(feature = "parquet"))]
            let (rows, labels) = {
                let bytes =
                    crate::files::read::read(&path).map_err(|e| DerivedError::io(&path, e))?;
                let rows = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
                let labels = if sft {
                    None
                } else {
                    Some(FileLabels::of_lines(&path, &bytes, rows)?)
                };
                (rows, labels)
            };
            found.push(DataFile {
                part: part.map(str::to_string),
                domain: domain.clone(),
                setting,
                sft,
                path: format!("{root}/{domain}/{file}"),
                rows,
                labels,
            });
        }
    }
    Ok(())
}

/// The labels of `rows` rows that are all exact.
#[cfg(feature = "parquet")]
fn all_exact(rows: u64) -> FileLabels {
    FileLabels {
        counts: super::LabelCounts {
            exact: rows,
            ..super::LabelCounts::default()
        },
        unlabelled: 0,
    }
}

/// How each instance config is labelled, when some holds certified lines
/// (else nothing: the card then says every label is exact).
fn config_labels(files: &[DataFile], configs: &[CardConfig]) -> Vec<ConfigLabels> {
    if !files
        .iter()
        .any(|f| f.labels.is_some_and(|l| l.counts.certified > 0))
    {
        return Vec::new();
    }
    files
        .iter()
        .zip(configs)
        .filter_map(|(f, config)| {
            let l = f.labels?;
            Some(ConfigLabels {
                config: config.name.clone(),
                exact: l.counts.exact,
                certified: l.counts.certified,
                unlabelled: l.unlabelled,
                mean_gap: l.counts.mean_gap(),
                max_gap: l.counts.gap_max,
            })
        })
        .collect()
}

/// The configs of the export's data files (see the module doc).
fn configs(files: &[DataFile]) -> Vec<CardConfig> {
    let mut settings_per_part: std::collections::BTreeMap<&str, Vec<(&str, &str)>> =
        Default::default();
    for f in files {
        let entry = settings_per_part
            .entry(f.part.as_deref().unwrap_or(""))
            .or_default();
        if !entry.contains(&(&f.domain, &f.setting)) {
            entry.push((&f.domain, &f.setting));
        }
    }
    let short_part_names =
        files.iter().all(|f| f.part.is_some()) && settings_per_part.values().all(|s| s.len() == 1);
    files
        .iter()
        .map(|f| {
            let sft = if f.sft { "-sft" } else { "" };
            let setting = format!("{}-{}", f.domain, short_setting(&f.setting));
            let (name, split) = match &f.part {
                None => (format!("{setting}{sft}"), "train".to_string()),
                Some(part) if short_part_names => (format!("{part}{sft}"), part.replace('-', "_")),
                Some(part) => (format!("{part}-{setting}{sft}"), part.replace('-', "_")),
            };
            CardConfig {
                name,
                kind: if f.sft { "sft chat" } else { "instances" }.to_string(),
                split,
                files: vec![f.path.clone()],
                rows: f.rows,
            }
        })
        .collect()
}

/// Writes `OUT/hf/README.md` listing every data file under `OUT/hf/data/`
/// and `OUT/hf/parts/`, or removes it when there is none. A lock keeps two
/// runs (other domains into one `--out`) from interleaving their cards.
pub(super) fn write_card(hf_dir: &Path) -> Result<(), DerivedError> {
    let card_path = hf_dir.join("README.md");
    // The lock file is made in `hf/` before the card is written below
    // `--out`: a linked `hf/` is refused first, so nothing lands outside.
    if std::fs::symlink_metadata(hf_dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(crate::files::symlink_refused(hf_dir).into());
    }
    let _lock = crate::files::FileLock::wait(&card_path)?;
    let mut files = Vec::new();
    data_files(hf_dir, "data", None, &mut files)?;
    let parts_dir = hf_dir.join("parts");
    if parts_dir.is_dir() {
        for part in list(&parts_dir)? {
            data_files(hf_dir, &format!("parts/{part}"), Some(&part), &mut files)?;
        }
    }
    if files.is_empty() {
        let removed = std::fs::remove_file(&card_path);
        return match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(DerivedError::io(&card_path, e))
            }
            _ => Ok(()),
        };
    }
    let mut domains: Vec<String> = files.iter().map(|f| f.domain.clone()).collect();
    domains.sort();
    domains.dedup();
    let pretty_name = match domains.as_slice() {
        [one] => format!("KUMO-style tasks: {one}"),
        many => format!("KUMO-style tasks: {} domains", many.len()),
    };
    let configs = configs(&files);
    let card = Card {
        pretty_name,
        license: "apache-2.0".into(),
        generator: format!("kumo-gen {}", env!("CARGO_PKG_VERSION")),
        labels: config_labels(&files, &configs),
        configs,
        parameters: Vec::new(),
        domains: domains.into_iter().map(|d| (d, String::new())).collect(),
    };
    let text = dataset_card(&card);
    // A card that is already this one is left alone (an up-to-date run
    // rewrites nothing); a deleted or edited one is written again. Read by
    // the rule of user files, no further than the new card: a FIFO or a
    // device there is replaced, never read.
    let old = crate::files::read::read_at_most(&card_path, text.len() as u64, "a dataset card");
    if old.is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    let root = hf_dir.parent().unwrap_or(Path::new("."));
    Ok(write_below(root, &card_path, text.as_bytes())?)
}

/// `truth_num=12+action_num=16+valid_truth_num=1` -> `t12-a16-v1`; a
/// file stem that is no setting name stays as it is.
fn short_setting(setting: &str) -> String {
    setting
        .parse::<Setting>()
        .map_or_else(|_| setting.to_string(), |s| s.hf_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(part: Option<&str>, domain: &str, setting: &str, sft: bool) -> DataFile {
        DataFile {
            part: part.map(str::to_string),
            domain: domain.into(),
            setting: setting.into(),
            sft,
            path: String::new(),
            rows: 1,
            labels: None,
        }
    }

    #[test]
    fn parts_name_their_configs_and_splits() {
        const S: &str = "truth_num=4+action_num=6+valid_truth_num=1";
        let names = |files: &[DataFile]| -> Vec<(String, String)> {
            configs(files)
                .into_iter()
                .map(|c| (c.name, c.split))
                .collect()
        };
        let one_setting = [
            file(Some("held-out"), "medical", S, false),
            file(Some("train"), "medical", S, false),
            file(Some("train"), "medical", S, true),
        ];
        assert_eq!(
            names(&one_setting),
            [
                ("held-out", "held_out"),
                ("train", "train"),
                ("train-sft", "train")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let mixed = [
            file(None, "cloud", S, false),
            file(Some("test"), "medical", S, false),
        ];
        assert_eq!(
            names(&mixed),
            [
                ("cloud-t4-a6-v1", "train"),
                ("test-medical-t4-a6-v1", "test")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }
}
