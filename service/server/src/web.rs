//! The web listener: the page (built by clients/web, embedded at compile time) and the same
//! gRPC services as the native listener, spoken as gRPC-Web (HTTP/1.1 or HTTP/2) so a browser
//! can call them. Auth and limits are the services' own, so they are the same on both listeners.
//!
//! Transport: over TLS the listener offers `h2` (ALPN), and a browser multiplexes every call of
//! every tab on one HTTP/2 connection. Browsers speak no HTTP/2 without TLS (no h2c), and over
//! HTTP/1.1 they open at most six connections to a server, each live stream holding one; so over
//! plain HTTP the page carries its calls on one WebSocket per tab (web_mux.rs), which that limit
//! does not count. Native gRPC clients may still speak h2c here (prior knowledge).
//!
//! The page's files are precompressed at build time (gzip and brotli, clients/web/vite.config.ts)
//! and sent as the request's `Accept-Encoding` allows.

use std::time::Duration;

use axum::extract::ws::WebSocketUpgrade;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};
use tonic::service::Routes;
use tower::Layer as _;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::edge::EdgeLayer;
use bete_base::shutdown::Shutdown;

/// Where the page opens its WebSocket (web_mux.rs).
pub const MUX_PATH: &str = "/bete.web/mux";

/// Live streams one page connection may hold by default: a tab follows one table or ladder
/// (and a player's seat), so a page needs one or two; a page that opens more is broken.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 16;

/// The built page (`npm run build` in clients/web writes it; committed, so a machine with only a
/// Rust toolchain serves it). build.rs makes a change to it rebuild this crate.
static PAGE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../clients/web/dist");

/// The rulebook, linked from the page's rules panels (shown as text: a browser would download
/// `text/markdown`).
static RULEBOOK: &str = include_str!("../../../docs/RULES.md");

/// The gRPC-Web routes of `grpc`, the page's WebSocket (at most `max_subscriptions` live
/// streams on each), and the page as the fallback for every other path; every request meets
/// `edge` (load shedding, trace context).
pub fn routes(
    grpc: Routes,
    edge: EdgeLayer,
    stop: Shutdown,
    max_subscriptions: usize,
) -> impl Clone
+ tower::Service<
    Request<tonic::body::Body>,
    Response = axum::http::Response<tonic::body::Body>,
    Error = std::convert::Infallible,
    Future = impl Send,
> + Send
+ 'static {
    // CORS for a page served from another origin (the Vite dev server, an operator's own host):
    // calls carry their token in a header, never in a cookie, so any origin may call.
    let cors = CorsLayer::new()
        .allow_origin(AllowOrigin::mirror_request())
        .allow_methods([axum::http::Method::POST, axum::http::Method::OPTIONS])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("x-grpc-web"),
            HeaderName::from_static("x-user-agent"),
            HeaderName::from_static("grpc-timeout"),
            HeaderName::from_static("connect-protocol-version"),
            HeaderName::from_static("connect-timeout-ms"),
        ])
        .expose_headers([
            HeaderName::from_static("grpc-status"),
            HeaderName::from_static("grpc-message"),
            HeaderName::from_static("grpc-status-details-bin"),
        ])
        .max_age(Duration::from_secs(3600));
    let calls = grpc
        .prepare()
        .into_axum_router()
        // The caller's deadline, inside tonic-web: its DEADLINE_EXCEEDED trailers are then
        // encoded for gRPC-Web as any other.
        .layer(crate::deadline::DeadlineLayer)
        // Only the gRPC routes: tonic-web answers 400 to any other HTTP/1.1 request.
        .layer(tonic_web::GrpcWebLayer::new());
    // A call made on a page's WebSocket meets what a call made by fetch meets.
    let mux_calls = edge.layer(Routes::from(calls.clone()));
    let router = calls
        .route(
            MUX_PATH,
            axum::routing::get(move |ws: WebSocketUpgrade| {
                let (calls, stop) = (mux_calls.clone(), stop.clone());
                async move { crate::web_mux::upgrade(ws, calls, stop, max_subscriptions) }
            }),
        )
        .fallback(page)
        .layer(cors);
    edge.layer(Routes::from(router))
}

/// A file of the page: `/` is index.html; hashed assets are cached for good, the rest never.
/// Brotli or gzip when the browser takes it and the build made one.
async fn page(uri: Uri, headers: HeaderMap) -> Response {
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html",
        p => p,
    };
    if path == "RULES.md" {
        return (
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            RULEBOOK,
        )
            .into_response();
    }
    if path.ends_with(".gz") || path.ends_with(".br") {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    }
    let Some(plain) = PAGE.get_file(path) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let accepts = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let (file, encoding) = match encoded(path, accepts) {
        Some((f, e)) => (f, Some(e)),
        None => (plain, None),
    };
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    let mut res = (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime(path))),
            (header::VARY, HeaderValue::from_static("accept-encoding")),
            (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        file.contents(),
    )
        .into_response();
    if let Some(e) = encoding {
        res.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
    }
    res
}

/// The precompressed copy of `path` that `accept_encoding` allows, brotli first.
fn encoded(
    path: &str,
    accept_encoding: &str,
) -> Option<(&'static include_dir::File<'static>, &'static str)> {
    let takes = |coding: &str| {
        accept_encoding.split(',').any(|part| {
            let mut it = part.split(';');
            let name = it.next().unwrap_or("").trim();
            // `q=0` refuses a coding.
            let refused = it.any(|p| matches!(p.trim().strip_prefix("q="), Some(q) if q.trim().parse::<f32>().is_ok_and(|q| q == 0.0)));
            (name.eq_ignore_ascii_case(coding) || name == "*") && !refused
        })
    };
    [("br", "br"), ("gz", "gzip")]
        .into_iter()
        .filter(|(_, coding)| takes(coding))
        .find_map(|(ext, coding)| PAGE.get_file(format!("{path}.{ext}")).map(|f| (f, coding)))
}

/// The content types of what Vite emits.
fn mime(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("json") => "application/json",
        Some("txt") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_embedded() {
        let index = PAGE.get_file("index.html").map(|f| f.contents_utf8());
        assert!(
            matches!(index, Some(Some(html)) if html.contains("<title>")),
            "clients/web/dist/index.html is embedded"
        );
        assert_eq!(
            mime("assets/index-abc.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(mime("index.html"), "text/html; charset=utf-8");
    }

    #[test]
    fn the_page_goes_compressed_as_accepted() {
        let br = encoded("index.html", "gzip, deflate, br, zstd").map(|(_, e)| e);
        assert_eq!(br, Some("br"));
        let gz = encoded("index.html", "gzip;q=1.0, br;q=0").map(|(_, e)| e);
        assert_eq!(gz, Some("gzip"));
        assert!(encoded("index.html", "identity").is_none());
        assert!(encoded("index.html", "").is_none());
        let (gz, _) = encoded("index.html", "gzip").expect("a gzip copy of index.html");
        let plain = PAGE.get_file("index.html").map(|f| f.contents().len());
        assert!(
            Some(gz.contents().len()) < plain,
            "the gzip copy is smaller"
        );
    }
}
