//! Parquet files of the Hugging Face export (cargo feature `parquet`):
//! the export's JSON Lines, rows of [`crate::render::hf`], converted with
//! one fixed Arrow schema per kind of row, so every file of one kind has
//! the same column types whatever its values (no inference).
//!
//! Built only with `--features parquet`: the `parquet`/`arrow` crates
//! double the first build, so the default export stays JSON Lines.

use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::reader::{FileReader, SerializedFileReader};

use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use super::labels::{FileLabels, LABELS_KEY};
use super::{DerivedError, LabelCounts};

fn list(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The columns of instance rows ([`crate::render::hf::hf_row`]); with
/// `certified` (a file that holds certified lines), the label's `exact`
/// and `lower_bound` after `expected_steps`
/// ([`crate::render::hf::with_label_columns`]).
pub fn instance_schema(certified: bool) -> Schema {
    let observation = DataType::Struct(Fields::from(vec![
        Field::new("action", DataType::Utf8, false),
        Field::new("observation", DataType::Utf8, false),
    ]));
    let mut fields = vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("domain", DataType::Utf8, false),
        Field::new("setting", DataType::Utf8, false),
        Field::new("seed", DataType::Int64, false),
        Field::new("truths", list(DataType::Utf8), false),
        Field::new("actions", list(DataType::Utf8), false),
        Field::new("observations", list(observation), false),
        Field::new("valid_truths", list(DataType::Utf8), false),
        Field::new("expected_steps", DataType::Float64, true),
    ];
    if certified {
        fields.push(Field::new("exact", DataType::Boolean, true));
        fields.push(Field::new("lower_bound", DataType::Float64, true));
    }
    fields.extend([
        Field::new("optimal_first_action", DataType::Utf8, true),
        Field::new("golden_actions", DataType::Int64, false),
        Field::new("golden_trajectory", list(DataType::Utf8), false),
        Field::new("golden_answer", DataType::Utf8, true),
        Field::new("knowledge_book", DataType::Utf8, false),
    ]);
    Schema::new(fields)
}

/// The columns of SFT rows ([`crate::render::hf::hf_sft_row`]); with
/// `certified`, the label's `exact` after `seed`
/// ([`crate::render::hf::with_exact_column`]).
pub fn sft_schema(certified: bool) -> Schema {
    let message = DataType::Struct(Fields::from(vec![
        Field::new("role", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, false),
        Field::new("weight", DataType::Int64, false),
    ]));
    let mut fields = vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("domain", DataType::Utf8, false),
        Field::new("setting", DataType::Utf8, false),
        Field::new("seed", DataType::Int64, false),
    ];
    if certified {
        fields.push(Field::new("exact", DataType::Boolean, false));
    }
    fields.push(Field::new("messages", list(message), false));
    Schema::new(fields)
}

/// Writes the rows of `jsonl` to `parquet` (through a temporary file and
/// a rename) with the schema of SFT rows when `sft`, else of instance rows
/// (with the label's columns when the file holds certified lines);
/// `labels` are its rows' labels, kept in the footer of an instance file
/// with a row that is not exact.
pub fn convert(
    jsonl: &Path,
    parquet: &Path,
    sft: bool,
    labels: FileLabels,
) -> Result<(), DerivedError> {
    let certified = labels.counts.certified > 0;
    let schema = Arc::new(if sft {
        sft_schema(certified)
    } else {
        instance_schema(certified)
    });
    let properties = (!sft && (certified || labels.unlabelled > 0)).then(|| {
        let stored = StoredLabels {
            exact: labels.counts.exact,
            certified: labels.counts.certified,
            unlabelled: labels.unlabelled,
            gap_sum: labels.counts.gap_sum,
            gap_max: labels.counts.gap_max,
        };
        let text = serde_json::to_string(&stored).unwrap_or_default();
        WriterProperties::builder()
            .set_key_value_metadata(Some(vec![KeyValue::new(LABELS_KEY.to_string(), text)]))
            .build()
    });
    let fail = |path: &Path, e: &dyn std::fmt::Display| {
        DerivedError::io(path, std::io::Error::other(e.to_string()))
    };
    let input = crate::files::read::open(jsonl).map_err(|e| DerivedError::io(jsonl, e))?;
    let reader = arrow_json::ReaderBuilder::new(schema.clone())
        .with_batch_size(1024)
        .build(BufReader::new(input))
        .map_err(|e| fail(jsonl, &e))?;
    let mut output = crate::files::AtomicFile::create(parquet)?;
    let tmp = output.tmp().to_path_buf();
    let mut writer =
        ArrowWriter::try_new(output.writer(), schema, properties).map_err(|e| fail(&tmp, &e))?;
    for batch in reader {
        let batch = batch.map_err(|e| fail(jsonl, &e))?;
        writer.write(&batch).map_err(|e| fail(&tmp, &e))?;
    }
    writer.close().map_err(|e| fail(&tmp, &e))?;
    Ok(output.commit_unsynced()?)
}

/// The number of rows of a Parquet file and, for an instance file with
/// a row that is not exact, how its rows are labelled (both from its
/// footer, [`super::labels::LABELS_KEY`]).
pub fn rows(path: &Path) -> Result<(u64, Option<FileLabels>), DerivedError> {
    let file = crate::files::read::open(path).map_err(|e| DerivedError::io(path, e))?;
    let reader = SerializedFileReader::new(file)
        .map_err(|e| DerivedError::io(path, std::io::Error::other(e.to_string())))?;
    let meta = reader.metadata().file_metadata();
    let labels = meta
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|kv| kv.key == LABELS_KEY))
        .and_then(|kv| kv.value.as_deref())
        .map(|text| {
            serde_json::from_str::<StoredLabels>(text)
                .map(StoredLabels::into_labels)
                .map_err(|e| {
                    DerivedError::corrupt(path, format!("its `{LABELS_KEY}` metadata: {e}"))
                })
        })
        .transpose()?;
    Ok((meta.num_rows().max(0) as u64, labels))
}

/// [`FileLabels`] as a Parquet footer holds them.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredLabels {
    exact: u64,
    certified: u64,
    unlabelled: u64,
    gap_sum: f64,
    gap_max: f64,
}

impl StoredLabels {
    fn into_labels(self) -> FileLabels {
        FileLabels {
            counts: LabelCounts {
                exact: self.exact,
                certified: self.certified,
                gap_sum: self.gap_sum,
                gap_max: self.gap_max,
            },
            unlabelled: self.unlabelled,
        }
    }
}
