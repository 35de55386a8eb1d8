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

use super::DerivedError;

fn list(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The columns of instance rows ([`crate::render::hf::hf_row`]).
pub fn instance_schema() -> Schema {
    let observation = DataType::Struct(Fields::from(vec![
        Field::new("action", DataType::Utf8, false),
        Field::new("observation", DataType::Utf8, false),
    ]));
    Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("domain", DataType::Utf8, false),
        Field::new("setting", DataType::Utf8, false),
        Field::new("seed", DataType::Int64, false),
        Field::new("truths", list(DataType::Utf8), false),
        Field::new("actions", list(DataType::Utf8), false),
        Field::new("observations", list(observation), false),
        Field::new("valid_truths", list(DataType::Utf8), false),
        Field::new("expected_steps", DataType::Float64, true),
        Field::new("optimal_first_action", DataType::Utf8, true),
        Field::new("golden_actions", DataType::Int64, false),
        Field::new("golden_trajectory", list(DataType::Utf8), false),
        Field::new("golden_answer", DataType::Utf8, true),
        Field::new("knowledge_book", DataType::Utf8, false),
    ])
}

/// The columns of SFT rows ([`crate::render::hf::hf_sft_row`]).
pub fn sft_schema() -> Schema {
    let message = DataType::Struct(Fields::from(vec![
        Field::new("role", DataType::Utf8, false),
        Field::new("content", DataType::Utf8, false),
        Field::new("weight", DataType::Int64, false),
    ]));
    Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("domain", DataType::Utf8, false),
        Field::new("setting", DataType::Utf8, false),
        Field::new("seed", DataType::Int64, false),
        Field::new("messages", list(message), false),
    ])
}

/// Writes the rows of `jsonl` to `parquet` (through a temporary file and
/// a rename) with the schema of SFT rows when `sft`, else of instance rows.
pub fn convert(jsonl: &Path, parquet: &Path, sft: bool) -> Result<(), DerivedError> {
    let schema = Arc::new(if sft { sft_schema() } else { instance_schema() });
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
        ArrowWriter::try_new(output.writer(), schema, None).map_err(|e| fail(&tmp, &e))?;
    for batch in reader {
        let batch = batch.map_err(|e| fail(jsonl, &e))?;
        writer.write(&batch).map_err(|e| fail(&tmp, &e))?;
    }
    writer.close().map_err(|e| fail(&tmp, &e))?;
    Ok(output.commit_unsynced()?)
}

/// The number of rows of a Parquet file (from its footer).
pub fn rows(path: &Path) -> Result<u64, DerivedError> {
    let file = crate::files::read::open(path).map_err(|e| DerivedError::io(path, e))?;
    let reader = SerializedFileReader::new(file)
        .map_err(|e| DerivedError::io(path, std::io::Error::other(e.to_string())))?;
    Ok(reader.metadata().file_metadata().num_rows().max(0) as u64)
}
