//! What the configuration adds to redaction (its `[redact]` section), the paths never
//! captured whatever it says, and why a pattern it gives cannot be used.

/// Paths whose content is never captured, whatever the files say (they can only add to it).
/// The first four are the issue's; then other private keys (`ssh-keygen`'s other kinds, TLS
/// keys and key stores) and the files where tools keep their credentials.
pub const DEFAULT_EXCLUDE: [&str; 15] = [
    ".env*",
    "*.pem",
    "*id_rsa*",
    "secrets/**",
    "*id_ed25519*",
    "*id_ecdsa*",
    "*id_dsa*",
    "*.key",
    "*.p12",
    "*.pfx",
    ".netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    "**/.aws/credentials",
];

/// What the configuration's `[redact]` section adds to the built-in rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// `[redact.rules]`: name → regex; the first capture group (or the whole match) is the
    /// secret, replaced by `[REDACTED:<name>]`.
    pub rules: Vec<(String, String)>,
    /// `redact.allow`: regexes; a would-be secret that one of them matches whole is kept.
    pub allow: Vec<String>,
    /// `redact.exclude`: globs of paths whose content is never captured, after the defaults.
    pub exclude: Vec<String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            rules: Vec::new(),
            allow: Vec::new(),
            exclude: DEFAULT_EXCLUDE.iter().map(|g| (*g).to_owned()).collect(),
        }
    }
}

/// Why a pattern the configuration gives cannot be used, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("the rule name {0:?} must be lowercase letters, digits and '-'")]
    RuleName(String),
    #[error("{pattern:?} is not a valid regex: {why}")]
    Regex { pattern: String, why: String },
    #[error("{0:?} matches empty text")]
    MatchesEmpty(String),
    #[error("{0:?} cannot be matched against a whole secret")]
    NotWhole(String),
    #[error("the glob {0:?} matches nothing")]
    EmptyGlob(String),
    #[error("the glob {0:?} has a '[' without its ']'")]
    UnclosedClass(String),
}
