//! The jail's only way out (design §4.9.1): an HTTP proxy the daemon runs for
//! one job, outside the jail, on a Unix socket in the job's scratch directory.
//! The jail has a network namespace of its own (nothing but its loopback), so
//! the agent reaches its model only through this socket — by way of the relay
//! (`relay`) that listens on the jail's loopback and passes each connection here.
//!
//! Each connection's first request says where it goes, and only a `HOST:PORT`
//! of the job's allow-list is connected to:
//!
//! - `CONNECT host:port` (how an HTTPS client uses a proxy): answered `200` and
//!   then tunnelled byte for byte, so TLS runs end to end between the agent and
//!   its endpoint and the daemon never sees the plaintext;
//! - `METHOD http://host:port/path` (how a client uses a proxy for plain HTTP,
//!   which is how Claude Code 2.1.328 reaches an `http://` base URL): forwarded in
//!   origin form (`METHOD /path`), request after request on the same connection —
//!   each one's head is read and its body copied by its own framing, and a
//!   request for another host closes the connection;
//! - anything else, or a target off the list, is refused (`400`, `403`) and
//!   closed; an unreachable target is `502`.
//!
//! The forwarder is bounded so an agent can neither stall nor balloon the daemon:
//! at most [`Limits::live`] connections at once and [`Limits::total`] in the job's
//! life, a request head of at most [`MAX_HEAD`] bytes, a fixed buffer per
//! direction (bodies and responses are streamed, never held), and a connection
//! quiet in both directions for [`Limits::idle`] is closed. Dropping the
//! forwarder closes every connection and removes its socket.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The longest request head (request line and headers) read from the agent.
pub const MAX_HEAD: usize = 16 << 10;
/// Each direction's copy buffer.
const BUFFER: usize = 16 << 10;
/// How often a blocked read wakes to look whether its connection went idle.
const TICK: Duration = Duration::from_secs(1);
/// How long a write to a peer that does not read may block.
const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long connecting to an allowed target may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many refused targets the job's report keeps.
const REFUSALS_KEPT: usize = 16;

/// One `HOST:PORT` the agent may reach; the host compared without case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
}

impl Target {
    /// `host:port` (`[v6]:port` for an IPv6 literal); `None` for anything else.
    pub fn parse(authority: &str) -> Option<Target> {
        let (host, port) = authority.rsplit_once(':')?;
        let host = match host.strip_prefix('[') {
            Some(inner) => inner.strip_suffix(']')?,
            None if host.contains(':') => return None,
            None => host,
        };
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':');
        if host.is_empty() || !host.chars().all(valid) {
            return None;
        }
        Some(Target {
            host: host.to_ascii_lowercase(),
            port: port.parse().ok().filter(|port| *port > 0)?,
        })
    }

    /// The target of an `http://` or `https://` URL (the scheme's port unless
    /// one is named).
    pub fn of_url(url: &str) -> Option<Target> {
        let (rest, default_port) = if let Some(rest) = url.strip_prefix("https://") {
            (rest, 443)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (rest, 80)
        } else {
            return None;
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return None;
        }
        Target::parse(authority).or_else(|| Target::parse(&format!("{authority}:{default_port}")))
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// The forwarder's bounds.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub live: usize,
    /// Connections in the job's life.
    pub total: u64,
    /// A connection with no byte either way for this long is closed.
    pub idle: Duration,
}

pub const DEFAULT_LIMITS: Limits = Limits {
    live: 16,
    total: 1024,
    idle: Duration::from_secs(300),
};

/// What the forwarder did for the job, for f.log's `agent_result`.
#[derive(Clone, Debug, Default)]
pub struct NetworkReport {
    pub connections: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// The first few targets refused, and why (`not allowed`, `limit`, …).
    pub refused: Vec<String>,
}

