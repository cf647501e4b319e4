fn main() -> std::process::ExitCode {
    git_agent_context::cli::main()
}
