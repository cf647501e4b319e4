//! What each secret looks like: the redaction rules' names, what every match of each holds,
//! and their patterns ([`super::rules`] judges what a match holds).
//!
//! The token formats follow those catalogued by gitleaks (MIT License, Copyright (c) 2019
//! Zachary Rice; <https://github.com/gitleaks/gitleaks>), written anew as Rust regexes; the
//! rules for values next to a secret's name and for an environment's lines are ours.
//!
//! They are kept apart from the code that judges because `build.rs` reads them too: it compiles
//! the rules' set for ASCII text once, when the binary is built, so that no process pays for it
//! ([`crate::classify::patterns::Set::prebuilt`]).

/// A rule's name, what its matches hold and its pattern, `\b` as written (the rules and the
/// set make it look at ASCII alone).
pub(crate) struct Shape {
    pub name: &'static str,
    /// Every match of the pattern holds one of these, in ASCII lower case, once the match is
    /// put in lower case too.
    pub needs: &'static [&'static str],
    pub pattern: String,
    pub secret: Secret,
}

/// Where the secret is in a match, as [`super::rules`] tells it.
#[derive(Clone, Copy)]
pub(crate) enum Secret {
    /// The group named `s`, else the whole match.
    Matched,
    /// An `Authorization` header's credentials.
    Authorization,
    /// A command line option's value.
    OptionValue,
    /// An assigned value, unless it reads as code.
    Assignment,
    /// A random-looking word.
    RandomWord,
    /// A value in an environment's dump.
    EnvDump,
}

/// A line of an environment as `env`, `printenv`, `set` or `export -p` print it (bash's
/// `declare -x NAME="value"`, dash's `export NAME='value'`), or as a `.env` file holds it.
pub(crate) const ENV_LINE: &str = r"[ \t]*(?:(?:export|declare[ \t]+-[A-Za-z-]+|typeset[ \t]+-[A-Za-z-]+)[ \t]+)?[A-Za-z_][A-Za-z0-9_]*=";

/// What separates the lines of a key's body: line breaks, or their escapes in a string.
const KEY_LINE: &str = r"(?:\s|\\[nr])*";

/// The rules in the order they are tried: a value the earlier ones name keeps their name.
pub(crate) fn shapes() -> Vec<Shape> {
    let mut shapes = tokens();
    shapes.extend(named());
    shapes
}

