//! A small blocking HTTP/1.1 client over `std::net::TcpStream`: `GET` and `PUT`
//! of whole bodies against one server, each exchange bounded by a deadline
//! (connect, send and the whole answer), one kept-alive connection reused while
//! the server allows it. Enough for a remote cache (design §12) and no more: no
//! TLS, no redirects, no proxies, no async runtime.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// The largest body the client accepts: a test result is a few kilobytes.
pub const MAX_BODY: usize = 16 << 20;
/// The largest status line and headers together.
const MAX_HEAD: usize = 64 << 10;

/// Where the cache is: `http://HOST[:PORT][/BASE]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    /// The path every request is under, without a trailing slash (`""` or `/x`).
    pub base: String,
}

impl Endpoint {
    /// Parses a cache URL; an `https://` URL is refused, saying why.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        if url.starts_with("https://") {
            return Err(format!(
                "{url}: https is not supported (this client speaks plain HTTP/1.1): use an \
                 http:// URL on a network you trust, or a local TLS-terminating proxy"
            ));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: a cache URL starts with http://"))?;
        let (authority, path) = match rest.find('/') {
            Some(at) => rest.split_at(at),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(format!("{url}: credentials in the URL are not supported"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
                let port = port
                    .parse::<u16>()
                    .map_err(|_| format!("{url}: `{port}` is not a port"))?;
                (host, port)
            }
            _ => (authority, 80),
        };
        if host.is_empty() {
            return Err(format!("{url}: no host"));
        }
        if path.contains(['?', '#', ' ']) {
            return Err(format!(
                "{url}: a cache URL has no query, fragment or space"
            ));
        }
        Ok(Endpoint {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            port,
            base: path.trim_end_matches('/').to_owned(),
        })
    }

