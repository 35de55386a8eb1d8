//! The `kumo-gen` binary: parse arguments, call the library, map the result
//! to an exit code. All work happens in the `kumo_gen` library.

fn main() {
    std::process::exit(kumo_gen::cli::main());
}
