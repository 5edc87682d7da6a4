//! The HTTP plumbing of `brink serve`: hyper's HTTP/1 server on a current-thread tokio
//! runtime, with every limit a client could otherwise push past.
//!
//! | limit | value | beyond it |
//! |---|---|---|
//! | request head (line and headers) | 16 KiB | 431, connection closed |
//! | body | 16 KiB ([`MAX_BODY`]) | 413 |
//! | time to send the head (also the keep-alive idle time) | 5 s | connection closed |
//! | time to send the body | 5 s | 408 |
//! | open connections | 1,024 | 503 written at once, connection closed |
//! | a connection's life | 60 s | closed after the request under way |
//!
//! The guard (`super::guard`) checks each request before its route; the routes that read
//! the shared state or wait for the run thread (every `/api/` route) run on tokio's
//! blocking threads, so the thread that accepts connections never waits on them.

use super::api::{self, App, MAX_BODY, Reply};
use super::guard::Guard;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_LENGTH, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// The server's limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest request head (request line and headers), in bytes.
    pub head_bytes: usize,
    /// How long a client may take to send a request's head (and how long a kept-alive
    /// connection may wait idle for its next request).
    pub head_time: Duration,
    /// How long a client may take to send a request's body.
    pub body_time: Duration,
    /// The most connections open at once.
    pub connections: usize,
    /// How long a connection may stay open.
    pub life: Duration,
}

impl Limits {
    /// The limits `brink serve` runs with.
    pub const DEFAULT: Limits = Limits {
        head_bytes: 16 * 1024,
        head_time: Duration::from_secs(5),
        body_time: Duration::from_secs(5),
        connections: 1024,
        life: Duration::from_secs(60),
    };
}

/// What is written, unread and at once, to a connection over the cap before closing it.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 66\r\nConnection: close\r\n\r\n{\"error\": \"the server has 1024 connections open; try again later\"}";

/// A listening socket on `addr` whose queue of connections not yet accepted holds as
/// many as the server may have open (std's holds 128: a burst beyond it waits a second
/// for the client's retry).
pub fn listen(addr: std::net::SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(Limits::DEFAULT.connections as i32)?;
    Ok(socket.into())
}

/// Serves `listener` until the process ends (or the runtime cannot start).
pub fn serve(
    listener: std::net::TcpListener,
    app: Arc<App>,
    guard: Arc<Guard>,
    limits: Limits,
) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    rt.block_on(accept_loop(listener, app, guard, limits))
}

async fn accept_loop(
    listener: std::net::TcpListener,
    app: Arc<App>,
    guard: Arc<Guard>,
    limits: Limits,
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let open = Arc::new(Semaphore::new(limits.connections));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.head_time)
        .max_buf_size(limits.head_bytes.max(8192))
        .keep_alive(true);
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(_) => {
                // Out of file descriptors, or a connection reset before it was accepted:
                // wait a little rather than spin, and go on.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            // Over the cap: a 503 if the socket takes it now, never a wait.
            let _ = stream.try_write(BUSY);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (app, guard, builder) = (app.clone(), guard.clone(), builder.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(move |req| {
                answer(app.clone(), guard.clone(), limits, req)
            });
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let mut conn = std::pin::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = tokio::time::sleep(limits.life) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(limits.body_time, conn).await;
                }
            }
        });
    }
}

/// One request: the guard, the body (bounded in size and time), the route.
async fn answer(
    app: Arc<App>,
    guard: Arc<Guard>,
    limits: Limits,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let reply = match checked(&app, &guard, limits, req).await {
        Ok(r) => r,
        Err((status, msg)) => Reply::error(status, &msg),
    };
    Ok(response(reply))
}

async fn checked(
    app: &Arc<App>,
    guard: &Guard,
    limits: Limits,
    req: Request<Incoming>,
) -> Result<Reply, api::Refusal> {
    let (parts, body) = req.into_parts();
    guard.host(&parts.headers).map_err(|m| (403, m))?;
    let control = api::is_control(&parts.method, parts.uri.path());
    let body = if control {
        guard.control(&parts.headers).map_err(|m| (403, m))?;
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY as u64) {
            return Err(too_large());
        }
        read_body(body, limits.body_time).await?
    } else {
        Bytes::new()
    };
    let path = parts.uri.path().to_string();
    let query = parts.uri.query().unwrap_or("").to_string();
    let method = parts.method;
    if api::is_asset(&path) {
        return Ok(api::handle(
            app,
            &api::Request {
                method: &method,
                path: &path,
                query: &query,
                body: &body,
            },
        ));
    }
    let app = app.clone();
    tokio::task::spawn_blocking(move || {
        api::handle(
            &app,
            &api::Request {
                method: &method,
                path: &path,
                query: &query,
                body: &body,
            },
        )
    })
    .await
    .map_err(|_| (500, "the request's handler failed".to_string()))
}

fn too_large() -> api::Refusal {
    (413, format!("the body is larger than {MAX_BODY} bytes"))
}

/// The body, at most [`MAX_BODY`] bytes, sent within `time`.
async fn read_body(body: Incoming, time: Duration) -> Result<Bytes, api::Refusal> {
    match tokio::time::timeout(time, Limited::new(body, MAX_BODY).collect()).await {
        Err(_) => Err((
            408,
            format!(
                "the body did not arrive within {} s",
                crate::engine::number::sig3(time.as_secs_f64())
            ),
        )),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Ok(Err(e)) => Err((400, format!("cannot read the body: {e}"))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

fn response(reply: Reply) -> Response<Full<Bytes>> {
    let status = reply.status;
    let mut r = Response::new(Full::new(Bytes::from(reply.body)));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("content-type", HeaderValue::from_static(reply.kind));
    for (k, v) in reply.headers {
        if let Ok(v) = HeaderValue::from_str(&v) {
            h.insert(k, v);
        }
    }
    // A refused body may be left unread: the connection ends rather than read it.
    if matches!(status, 408 | 413) {
        h.insert(CONNECTION, HeaderValue::from_static("close"));
    }
    r
}
