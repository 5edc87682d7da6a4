//! Who may drive the session: the checks made on a request before any route sees it.
//!
//! A page on another site can make the browser send requests to the local server (a form
//! or a `no-cors` fetch, which cannot read the answer but can still change the run), and a
//! site whose name is rebound to 127.0.0.1 can read it as well (DNS rebinding). So:
//!
//! - every request must name this server in its `Host` header (the address served, with
//!   its port; `localhost:PORT` too when bound to loopback; any IP literal with the port
//!   when bound to every address, since no rebound *name* is an IP literal), else 403;
//! - a control (a POST) must also carry the session's token in `X-Brink-Token` (128 bits
//!   from the operating system's randomness, given to the page in a
//!   `<meta name="brink-token">` of `index.html` only), be `Content-Type:
//!   application/json` (which a cross-site form or a `no-cors` fetch cannot send) and, when
//!   it has an `Origin`, come from `http://<its Host>`, else 403.
//!
//! Each refusal names what failed; nothing changes.

use hyper::header::{CONTENT_TYPE, HOST, HeaderMap, ORIGIN};
use std::net::{IpAddr, SocketAddr};

/// The header a control carries the session's token in.
pub const TOKEN_HEADER: &str = "x-brink-token";

/// The session's token and the addresses a request may name.
#[derive(Clone)]
pub struct Guard {
    token: String,
    addr: SocketAddr,
}

impl Guard {
    /// A guard for a server listening on `addr`, with a fresh token from the operating
    /// system's randomness.
    pub fn new(addr: SocketAddr) -> Result<Self, String> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)
            .map_err(|e| format!("cannot draw the session's token from the system: {e}"))?;
        let token = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Self { token, addr })
    }

    /// The session's token (32 hexadecimal digits).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The `Host` values accepted, for messages.
    fn hosts(&self) -> String {
        let port = self.addr.port();
        match self.addr.ip() {
            ip if ip.is_unspecified() => format!("an IP address or localhost, with port {port}"),
            ip if ip.is_loopback() => format!("{} or localhost:{port}", self.addr),
            _ => self.addr.to_string(),
        }
    }

    /// Whether `host` (a `Host` header's value) names this server.
    fn names_us(&self, host: &str) -> bool {
        let port = self.addr.port();
        let ip = self.addr.ip();
        let localhost = format!("localhost:{port}");
        if host.eq_ignore_ascii_case(&localhost) {
            return ip.is_loopback() || ip.is_unspecified();
        }
        match host.parse::<SocketAddr>() {
            Ok(a) if a.port() == port => {
                a.ip() == ip || (ip.is_unspecified() && same_family(ip, a.ip()))
            }
            _ => false,
        }
    }

    /// Checks the `Host` header of any request: it must name this server.
    pub fn host(&self, headers: &HeaderMap) -> Result<(), String> {
        let host = single(headers, HOST, "Host")?.ok_or_else(|| {
            format!(
                "the request has no Host header; it must name this server ({})",
                self.hosts()
            )
        })?;
        if self.names_us(host) {
            Ok(())
        } else {
            Err(format!(
                "the Host header `{host}` does not name this server ({}): refused, as a page whose name was rebound to this address would send it",
                self.hosts()
            ))
        }
    }

    /// Checks a control request (after [`Self::host`]): its `Origin` when present, its
    /// token and its content type.
    pub fn control(&self, headers: &HeaderMap) -> Result<(), String> {
        if let Some(origin) = single(headers, ORIGIN, "Origin")? {
            let host = single(headers, HOST, "Host")?.unwrap_or_default();
            let ours = format!("http://{host}");
            if !origin.eq_ignore_ascii_case(&ours) {
                return Err(format!(
                    "the Origin `{origin}` is not this page's ({ours}): a control comes only from the page itself"
                ));
            }
        }
        match single(headers, TOKEN_HEADER, "X-Brink-Token")? {
            None => {
                return Err(
                    "the X-Brink-Token header is missing: a control needs the session's token, which the page at / carries".into(),
                );
            }
            Some(t) if !same_secret(t.as_bytes(), self.token.as_bytes()) => {
                return Err(
                    "the X-Brink-Token header is not this session's token (the page at / carries it; a restarted server has a new one)".into(),
                );
            }
            Some(_) => {}
        }
        let kind = single(headers, CONTENT_TYPE, "Content-Type")?.unwrap_or("");
        let media = kind.split(';').next().unwrap_or("").trim();
        if !media.eq_ignore_ascii_case("application/json") {
            let got = if kind.is_empty() { "none" } else { kind };
            return Err(format!(
                "a control's Content-Type must be application/json; got {got}"
            ));
        }
        Ok(())
    }
}

