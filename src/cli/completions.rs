//! `completions <shell>`: the shell's completion script, made from the clap definitions, for
//! `git-agent-context` and for `git agent-context` as git's own completion hands it over: bash's
//! calls `_git_agent_context` (defined here), zsh's `_git-agent-context` (the function clap_complete
//! names after the binary); fish's hands `git agent-context` to the completions of
//! `git-agent-context` (fish 3.6's does not).
//! docs/commands.md, `completions`, says how to enable each.

use std::io::Write;

use clap::CommandFactory;

use crate::cli::{Cli, CmdResult};

/// The command the scripts complete.
const BIN: &str = "git-agent-context";

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell the script is for.
    #[arg(value_enum, value_name = "shell")]
    shell: Shell,
}

/// For bash: what git's completion calls for `git [<options>] agent-context <words>`, or an
/// alias of it, with the words it read in `words`, the one completed at `cword` and the command's
/// at `__git_cmd_idx` (git 2.31 and later; before, the command is taken to be the second word).
/// It hands clap_complete's function the words after the command as if `git-agent-context` had
/// been typed, and lets a completed word be followed by a space (git's completion asks for none,
/// and adds it to its own words itself).
const BASH_FOR_GIT: &str = r#"
_git_agent_context() {
    local at=${__git_cmd_idx:-1}
    local COMP_WORDS=(git-agent-context "${words[@]:at+1}")
    local COMP_CWORD=$((cword - at))
    compopt +o nospace 2>/dev/null
    _git__agent__context git-agent-context "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
}
"#;

pub fn run(args: Args, out: &mut dyn Write) -> CmdResult {
    let shell = match args.shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    // clap_complete panics when it cannot write: it writes to memory, and a closed stdout
    // (`| head`) is an error we end quietly on.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut script);
    if let Shell::Bash = args.shell {
        // clap_complete 4.6 names a subcommand's state in bash two ways when the binary's name
        // has a hyphen (`git__agent__context__subcmd__why` as it walks the words, the hyphens
        // of the name spelled `__subcmd__` in the arms that complete it), so that no subcommand
        // would complete its options: the arms are spelled as the walk spells them.
        let text = String::from_utf8_lossy(&script)
            .replace(&BIN.replace('-', "__subcmd__"), &BIN.replace('-', "__"));
        script = text.into_bytes();
        script.extend_from_slice(BASH_FOR_GIT.as_bytes());
    }
    out.write_all(&script)?;
    Ok(())
}
