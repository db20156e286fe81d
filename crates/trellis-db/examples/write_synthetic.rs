//! Writes the synthetic root of `N` definitions into a directory, for benchmarks of
//! whole commands: `cargo run --release -p trellis-db --example write_synthetic --
//! DIR N [--hubs|--shaped]` (`--hubs`: the root with a hub chain,
//! `synthetic::hub_root`; `--shaped`: `shaped::shaped_root` of `Shape::mixed`).

#![allow(clippy::disallowed_methods, reason = "benches use real files")]

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(count)) = (args.next(), args.next().and_then(|n| n.parse().ok())) else {
        eprintln!("usage: write_synthetic DIR N [--hubs|--shaped]");
        std::process::exit(2);
    };
    let files = match args.next().as_deref() {
        None => trellis_db::synthetic::synthetic_root(count),
        Some("--hubs") => trellis_db::synthetic::hub_root(count),
        Some("--shaped") => {
            trellis_db::shaped::shaped_root(&trellis_db::shaped::Shape::mixed(count))
        }
        Some(other) => {
            eprintln!("write_synthetic: unknown option {other}");
            std::process::exit(2);
        }
    };
    let dir = std::path::PathBuf::from(dir);
    for (path, text) in files {
        let target = dir.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).expect("create directories");
        }
        std::fs::write(target, text).expect("write file");
    }
}
