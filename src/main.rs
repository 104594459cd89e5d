//! The `nbook` binary. Everything lives in the library (`nbook::cli`) so it can be tested.

fn main() -> std::process::ExitCode {
    nbook::cli::main()
}