impl NetworkReport {
    pub fn to_json(&self) -> Value {
        json!({
            "connections": self.connections,
            "bytes_up": self.bytes_up,
            "bytes_down": self.bytes_down,
            "refused": self.refused,
        })
    }
}

/// A running forwarder; dropping it stops it.
pub struct Forwarder {
    path: PathBuf,
    shared: Arc<Shared>,
    accepting: Option<JoinHandle<()>>,
}

struct Shared {
    allowed: Vec<Target>,
    limits: Limits,
    stopping: AtomicBool,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next: u64,
    /// The open connections' sockets, so stopping can close them.
    live: Vec<(u64, Vec<Closer>)>,
    refused: Vec<String>,
}

/// A clone of one socket of a connection, kept to shut it down.
enum Closer {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Closer {
    fn close(&self) {
        let _ = match self {
            Closer::Unix(stream) => stream.shutdown(Shutdown::Both),
            Closer::Tcp(stream) => stream.shutdown(Shutdown::Both),
        };
    }
}

impl Forwarder {
    /// Binds `path` (in a private directory) and forwards to `allowed` only.
    pub fn start(path: &Path, allowed: Vec<Target>, limits: Limits) -> io::Result<Forwarder> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        let shared = Arc::new(Shared {
            allowed,
            limits,
            stopping: AtomicBool::new(false),
            bytes_up: AtomicU64::new(0),
            bytes_down: AtomicU64::new(0),
            state: Mutex::new(State::default()),
        });
        let accepting = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("trellis-forwarder".to_owned())
                .spawn(move || accept(&listener, &shared))?
        };
        Ok(Forwarder {
            path: path.to_owned(),
            shared,
            accepting: Some(accepting),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What it did so far.
    pub fn report(&self) -> NetworkReport {
        self.shared.report()
    }

    /// A handle that reads the report after the forwarder is gone.
    pub fn reporter(&self) -> Reporter {
        Reporter(Arc::clone(&self.shared))
    }
}

/// Reads a forwarder's [`NetworkReport`].
#[derive(Clone)]
pub struct Reporter(Arc<Shared>);

impl Reporter {
    pub fn report(&self) -> NetworkReport {
        self.0.report()
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag, then close every connection:
        // their threads see end-of-file or an error and end. If the socket
        // file is gone already, the accept thread stays parked; nothing waits
        // for it.
        let woken = UnixStream::connect(&self.path).is_ok();
        for (_, closers) in &self.shared.lock().live {
            closers.iter().for_each(Closer::close);
        }
        if let Some(accepting) = self.accepting.take()
            && woken
        {
            let _ = accepting.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn report(&self) -> NetworkReport {
        let state = self.lock();
        NetworkReport {
            connections: state.next,
            bytes_up: self.bytes_up.load(Ordering::Relaxed),
            bytes_down: self.bytes_down.load(Ordering::Relaxed),
            refused: state.refused.clone(),
        }
    }

    fn refuse(&self, what: String) {
        let mut state = self.lock();
        if state.refused.len() < REFUSALS_KEPT && !state.refused.contains(&what) {
            state.refused.push(what);
        }
    }

    fn allows(&self, target: &Target) -> bool {
        self.allowed.contains(target)
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Registers a socket of connection `id` for closing at stop.
    fn track(&self, id: u64, closer: Closer) {
        let mut state = self.lock();
        if self.stopping() {
            closer.close();
        }
        match state.live.iter_mut().find(|(live, _)| *live == id) {
            Some((_, closers)) => closers.push(closer),
            None => state.live.push((id, vec![closer])),
        }
    }
}

fn accept(listener: &UnixListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stopping() {
            break;
        }
        let Ok(stream) = stream else { continue };
        let admitted = {
            let mut state = shared.lock();
            if state.live.len() >= shared.limits.live {
                Err(format!("{} connections at once", shared.limits.live))
            } else if state.next >= shared.limits.total {
                Err(format!("{} connections in the job", shared.limits.total))
            } else {
                state.next += 1;
                let id = state.next;
                let closer = stream.try_clone().map(Closer::Unix);
                state.live.push((id, closer.into_iter().collect()));
                Ok(id)
            }
        };
        let id = match admitted {
            Ok(id) => id,
            Err(limit) => {
                shared.refuse(format!("a connection beyond the limit of {limit}"));
                let mut stream = stream;
                let _ = respond(&mut stream, 503, &format!("the jail's limit of {limit}"));
                continue;
            }
        };
        let connection = Arc::clone(shared);
        let spawned = std::thread::Builder::new()
            .name(format!("trellis-forward-{id}"))
            .stack_size(256 << 10)
            .spawn(move || {
                serve(stream, id, &connection);
                connection.lock().live.retain(|(live, _)| *live != id);
            });
        if spawned.is_err() {
            shared.lock().live.retain(|(live, _)| *live != id);
        }
    }
}

/// When a connection last moved a byte, shared by its two directions.
struct Activity {
    since: Instant,
    last_ms: AtomicU64,
    idle: Duration,
    shared: Arc<Shared>,
}

impl Activity {
    fn touch(&self) {
        let now = self.since.elapsed().as_millis() as u64;
        self.last_ms.store(now, Ordering::Relaxed);
    }

    fn over(&self) -> bool {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.shared.stopping() || self.since.elapsed().saturating_sub(last) >= self.idle
    }
}

/// A socket whose reads wait through quiet spells until its connection has
/// been idle too long (or the forwarder stops).
struct Patient<S> {
    stream: S,
    activity: Arc<Activity>,
}

impl<S: Read> Read for Patient<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.stream.read(buf) {
                Ok(read) => {
                    self.activity.touch();
                    return Ok(read);
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error)
                    if matches!(
                        error.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    if self.activity.over() {
                        return Err(io::Error::new(io::ErrorKind::TimedOut, "idle"));
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// What the first request of a connection asks for.
enum Ask {
    Tunnel(Target),
    Forward(Target),
}

fn serve(client: UnixStream, id: u64, shared: &Arc<Shared>) {
    let activity = Arc::new(Activity {
        since: Instant::now(),
        last_ms: AtomicU64::new(0),
        idle: shared.limits.idle,
        shared: Arc::clone(shared),
    });
    let (Ok(()), Ok(()), Ok(mut to_client)) = (
        client.set_read_timeout(Some(TICK)),
        client.set_write_timeout(Some(WRITE_TIMEOUT)),
        client.try_clone(),
    ) else {
        return;
    };
    let mut from_client = BufReader::with_capacity(
        BUFFER,
        Patient {
            stream: client,
            activity: Arc::clone(&activity),
        },
    );
    let Ok(Some(head)) = read_head(&mut from_client) else {
        return;
    };
    let Some(line) = RequestLine::parse(&head) else {
        let _ = respond(&mut to_client, 400, "not an HTTP proxy request");
        return;
    };
    let ask = if line.method.eq_ignore_ascii_case("CONNECT") {
        Target::parse(&line.target).map(Ask::Tunnel)
    } else if line.target.starts_with("http://") {
        Target::of_url(&line.target).map(Ask::Forward)
    } else {
        None
    };
    let Some(ask) = ask else {
        shared.refuse(format!("{} {}", line.method, line.target));
        let _ = respond(
            &mut to_client,
            400,
            "the jail's proxy takes CONNECT host:port, or an absolute http:// URL",
        );
        return;
    };
    let target = match &ask {
        Ask::Tunnel(target) | Ask::Forward(target) => target.clone(),
    };
    if !shared.allows(&target) {
        shared.refuse(target.to_string());
        let _ = respond(
            &mut to_client,
            403,
            &format!("{target} is not on this provider's allow_hosts"),
        );
        return;
    }
    let upstream = match connect(&target) {
        Ok(upstream) => upstream,
        Err(error) => {
            let _ = respond(
                &mut to_client,
                502,
                &format!("cannot reach {target}: {error}"),
            );
            return;
        }
    };
    let (Ok(()), Ok(()), Ok(closer), Ok(reading)) = (
        upstream.set_read_timeout(Some(TICK)),
        upstream.set_write_timeout(Some(WRITE_TIMEOUT)),
        upstream.try_clone(),
        upstream.try_clone(),
    ) else {
        return;
    };
    shared.track(id, Closer::Tcp(closer));
    let mut to_upstream = upstream;
    let first = match &ask {
        Ask::Tunnel(_) => {
            if to_client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .is_err()
            {
                return;
            }
            None
        }
        Ask::Forward(_) => Some(head),
    };
    // Responses flow back byte for byte on a thread of their own.
    let back = {
        let activity = Arc::clone(&activity);
        let shared = Arc::clone(shared);
        let mut from_upstream = Patient {
            stream: reading,
            activity,
        };
        let mut to_client = to_client;
        std::thread::Builder::new()
            .name(format!("trellis-forward-{id}-back"))
            .stack_size(256 << 10)
            .spawn(move || {
                let _ = copy(&mut from_upstream, &mut to_client, &shared.bytes_down);
                let _ = to_client.shutdown(Shutdown::Both);
            })
    };
    let _ = match first {
        None => copy(&mut from_client, &mut to_upstream, &shared.bytes_up),
        Some(head) => forward_requests(&mut from_client, &mut to_upstream, head, &target, shared),
    };
    let _ = to_upstream.shutdown(Shutdown::Both);
    if let Ok(back) = back {
        let _ = back.join();
    }
}

/// Forwards requests in origin form, for as long as they name `target`.
fn forward_requests(
    from_client: &mut BufReader<Patient<UnixStream>>,
    to_upstream: &mut TcpStream,
    mut head: Vec<u8>,
    target: &Target,
    shared: &Shared,
) -> io::Result<()> {
    loop {
        let line = RequestLine::parse(&head).ok_or_else(invalid)?;
        if Target::of_url(&line.target).as_ref() != Some(target) {
            // Another host on a kept-alive connection: the client opens a new
            // connection, whose first request is checked afresh.
            return Ok(());
        }
        let body = Framing::of(&head).ok_or_else(invalid)?;
        let rewritten = origin_form(&head, &line).ok_or_else(invalid)?;
        to_upstream.write_all(&rewritten)?;
        shared
            .bytes_up
            .fetch_add(rewritten.len() as u64, Ordering::Relaxed);
        match body {
            Framing::None => {}
            Framing::Length(length) => {
                copy_exactly(from_client, to_upstream, length, &shared.bytes_up)?;
            }
            Framing::Chunked => copy_chunked(from_client, to_upstream, &shared.bytes_up)?,
        }
        head = match read_head(from_client)? {
            Some(head) => head,
            None => return Ok(()),
        };
    }
}

fn invalid() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "not an HTTP request")
}

fn connect(target: &Target) -> io::Result<TcpStream> {
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for address in (target.host.as_str(), target.port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&address, CONNECT_TIMEOUT) {
            Ok(stream) => return Ok(stream),
            Err(error) => last = error,
        }
    }
    Err(last)
}

/// A short plain-text answer that closes the connection.
fn respond(stream: &mut impl Write, status: u16, message: &str) -> io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        502 => "Bad Gateway",
        _ => "Service Unavailable",
    };
    let body = format!("trellis jail: {message}\n");
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// Reads one request head (through its blank line); `None` at a clean end of
/// the connection, an error for a head over [`MAX_HEAD`] or a broken one.
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::new();
    loop {
        let before = head.len();
        let read = reader
            .by_ref()
            .take((MAX_HEAD - head.len()) as u64)
            .read_until(b'\n', &mut head)?;
        if read == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(invalid())
            };
        }
        let line = &head[before..];
        if !line.ends_with(b"\n") {
            return Err(invalid());
        }
        if line == b"\r\n" || line == b"\n" {
            if before == 0 {
                // A stray blank line between requests (RFC 9112 §2.2).
                head.clear();
                continue;
            }
            return Ok(Some(head));
        }
    }
}