/// The shape of the rule `name`.
fn shape(name: &'static str, needs: &'static [&'static str], pattern: &str) -> Shape {
    Shape {
        name,
        needs,
        pattern: pattern.to_owned(),
        secret: Secret::Matched,
    }
}

impl Shape {
    /// This shape, its secret found as `secret` says.
    fn judged(self, secret: Secret) -> Shape {
        Shape { secret, ..self }
    }
}

/// A private key: its body is base64 lines and `Header: value` lines, up to its END line; cut
/// short (a truncated paste), up to where the base64 stops.
fn private_key() -> String {
    format!(
        r"-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----(?:{KEY_LINE}(?:[A-Za-z0-9+/=]{{16,}}|[A-Za-z-]+:[^\n\\]*))*(?:{KEY_LINE}[A-Za-z0-9+/=]{{0,15}}{KEY_LINE}-----END[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----)?"
    )
}

/// Secrets told by their own form: keys and tokens of known formats, a password in a URL.
fn tokens() -> Vec<Shape> {
    vec![
        shape("private-key", &["-----begin"], &private_key()),
        shape(
            "aws-access-key",
            &[
                "akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa",
                "apka",
            ],
            r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[0-9A-Z]{16}\b",
        ),
        shape(
            "aws-secret-key",
            &["aws"],
            r#"(?i)aws[\w.-]{0,20}?(?:secret|private)[\w.-]{0,20}?["']?(?:[ \t]*[:=][ \t]*|[ \t]+)["']?(?P<s>[A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)"#,
        ),
        shape(
            "github-token",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
            r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{22,255}\b",
        ),
        shape(
            "gitlab-token",
            &[
                "glpat-",
                "gldt-",
                "glptt-",
                "glrt-",
                "glcbt-",
                "gloas-",
                "glsoat-",
                "glimt-",
                "glagent-",
                "glffct-",
                "glft-",
                "glwt-",
                "gr1348941",
            ],
            r"\b(?:gl(?:pat|dt|ptt|rt|cbt|oas|soat|imt|agent|ffct|ft|wt)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})",
        ),
        shape(
            "slack-token",
            &["xox", "xapp-", "hooks.slack.com"],
            r"\bxox[abposre]-[A-Za-z0-9-]{10,}\b|\bxapp-\d-[A-Za-z0-9-]{10,}\b|https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{20,}",
        ),
        shape(
            "stripe-key",
            &["_live_", "_test_", "whsec_"],
            r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}\b",
        ),
        // The key may end in `-` or `_`, after which `\b` cannot hold.
        shape(
            "google-api-key",
            &["aiza"],
            r"\b(?P<s>AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|$)",
        ),
        shape(
            "anthropic-key",
            &["sk-ant-"],
            r"\bsk-ant-[A-Za-z0-9_-]{20,}",
        ),
        shape("npm-token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
        // User tokens, and the older organisation tokens.
        shape(
            "huggingface-token",
            &["hf_", "api_org_"],
            r"\b(?:hf_|api_org_)[A-Za-z]{34}\b",
        ),
        // A storage account's key and a Service Bus or Event Hubs key, in a connection string;
        // the signature of a shared access signature (`…&sig=…`, URL-encoded base64).
        shape(
            "azure-key",
            &["accountkey=", "sharedaccesskey=", "sig="],
            r"(?:\b(?i:AccountKey|SharedAccessKey)=|[?&;]sig=)(?P<s>[A-Za-z0-9+/%]{20,}=*)",
        ),
        // Project and service keys carry dashes; the older ones are one run of letters and
        // digits (`sk-learn-…` is a package, not a key).
        shape(
            "openai-key",
            &["sk-"],
            r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|\bsk-[A-Za-z0-9]{20,}\b",
        ),
        // The signature may be empty (an unsigned token still carries its claims).
        shape(
            "jwt",
            &["eyj"],
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        ),
        shape(
            "url-password",
            &["://"],
            r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*:(?P<s>[^/\s@]{3,})@",
        ),
    ]
}

/// Secrets told by what names them: a header, a command's option, an assignment, the words
/// before them, a line of an environment.
fn named() -> Vec<Shape> {
    vec![
        shape(
            "authorization",
            &["authorization", "bearer"],
            r#"(?i)\b(?:proxy-)?authorization["']?[ \t]*[:=][ \t]*["']?(?:(?P<scheme>bearer|basic|token|digest|negotiate|apikey)[ \t]+)?(?P<s>[A-Za-z0-9._~+/=-]{8,})|\bbearer[ \t]+(?P<t>[A-Za-z0-9._~+/=-]{20,})"#,
        )
        .judged(Secret::Authorization),
        shape(
            "command-line-secret",
            &[
                "--",
                "sshpass",
                "mysql",
                "mariadb",
                "docker",
                "redis-cli",
                "curl",
            ],
            r#"(?:(?i:--(?:http-)?(?:password|passwd|pass|token|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?key))(?:=|[ \t]+)|\bsshpass[ \t]+-p[ \t]*|\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n|;&]*?[ \t]-p|\bdocker[ \t]+login\b[^\n|;&]*?[ \t]-p[ \t]+|\bredis-cli\b[^\n|;&]*?[ \t]-a[ \t]+|\bcurl\b[^\n|;&]*?[ \t](?:-u[ \t]*|--user[= ])["']?[^\s:"']+:)(?:"(?P<q>[^"\n]{3,})"|'(?P<r>[^'\n]{3,})'|["']?(?P<s>[^\s"']{3,}))"#,
        )
        .judged(Secret::OptionValue),
        shape(
            "secret-assignment",
            &[
                "secret",
                "token",
                "pass",
                "pwd",
                "api",
                "private",
                "access",
                "credential",
                "auth",
            ],
            // The name ends at the secret word or goes on with a word that keeps it one
            // (`secret_key_base`, `secretKey`): `tokenizer`, `secretary`, `token_url`,
            // `secret_name` are not secrets; a subscript (`['PASSWORD'] = …`) names it too.
            // The value stays on the name's line.
            r#"(?i)(?P<key>\b(?:[a-z0-9_.-]*[_.-])?(?:[a-z0-9]*(?:secret|token|passw(?:or)?d|passphrase|pwd|api[_-]?key|private[_-]?key|access[_-]?key|credentials?|auth[_-]?(?:key|token))|pass|auth)s?(?:[_.-]?(?:key|base|value|string|str|data|b64|base64|hash|enc|encrypted|raw|hex|plain|text))*)["']?\]?(?P<op>[ \t]*(?::=|=>|[:=])[ \t]*)(?:"(?P<q>(?:[^"\\\n]|\\.){4,})"|'(?P<r>[^'\n]{4,})'|`(?P<g>[^`\n]{4,})`|(?P<b>[^\s"'`,;()\[\]{}<>]{6,}))"#,
        )
        .judged(Secret::Assignment),
        shape(
            "generic-secret",
            &["api", "secret", "token", "pass"],
            r#"(?i)\b(?:api[ _-]?key|secret|token|password|passwd|passphrase)[ \t]+(?:(?:is|was|of|=|:)[ \t]*)?["'`]?(?P<s>[A-Za-z0-9_+/=.~-]{16,})"#,
        )
        .judged(Secret::RandomWord),
        // Last: a value the rules above named keeps their name.
        shape(
            "env-dump",
            &["="],
            &format!(r"(?m)^{ENV_LINE}(?P<v>[^\n]*)"),
        )
        .judged(Secret::EnvDump),
    ]
}