    fn host_header(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 80 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// A client of one endpoint.
pub struct Client {
    endpoint: Endpoint,
    addresses: Option<Vec<SocketAddr>>,
    connection: Option<BufReader<TcpStream>>,
}

/// A response: its status and body.
struct Response {
    status: u16,
    body: Vec<u8>,
    keep_alive: bool,
}

impl Client {
    pub fn new(endpoint: Endpoint) -> Client {
        Client {
            endpoint,
            addresses: None,
            connection: None,
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `GET BASE/path`: the body on 200, `None` on 404, an error otherwise.
    pub fn get(&mut self, path: &str, deadline: Instant) -> Result<Option<Vec<u8>>, String> {
        let response = self.exchange("GET", path, &[], deadline)?;
        match response.status {
            200 => Ok(Some(response.body)),
            404 => Ok(None),
            status => Err(format!("GET {path} answered {status}")),
        }
    }

    /// `PUT BASE/path` with `body`; any 2xx is success.
    pub fn put(&mut self, path: &str, body: &[u8], deadline: Instant) -> Result<(), String> {
        let response = self.exchange("PUT", path, body, deadline)?;
        match response.status {
            200..=299 => Ok(()),
            status => Err(format!("PUT {path} answered {status}")),
        }
    }

    /// One request and its response. A kept-alive connection the server has
    /// closed meanwhile fails before any answer arrives: the request is then
    /// sent once more on a fresh connection.
    fn exchange(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Response, String> {
        let request = self.request_head(method, path, body.len());
        let reused = self.connection.is_some();
        let first = self.try_exchange(&request, body, deadline);
        let response = match first {
            Err(Attempt::BeforeAnswer(_)) if reused => {
                self.connection = None;
                self.try_exchange(&request, body, deadline)
            }
            other => other,
        };
        match response {
            Ok(response) => {
                if !response.keep_alive {
                    self.connection = None;
                }
                Ok(response)
            }
            Err(Attempt::BeforeAnswer(message) | Attempt::DuringAnswer(message)) => {
                self.connection = None;
                Err(message)
            }
        }
    }

    fn request_head(&self, method: &str, path: &str, length: usize) -> String {
        format!(
            "{method} {}/{path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: trellis/{}\r\nContent-Length: {length}\r\n\
             Connection: keep-alive\r\n\r\n",
            self.endpoint.base,
            self.endpoint.host_header(),
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn try_exchange(
        &mut self,
        head: &str,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Response, Attempt> {
        if self.connection.is_none() {
            let stream = self.connect(deadline).map_err(Attempt::BeforeAnswer)?;
            self.connection = Some(BufReader::new(stream));
        }
        let connection = self.connection.as_mut().expect("connected above");
        let io = |error: std::io::Error| describe(&error);
        let stream = connection.get_mut();
        stream
            .set_write_timeout(Some(remaining(deadline).map_err(Attempt::BeforeAnswer)?))
            .map_err(|e| Attempt::BeforeAnswer(io(e)))?;
        stream
            .write_all(head.as_bytes())
            .and_then(|()| stream.write_all(body))
            .and_then(|()| stream.flush())
            .map_err(|e| Attempt::BeforeAnswer(io(e)))?;
        read_response(connection, deadline)
    }

    fn connect(&mut self, deadline: Instant) -> Result<TcpStream, String> {
        if self.addresses.is_none() {
            let addresses: Vec<SocketAddr> = (self.endpoint.host.as_str(), self.endpoint.port)
                .to_socket_addrs()
                .map_err(|e| format!("cannot resolve {}: {e}", self.endpoint.host))?
                .collect();
            self.addresses = Some(addresses);
        }
        let mut last = format!("{} has no address", self.endpoint.host);
        for address in self.addresses.iter().flatten() {
            match TcpStream::connect_timeout(address, remaining(deadline)?) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(error) => last = format!("cannot connect to {address}: {}", describe(&error)),
            }
        }
        Err(last)
    }
}

/// How an exchange failed: before any byte of an answer (a closed kept-alive
/// connection looks like this, and is retried once) or during it.
enum Attempt {
    BeforeAnswer(String),
    DuringAnswer(String),
}

fn remaining(deadline: Instant) -> Result<Duration, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err("timed out".to_owned())
    } else {
        Ok(left)
    }
}

fn describe(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => "timed out".to_owned(),
        _ => error.to_string(),
    }
}

fn read_response(
    connection: &mut BufReader<TcpStream>,
    deadline: Instant,
) -> Result<Response, Attempt> {
    let mut head = Vec::new();
    let mut first = true;
    loop {
        let left = remaining(deadline).map_err(Attempt::DuringAnswer)?;
        connection
            .get_mut()
            .set_read_timeout(Some(left))
            .map_err(|e| Attempt::DuringAnswer(describe(&e)))?;
        let before = head.len();
        let read = connection.read_until(b'\n', &mut head);
        match read {
            Ok(0) if first => {
                return Err(Attempt::BeforeAnswer(
                    "the server closed the connection".to_owned(),
                ));
            }
            Ok(0) => return Err(Attempt::DuringAnswer("the answer was cut short".to_owned())),
            Ok(_) => {}
            Err(error) if first && head.is_empty() && !is_timeout(&error) => {
                return Err(Attempt::BeforeAnswer(describe(&error)));
            }
            Err(error) => return Err(Attempt::DuringAnswer(describe(&error))),
        }
        first = false;
        if head.len() > MAX_HEAD {
            return Err(Attempt::DuringAnswer(
                "the answer's head is too long".to_owned(),
            ));
        }
        if &head[before..] == b"\r\n" || &head[before..] == b"\n" {
            break;
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let status_line = lines.next().unwrap_or_default();
    let mut words = status_line.split_whitespace();
    let (Some(version), Some(status)) = (words.next(), words.next()) else {
        return Err(Attempt::DuringAnswer(format!(
            "not an HTTP answer: {status_line:?}"
        )));
    };
    let status: u16 = status
        .parse()
        .ok()
        .filter(|_| version.starts_with("HTTP/1."))
        .ok_or_else(|| Attempt::DuringAnswer(format!("not an HTTP answer: {status_line:?}")))?;
    let mut length = None;
    let mut chunked = false;
    let mut keep_alive = version == "HTTP/1.1";
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                length = Some(value.parse::<usize>().map_err(|_| {
                    Attempt::DuringAnswer(format!("a bad Content-Length: {value:?}"))
                })?);
            }
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => keep_alive = !value.eq_ignore_ascii_case("close"),
            _ => {}
        }
    }
    let body = if chunked {
        read_chunked(connection, deadline)?
    } else if let Some(length) = length {
        if length > MAX_BODY {
            return Err(Attempt::DuringAnswer(format!(
                "a body of {length} bytes is over the limit"
            )));
        }
        let mut body = vec![0; length];
        read_exact(connection, &mut body, deadline)?;
        body
    } else if status == 204 || status == 304 || (100..200).contains(&status) {
        Vec::new()
    } else {
        // No length: the body runs to the end of the connection.
        keep_alive = false;
        let mut body = Vec::new();
        loop {
            let mut buffer = [0u8; 8192];
            let read = timed(connection, deadline, |c| c.read(&mut buffer))?;
            if read == 0 {
                break;
            }
            body.extend_from_slice(&buffer[..read]);
            if body.len() > MAX_BODY {
                return Err(Attempt::DuringAnswer(
                    "the body is over the limit".to_owned(),
                ));
            }
        }
        body
    };
    Ok(Response {
        status,
        body,
        keep_alive,
    })
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn timed<T>(
    connection: &mut BufReader<TcpStream>,
    deadline: Instant,
    read: impl FnOnce(&mut BufReader<TcpStream>) -> std::io::Result<T>,
) -> Result<T, Attempt> {
    let left = remaining(deadline).map_err(Attempt::DuringAnswer)?;
    connection
        .get_mut()
        .set_read_timeout(Some(left))
        .map_err(|e| Attempt::DuringAnswer(describe(&e)))?;
    read(connection).map_err(|e| Attempt::DuringAnswer(describe(&e)))
}

fn read_exact(
    connection: &mut BufReader<TcpStream>,
    out: &mut [u8],
    deadline: Instant,
) -> Result<(), Attempt> {
    let mut filled = 0;
    while filled < out.len() {
        let read = timed(connection, deadline, |c| c.read(&mut out[filled..]))?;
        if read == 0 {
            return Err(Attempt::DuringAnswer("the answer was cut short".to_owned()));
        }
        filled += read;
    }
    Ok(())
}

fn read_chunked(
    connection: &mut BufReader<TcpStream>,
    deadline: Instant,
) -> Result<Vec<u8>, Attempt> {
    let mut body = Vec::new();
    loop {
        let mut line = String::new();
        timed(connection, deadline, |c| c.read_line(&mut line))?;
        let size = line.trim().split(';').next().unwrap_or_default();
        let size = usize::from_str_radix(size, 16)
            .map_err(|_| Attempt::DuringAnswer(format!("a bad chunk size: {line:?}")))?;
        if body.len() + size > MAX_BODY {
            return Err(Attempt::DuringAnswer(
                "the body is over the limit".to_owned(),
            ));
        }
        if size == 0 {
            // Trailers, then the empty line.
            loop {
                let mut trailer = String::new();
                let read = timed(connection, deadline, |c| c.read_line(&mut trailer))?;
                if read == 0 || trailer.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        read_exact(connection, &mut body[start..], deadline)?;
        let mut end = [0u8; 2];
        read_exact(connection, &mut end, deadline)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn urls_parse_into_host_port_and_base() {
        assert_eq!(
            Endpoint::parse("http://cache.example:9092/trellis/").expect("parses"),
            Endpoint {
                host: "cache.example".to_owned(),
                port: 9092,
                base: "/trellis".to_owned()
            }
        );
        assert_eq!(
            Endpoint::parse("http://[::1]:8080").expect("parses"),
            Endpoint {
                host: "::1".to_owned(),
                port: 8080,
                base: String::new()
            }
        );
        assert_eq!(Endpoint::parse("http://h").expect("parses").port, 80);
        for (url, expected) in [
            ("https://h/x", "https is not supported"),
            ("ftp://h", "starts with http://"),
            ("http://h:port", "not a port"),
            ("http://u:p@h", "credentials"),
            ("http:///x", "no host"),
            ("http://h/x?y", "no query"),
        ] {
            let error = Endpoint::parse(url).expect_err(url);
            assert!(error.contains(expected), "{url}: {error}");
        }
    }

    /// A one-thread server answering each request on a connection with the
    /// next canned answer; `None` closes the connection instead.
    fn serve(
        answers: Vec<Option<&'static str>>,
    ) -> (Endpoint, std::thread::JoinHandle<Vec<String>>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            let mut answers = answers.into_iter();
            'connections: for stream in listener.incoming() {
                let mut reader = BufReader::new(stream.expect("accept"));
                loop {
                    let mut head = String::new();
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            continue 'connections;
                        }
                        head.push_str(&line);
                        if line == "\r\n" {
                            break;
                        }
                    }
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .and_then(|n| n.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).expect("body");
                    seen.push(format!(
                        "{} {}",
                        head.lines().next().unwrap_or_default(),
                        String::from_utf8_lossy(&body)
                    ));
                    match answers.next() {
                        Some(Some(answer)) => {
                            reader
                                .get_mut()
                                .write_all(answer.as_bytes())
                                .expect("write");
                        }
                        Some(None) => continue 'connections,
                        None => return seen,
                    }
                    if answers.len() == 0 {
                        return seen;
                    }
                }
            }
            seen
        });
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}/base")).expect("url");
        (endpoint, handle)
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn get_and_put_over_one_kept_alive_connection() {
        let (endpoint, server) = serve(vec![
            Some("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"),
            Some("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
            Some(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
            ),
            Some("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"),
        ]);
        let mut client = Client::new(endpoint);
        assert_eq!(client.get("ac/k", soon()), Ok(None));
        assert_eq!(client.put("ac/k", b"value", soon()), Ok(()));
        assert_eq!(client.get("ac/k", soon()), Ok(Some(b"abcde".to_vec())));
        assert_eq!(client.get("cas/x", soon()), Ok(Some(b"hi".to_vec())));
        drop(client);
        let seen = server.join().expect("server");
        assert_eq!(
            seen,
            [
                "GET /base/ac/k HTTP/1.1 ",
                "PUT /base/ac/k HTTP/1.1 value",
                "GET /base/ac/k HTTP/1.1 ",
                "GET /base/cas/x HTTP/1.1 ",
            ]
        );
    }

    #[test]
    fn a_closed_kept_alive_connection_is_retried_once_on_a_new_one() {
        let (endpoint, server) = serve(vec![
            Some("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"),
            None,
            Some("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"),
        ]);
        let mut client = Client::new(endpoint);
        assert_eq!(client.get("cas/a", soon()), Ok(Some(b"a".to_vec())));
        assert_eq!(client.get("cas/b", soon()), Ok(Some(b"b".to_vec())));
        drop(client);
        assert_eq!(server.join().expect("server").len(), 3);
    }

    #[test]
    fn a_silent_server_times_out_at_the_deadline_and_a_refusal_is_an_error() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{port}")).expect("url");
        let mut client = Client::new(endpoint);
        let started = Instant::now();
        let error = client
            .get("ac/k", Instant::now() + Duration::from_millis(300))
            .expect_err("no answer");
        assert_eq!(error, "timed out");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(250) && took < Duration::from_secs(3),
            "{took:?}"
        );
        drop(listener);
        let error = client.get("ac/k", soon()).expect_err("refused");
        assert!(error.contains("cannot connect"), "{error}");
        assert_eq!(
            client
                .get("ac/k", Instant::now())
                .expect_err("no time left"),
            "timed out"
        );
    }
}
