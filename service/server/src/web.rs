//! The web listener: the page (built by clients/web, embedded at compile time) and the same
//! gRPC services as the native listener, spoken as gRPC-Web (HTTP/1.1 or HTTP/2) so a browser
//! can call them. Auth and limits are the services' own, so they are the same on both listeners.

use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};
use tonic::service::Routes;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The built page (`npm run build` in clients/web writes it; committed, so a machine with only a
/// Rust toolchain serves it). build.rs makes a change to it rebuild this crate.
static PAGE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../../clients/web/dist");

/// The gRPC-Web routes of `grpc`, with the page as the fallback for every other path.
pub fn routes(grpc: Routes) -> Routes {
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
    let router = grpc
        .prepare()
        .into_axum_router()
        // Only the gRPC routes: tonic-web answers 400 to any other HTTP/1.1 request.
        .layer(tonic_web::GrpcWebLayer::new())
        .fallback(page)
        .layer(cors);
    Routes::from(router)
}

/// A file of the page: `/` is index.html; hashed assets are cached for good, the rest never.
async fn page(uri: Uri) -> Response {
    let path = match uri.path().trim_start_matches('/') {
        "" => "index.html",
        p => p,
    };
    let Some(file) = PAGE.get_file(path) else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let cache = if path.starts_with("assets/") {
        "public, max-age=31536000, immutable"
    } else {
        "no-cache"
    };
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(mime(path))),
            (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        file.contents(),
    )
        .into_response()
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
}
