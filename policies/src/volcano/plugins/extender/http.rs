//! The extender's transport: `POST <urlPrefix>/<verb>` with a JSON body over plain
//! HTTP/1.1, as Volcano's `send` does (`http.Client` with the configured timeout,
//! status 200 required, the answer limited to 10 MiB), written on the standard
//! library's sockets: one connection per call.
//!
//! The conf is third-party text: the address and the verbs are checked to be what
//! they say (no space or control character can add a header or a request), the
//! whole call — connection, request, headers, body — is bounded by the timeout,
//! and the whole answer, headers included, by a size.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Volcano's `maxBodySize`.
pub const MAX_BODY: usize = 10 << 20;

/// The most an answer's status line and headers may take.
pub const MAX_HEAD: usize = 64 << 10;

/// Checks a verb (a path segment after `urlPrefix`): letters, digits and
/// `-._~/` only.
pub fn check_verb(verb: &str) -> Result<(), String> {
    match verb.chars().find(|c| !(c.is_ascii_alphanumeric() || "-._~/".contains(*c))) {
        Some(c) => Err(format!(
            "`{}` has {}; expected a URL path segment (letters, digits, -._~/)",
            verb.escape_debug(),
            what(c)
        )),
        None => Ok(()),
    }
}

fn what(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        c if c.is_control() => format!("a control character ({})", c.escape_debug()),
        c => format!("`{c}`"),
    }
}

/// The answer's reader: every read within the call's deadline, at most `left`
/// bytes in all.
struct Bounded {
    s: TcpStream,
    deadline: Instant,
    left: usize,
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let now = Instant::now();
        if now >= self.deadline {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the call took longer than extender.httpTimeout"));
        }
        if self.left == 0 {
            return Err(io::Error::other("http: request body too large"));
        }
        self.s.set_read_timeout(Some(self.deadline - now))?;
        let n = buf.len().min(self.left);
        let got = self.s.read(&mut buf[..n])?;
        self.left -= got;
        Ok(got)
    }
}

/// Where the extender listens: `http://host[:port][/path]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port` as written (the `Host` header).
    pub authority: String,
    /// The path prefix, without a trailing `/` (`""` for the root).
    pub path: String,
}

