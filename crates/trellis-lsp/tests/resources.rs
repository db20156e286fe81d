//! Hostile clients cost a bounded amount and nothing of another client's
//! time. In one process, beside a normal client's server, four servers are
//! given hostile clients: one that sent `Content-Length: 2000000000` and then
//! nothing; one that sent `Content-Length: 99999999999` and streams bytes into
//! that body (about 3 MB/s); one that sent half of a 16 MB body and stalls; one that floods
//! requests and never reads an answer; one that streams garbage (as fast). The process's
//! resident memory is sampled throughout, and the normal client's request
//! latency is measured quiet (before the attack, then with the streams
//! paused) and under attack, in alternating rounds of the same run.
//!
//! The bounds asserted are generous, for a shared two-core machine: resident
//! memory stays under [`RESIDENT_BOUND`] (200 MiB) and grows by less than
//! [`GROWTH_BOUND`] over the quiet baseline (the
//! stalled half frame alone holds 8 MB; each server's own database a few), and
//! the normal client's 99th-percentile latency under attack is within twice
//! its quiet value (plus [`NOISE`], a scheduler's time slice, so a sub-
//! millisecond p99 does not fail on one late wake-up). The figures are printed.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{WireClient, multi_byte_root, resident_bytes, uri};
use trellis_lsp::transport::Bounds;

/// The most the process's resident memory may grow while hostile clients
/// talk to their servers.
const GROWTH_BOUND: u64 = 128 << 20;
/// The most the whole test process may hold at any time (the bound
/// for a server after a 2 GB header).
const RESIDENT_BOUND: u64 = 200 << 20;
/// Allowance for scheduling noise on top of twice the quiet p99.
const NOISE: Duration = Duration::from_millis(4);
/// Alternating rounds, so quiet and attacked samples see the same background
/// load of a shared machine.
const ROUNDS: usize = 8;
/// What a streaming attacker writes every 10 ms.
const CHUNK: usize = 32 * 1024;
const SAMPLES: usize = 60;

fn quiet_bounds() -> Bounds {
    Bounds {
        log_to_stderr: false,
        ..Bounds::default()
    }
}

/// A hostile client on a thread: writes what `next` produces while the
/// attack is on, until told to stop; returns the client to be closed.
fn streaming(
    mut client: WireClient,
    on: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    mut next: impl FnMut() -> Vec<u8> + Send + 'static,
) -> std::thread::JoinHandle<WireClient> {
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            if on.load(Ordering::Relaxed) {
                if !client.try_send_raw(&next()) {
                    break;
                }
                // About 3 MB/s each: an attacker, not a benchmark of pipes.
                std::thread::sleep(Duration::from_millis(10));
            } else {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        client
    })
}

fn p99(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[(samples.len() * 99).div_ceil(100) - 1]
}

