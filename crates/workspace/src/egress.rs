//! The HTTP proxy a remote caller's `http(s)://` clone runs through: git (curl) sends
//! every connection it makes to it — the first, and each redirect's — and the proxy
//! resolves the host itself, checks every address against the [`AddressPolicy`] and
//! connects only to an address it checked (so a name that resolves differently the
//! second time, DNS rebinding, reaches nothing new). A refused hop answers 403 and is
//! remembered, so the clone's failure names it; an unreachable one answers 502, the
//! same whether the port is closed or filtered.
//!
//! It listens on a loopback port for the length of one clone. `CONNECT host:port`
//! (https) becomes a tunnel; an absolute-form request (`GET http://host/path`, plain
//! http) is sent on as one request with `Connection: close`, so every request arrives
//! on a connection of its own and is checked. Each connection has a deadline on its
//! request head and on silence; at most [`MAX_CONNECTIONS`] run at once; dropping the
//! proxy shuts every connection down.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::address::{AddressClass, AddressPolicy, Refusal};

/// Connections served at once; more are closed at once.
pub const MAX_CONNECTIONS: usize = 16;
/// The longest request head read.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may stay silent (its head, or either side of a tunnel).
const IDLE: Duration = Duration::from_secs(60);
/// How long connecting to an upstream address may take.
const CONNECT: Duration = Duration::from_secs(15);

/// A running proxy; dropping it stops it.
pub(crate) struct EgressProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

struct Shared {
    policy: AddressPolicy,
    stop: AtomicBool,
    live: AtomicUsize,
    refused: Mutex<Option<AddressClass>>,
    /// Every open socket, by connection, so dropping the proxy can end them.
    sockets: Mutex<Vec<(u64, TcpStream)>>,
    next_id: AtomicUsize,
}