fn same_family(a: IpAddr, b: IpAddr) -> bool {
    a.is_ipv4() == b.is_ipv4()
}

/// The value of a header given at most once, as text.
fn single<'a>(
    headers: &'a HeaderMap,
    name: impl hyper::header::AsHeaderName + Clone,
    shown: &str,
) -> Result<Option<&'a str>, String> {
    let mut all = headers.get_all(name.clone()).iter();
    let Some(first) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(format!("the {shown} header is given more than once"));
    }
    first
        .to_str()
        .map(|s| Some(s.trim()))
        .map_err(|_| format!("the {shown} header is not plain text"))
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn guard(addr: &str) -> Guard {
        Guard::new(addr.parse().unwrap()).unwrap()
    }

    #[test]
    fn tokens_are_fresh_and_128_bits() {
        let (a, b) = (guard("127.0.0.1:80"), guard("127.0.0.1:80"));
        assert_eq!(a.token().len(), 32);
        assert!(a.token().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a.token(), b.token(), "each session draws its own");
    }

    #[test]
    fn host_names_the_served_address() {
        let g = guard("127.0.0.1:8080");
        for ok in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080"] {
            assert!(g.host(&headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "127.0.0.1:8081",
            "127.0.0.1",
            "localhost",
            "10.0.0.1:8080",
        ] {
            let e = g.host(&headers(&[("host", bad)])).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!(g.host(&headers(&[])).unwrap_err().contains("no Host"));
        let twice = headers(&[("host", "127.0.0.1:8080"), ("host", "127.0.0.1:8080")]);
        assert!(g.host(&twice).unwrap_err().contains("more than once"));
        let any = guard("0.0.0.0:9000");
        assert!(any.host(&headers(&[("host", "192.168.1.5:9000")])).is_ok());
        assert!(
            any.host(&headers(&[("host", "rebound.example:9000")]))
                .is_err()
        );
        let one = guard("192.168.1.5:9000");
        assert!(one.host(&headers(&[("host", "localhost:9000")])).is_err());
        let v6 = guard("[::1]:9000");
        assert!(v6.host(&headers(&[("host", "[::1]:9000")])).is_ok());
    }

    #[test]
    fn a_control_needs_token_json_and_its_own_origin() {
        let g = guard("127.0.0.1:8080");
        let t = g.token().to_string();
        let host = ("host", "127.0.0.1:8080");
        let json = ("content-type", "application/json; charset=utf-8");
        let ok = headers(&[host, json, (TOKEN_HEADER, &t)]);
        assert!(g.control(&ok).is_ok());
        let with_origin = headers(&[
            host,
            json,
            (TOKEN_HEADER, &t),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(g.control(&with_origin).is_ok());
        let cases: [(&[(&'static str, &str)], &str); 5] = [
            (&[host, json], "missing"),
            (
                &[host, json, (TOKEN_HEADER, "0123")],
                "not this session's token",
            ),
            (
                &[host, (TOKEN_HEADER, &t), ("content-type", "text/plain")],
                "got text/plain",
            ),
            (&[host, (TOKEN_HEADER, &t)], "got none"),
            (
                &[
                    host,
                    json,
                    (TOKEN_HEADER, &t),
                    ("origin", "http://evil.example"),
                ],
                "Origin `http://evil.example`",
            ),
        ];
        for (h, says) in cases {
            let e = g.control(&headers(h)).unwrap_err();
            assert!(e.contains(says), "{h:?}: {e}");
        }
    }
}