struct RequestLine {
    method: String,
    target: String,
    version: String,
    /// Where the request line ends (after its newline).
    end: usize,
}

impl RequestLine {
    fn parse(head: &[u8]) -> Option<RequestLine> {
        let end = head.iter().position(|b| *b == b'\n')? + 1;
        let line = std::str::from_utf8(&head[..end]).ok()?.trim_end();
        let mut parts = line.split(' ');
        let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some()
            || method.is_empty()
            || !method.bytes().all(|b| b.is_ascii_alphabetic())
            || !version.starts_with("HTTP/1.")
        {
            return None;
        }
        Some(RequestLine {
            method: method.to_owned(),
            target: target.to_owned(),
            version: version.to_owned(),
            end,
        })
    }
}

/// The head with its target in origin form and the proxy's own headers dropped.
fn origin_form(head: &[u8], line: &RequestLine) -> Option<Vec<u8>> {
    let rest = line.target.split_once("://")?.1;
    let path = match rest.find(['/', '?']) {
        Some(at) if rest[at..].starts_with('/') => rest[at..].to_owned(),
        Some(at) => format!("/{}", &rest[at..]),
        None => "/".to_owned(),
    };
    let path = path.split('#').next().unwrap_or("/");
    let mut out = format!("{} {path} {}\r\n", line.method, line.version).into_bytes();
    for header in head[line.end..].split_inclusive(|b| *b == b'\n') {
        let name = header.split(|b| *b == b':').next().unwrap_or_default();
        if name.len() >= 6 && name[..6].eq_ignore_ascii_case(b"proxy-") {
            continue;
        }
        out.extend_from_slice(header);
    }
    Some(out)
}