impl EgressProxy {
    /// Starts a proxy on a free loopback port.
    pub(crate) fn start(policy: AddressPolicy) -> io::Result<EgressProxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            policy,
            stop: AtomicBool::new(false),
            live: AtomicUsize::new(0),
            refused: Mutex::new(None),
            sockets: Mutex::new(Vec::new()),
            next_id: AtomicUsize::new(0),
        });
        let accept = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("loci-egress".into())
                .spawn(move || accept_loop(&listener, &shared))?
        };
        Ok(EgressProxy {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The proxy's URL, for git's `http.proxy`.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The class of the first address the proxy refused, if it refused one.
    pub(crate) fn refused(&self) -> Option<AddressClass> {
        *lock(&self.shared.refused)
    }
}

impl Drop for EgressProxy {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop, then end every connection still open.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        for (_, s) in lock(&self.shared.sockets).drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        if shared.live.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.live.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let shared = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("loci-egress-conn".into())
            .spawn(move || {
                let id = shared.next_id.fetch_add(1, Ordering::SeqCst) as u64;
                let _ = serve(stream, &shared, id);
                // Its sockets close now, not when the proxy stops.
                lock(&shared.sockets).retain(|(owner, s)| {
                    if *owner == id {
                        let _ = s.shutdown(Shutdown::Both);
                    }
                    *owner != id
                });
                shared.live.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            continue;
        }
    }
}

/// One request from git: where it goes, and what to send first.
struct Request {
    host: String,
    port: u16,
    /// `None` for CONNECT; else the head to send upstream.
    forward: Option<Vec<u8>>,
    /// Bytes after the head (a body's start).
    rest: Vec<u8>,
}

fn serve(mut client: TcpStream, shared: &Shared, id: u64) -> io::Result<()> {
    client.set_read_timeout(Some(IDLE))?;
    track(shared, id, &client);
    let Some(request) = read_request(&mut client)? else {
        return answer(&mut client, "400 Bad Request");
    };
    let addrs = match shared.policy.resolve(&request.host, request.port) {
        Ok(addrs) => addrs,
        Err(Refusal::Forbidden(class)) => {
            lock(&shared.refused).get_or_insert(class);
            return answer(&mut client, "403 Forbidden");
        }
        Err(Refusal::Unresolvable) => return answer(&mut client, "502 Bad Gateway"),
    };
    let Some(mut upstream) = connect(&addrs, request.port) else {
        return answer(&mut client, "502 Bad Gateway");
    };
    upstream.set_read_timeout(Some(IDLE))?;
    track(shared, id, &upstream);
    match &request.forward {
        None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?,
        Some(head) => upstream.write_all(head)?,
    }
    upstream.write_all(&request.rest)?;
    splice(client, upstream)
}

fn track(shared: &Shared, id: u64, s: &TcpStream) {
    if let Ok(clone) = s.try_clone() {
        lock(&shared.sockets).push((id, clone));
    }
}

fn answer(client: &mut TcpStream, status: &str) -> io::Result<()> {
    client.write_all(
        format!("HTTP/1.1 {status}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

fn connect(addrs: &[IpAddr], port: u16) -> Option<TcpStream> {
    addrs
        .iter()
        .find_map(|ip| TcpStream::connect_timeout(&SocketAddr::new(*ip, port), CONNECT).ok())
}

/// Copies both ways until either side ends (or stays silent past [`IDLE`]).
fn splice(client: TcpStream, upstream: TcpStream) -> io::Result<()> {
    let (mut c_read, mut u_write) = (client.try_clone()?, upstream.try_clone()?);
    let up = std::thread::Builder::new()
        .name("loci-egress-up".into())
        .spawn(move || {
            let _ = io::copy(&mut c_read, &mut u_write);
            let _ = u_write.shutdown(Shutdown::Write);
        })?;
    let (mut u_read, mut c_write) = (upstream, client);
    let _ = io::copy(&mut u_read, &mut c_write);
    let _ = c_write.shutdown(Shutdown::Both);
    let _ = u_read.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}

/// Reads one request head; `None` when it is not one this proxy serves.
fn read_request(client: &mut TcpStream) -> io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = client.read(&mut chunk)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let rest = buf.split_off(end);
    let Ok(head) = String::from_utf8(buf) else {
        return Ok(None);
    };
    Ok(parse_head(&head).map(|(host, port, forward)| Request {
        host,
        port,
        forward,
        rest,
    }))
}

/// The target of a head and, for a plain request, the head to send upstream: the
/// request line in origin form, hop-by-hop and proxy headers dropped, one request per
/// connection.
fn parse_head(head: &str) -> Option<(String, u16, Option<Vec<u8>>)> {
    let mut lines = head.split("\r\n");
    let mut parts = lines.next()?.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if method == "CONNECT" {
        let (host, port) = split_host_port(target, None)?;
        return Some((host, port, None));
    }
    let rest = target.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(at) => rest.split_at(at),
        None => (rest, "/"),
    };
    let (host, port) = split_host_port(authority, Some(80))?;
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.filter(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if !(name.starts_with("proxy-") || name == "connection" || name == "keep-alive") {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    Some((host, port, Some(out.into_bytes())))
}

/// `host:port`, `[v6]:port`, or a host alone with `default`.
fn split_host_port(text: &str, default: Option<u16>) -> Option<(String, u16)> {
    let (host, port) = if let Some(v6) = text.strip_prefix('[') {
        let (host, tail) = v6.split_once(']')?;
        (host, tail.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default?,
    };
    (!host.is_empty()).then(|| (host.to_owned(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_parsed_and_rewritten_to_one_request_per_connection() {
        assert_eq!(
            parse_head("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
            Some(("example.com".into(), 443, None))
        );
        assert_eq!(
            parse_head("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").map(|t| (t.0, t.1)),
            Some(("::1".into(), 8443))
        );
        let (host, port, forward) = parse_head(
            "GET http://h.example/app.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h.example\r\nProxy-Connection: Keep-Alive\r\nConnection: keep-alive\r\nUser-Agent: git\r\n\r\n",
        )
        .unwrap();
        assert_eq!((host.as_str(), port), ("h.example", 80));
        assert_eq!(
            String::from_utf8(forward.unwrap()).unwrap(),
            "GET /app.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: h.example\r\nUser-Agent: git\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(parse_head("GET /relative HTTP/1.1\r\n\r\n"), None);
        assert_eq!(parse_head("CONNECT nohost HTTP/1.1\r\n\r\n"), None);
    }

    #[test]
    fn a_refused_hop_is_403_and_remembered_and_nothing_is_reached() {
        let target = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let port = target.local_addr().unwrap().port();
        target.set_nonblocking(true).unwrap();
        let proxy = EgressProxy::start(AddressPolicy::public_and(Vec::new())).unwrap();
        let mut s = TcpStream::connect(proxy.addr).unwrap();
        s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert_eq!(proxy.refused(), Some(AddressClass::Loopback));
        assert!(target.accept().is_err(), "the refused target was reached");
    }
}
