//! One request to the Anthropic Messages API (`POST {base_url}/v1/messages`), over `ureq`,
//! within a timeout. A 429 is waited out once when its `retry-after` fits in the timeout;
//! anything else that is not a 200 with the expected body is an [`Error`], and nothing is
//! retried beyond that: the text stays for the next run.

use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

/// What the API is asked for.
pub struct Request<'a> {
    pub base_url: &'a str,
    pub api_key: &'a str,
    pub model: &'a str,
    pub max_tokens: u64,
    pub system: &'a str,
    pub text: &'a str,
    pub timeout: Duration,
}

/// What it answered: the model's text and the tokens it counted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The answer was cut at `max_tokens` (`stop_reason`), so is not whole.
    pub cut: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{url} is not https:// (plain http:// only to this machine)")]
    Insecure { url: String },
    #[error("no answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("rate limited (429){}", retry_after.map_or(String::new(), |s| format!(", retry after {s} s")))]
    RateLimited { retry_after: Option<u64> },
    #[error("the API answered {status}")]
    Status { status: u16 },
    #[error("cannot reach the API: {0}")]
    Transport(String),
    /// Nothing was sent: no connection was made.
    #[error("cannot reach the API: {0}")]
    Unreachable(String),
    /// Nothing was sent: `claude` did not start.
    #[error("cannot run claude: {0}")]
    NotStarted(String),
    #[error("the API's answer is not a Messages response: {0}")]
    Malformed(String),
    #[error("claude failed: {0}")]
    Claude(String),
}

impl Error {
    /// Whether the request may have reached the model: its estimate is counted then.
    pub fn sent(&self) -> bool {
        !matches!(
            self,
            Error::Insecure { .. } | Error::Unreachable(_) | Error::NotStarted(_)
        )
    }
}

/// Whether `url` may carry a session's text: HTTPS, or HTTP to this machine (a local proxy,
/// the tests' server) — its host exactly `127.0.0.1`, `::1` or `localhost`, with no user.
pub fn check_url(url: &str) -> Result<(), Error> {
    let ok = match url.parse::<ureq::http::Uri>() {
        Ok(uri) => match (uri.scheme_str(), uri.authority()) {
            (Some("https"), Some(_)) => true,
            (Some("http"), Some(authority)) => {
                !authority.as_str().contains('@')
                    && matches!(authority.host(), "127.0.0.1" | "[::1]" | "localhost")
            }
            _ => false,
        },
        Err(_) => false,
    };
    match ok {
        true => Ok(()),
        false => Err(Error::Insecure {
            url: url.to_owned(),
        }),
    }
}

/// Send `request`; the whole exchange, a 429's wait included, stays within its timeout.
pub fn send(request: &Request) -> Result<Answer, Error> {
    check_url(request.base_url)?;
    let url = format!("{}/v1/messages", request.base_url.trim_end_matches('/'));
    check_url(&url)?;
    let body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": [{ "role": "user", "content": request.text }],
    })
    .to_string();
    let start = Instant::now();
    let mut waited = false;
    loop {
        let left = request.timeout.saturating_sub(start.elapsed());
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(left))
            .http_status_as_error(false)
            // The key goes nowhere else: a redirect is not followed (a 3xx is a failure).
            .max_redirects(0)
            .build()
            .into();
        let response = agent
            .post(&url)
            .header("x-api-key", request.api_key)
            .header("anthropic-version", "2023-06-01")
            .content_type("application/json")
            .send(body.as_str());
        let mut response = match response {
            Ok(r) => r,
            Err(ureq::Error::Timeout(_)) => return Err(Error::Timeout(request.timeout)),
            Err(
                e @ (ureq::Error::HostNotFound
                | ureq::Error::ConnectionFailed
                | ureq::Error::BadUri(_)),
            ) => return Err(Error::Unreachable(e.to_string())),
            Err(ureq::Error::Io(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(Error::Unreachable(e.to_string()));
            }
            Err(e) => return Err(Error::Transport(e.to_string())),
        };
        let status = response.status().as_u16();
        if status == 429 {
            let retry_after = (response.headers().get("retry-after"))
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok());
            let wait = retry_after.map(Duration::from_secs);
            match wait {
                // A wait too long to add up is too long to wait.
                Some(wait)
                    if !waited
                        && (start.elapsed().checked_add(wait))
                            .is_some_and(|end| end < request.timeout) =>
                {
                    waited = true;
                    std::thread::sleep(wait);
                    continue;
                }
                _ => return Err(Error::RateLimited { retry_after }),
            }
        }
        if status != 200 {
            return Err(Error::Status { status });
        }
        let text = match response
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_string()
        {
            Ok(text) => text,
            Err(ureq::Error::Timeout(_)) => return Err(Error::Timeout(request.timeout)),
            Err(e) => return Err(Error::Transport(e.to_string())),
        };
        return parse(&text);
    }
}

#[derive(Deserialize)]
struct Response {
    content: Vec<Block>,
    usage: Usage,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
}

fn parse(body: &str) -> Result<Answer, Error> {
    let response: Response =
        serde_json::from_str(body).map_err(|e| Error::Malformed(e.to_string()))?;
    let text = (response.content.iter())
        .filter(|b| b.kind == "text")
        .map(|b| b.text.as_str())
        .collect::<Vec<_>>()
        .join("");
    Ok(Answer {
        text,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cut: response.stop_reason.as_deref() == Some("max_tokens"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_this_machine() {
        assert!(check_url("https://api.anthropic.com").is_ok());
        assert!(check_url("http://127.0.0.1:8080").is_ok());
        assert!(check_url("http://localhost:1/x").is_ok());
        assert!(check_url("http://[::1]:8080/").is_ok());
        for bad in [
            "http://api.anthropic.com",
            "http://127.0.0.1.evil.com:1",
            "http://localhost:1@127.0.0.3:18773",
            "http://user@127.0.0.1:1",
            "http://[::1]:1@evil.com",
            "ftp://x",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_response_gives_its_text_and_usage() {
        let body = r#"{"content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"{}"}],
            "usage":{"input_tokens":12,"output_tokens":3}}"#;
        assert_eq!(
            parse(body).unwrap(),
            Answer {
                text: "{}".to_owned(),
                input_tokens: 12,
                output_tokens: 3,
                cut: false,
            }
        );
        assert!(matches!(
            parse("{\"content\":[]}"),
            Err(Error::Malformed(_))
        ));
    }
}