/// How a request's body is delimited.
enum Framing {
    None,
    Length(u64),
    Chunked,
}

impl Framing {
    /// `None` for a head whose framing is contradictory or unreadable.
    fn of(head: &[u8]) -> Option<Framing> {
        let text = std::str::from_utf8(head).ok()?;
        let mut length = None;
        let mut chunked = false;
        for header in text.lines().skip(1) {
            let Some((name, value)) = header.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            if name.eq_ignore_ascii_case("content-length") {
                let value: u64 = value.parse().ok()?;
                if length.is_some_and(|seen| seen != value) {
                    return None;
                }
                length = Some(value);
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked |= value.to_ascii_lowercase().contains("chunked");
            }
        }
        Some(match (chunked, length) {
            (true, _) => Framing::Chunked,
            (false, Some(length)) => Framing::Length(length),
            (false, None) => Framing::None,
        })
    }
}

fn copy(from: &mut impl Read, to: &mut impl Write, counter: &AtomicU64) -> io::Result<()> {
    let mut buffer = vec![0u8; BUFFER];
    loop {
        let read = from.read(&mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        to.write_all(&buffer[..read])?;
        counter.fetch_add(read as u64, Ordering::Relaxed);
    }
}

fn copy_exactly(
    from: &mut impl Read,
    to: &mut impl Write,
    length: u64,
    counter: &AtomicU64,
) -> io::Result<()> {
    let copied = io::copy(&mut from.take(length), to)?;
    counter.fetch_add(copied, Ordering::Relaxed);
    if copied < length {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the body ended early",
        ));
    }
    Ok(())
}