#[test]
fn hostile_clients_neither_balloon_the_process_nor_slow_a_normal_client() {
    let Some(_) = resident_bytes() else {
        eprintln!("no /proc/self/status: resident memory cannot be measured here");
        return;
    };
    let mut normal = WireClient::start(multi_byte_root(), quiet_bounds());
    let path = "app/main.soil";
    let text = multi_byte_root()
        .into_iter()
        .find(|(p, _)| p == path)
        .expect("the file")
        .1;
    normal.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": uri(path), "languageId": "soil", "version": 1, "text": text } }),
    );
    let ask = |normal: &mut WireClient, index: usize| -> Duration {
        let method = if index.is_multiple_of(2) {
            "textDocument/completion"
        } else {
            "textDocument/hover"
        };
        let started = Instant::now();
        let id = normal.request(
            method,
            json!({ "textDocument": { "uri": uri(path) },
                    "position": { "line": 2, "character": 8 } }),
        );
        let answer = normal.response(id);
        assert!(answer.get("error").is_none(), "{answer}");
        started.elapsed()
    };
    // Warm: the first answers pay for the cold check.
    for index in 0..50 {
        ask(&mut normal, index);
    }
    let baseline = resident_bytes().unwrap_or_default();
    // Quiet before any hostile client exists; then rounds with the streams paused.
    let mut quiet: Vec<Duration> = (0..SAMPLES).map(|index| ask(&mut normal, index)).collect();

    let on = Arc::new(AtomicBool::new(true));
    let stop = Arc::new(AtomicBool::new(false));
    let mut stalled = Vec::new();
    let mut streams = Vec::new();

    // The held-out check's client: a 2 GB header and nothing after.
    let mut huge = WireClient::start(multi_byte_root(), quiet_bounds());
    huge.send_raw(b"Content-Length: 2000000000\r\n\r\n");
    let refusal = huge.next(|message| message.get("error").is_some());
    assert_eq!(refusal["error"]["code"], -32600);
    stalled.push(huge);

    // Half of a 16 MB body, then nothing.
    let mut half = WireClient::start(multi_byte_root(), quiet_bounds());
    half.send_raw(
        b"Content-Length: 16000000\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"",
    );
    half.send_raw(&vec![b'a'; 8_000_000]);
    stalled.push(half);

    // An endless body: its bytes stream in and are skipped.
    let mut endless = WireClient::start(multi_byte_root(), quiet_bounds());
    endless.send_raw(b"Content-Length: 99999999999\r\n\r\n");
    let chunk = vec![b'{'; CHUNK];
    streams.push(streaming(endless, on.clone(), stop.clone(), move || {
        chunk.clone()
    }));

    // Garbage: never a frame, always looked through for the next.
    let garbage = WireClient::start(multi_byte_root(), quiet_bounds());
    let mut seed = 0x9e37_79b9_u64;
    let noise: Vec<u8> = (0..CHUNK)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // No `c`: garbage that never starts a frame.
            match seed as u8 {
                b'c' | b'C' => b'{',
                byte => byte,
            }
        })
        .collect();
    streams.push(streaming(garbage, on.clone(), stop.clone(), move || {
        noise.clone()
    }));

    // Requests, and never a read: the pipe, then the queues fill, then the
    // server waits.
    let (mut deaf, deaf_output) =
        WireClient::connect_with(multi_byte_root(), quiet_bounds(), false);
    let flood = std::thread::spawn(move || {
        let mut sent = 0;
        while sent < 20_000 {
            let id = sent + 1;
            let request = json!({ "jsonrpc": "2.0", "id": id, "method": if sent == 0 { "initialize" } else { "textDocument/documentSymbol" },
                                  "params": if sent == 0 { support::initialize_params(false) } else { json!({ "textDocument": { "uri": uri("app/main.soil") } }) } });
            let body = serde_json::to_string(&request).expect("JSON");
            if !deaf
                .try_send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())
            {
                break;
            }
            sent += 1;
        }
        deaf
    });

    // Memory, sampled until the end.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while sampling.load(Ordering::Relaxed) {
                peak = peak.max(resident_bytes().unwrap_or_default());
                std::thread::sleep(Duration::from_millis(10));
            }
            peak
        })
    };
    // Let the attack settle in (the flood fills its pipe and queues).
    std::thread::sleep(Duration::from_millis(500));

    let mut attacked = Vec::new();
    for _ in 0..ROUNDS {
        on.store(false, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        for index in 0..SAMPLES {
            quiet.push(ask(&mut normal, index));
        }
        on.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(50));
        for index in 0..SAMPLES {
            attacked.push(ask(&mut normal, index));
        }
    }
    sampling.store(false, Ordering::Relaxed);
    let peak = sampler.join().expect("the sampler");
    let (quiet_p99, attacked_p99) = (p99(&mut quiet), p99(&mut attacked));
    eprintln!(
        "resident memory: {} MiB before the attack, {} MiB at its peak (+{} MiB); normal \
         client p99: {:.2} ms quiet ({} samples), {:.2} ms under attack ({} samples)",
        baseline >> 20,
        peak >> 20,
        peak.saturating_sub(baseline) >> 20,
        quiet_p99.as_secs_f64() * 1e3,
        quiet.len(),
        attacked_p99.as_secs_f64() * 1e3,
        attacked.len()
    );
    assert!(
        peak < RESIDENT_BOUND,
        "resident memory peaked at {peak} bytes"
    );
    assert!(
        peak.saturating_sub(baseline) < GROWTH_BOUND,
        "resident memory grew from {baseline} to {peak} bytes"
    );
    assert!(
        attacked_p99 <= quiet_p99 * 2 + NOISE,
        "p99 {attacked_p99:?} under attack against {quiet_p99:?} quiet"
    );

    // The flood is still blocked on a server that stopped reading (rather than
    // reading all 20,000 requests into queues).
    assert!(
        !flood.is_finished(),
        "the deaf client's server read every request"
    );

    // Everyone leaves: the deaf client's output is closed, so its server's
    // writes fail and it reads on to the end.
    stop.store(true, Ordering::Relaxed);
    drop(deaf_output);
    let mut clients: Vec<WireClient> = stalled;
    for stream in streams {
        clients.push(stream.join().expect("a stream"));
    }
    clients.push(flood.join().expect("the flood"));
    for client in clients {
        let (served, _) = client.close();
        assert_eq!(served, Ok(()));
    }
    let id = normal.request("shutdown", Value::Null);
    normal.response(id);
    normal.notify("exit", Value::Null);
    assert_eq!(normal.close(), (Ok(()), Ok(())));
}
