//! The web page is embedded by `include_dir!` (src/web.rs): rebuild when its files change.

fn main() {
    println!("cargo:rerun-if-changed=../../clients/web/dist");
}