/// Copies a chunked body through its last chunk and trailers.
fn copy_chunked(
    from: &mut impl BufRead,
    to: &mut impl Write,
    counter: &AtomicU64,
) -> io::Result<()> {
    loop {
        let mut line = Vec::new();
        from.by_ref().take(1024).read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\n") {
            return Err(invalid());
        }
        to.write_all(&line)?;
        let size = std::str::from_utf8(&line)
            .ok()
            .and_then(|text| text.trim().split(';').next())
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .ok_or_else(invalid)?;
        if size == 0 {
            // Trailers, then the blank line that ends the body.
            loop {
                let mut trailer = Vec::new();
                from.by_ref()
                    .take(MAX_HEAD as u64)
                    .read_until(b'\n', &mut trailer)?;
                if !trailer.ends_with(b"\n") {
                    return Err(invalid());
                }
                to.write_all(&trailer)?;
                if trailer == b"\r\n" || trailer == b"\n" {
                    return Ok(());
                }
            }
        }
        // The chunk and its CRLF.
        copy_exactly(from, to, size + 2, counter)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn targets_parse_from_authorities_and_urls() {
        let target = |host: &str, port| {
            Some(Target {
                host: host.to_owned(),
                port,
            })
        };
        assert_eq!(
            Target::parse("API.anthropic.com:443"),
            target("api.anthropic.com", 443)
        );
        assert_eq!(Target::parse("[::1]:8080"), target("::1", 8080));
        assert_eq!(
            Target::parse("::1:80"),
            None,
            "an IPv6 literal needs brackets"
        );
        assert_eq!(Target::parse("host"), None);
        assert_eq!(Target::parse("host:0"), None);
        assert_eq!(Target::parse("a b:80"), None);
        assert_eq!(
            Target::of_url("https://api.anthropic.com"),
            target("api.anthropic.com", 443)
        );
        assert_eq!(
            Target::of_url("http://127.0.0.1:9/v1/messages?beta=true"),
            target("127.0.0.1", 9)
        );
        assert_eq!(
            Target::of_url("http://example.com/x"),
            target("example.com", 80)
        );
        assert_eq!(Target::of_url("http://user@example.com/"), None);
        assert_eq!(Target::of_url("ftp://example.com/"), None);
        assert_eq!(
            Target::parse("[::1]:80").map(|t| t.to_string()).as_deref(),
            Some("[::1]:80")
        );
    }

    #[test]
    fn the_origin_form_drops_the_scheme_host_and_proxy_headers() {
        let head = b"POST http://127.0.0.1:9/v1/messages?beta=true HTTP/1.1\r\nProxy-Connection: Keep-Alive\r\nHost: 127.0.0.1:9\r\nContent-Length: 2\r\n\r\n";
        let line = RequestLine::parse(head).expect("a request line");
        let rewritten = origin_form(head, &line).expect("rewritten");
        assert_eq!(
            String::from_utf8(rewritten).expect("UTF-8"),
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:9\r\nContent-Length: 2\r\n\r\n"
        );
        let bare = b"GET http://h:1?q HTTP/1.1\r\n\r\n";
        let line = RequestLine::parse(bare).expect("a request line");
        assert!(
            origin_form(bare, &line)
                .expect("rewritten")
                .starts_with(b"GET /?q HTTP/1.1\r\n")
        );
        assert!(RequestLine::parse(b"GET  / HTTP/1.1\r\n\r\n").is_none());
        assert!(RequestLine::parse(b"\x16\x03\x01 binary\r\n\r\n").is_none());
    }

    #[test]
    fn framing_reads_length_and_chunking_and_refuses_contradictions() {
        assert!(matches!(
            Framing::of(b"POST / HTTP/1.1\r\ncontent-length: 12\r\n\r\n"),
            Some(Framing::Length(12))
        ));
        assert!(matches!(
            Framing::of(b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"),
            Some(Framing::Chunked)
        ));
        assert!(matches!(
            Framing::of(b"GET / HTTP/1.1\r\n\r\n"),
            Some(Framing::None)
        ));
        assert!(
            Framing::of(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                .is_none()
        );
        let mut body: &[u8] = b"3\r\nabc\r\n0\r\nX-T: 1\r\n\r\nnext";
        let mut out = Vec::new();
        let counter = AtomicU64::new(0);
        copy_chunked(&mut body, &mut out, &counter).expect("a chunked body");
        assert_eq!(out, b"3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n");
        assert_eq!(body, b"next", "the next request is left unread");
    }

    #[test]
    fn a_head_is_bounded() {
        let long = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        let mut reader = BufReader::new(long.as_bytes());
        assert!(read_head(&mut reader).is_err());
        let mut reader = BufReader::new(&b"\r\nGET / HTTP/1.1\r\n\r\n"[..]);
        assert_eq!(
            read_head(&mut reader).expect("a head"),
            Some(b"GET / HTTP/1.1\r\n\r\n".to_vec())
        );
        let mut reader = BufReader::new(&b""[..]);
        assert_eq!(read_head(&mut reader).expect("a clean end"), None);
    }

    /// A one-shot origin server: answers every request on its connection with
    /// `200` and the request line it saw.
    fn origin() -> (Target, JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        let seen = std::thread::spawn(move || {
            let (stream, _) = listener.accept().expect("accept");
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut writer = stream;
            let mut lines = Vec::new();
            while let Ok(Some(head)) = read_head(&mut reader) {
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_owned();
                if let Some(Framing::Length(length)) = Framing::of(&head) {
                    let mut body = vec![0; length as usize];
                    reader.read_exact(&mut body).expect("body");
                }
                let _ = write!(
                    writer,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{line}\n",
                    line.len() + 1
                );
                lines.push(line);
            }
            lines
        });
        (
            Target {
                host: "127.0.0.1".to_owned(),
                port,
            },
            seen,
        )
    }

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tr-fwd-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    fn status_of(stream: &mut UnixStream) -> String {
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut line = String::new();
        reader.read_line(&mut line).expect("a status line");
        line.trim_end().to_owned()
    }

    #[test]
    fn only_allowed_targets_are_reached_in_either_proxy_form() {
        let dir = scratch("allow");
        let (allowed, seen) = origin();
        let forwarder =
            Forwarder::start(&dir.join("net.sock"), vec![allowed.clone()], DEFAULT_LIMITS)
                .expect("start");
        // Plain HTTP, two requests on one connection, in origin form upstream.
        let mut stream = UnixStream::connect(forwarder.path()).expect("connect");
        write!(
            stream,
            "POST http://{allowed}/v1/messages HTTP/1.1\r\nHost: {allowed}\r\nProxy-Connection: Keep-Alive\r\n\
             Content-Length: 5\r\n\r\nhello\
             GET http://{allowed}/two HTTP/1.1\r\nHost: {allowed}\r\n\r\n"
        )
        .expect("write");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut answers = String::new();
        while !answers.contains("GET /two") {
            let mut line = String::new();
            if reader.read_line(&mut line).expect("read") == 0 {
                break;
            }
            answers.push_str(&line);
        }
        assert!(answers.contains("POST /v1/messages HTTP/1.1"), "{answers}");
        drop((reader, stream));
        assert_eq!(
            seen.join().expect("origin"),
            ["POST /v1/messages HTTP/1.1", "GET /two HTTP/1.1"]
        );

        // Anything else: refused, and nothing connected.
        let cases = [
            ("CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", "403"),
            ("GET http://10.255.255.1/ HTTP/1.1\r\n\r\n", "403"),
            ("GET https://127.0.0.1/ HTTP/1.1\r\n\r\n", "400"),
            ("GET / HTTP/1.1\r\n\r\n", "400"),
            ("\x16\x03\x01\x02\x00\r\n\r\n", "400"),
        ];
        for (request, status) in cases {
            let mut stream = UnixStream::connect(forwarder.path()).expect("connect");
            stream.write_all(request.as_bytes()).expect("write");
            let line = status_of(&mut stream);
            assert!(line.contains(status), "{request:?} → {line}");
        }
        let report = forwarder.report();
        assert_eq!(report.connections, 6);
        assert!(
            report.refused.contains(&"127.0.0.1:1".to_owned()),
            "{report:?}"
        );
        assert!(
            report.refused.contains(&"10.255.255.1:80".to_owned()),
            "{report:?}"
        );
        drop(forwarder);
        assert!(!dir.join("net.sock").exists(), "the socket goes with it");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_tunnel_is_byte_for_byte_and_an_unreachable_target_is_a_bad_gateway() {
        let dir = scratch("tunnel");
        let echo = TcpListener::bind("127.0.0.1:0").expect("bind");
        let target = Target {
            host: "127.0.0.1".to_owned(),
            port: echo.local_addr().expect("address").port(),
        };
        std::thread::spawn(move || {
            let (mut stream, _) = echo.accept().expect("accept");
            let mut reading = stream.try_clone().expect("clone");
            let _ = io::copy(&mut reading, &mut stream);
        });
        // A port nothing listens on.
        let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
        let dead = Target {
            host: "127.0.0.1".to_owned(),
            port: closed.local_addr().expect("address").port(),
        };
        drop(closed);
        let forwarder = Forwarder::start(
            &dir.join("net.sock"),
            vec![target.clone(), dead.clone()],
            DEFAULT_LIMITS,
        )
        .expect("start");
        let mut stream = UnixStream::connect(forwarder.path()).expect("connect");
        write!(
            stream,
            "CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"
        )
        .expect("write");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut line = String::new();
        reader.read_line(&mut line).expect("status");
        assert_eq!(line, "HTTP/1.1 200 Connection established\r\n");
        reader.read_line(&mut line).expect("blank");
        stream
            .write_all(b"\x16\x03\x01 any bytes at all\n")
            .expect("write");
        let mut echoed = String::new();
        reader.read_line(&mut echoed).expect("echo");
        assert_eq!(echoed.as_bytes(), b"\x16\x03\x01 any bytes at all\n");

        let mut stream = UnixStream::connect(forwarder.path()).expect("connect");
        write!(stream, "CONNECT {dead} HTTP/1.1\r\n\r\n").expect("write");
        assert!(status_of(&mut stream).contains("502"));
        drop(forwarder);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn connections_beyond_the_limits_and_idle_ones_are_closed() {
        let dir = scratch("limits");
        let limits = Limits {
            live: 2,
            total: 3,
            idle: Duration::from_secs(2),
        };
        let forwarder = Forwarder::start(&dir.join("net.sock"), Vec::new(), limits).expect("start");
        let quiet: Vec<UnixStream> = (0..2)
            .map(|_| UnixStream::connect(forwarder.path()).expect("connect"))
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        let mut third = UnixStream::connect(forwarder.path()).expect("connect");
        assert!(status_of(&mut third).contains("503"), "over the live limit");
        // The quiet ones are closed once idle, freeing their places.
        let started = Instant::now();
        for stream in &quiet {
            let mut buffer = [0u8; 1];
            let mut stream = stream;
            assert_eq!(stream.read(&mut buffer).unwrap_or(0), 0, "closed when idle");
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no blow-up");
        std::thread::sleep(Duration::from_millis(200));
        let mut fourth = UnixStream::connect(forwarder.path()).expect("connect");
        fourth
            .write_all(b"CONNECT a:1 HTTP/1.1\r\n\r\n")
            .expect("write");
        assert!(
            status_of(&mut fourth).contains("403"),
            "one more in the total"
        );
        let mut fifth = UnixStream::connect(forwarder.path()).expect("connect");
        assert!(
            status_of(&mut fifth).contains("503"),
            "over the total limit"
        );
        drop(forwarder);
        let _ = std::fs::remove_dir_all(dir);
    }
}