impl Endpoint {
    /// Parses `extender.urlPrefix`.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let Some(rest) = url.strip_prefix("http://") else {
            return Err(if url.starts_with("https://") {
                format!("`{url}`: lahar's extender client speaks plain HTTP; give an http:// address")
            } else {
                format!("`{url}`: expected an address such as http://127.0.0.1:8713")
            });
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(format!("`{url}`: no host"));
        }
        // Host and port: what a host name, an IP address and a port are made of.
        if let Some(c) = authority.chars().find(|c| !(c.is_ascii_alphanumeric() || "-._:[]".contains(*c))) {
            return Err(format!("`{}`: the host has {}; expected host[:port]", url.escape_debug(), what(c)));
        }
        if let Err(m) = check_verb(path) {
            return Err(format!("`{}`: the path {m}", url.escape_debug()));
        }
        let authority = if authority.contains(':') && !authority.ends_with(']') {
            authority.to_string()
        } else {
            format!("{authority}:80")
        };
        Ok(Endpoint { authority, path: path.to_string() })
    }

    /// True if every address the host resolves to is a loopback address (an
    /// extender on this machine).
    pub fn is_loopback(&self) -> Result<bool, String> {
        let addrs: Vec<SocketAddr> = self
            .authority
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve `{}`: {e}", self.authority))?
            .collect();
        Ok(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback()))
    }

    fn addr(&self) -> Result<SocketAddr, String> {
        self.authority
            .to_socket_addrs()
            .map_err(|e| format!("cannot resolve `{}`: {e}", self.authority))?
            .next()
            .ok_or_else(|| format!("cannot resolve `{}`", self.authority))
    }

    /// Whether something accepts connections there (checked before a run).
    pub fn reachable(&self, timeout: Duration) -> Result<(), String> {
        TcpStream::connect_timeout(&self.addr()?, timeout).map(|_| ()).map_err(|e| e.to_string())
    }

    /// `POST <path>/<verb>` with `body`; the response body on status 200.
    pub fn post(&self, verb: &str, body: &[u8], timeout: Duration) -> Result<Vec<u8>, String> {
        let deadline = Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        let url = format!("http://{}{}/{verb}", self.authority, self.path);
        let mut s = TcpStream::connect_timeout(&self.addr()?, left()).map_err(|e| format!("POST {url}: {e}"))?;
        s.set_write_timeout(Some(left())).map_err(|e| e.to_string())?;
        let head = format!(
            "POST {}/{verb} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.path,
            self.authority,
            body.len()
        );
        s.write_all(head.as_bytes()).and_then(|_| s.write_all(body)).map_err(|e| format!("POST {url}: {e}"))?;
        let mut r = BufReader::new(Bounded { s, deadline, left: MAX_HEAD + 2 * MAX_BODY });
        let mut line = String::new();
        r.read_line(&mut line).map_err(|e| format!("POST {url}: {e}"))?;
        let code: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .ok_or_else(|| format!("POST {url}: not an HTTP response (`{}`)", line.trim_end()))?;
        let (mut length, mut chunked) = (None, false);
        let mut head = line.len();
        loop {
            line.clear();
            head += r.read_line(&mut line).map_err(|e| format!("POST {url}: {e}"))?;
            if head > MAX_HEAD {
                return Err(format!("POST {url}: the answer's headers exceed {} KiB", MAX_HEAD >> 10));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse::<usize>().ok(),
                    "transfer-encoding" => chunked = v.trim().eq_ignore_ascii_case("chunked"),
                    _ => {}
                }
            }
        }
        if code != 200 {
            return Err(format!("failed {verb} with extender at URL {url}, code {code}"));
        }
        let too_large = || "http: request body too large".to_string();
        let mut out = Vec::new();
        if chunked {
            loop {
                line.clear();
                r.read_line(&mut line).map_err(|e| format!("POST {url}: {e}"))?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| format!("POST {url}: bad chunk size `{}`", line.trim()))?;
                if size == 0 {
                    break;
                }
                if out.len() + size > MAX_BODY {
                    return Err(too_large());
                }
                let start = out.len();
                out.resize(start + size, 0);
                r.read_exact(&mut out[start..]).map_err(|e| format!("POST {url}: {e}"))?;
                line.clear();
                r.read_line(&mut line).map_err(|e| format!("POST {url}: {e}"))?;
            }
        } else {
            let limit = length.unwrap_or(MAX_BODY + 1).min(MAX_BODY + 1);
            r.take(limit as u64).read_to_end(&mut out).map_err(|e| format!("POST {url}: {e}"))?;
            if out.len() > MAX_BODY {
                return Err(too_large());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_prefixes() {
        let e = Endpoint::parse("http://127.0.0.1:8713").unwrap();
        assert_eq!((e.authority.as_str(), e.path.as_str()), ("127.0.0.1:8713", ""));
        let e = Endpoint::parse("http://extender.kube-system/api/").unwrap();
        assert_eq!((e.authority.as_str(), e.path.as_str()), ("extender.kube-system:80", "/api"));
        assert!(Endpoint::parse("https://x").unwrap_err().contains("plain HTTP"));
        assert!(Endpoint::parse("127.0.0.1:8713").unwrap_err().contains("expected an address"));
        // Nothing can end the request line or add a header.
        let e = Endpoint::parse("http://127.0.0.1:8713/x HTTP/1.1\r\nHost: evil").unwrap_err();
        assert!(e.contains("a space"), "{e}");
        assert!(Endpoint::parse("http://127.0.0.1\r\nX: y").unwrap_err().contains("control character"));
        assert!(check_verb("filter\r\nX-Evil: 1").unwrap_err().contains("control character"));
        assert!(check_verb("v1/filter").is_ok());
    }

    #[test]
    fn loopback_is_told_apart() {
        assert_eq!(Endpoint::parse("http://127.0.0.1:1").unwrap().is_loopback(), Ok(true));
        assert_eq!(Endpoint::parse("http://[::1]:1").unwrap().is_loopback(), Ok(true));
        assert_eq!(Endpoint::parse("http://10.1.2.3:1").unwrap().is_loopback(), Ok(false));
    }
}
