//! A small HTTP/1.1 server on 127.0.0.1 for the scripted model APIs the real clients talk to
//! (`claude_client` for Claude Code's Messages API; `agent_clients` for Codex CLI's Responses
//! API and Gemini CLI's Gemini API): keep-alive connections, `Content-Length` or chunked
//! bodies, `Expect: 100-continue`, each request recorded in arrival order.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// A request as it came: its line, headers and body.
pub struct Incoming {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// An answer: status, content type, body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn json(status: u16, body: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: body.to_string().into_bytes(),
        }
    }

    /// Server-sent events: each `(event, data)` as `event: <event>` (when named) and `data:`.
    pub fn events<'a>(events: impl IntoIterator<Item = (Option<&'a str>, Value)>) -> Reply {
        let mut body = String::new();
        for (event, data) in events {
            if let Some(event) = event {
                body.push_str(&format!("event: {event}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Reply {
            status: 200,
            content_type: "text/event-stream",
            body: body.into_bytes(),
        }
    }
}

/// One keep-alive connection: requests one after another, each answered by `handle`, until the
/// client closes it (or asks to).
pub fn serve(stream: TcpStream, handle: &dyn Fn(Incoming) -> Reply) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(300)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut writer = stream;
    while let Some((method, path, headers)) = read_head(&mut reader)? {
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        if header("expect").is_some_and(|v| v == "100-continue") {
            writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }
        let body = if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            read_chunked(&mut reader)?
        } else {
            let length = header("content-length").and_then(|v| v.trim().parse().ok());
            let mut body = vec![0; length.unwrap_or(0)];
            reader.read_exact(&mut body)?;
            body
        };
        let close = header("connection").is_some_and(|v| v == "close");
        let head_only = method == "HEAD";
        let reply = handle(Incoming {
            method,
            path,
            headers,
            body,
        });
        let reason = match reply.status {
            200 => "OK",
            400 => "Bad Request",
            _ => "Not Found",
        };
        let head = format!(
            "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
             request-id: req_scripted\r\nConnection: {}\r\n\r\n",
            reply.status,
            reply.content_type,
            reply.body.len(),
            if close { "close" } else { "keep-alive" },
        );
        writer.write_all(head.as_bytes())?;
        if !head_only {
            writer.write_all(&reply.body)?;
        }
        writer.flush()?;
        if close {
            break;
        }
    }
    Ok(())
}

type Head = (String, String, Vec<(String, String)>);

/// The request line (or a response's status line) and headers; `None` when the other side
/// closed the connection.
pub fn read_head(reader: &mut impl BufRead) -> io::Result<Option<Head>> {
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        if !line.trim().is_empty() {
            break;
        }
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
    }
    Ok(Some((method, path, headers)))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?; // the CRLF after the chunk
    }
}

/// Accept connections on `listener` until `stopping` is set (then one more connection wakes
/// the loop), each served by `each` in a thread of its own.
pub fn accept(
    listener: TcpListener,
    stopping: Arc<AtomicBool>,
    each: impl Fn(TcpStream) + Send + Sync + 'static,
) {
    let each = Arc::new(each);
    thread::spawn(move || {
        for stream in listener.incoming() {
            if stopping.load(Ordering::SeqCst) {
                break;
            }
            let Ok(stream) = stream else { continue };
            let each = Arc::clone(&each);
            thread::spawn(move || each(stream));
        }
    });
}

/// A request as recorded: its method, target and JSON body (`Null` when empty, a string when
/// it is not JSON).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub body: Value,
}

/// Parse a body as JSON, or keep it as a string.
pub fn body_json(body: &[u8]) -> Value {
    if body.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
}

type Answer = Box<dyn FnMut(&Recorded) -> Reply + Send>;

/// A scripted server on 127.0.0.1, alive until dropped: `answer` is asked about every request
/// and each is kept.
pub struct Scripted {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    requests: Mutex<Vec<Recorded>>,
    answer: Mutex<Answer>,
    stopping: Arc<AtomicBool>,
}

impl Scripted {
    pub fn start(answer: impl FnMut(&Recorded) -> Reply + Send + 'static) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            answer: Mutex::new(Box::new(answer)),
            stopping: Arc::new(AtomicBool::new(false)),
        });
        let serving = Arc::clone(&shared);
        accept(listener, Arc::clone(&shared.stopping), move |stream| {
            let _ = serve(stream, &|incoming| serving.handle(incoming));
        });
        Scripted { addr, shared }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }
}

impl Shared {
    fn handle(&self, incoming: Incoming) -> Reply {
        let request = Recorded {
            method: incoming.method,
            path: incoming.path,
            body: body_json(&incoming.body),
        };
        lock(&self.requests).push(request.clone());
        // A panicking script answers 400 (not retried), so the run fails fast.
        let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (lock(&self.answer))(&request)
        }));
        answered.unwrap_or_else(|_| Reply::json(400, &serde_json::json!({"error": "script"})))
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop so it sees `stopping`
    }
}

/// A lock that survives a panicking script.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
