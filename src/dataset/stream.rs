//! An instance file read one line at a time, so a reader's memory does
//! not grow with the file (eval, pairs and serve hold what they play,
//! never the whole file; docs/safety.md "Reading").
//!
//! [`InstanceReader`] reads by the rule of user files
//! ([`crate::files::read`]: a regular file, each line under the line cap)
//! and parses each line as it comes, with the same rules as
//! [`super::read_instances`]: blank lines are no instances, a byte-order
//! mark or bytes that are not UTF-8 are refused with their place, a line
//! that is no instance line is refused with its number. Each instance
//! comes with its position among the file's instances (the book's number,
//! `seed=<position>.txt`) and the byte offset of its line, so one line
//! can be read again later by itself ([`read_instance_at`]).

use std::fs::File;
use std::io::{self, BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::DatasetError;
use crate::files::read::Lines;
use crate::game::InstanceLine;

/// One instance of a file, where it is, and what it is.
pub struct Read {
    /// Its position among the file's instances (from 0).
    pub position: usize,
    /// The byte offset of its line.
    pub offset: u64,
    pub instance: InstanceLine,
}

/// The instances of a file, one line at a time.
pub struct InstanceReader {
    path: PathBuf,
    lines: Lines<BufReader<File>>,
    line: Vec<u8>,
    offset: u64,
    position: usize,
}

impl InstanceReader {
    /// Opens `path` by the rule of user files.
    pub fn open(path: &Path) -> Result<InstanceReader, DatasetError> {
        let lines = crate::files::read::lines(path).map_err(|e| DatasetError::io(path, e))?;
        Ok(InstanceReader {
            path: path.to_path_buf(),
            lines,
            line: Vec::new(),
            offset: 0,
            position: 0,
        })
    }

    /// Instances read so far: the position of the next one.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The next instance, `None` at the end of the file.
    pub fn next_instance(&mut self) -> Result<Option<Read>, DatasetError> {
        loop {
            let offset = self.offset;
            let more = self
                .lines
                .next_line(&mut self.line)
                .map_err(|e| DatasetError::io(&self.path, e))?;
            if !more {
                return Ok(None);
            }
            self.offset += self.line.len() as u64;
            let number = self.lines.number() as usize;
            let instance = parse_line(&self.path, number, &self.line)?;
            if let Some(instance) = instance {
                let read = Read {
                    position: self.position,
                    offset,
                    instance,
                };
                self.position += 1;
                return Ok(Some(read));
            }
        }
    }
}

/// The instance of one line (its number for messages), `None` for a
/// blank line.
fn parse_line(
    path: &Path,
    number: usize,
    bytes: &[u8],
) -> Result<Option<InstanceLine>, DatasetError> {
    let bad = |message: String| DatasetError::Line {
        path: path.to_path_buf(),
        line: number,
        message,
    };
    if number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(DatasetError::io(
            path,
            io::Error::new(io::ErrorKind::InvalidData, crate::game::text::bom_message()),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let column = String::from_utf8_lossy(&bytes[..e.valid_up_to()]).chars().count() + 1;
        DatasetError::io(
            path,
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "line {number} is not UTF-8 text (byte 0x{:02x} at column {column}); save the file as UTF-8",
                    bytes[e.valid_up_to()]
                ),
            ),
        )
    })?;
    let text = text.trim_end_matches(['\n', '\r']);
    if text.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(text)
        .map(Some)
        .map_err(|e| bad(format!("not an instance line ({e})")))
}

/// The instance whose line starts at byte `offset` of `path` (an offset
/// an [`InstanceReader`] gave), read by itself; `number` names the line
/// in messages. A file changed since (the line gone, or no instance line
/// there) is an error naming it.
pub fn read_instance_at(
    path: &Path,
    offset: u64,
    number: usize,
) -> Result<InstanceLine, DatasetError> {
    let io = |e| DatasetError::io(path, e);
    let mut file = crate::files::read::open(path).map_err(io)?;
    file.seek(SeekFrom::Start(offset)).map_err(io)?;
    let mut lines = Lines::new(BufReader::with_capacity(1 << 16, file));
    let mut line = Vec::new();
    let changed = || DatasetError::Instance {
        path: path.to_path_buf(),
        message: format!("line {number} is gone: the file changed since it was read"),
    };
    if !lines.next_line(&mut line).map_err(io)? {
        return Err(changed());
    }
    parse_line(path, number, &line)?.ok_or_else(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_stream_with_their_positions_and_offsets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let line = |seed: u64| {
            format!(
                "{{\"truths\":[\"a\",\"b\"],\"actions\":[\"x\"],\"observations\":{{}},\"seed\":{seed}}}"
            )
        };
        std::fs::write(&path, format!("{}\n\n{}\r\n", line(7), line(9))).unwrap();
        let mut reader = InstanceReader::open(&path).unwrap();
        let first = reader.next_instance().unwrap().unwrap();
        let second = reader.next_instance().unwrap().unwrap();
        assert!(reader.next_instance().unwrap().is_none());
        assert_eq!((first.position, first.instance.seed), (0, 7));
        assert_eq!((second.position, second.instance.seed), (1, 9));
        assert_eq!(read_instance_at(&path, second.offset, 3).unwrap().seed, 9);
        std::fs::write(&path, format!("{}\nnot json\n", line(7))).unwrap();
        let mut reader = InstanceReader::open(&path).unwrap();
        assert!(reader.next_instance().unwrap().is_some());
        let e = reader.next_instance().err().unwrap();
        assert!(
            e.to_string().contains(":line 2: not an instance line"),
            "{e}"
        );
    }
}
