//! `mcp`: a Model Context Protocol server over stdio (docs/hooks.md, "The MCP server"), through which
//! the agent records its decisions and asks for the reasoning kept in the repository
//! ([`tools`]).
//!
//! The protocol is JSON-RPC 2.0, one message per line on stdin, one answer per line on stdout,
//! written here by hand and synchronously: an async MCP stack would cost more to build than the
//! five methods it serves. Stdout carries protocol messages only. Nothing a client sends ends the
//! server but the end of stdin: a line that is not JSON, a method we do not serve or a tool that
//! fails (a panic included) gets an error answer, and the next line is read.

mod tools;

use std::io::{BufRead, Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use serde_json::{Value, json};

use crate::cli::CmdResult;

/// Protocol versions we speak, the newest first: a client's is echoed when it is one of them.
const VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];
/// The longest line read; a longer one is answered as a parse error and skipped.
const LINE_MAX: u64 = 4 << 20;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

#[derive(Debug, clap::Args)]
pub struct Args {}

/// Serve the messages of `input` until it ends. The session that records is the one Claude Code
/// names in `CLAUDE_CODE_SESSION_ID` when it starts the server.
pub fn run(cwd: &Path, _args: Args, out: &mut dyn Write) -> CmdResult {
    let session = std::env::var("CLAUDE_CODE_SESSION_ID")
        .ok()
        .filter(|s| !s.trim().is_empty());
    let context = tools::Context {
        cwd,
        session: session.as_deref(),
    };
    serve(&context, &mut std::io::stdin().lock(), out)
}

fn serve(context: &tools::Context<'_>, input: &mut impl BufRead, out: &mut dyn Write) -> CmdResult {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input.by_ref().take(LINE_MAX).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(());
        }
        let answer = if line.last() != Some(&b'\n') && read as u64 == LINE_MAX {
            skip_line(input)?;
            Some(error(
                Value::Null,
                PARSE_ERROR,
                "the message is longer than 4 MiB",
            ))
        } else if line.trim_ascii().is_empty() {
            None
        } else {
            match serde_json::from_slice::<Value>(&line) {
                Ok(message) => answer(context, message),
                Err(e) => Some(error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("the line is not JSON: {e}"),
                )),
            }
        };
        if let Some(answer) = answer {
            serde_json::to_writer(&mut *out, &answer).map_err(std::io::Error::from)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
    }
}

/// Read on to the end of the current line.
fn skip_line(input: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buffer = input.fill_buf()?;
        if buffer.is_empty() {
            return Ok(());
        }
        match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let all = buffer.len();
                input.consume(all);
            }
        }
    }
}

/// The answer to one message; none to a notification or to a response.
fn answer(context: &tools::Context<'_>, message: Value) -> Option<Value> {
    let Value::Object(message) = message else {
        return Some(error(
            Value::Null,
            INVALID_REQUEST,
            "a message is one JSON-RPC object (batches are not part of MCP)",
        ));
    };
    let id = message.get("id").cloned();
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        // A client's answer to a request of ours: we make none.
        if message.contains_key("result") || message.contains_key("error") {
            return None;
        }
        return Some(error(
            id.unwrap_or(Value::Null),
            INVALID_REQUEST,
            "the message has no method",
        ));
    };
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return id.map(|id| error(id, INVALID_REQUEST, "the message is not JSON-RPC 2.0"));
    }
    // A notification (`notifications/initialized`, `notifications/cancelled`) asks for no answer.
    let id = id?;
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let outcome = catch_unwind(AssertUnwindSafe(|| request(context, method, &params)))
        .unwrap_or_else(|_| {
            Err((
                INTERNAL_ERROR,
                format!("{method} failed unexpectedly; the server goes on"),
            ))
        });
    Some(match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => error(id, code, &message),
    })
}

fn request(
    context: &tools::Context<'_>,
    method: &str,
    params: &Value,
) -> Result<Value, (i64, String)> {
    match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = VERSIONS
                .into_iter()
                .find(|v| Some(*v) == asked)
                .unwrap_or(VERSIONS[0]);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "git-agent-context", "version": env!("CARGO_PKG_VERSION")},
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({"tools": tools::list()})),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
                (
                    INVALID_PARAMS,
                    "tools/call needs the tool's name".to_owned(),
                )
            })?;
            let arguments = match params.get("arguments") {
                None | Some(Value::Null) => serde_json::Map::new(),
                Some(Value::Object(map)) => map.clone(),
                Some(_) => {
                    return Err((INVALID_PARAMS, "the arguments are not an object".to_owned()));
                }
            };
            let outcome = tools::call(context, name, arguments).ok_or_else(|| {
                (
                    INVALID_PARAMS,
                    format!("unknown tool {:?}", crate::sanitise::line(name)),
                )
            })?;
            let (text, is_error) = match outcome {
                Ok(text) => (text, false),
                Err(refusal) => (tools::shown(&refusal), true),
            };
            Ok(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
        }
        _ => Err((
            METHOD_NOT_FOUND,
            format!("method not found: {}", crate::sanitise::line(method)),
        )),
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
