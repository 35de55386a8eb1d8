//! The cache trusted nothing (docs/safety.md "The cache"): a reference
//! sample forged without a seal, a FIFO in its place, another user's (or
//! machine's) file copied in, and a line index forged with its plain
//! checksum recomputed are each noted and computed again, and the output
//! is byte for byte the output of a clean cache.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{TINY_SETTING, TestCommand, generate_tiny};

const LIMIT: Duration = Duration::from_secs(60);

/// The seal kumo-gen appends to every cache file (tag, key id, MAC).
const SEAL: usize = 24;

/// A cache directory and the state folder of its key.
struct Cache {
    dir: PathBuf,
    state: PathBuf,
}

impl Cache {
    fn new(root: &Path, name: &str) -> Cache {
        Cache {
            dir: root.join(format!("{name}-cache")),
            state: root.join(format!("{name}-state")),
        }
    }

    fn on(&self, command: &mut TestCommand) {
        command
            .env("KUMO_GEN_CACHE", &self.dir)
            .env("XDG_STATE_HOME", &self.state);
    }

    /// The one file of `kind` in it.
    fn file(&self, kind: &str) -> PathBuf {
        let files: Vec<PathBuf> = std::fs::read_dir(self.dir.join(kind))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }
}

/// The tiny 3x3 dataset (10 lines, labelled with percentiles from the
/// setting's reference sample, which is not shipped: cached) made into
/// `out` with `cache`; its bytes and the run's stderr.
fn tiny_dataset(cache: &Cache, out: &Path) -> (Vec<u8>, String) {
    let mut command = generate_tiny(out, 10, &[]);
    cache.on(&mut command);
    let ran = command.timeout(LIMIT).ok();
    let file = out.join("tiny").join(format!("{TINY_SETTING}.jsonl"));
    (std::fs::read(file).unwrap(), ran.stderr_text())
}

#[test]
fn forged_fifo_and_copied_reference_samples_are_recomputed_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path(), "a");
    let (clean, _) = tiny_dataset(&cache, &tmp.path().join("clean"));
    let sample = cache.file("references");
    assert!(
        clean.windows(10).any(|w| w == b"percentile"),
        "the lines carry percentiles"
    );

    // Forged: every label replaced by 100 expected steps, no seal.
    let sealed = std::fs::read(&sample).unwrap();
    let text = String::from_utf8(sealed[..sealed.len() - SEAL].to_vec()).unwrap();
    let (head, labels) = text.trim_end().rsplit_once('\t').unwrap();
    let forged: Vec<&str> = labels.split(' ').map(|_| "4059000000000000:1").collect();
    std::fs::write(&sample, format!("{head}\t{}\n", forged.join(" "))).unwrap();
    let (again, stderr) = tiny_dataset(&cache, &tmp.path().join("forged"));
    assert_eq!(again, clean, "a forged sample changes no percentile");
    assert!(
        stderr.contains("was not used: it carries no seal"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&sample).unwrap(),
        sealed,
        "replaced by the real one"
    );

    // A FIFO in its place: no hang.
    std::fs::remove_file(&sample).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&sample)
        .status()
        .unwrap();
    assert!(made.success());
    let (again, stderr) = tiny_dataset(&cache, &tmp.path().join("fifo"));
    assert_eq!(again, clean);
    assert!(stderr.contains("FIFO"), "{stderr}");

    // Another user's cache, copied in whole: sealed by another key.
    let other = Cache::new(tmp.path(), "b");
    std::fs::create_dir_all(other.dir.join("references")).unwrap();
    std::fs::copy(
        &sample,
        other
            .dir
            .join("references")
            .join(sample.file_name().unwrap()),
    )
    .unwrap();
    let (again, stderr) = tiny_dataset(&other, &tmp.path().join("copied"));
    assert_eq!(again, clean);
    assert!(stderr.contains("sealed by another key"), "{stderr}");
}

/// FNV-1a 64, the plain checksum a forger can recompute.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// `play --index 3` of medical 4x6 with `cache` (no reply: only the game
/// shown is compared): its stdout and stderr.
fn play_line_3(cache: &Cache) -> (String, String) {
    let mut command = TestCommand::new();
    command.args([
        "play",
        "--domain",
        "medical",
        "--truths",
        "4",
        "--actions",
        "6",
        "--index",
        "3",
    ]);
    cache.on(&mut command);
    let ran = command.timeout(LIMIT).run();
    (ran.stdout_text(), ran.stderr_text())
}

#[test]
fn a_forged_line_index_with_its_checksum_recomputed_is_not_used() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path(), "a");
    let (clean, _) = play_line_3(&cache);
    assert!(clean.contains("round 1"), "{clean}");
    let index = cache.file("lines");
    let sealed = std::fs::read(&index).unwrap();
    // The index's own bytes: magic, identity, covered, count, then
    // (line u64, retries u32) pairs, then FNV-1a 64 of all that.
    let own = &sealed[..sealed.len() - SEAL];
    let body = &own[..own.len() - 8];
    let word = |at: usize| u64::from_le_bytes(body[at..at + 8].try_into().unwrap());
    let count = word(24) as usize;
    let mut pairs: Vec<(u64, u32)> = (0..count)
        .map(|i| {
            let at = 32 + 12 * i;
            (
                word(at),
                u32::from_le_bytes(body[at + 8..at + 12].try_into().unwrap()),
            )
        })
        .filter(|&(line, _)| line != 3)
        .collect();
    pairs.push((3, 1));
    pairs.sort_unstable();
    let mut forged = body[..24].to_vec();
    forged.extend_from_slice(&(pairs.len() as u64).to_le_bytes());
    for (line, retries) in pairs {
        forged.extend_from_slice(&line.to_le_bytes());
        forged.extend_from_slice(&retries.to_le_bytes());
    }
    let sum = fnv1a(&forged);
    forged.extend_from_slice(&sum.to_le_bytes());
    std::fs::write(&index, &forged).unwrap();
    let (again, stderr) = play_line_3(&cache);
    assert_eq!(again, clean, "line 3 is line 3 of the dataset");
    assert!(
        stderr.contains("was not used: it carries no seal"),
        "{stderr}"
    );
}

/// The cache key is private: a key others can read is not used, and the
/// cache with it (the run is the same, computed in memory).
#[test]
fn a_cache_key_others_can_read_turns_the_cache_off() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let cache = Cache::new(tmp.path(), "a");
    let (clean, _) = tiny_dataset(&cache, &tmp.path().join("clean"));
    let key = cache.state.join("kumo-gen/cache-key");
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_dir_all(&cache.dir).unwrap();
    let (again, _) = tiny_dataset(&cache, &tmp.path().join("open-key"));
    assert_eq!(again, clean);
    assert!(!cache.dir.join("references").exists(), "nothing cached");
}
