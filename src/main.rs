fn main() -> std::process::ExitCode {
    eboard::cli::main()
}
