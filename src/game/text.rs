//! Reading a JSONL file a user named (instances, results): text that is
//! not plain UTF-8 is reported with the fix, not as a JSON error at
//! "line 1 column 1". A leading byte-order mark is refused by name (JSON
//! Lines has none, and KUMO's reader chokes on it); bytes that are not
//! UTF-8 are reported with their line and column.

use std::io;
use std::path::Path;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// What is wrong with a JSONL file's bytes, if anything: a byte-order
/// mark, or bytes that are not UTF-8 (with the line and column of the
/// first). The message starts lower-case and names the fix.
pub fn jsonl_problem(bytes: &[u8]) -> Option<String> {
    if bytes.starts_with(BOM) {
        return Some(bom_message());
    }
    let e = std::str::from_utf8(bytes).err()?;
    let good = &bytes[..e.valid_up_to()];
    let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = good.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
    let column = String::from_utf8_lossy(&good[start..]).chars().count() + 1;
    Some(format!(
        "line {line} is not UTF-8 text (byte 0x{:02x} at column {column}); save the file as UTF-8",
        bytes[e.valid_up_to()]
    ))
}

/// The message for a file that starts with a byte-order mark.
pub fn bom_message() -> String {
    "it starts with a byte-order mark (U+FEFF); save it as UTF-8 without BOM".into()
}

/// Reads the JSONL file at `path` as text, by [`crate::files::read`]'
/// rule (a regular file, bounded, no line over the cap); a byte-order
/// mark or bytes that are not UTF-8 are an `InvalidData` error naming the
/// line and the fix (callers name the file).
pub fn read_jsonl(path: &Path) -> io::Result<String> {
    let bytes = crate::files::read::read_lines(path)?;
    if let Some(problem) = jsonl_problem(&bytes) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, problem));
    }
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_and_bad_bytes_are_named_with_their_place() {
        assert_eq!(jsonl_problem(b"{}\n{}\n"), None);
        assert!(
            jsonl_problem(b"\xEF\xBB\xBF{}\n")
                .unwrap()
                .contains("byte-order mark")
        );
        let bad = jsonl_problem(b"{}\n{}\n{\"a\": \"\xff\"}\n").unwrap();
        assert!(bad.starts_with("line 3 is not UTF-8"), "{bad}");
        assert!(bad.contains("column 8"), "{bad}");
    }
}
