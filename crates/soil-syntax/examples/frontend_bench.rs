//! Front-end throughput: generates a deterministic multi-megabyte Soil file with a
//! realistic mix of items, then times parse + canonical print on one core.
//!
//! `cargo run --release -p soil-syntax --example frontend_bench [MEGABYTES] [ITERATIONS]`

use std::fmt::Write as _;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let megabytes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(8);
    let iterations: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let source = generate(megabytes * 1024 * 1024);
    let (file, diagnostics) = soil_syntax::parse_file(&source);
    assert!(
        diagnostics.is_empty(),
        "generated source must parse: {:?}",
        diagnostics.first()
    );
    let canonical = soil_syntax::print_file(&file);
    println!(
        "source: {:.2} MB, {} items; canonical text {:.2} MB",
        source.len() as f64 / 1e6,
        file.items.len(),
        canonical.len() as f64 / 1e6
    );

    // Wall time suffers when other processes share the cores, so the thread's
    // CPU time (from /proc, where available) is reported as well.
    let mut best = f64::MAX;
    let mut parse_best = f64::MAX;
    let cpu_start = thread_cpu_seconds();
    let wall_start = Instant::now();
    for _ in 0..iterations {
        let start = Instant::now();
        let (file, _) = soil_syntax::parse_file(&source);
        let parsed = start.elapsed().as_secs_f64();
        let printed = soil_syntax::print_file(&file);
        let total = start.elapsed().as_secs_f64();
        assert_eq!(printed.len(), canonical.len());
        best = best.min(total);
        parse_best = parse_best.min(parsed);
    }
    let wall = wall_start.elapsed().as_secs_f64();
    let cpu_end = thread_cpu_seconds();
    let mut lex_best = f64::MAX;
    for _ in 0..iterations {
        let start = Instant::now();
        let tokens = soil_syntax::lexer::lex(&source, &mut Vec::new());
        lex_best = lex_best.min(start.elapsed().as_secs_f64());
        assert!(tokens.len() > 1);
    }
    println!(
        "lex:           {:.1} MB/s wall (best of {iterations})",
        source.len() as f64 / 1e6 / lex_best
    );
    let mb = source.len() as f64 / 1e6;
    println!(
        "parse:         {:.1} MB/s wall (best of {iterations})",
        mb / parse_best
    );
    println!(
        "parse + print: {:.1} MB/s wall (best of {iterations})",
        mb / best
    );
    if let (Some(cpu_start), Some(cpu_end)) = (cpu_start, cpu_end) {
        // Includes dropping each tree and output, which the wall figures exclude.
        let cpu = cpu_end - cpu_start;
        println!(
            "parse + print + drop: {:.1} MB/s of CPU time ({:.0}% of wall time on CPU)",
            mb * iterations as f64 / cpu,
            100.0 * cpu / wall
        );
    }

    // Real modules hold one definition per file: the same text as separate
    // small files (split at blank lines before an item) measures that case.
    let chunks: Vec<&str> = split_into_files(&source, 4096);
    let mut small_best = f64::MAX;
    for _ in 0..iterations {
        let start = Instant::now();
        let mut bytes = 0;
        for chunk in &chunks {
            let (file, _) = soil_syntax::parse_file(chunk);
            bytes += soil_syntax::print_file(&file).len();
        }
        small_best = small_best.min(start.elapsed().as_secs_f64());
        assert!(bytes > 0);
    }
    println!(
        "parse + print, {} files of ~4 KB: {:.1} MB/s wall (best of {iterations})",
        chunks.len(),
        mb / small_best
    );

    let start = Instant::now();
    let mut hashed = 0;
    for item in &file.items {
        hashed += soil_syntax::hash_form_item(item).len();
    }
    println!(
        "hash form:     {:.1} MB/s",
        hashed as f64 / 1e6 / start.elapsed().as_secs_f64()
    );
}

/// A deterministic file of at least `target` bytes, cycling through item shapes
/// seen in real modules.
fn generate(target: usize) -> String {
    let mut out = String::with_capacity(target + 4096);
    let mut n = 0usize;
    while out.len() < target {
        match n % 6 {
            0 => {
                let _ = write!(
                    out,
                    "-- Result of parsing row {n}.\n\
                     type ParseError{n} = BadCell {{ index : I64, raw : Utf8 }} | EmptyLine | BadArity I64\n\n\
                     type Row{n} = {{ line : I64, cells : List F64, label : Utf8 }}\n\n"
                );
            }
            1 => {
                let _ = write!(
                    out,
                    "_parse_cell{n} : (index : I64) -> (raw : Utf8) -> Result F64 ParseError{n}\n\n\
                     _parse_cell{n} index raw =\n  \
                       match parse_f64 (trim raw) with\n  \
                       | Some x if is_finite x -> Ok x\n  \
                       | _ -> Err (BadCell {{ index, raw }})\n  \
                       end\n\n"
                );
            }
            2 => {
                let _ = write!(
                    out,
                    "median{n} : (xs : List F64) ->{{Panic}} F64\n\n\
                     median{n} xs =\n  \
                       let s = sort xs in\n  \
                       let n = len s in\n  \
                       if n % 2 == 1 then at s (n / 2)\n  \
                       else (at s (n / 2 - 1) + at s (n / 2)) / 2.0\n\n"
                );
            }
            3 => {
                let _ = write!(
                    out,
                    "apply_all{n} stock movements =\n  \
                       let go current index remaining =\n    \
                         match remaining with\n    \
                         | [] -> Ok current\n    \
                         | [movement, ..rest] ->\n      \
                           match apply_movement current movement with\n      \
                           | Ok next -> go next (index + 1) rest\n      \
                           | Err error -> Err (index, error)\n      \
                           end\n    \
                         end\n  \
                       in\n  \
                       go stock 0 movements\n\n"
                );
            }
            4 => {
                let _ = write!(
                    out,
                    "report{n} rows =\n  \
                       let total = fold (\\acc r -> acc + r.value * 1.5e-3) 0.0 rows in\n  \
                       let names = map (\\r -> {{ r with label = \"row \\\"{n}\\\"\" ++ show r.line }}) rows in\n  \
                       csvstats::summarize [total, -2.0, 1e10] names (Row{n} {{ line = {n}, cells = [], label = \"\\u{{1F600}}\" }})\n\n"
                );
            }
            _ => {
                let _ = write!(
                    out,
                    "low_stock{n} threshold stock = filter (\\item -> item.on_hand < threshold and not item.retired) (map_values stock) -- trailing comment\n\n"
                );
            }
        }
        n += 1;
    }
    out
}

/// This thread's user + system CPU time in seconds, from /proc/thread-self/stat.
fn thread_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after_name = stat.rsplit_once(") ")?.1;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    // Linux reports these in clock ticks of 1/100 s (USER_HZ).
    Some((utime + stime) / 100.0)
}

/// Cuts `source` into pieces of about `size` bytes at item boundaries (a blank
/// line followed by a token at column 1). The generated source is ASCII.
fn split_into_files(source: &str, size: usize) -> Vec<&str> {
    let at_boundary = |end: usize| {
        source[..end].ends_with("\n\n") && !source[end..].starts_with(char::is_whitespace)
    };
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < source.len() {
        let mut end = (start + size).min(source.len());
        while end < source.len() && !at_boundary(end) {
            end += 1;
        }
        pieces.push(&source[start..end]);
        start = end;
    }
    pieces
}
