//! Embeds the shipped domains (`domains/*.yaml`) and templates
//! (`templates/*`) into the binary, so `kumo-gen --domain medical` works
//! from any directory. Files are listed in sorted order for reproducible
//! builds.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    for (dir, suffix, out) in [
        ("domains", ".yaml", "shipped_domains.rs"),
        ("templates", ".j2", "shipped_templates.rs"),
    ] {
        let path = Path::new(&manifest).join(dir);
        println!("cargo:rerun-if-changed={dir}");
        let mut entries: Vec<String> = std::fs::read_dir(&path)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .filter(|name| name.ends_with(suffix))
                    .collect()
            })
            .unwrap_or_default();
        entries.sort();
        let mut code = String::from("&[\n");
        for file in &entries {
            let stem = file.strip_suffix(suffix).unwrap_or(file);
            let full = path.join(file);
            println!("cargo:rerun-if-changed={}", full.display());
            writeln!(
                code,
                "    ({stem:?}, include_str!({:?})),",
                full.display().to_string()
            )
            .expect("writing to a String");
        }
        code.push(']');
        std::fs::write(Path::new(&out_dir).join(out), code).expect("writing generated source");
    }
}
