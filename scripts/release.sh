#!/usr/bin/env bash
# Builds the release artefacts into dist/ (docs/install.md, "Release
# artefacts"), for Linux x86-64 with glibc 2.28 or later:
#
#   kumo_gen-<V>-cp39-abi3-manylinux_2_28_x86_64.whl   the Python package,
#       one wheel for every CPython >= 3.9 (abi3), no compiler to install it
#   kumo_gen-<V>.tar.gz                                 its sdist (builds with
#       a Rust toolchain: `pip install kumo_gen-<V>.tar.gz`)
#   kumo-gen-<V>-x86_64-linux-gnu.tar.gz                the standalone binary
#       (with the `parquet` feature), LICENSE, NOTICE and README
#   SHA256SUMS                                          `sha256sum -c SHA256SUMS`
#
# <V> is the one version in Cargo.toml (`[workspace.package]`). The tools
# come from PyPI into a venv (.venv-release, or $KUMO_RELEASE_VENV):
# maturin, and zig (`ziglang`), which maturin's `--zig` uses as the linker
# (through cargo-zigbuild, built into maturin) to link against glibc
# 2.28's symbol versions instead of this machine's glibc. Compiled code is rustc's either way; only the link differs, so
# every output byte is the same as a `cargo build --release` binary's
# (.ci/run compares them). Afterwards the script reads the GLIBC_* symbol
# versions every shipped ELF file needs (`objdump -T`) and fails if any is
# newer than 2.28. Builds share target/ (or $CARGO_TARGET_DIR) under
# target/x86_64-unknown-linux-gnu/: the wheel and the binary compile the
# dependencies once between them.
#
#   bash scripts/release.sh          # about 10 min of CPU time on a first run
set -euo pipefail
cd "$(dirname "$0")/.."

GLIBC_MAX=2.28
TRIPLE=x86_64-unknown-linux-gnu
VENV="${KUMO_RELEASE_VENV:-.venv-release}"
TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
export CARGO_TARGET_DIR="$TARGET_DIR"

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
    echo "release.sh builds Linux x86-64 artefacts and runs on Linux x86-64 only (this is $(uname -s)-$(uname -m))" >&2
    exit 2
fi
for tool in cargo objdump sha256sum tar gzip python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "release.sh needs \`$tool\` on PATH (cargo from rustup; objdump from binutils)" >&2
        exit 2
    fi
done

VERSION=$(cargo metadata --no-deps --format-version 1 --locked |
    python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "kumo-gen"))')

# The build tools, pinned to a major version; pip reuses the venv on later runs.
if [ ! -x "$VENV/bin/maturin" ] || ! "$VENV/bin/python" -c 'import ziglang' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.9,<2' 'ziglang>=0.13,<0.18'
fi
# maturin finds zig as `python -m ziglang` of the first python on PATH.
export PATH="$PWD/$VENV/bin:$PATH"

rm -rf dist
mkdir -p dist

# The wheel: maturin links with zig for the manylinux_2_28 tag and checks
# the libraries it links (its auditwheel); abi3, so any CPython >= 3.9
# builds the one wheel.
nice -n 10 maturin build --release --locked --zig --compatibility manylinux_2_28 \
    --target "$TRIPLE" --manifest-path python/Cargo.toml \
    --interpreter "$VENV/bin/python" --out dist
maturin sdist --manifest-path python/Cargo.toml --out dist

# The binary, linked the same way: maturin's `bin` mode builds it into a
# throwaway wheel (checked for manylinux_2_28 like the other) and it is
# taken from there. Not `cargo zigbuild`: cargo fingerprints the linker
# wrapper, which names the program that made it, so a second program would
# rebuild (and overwrite) every shared dependency on each alternation.
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
nice -n 10 maturin build --release --locked --zig --compatibility manylinux_2_28 \
    --target "$TRIPLE" --manifest-path Cargo.toml --bindings bin --features parquet \
    --interpreter "$VENV/bin/python" --out "$STAGE/bin-wheel"
ARCHIVE="kumo-gen-$VERSION-x86_64-linux-gnu"
mkdir "$STAGE/$ARCHIVE"
python3 -c 'import sys, zipfile
[wheel] = sys.argv[1:2]
z = zipfile.ZipFile(wheel)
[name] = [n for n in z.namelist() if n.endswith(".data/scripts/kumo-gen")]
open(sys.argv[2], "wb").write(z.read(name))' "$(ls "$STAGE"/bin-wheel/*.whl)" "$STAGE/$ARCHIVE/kumo-gen"
chmod 755 "$STAGE/$ARCHIVE/kumo-gen"
cp LICENSE NOTICE README.md "$STAGE/$ARCHIVE/"
# Same bytes for the same files: sorted names, fixed owner and time, no gzip name/time.
EPOCH=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
    -C "$STAGE" -cf - "$ARCHIVE" | gzip -n -9 > "dist/$ARCHIVE.tar.gz"

# Read the glibc symbol versions the shipped ELF files need.
newest_glibc() { # ELF file -> the newest GLIBC_x.y its dynamic symbols ask for
    objdump -T "$1" | grep -oE 'GLIBC_[0-9]+(\.[0-9]+)+' | sed 's/GLIBC_//' | sort -uV | tail -n 1
}
check_glibc() { # ELF file, label
    local newest
    newest=$(newest_glibc "$1")
    if [ -z "$newest" ]; then
        echo "$2: no GLIBC symbol versions found by objdump -T (not a dynamic glibc ELF?)" >&2
        exit 2
    fi
    if [ "$(printf '%s\n%s\n' "$newest" "$GLIBC_MAX" | sort -V | tail -n 1)" != "$GLIBC_MAX" ]; then
        echo "$2 needs GLIBC_$newest, newer than the $GLIBC_MAX bound; these symbols:" >&2
        objdump -T "$1" | grep -E "GLIBC_$newest" >&2
        exit 2
    fi
    echo "$2: newest glibc symbol version needed: GLIBC_$newest (bound $GLIBC_MAX)"
}
WHEEL=$(ls dist/kumo_gen-"$VERSION"-cp39-abi3-manylinux_2_28_x86_64*.whl)
python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
so = [n for n in z.namelist() if n.endswith(".so")]
assert len(so) == 1, so
open(sys.argv[2], "wb").write(z.read(so[0]))' "$WHEEL" "$STAGE/_native.so"
check_glibc "$STAGE/_native.so" "$(basename "$WHEEL") (kumo_gen/_native.so)"
check_glibc "$STAGE/$ARCHIVE/kumo-gen" "$ARCHIVE.tar.gz (kumo-gen)"

(cd dist && sha256sum -- *.whl *.tar.gz > SHA256SUMS)
echo "dist/ (kumo-gen $VERSION):"
(cd dist && ls -l -- *.whl *.tar.gz && cat SHA256SUMS)
