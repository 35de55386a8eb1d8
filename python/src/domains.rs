//! `kumo_gen.load_domain` by name or path, compiled once per file: the
//! documented calls (`kumo_gen.instance("medical", ...)`, an adapter's
//! task by domain name) name their domain at every call, and compiling it
//! again each time cost 11 times the call itself. A compiled domain is
//! kept under what it was read from: a shipped domain (built into the
//! module: it never changes) by its name, a file by its path and
//! identity (device, inode, size, modification time), so an edited or
//! replaced file is compiled again. At most [`KEPT`] domains are kept.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use kumo_gen::domain::{Domain, DomainSource, Registry};

/// Domains kept at most (past it the table starts again).
const KEPT: usize = 64;

/// What a compiled domain was read from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Origin {
    Shipped(&'static str),
    File {
        path: PathBuf,
        identity: (u64, u64, u64, i128),
    },
}

type Compiled = (Arc<Domain>, Vec<String>);

fn table() -> &'static Mutex<HashMap<Origin, Compiled>> {
    static TABLE: OnceLock<Mutex<HashMap<Origin, Compiled>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

/// A file's identity: changes when it is edited or replaced.
fn identity(path: &std::path::Path) -> Option<(u64, u64, u64, i128)> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(-1, |d| d.as_nanos() as i128);
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino(), meta.len(), modified))
    }
    #[cfg(not(unix))]
    {
        Some((0, 0, meta.len(), modified))
    }
}

/// The domain `spec` names (as every command's `--domain`), compiled
/// once per origin; its warnings rendered.
pub(crate) fn load(spec: &str, domains_dir: Option<PathBuf>) -> Result<Compiled, String> {
    let source = Registry::new(domains_dir)
        .resolve(spec)
        .map_err(|e| e.to_string())?;
    let origin = match &source {
        DomainSource::Shipped(shipped) => Some(Origin::Shipped(shipped.name)),
        DomainSource::File(path) => identity(path).map(|identity| Origin::File {
            path: std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()),
            identity,
        }),
    };
    let kept = |table: &HashMap<Origin, Compiled>| {
        origin
            .as_ref()
            .and_then(|o| table.get(o))
            .map(|(d, w)| (Arc::clone(d), w.clone()))
    };
    if let Some(found) = kept(&table().lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(found);
    }
    let (domain, warnings) = source.load().map_err(|e| e.to_string())?;
    let compiled = (
        Arc::new(domain),
        warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
    );
    if let Some(origin) = origin {
        let mut table = table().lock().unwrap_or_else(|e| e.into_inner());
        if table.len() >= KEPT {
            table.clear();
        }
        table.insert(origin, (Arc::clone(&compiled.0), compiled.1.clone()));
    }
    Ok(compiled)
}
