//! The shared result cache end to end (design §12) against a real server: nginx
//! with WebDAV from the distribution's package (test-data/clients.toml), started
//! by each test on a free loopback port in a directory of its own and killed when
//! the test ends, even on a panic. Two clones of one commit whose locks hold no
//! results: the first runs `trellis test` as CI would and stores every result;
//! the second, fresh (no `.trellis/`), executes no suite and ends with the same
//! locks byte for byte. A poisoned entry (the right key, another result) and a
//! corrupted blob are refused and their suites run; a server killed mid-run, or
//! one that stops answering, changes nothing but how long the run takes.

#![allow(clippy::disallowed_methods, reason = "tests use real files")]

mod support;

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{Root, Run, TempDir};
use trellis_cache::action::ActionResult;
use trellis_lock::{Lock, Mode, TestResult, TestRow, Tier, Word};

/// nginx serving WebDAV under `/cache/`, in the foreground, as this user.
struct Nginx {
    child: Option<Child>,
    dir: TempDir,
    port: u16,
}

impl Nginx {
    fn start() -> Nginx {
        let program = xtask::clients::require("nginx");
        let dir = TempDir::new("nginx");
        let prefix = dir.path();
        for sub in ["data/cache", "tmp", "logs"] {
            std::fs::create_dir_all(prefix.join(sub)).expect("nginx dirs");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let p = prefix.display();
        // One process (master_process off), so no worker switches to another
        // user: as root or not, it runs as whoever runs the test.
        let conf = format!(
            "master_process off;\ndaemon off;\npid {p}/nginx.pid;\nerror_log {p}/logs/error.log info;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {p}/tmp/body;\n  proxy_temp_path {p}/tmp/proxy;\n\
               fastcgi_temp_path {p}/tmp/fastcgi;\n  uwsgi_temp_path {p}/tmp/uwsgi;\n  scgi_temp_path {p}/tmp/scgi;\n\
               client_max_body_size 16m;\n\
               server {{\n    listen 127.0.0.1:{port};\n    root {p}/data;\n\
                 location /cache/ {{\n      dav_methods PUT DELETE;\n      create_full_put_path on;\n\
                   dav_access user:rw group:r all:r;\n    }}\n  }}\n}}\n"
        );
        std::fs::write(prefix.join("nginx.conf"), conf).expect("nginx.conf");
        let child = Command::new(program)
            .arg("-p")
            .arg(prefix)
            .arg("-c")
            .arg(prefix.join("nginx.conf"))
            .arg("-e")
            .arg(prefix.join("logs/error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx");
        let mut nginx = Nginx {
            child: Some(child),
            dir,
            port,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = nginx
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "nginx exited ({status}): {}",
                    std::fs::read_to_string(nginx.dir.path().join("logs/error.log"))
                        .unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nginx did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        nginx
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/cache", self.port)
    }

    /// The server's files: `ac/<key>` and `cas/<sha256>`.
    fn store(&self, kind: &str) -> PathBuf {
        self.dir.path().join("data/cache").join(kind)
    }

    fn entries(&self, kind: &str) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(self.store(kind))
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .collect();
        files.sort();
        files
    }

    fn signal(&self, signal: &str) {
        if let Some(child) = &self.child {
            let status = Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .expect("kill");
            assert!(status.success());
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SIGCONT first: a stopped process would not die of SIGTERM.
            let _ = Command::new("kill")
                .args(["-CONT", &child.id().to_string()])
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A copy of the examples whose locks hold no results (as after a commit that
/// was adopted but never tested), with `[cache]` in its soil.toml.
fn stale_examples(cache_table: &str) -> Root {
    let root = Root::examples();
    for (relative, text) in locks(&root.root) {
        if let Ok(Lock::Function(mut lock)) = trellis_lock::read_lock(&text) {
            lock.tests.clear();
            lock.oracles.clear();
            std::fs::write(
                root.path(&relative),
                trellis_lock::write_lock(&Lock::Function(lock)),
            )
            .expect("write");
        }
    }
    let config = root.path("soil.toml");
    let text = std::fs::read_to_string(&config).expect("soil.toml");
    std::fs::write(&config, format!("{text}\n[cache]\n{cache_table}\n")).expect("soil.toml");
    root
}

/// Every function lock under `dir` by relative path.
fn locks(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(dir.to_owned(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir").flatten() {
            let name = entry.file_name().into_string().expect("UTF-8 name");
            if entry.path().is_dir() {
                if !name.starts_with('.') {
                    stack.push((entry.path(), format!("{prefix}{name}/")));
                }
            } else if name.ends_with(".lock") && name != "soil.lock" {
                out.insert(
                    format!("{prefix}{name}"),
                    std::fs::read_to_string(entry.path()).expect("read lock"),
                );
            }
        }
    }
    out
}

/// `trellis test` in `root` with exactly the cache environment given.
fn test_command(root: &Root, daemon: bool, env: &[(&str, &str)]) -> Command {
    let args: &[&str] = if daemon {
        &["test"]
    } else {
        &["--no-daemon", "test"]
    };
    let mut command = root.command(args);
    for name in [
        "CI",
        "TRELLIS_CACHE_URL",
        "TRELLIS_CACHE_WRITE",
        "TRELLIS_CACHE_SIGNING_KEY",
    ] {
        command.env_remove(name);
    }
    for (name, value) in env {
        command.env(name, value);
    }
    command
}

fn run_test(root: &Root, daemon: bool, env: &[(&str, &str)]) -> Run {
    Run::from(
        test_command(root, daemon, env)
            .output()
            .expect("trellis test"),
    )
    .ok()
}

/// The summary line's counts: (ran, failing, up to date, from the cache, stored).
fn summary(run: &Run) -> (usize, usize, usize, usize, usize) {
    let line = run
        .stdout
        .lines()
        .rev()
        .find(|line| line.starts_with("ran "))
        .unwrap_or_else(|| panic!("a summary line: {run:?}"));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|word| !word.is_empty())
        .map(|word| word.parse().expect("a number"))
        .collect();
    assert_eq!(numbers.len(), 5, "{line}");
    (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
}

/// The CAS blob holding `definition`'s result, and its JSON.
fn result_blob(nginx: &Nginx, definition: &str) -> (PathBuf, serde_json::Value) {
    nginx
        .entries("cas")
        .into_iter()
        .find_map(|path| {
            let value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            (value["definition"] == definition).then_some((path, value))
        })
        .unwrap_or_else(|| panic!("no stored result for {definition}"))
}

/// The `/ac/` entry naming the blob `hash`.
fn action_naming(nginx: &Nginx, hash: &str) -> PathBuf {
    nginx
        .entries("ac")
        .into_iter()
        .find(|path| {
            std::fs::read(path)
                .ok()
                .and_then(|bytes| ActionResult::decode(&bytes).ok())
                .is_some_and(|action| action.output_files.iter().any(|file| file.hash == hash))
        })
        .unwrap_or_else(|| panic!("no action result names {hash}"))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn a_fresh_clone_executes_no_suite_when_another_clone_stored_every_result() {
    let nginx = Nginx::start();
    let source = stale_examples(&format!("url = \"{}\"", nginx.url()));
    let first = Root::copy_of(&source.root);
    let fresh = Root::copy_of(&source.root).start_daemon();

    // Outside CI nothing is written, even on a miss.
    let local = run_test(&Root::copy_of(&source.root), false, &[]);
    assert_eq!(summary(&local), (19, 0, 0, 0, 0), "{}", local.stdout);
    assert!(nginx.entries("ac").is_empty(), "a run outside CI wrote");

    // CI runs everything and stores every result.
    let ci = run_test(&first, false, &[("CI", "true")]);
    assert_eq!(summary(&ci), (19, 0, 0, 0, 19), "{}", ci.stdout);
    assert_eq!(nginx.entries("ac").len(), 19);
    assert_eq!(nginx.entries("cas").len(), 19, "one result blob each");

    // The fresh clone, through its daemon: every result from the cache.
    let reused = run_test(&fresh, true, &[]);
    assert_eq!(summary(&reused), (0, 0, 0, 19, 0), "{}", reused.stdout);
    assert!(
        reused.stdout.contains("all green (from the cache)"),
        "{}",
        reused.stdout
    );
    assert_eq!(
        locks(&fresh.root),
        locks(&first.root),
        "the same locks, byte for byte, as the run that executed the suites"
    );
    let again = run_test(&fresh, true, &[]);
    assert_eq!(summary(&again), (0, 0, 19, 0, 0), "{}", again.stdout);
    // TRELLIS_CACHE_URL=off turns the cache off for one command.
    let off = run_test(
        &Root::copy_of(&source.root),
        false,
        &[("TRELLIS_CACHE_URL", "off")],
    );
    assert!(
        off.stdout
            .lines()
            .last()
            .is_some_and(|line| line == "ran 19 suites (0 failing); 0 already up to date"),
        "{}",
        off.stdout
    );
}

#[test]
fn a_poisoned_entry_is_refused_by_its_signature_and_run_here() {
    let nginx = Nginx::start();
    let keygen = Run::from(
        Command::new(support::TRELLIS)
            .args(["cache", "keygen"])
            .output()
            .expect("keygen"),
    )
    .ok();
    let line = |prefix: &str| {
        keygen
            .stdout
            .lines()
            .find_map(|line| line.strip_prefix(prefix))
            .expect("a key line")
            .to_owned()
    };
    let (secret, public) = (line("secret: "), line("public: "));
    let source = stale_examples(&format!(
        "url = \"{}\"\ntrusted_keys = [\"{public}\"]",
        nginx.url()
    ));
    let ci = Root::copy_of(&source.root);
    let fresh = Root::copy_of(&source.root);

    // Without the signing key, a root that reads only signed entries is not
    // written to at all.
    let unsigned = run_test(&Root::copy_of(&source.root), false, &[("CI", "true")]);
    assert_eq!(summary(&unsigned).4, 0, "{}", unsigned.stdout);
    assert!(
        unsigned
            .stdout
            .contains("not writing: this root reads only signed entries"),
        "{}",
        unsigned.stdout
    );
    let signed = run_test(
        &ci,
        false,
        &[("CI", "true"), ("TRELLIS_CACHE_SIGNING_KEY", &secret)],
    );
    assert_eq!(summary(&signed), (19, 0, 0, 0, 19), "{}", signed.stdout);

    // The poisoner: csvstats::median's entry, the right key, another result — one
    // row fewer, well formed and sealed correctly under the suite key, so only
    // the writer's signature can tell.
    let (blob_path, mut blob) = result_blob(&nginx, "csvstats::median");
    let old_hash = file_name(&blob_path);
    let mut rows: Vec<TestRow> = blob["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| TestRow {
            name: row["name"].as_str().expect("name").to_owned(),
            tier: Tier::from_word(row["tier"].as_str().expect("tier")).expect("tier"),
            mode: Mode::from_word(row["mode"].as_str().expect("mode")).expect("mode"),
            result: TestResult::from_word(row["result"].as_str().expect("result")).expect("result"),
        })
        .collect();
    assert!(rows.len() > 1, "{blob}");
    let before = rows.len();
    rows.retain(|row| row.tier != Tier::Property);
    assert!(
        rows.len() < before,
        "the poisoned result drops a row: {blob}"
    );
    let suite_key =
        trellis_hash::Digest::parse(blob["suite_key"].as_str().expect("key")).expect("a digest");
    blob["rows"] = rows
        .iter()
        .map(|row| {
            serde_json::json!({ "name": row.name, "tier": row.tier.word(),
                "mode": row.mode.word(), "result": row.result.word() })
        })
        .collect();
    blob["results_key"] = trellis_lock::seal_results(suite_key, &rows)
        .to_string()
        .into();
    let poisoned = serde_json::to_vec(&blob).expect("JSON");
    let new_hash = trellis_hash::Digest::of(&poisoned).hex();
    std::fs::write(nginx.store("cas").join(&new_hash), &poisoned).expect("poison blob");
    let action_path = action_naming(&nginx, &old_hash);
    let mut action =
        ActionResult::decode(&std::fs::read(&action_path).expect("ac")).expect("an action");
    for file in &mut action.output_files {
        if file.hash == old_hash {
            file.hash = new_hash.clone();
            file.size = poisoned.len() as u64;
        }
    }
    std::fs::write(&action_path, action.encode()).expect("poison action");

    // And a blob corrupted in place under its address.
    let (corrupted, victim) = nginx
        .entries("cas")
        .into_iter()
        .find_map(|path| {
            let value: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            let name = value["definition"].as_str()?.to_owned();
            (name != "csvstats::median").then_some((path, name))
        })
        .expect("another result");
    std::fs::write(&corrupted, b"{\"format\":\"trellis-test-result/1\"}").expect("corrupt");

    let reader = run_test(&fresh, false, &[]);
    assert_eq!(summary(&reader), (2, 0, 0, 17, 0), "{}", reader.stdout);
    assert!(
        reader
            .stdout
            .contains("cache: refused the entry for csvstats::median (the signature by")
            && reader
                .stdout
                .contains("does not match this entry); ran it here"),
        "{}",
        reader.stdout
    );
    assert!(
        reader.stdout.contains(&format!(
            "cache: refused the entry for {victim} (the blob at cas/"
        )) && reader.stdout.contains("does not hash to its address"),
        "{}",
        reader.stdout
    );
    assert_eq!(
        locks(&fresh.root),
        locks(&ci.root),
        "the refused suites ran here and recorded what CI recorded"
    );
}

#[test]
fn a_server_killed_mid_run_or_gone_silent_changes_nothing_but_speed() {
    let mut nginx = Nginx::start();
    let source = stale_examples(&format!("url = \"{}\"\ntimeout_ms = 500", nginx.url()));
    let ci = Root::copy_of(&source.root);
    let run = run_test(&ci, false, &[("CI", "true")]);
    assert_eq!(summary(&run).4, 19, "{}", run.stdout);
    let expected = locks(&ci.root);

    // Stopped (SIGSTOP): connections are accepted and never answered. The first
    // request times out, the cache is left alone for the rest of the command,
    // and every suite runs here.
    nginx.signal("-STOP");
    let silent = Root::copy_of(&source.root);
    let started = Instant::now();
    let run = run_test(&silent, false, &[]);
    let took = started.elapsed();
    nginx.signal("-CONT");
    assert_eq!(summary(&run), (19, 0, 0, 0, 0), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("stopped answering (timed out); the rest ran here"),
        "{}",
        run.stdout
    );
    assert_eq!(locks(&silent.root), expected);
    eprintln!("with a silent server: {took:?}");

    // Killed mid-run: the entries of the second module are gone, so the run
    // reads the first module's from the cache, then starts a suite of its own;
    // the server dies at that moment.
    for blob in nginx.entries("cas") {
        let value: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&blob).expect("blob")).expect("JSON");
        if value["definition"]
            .as_str()
            .is_some_and(|name| name.starts_with("inventory::"))
        {
            std::fs::remove_file(action_naming(&nginx, &file_name(&blob))).expect("remove");
        }
    }
    let killed = Root::copy_of(&source.root);
    let mut child = test_command(&killed, false, &[])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("trellis test");
    let stderr = child.stderr.take().expect("stderr");
    let mut seen = String::new();
    for line in std::io::BufReader::new(stderr).lines() {
        let line = line.expect("a line");
        if line.starts_with("testing ") && nginx.child.is_some() {
            nginx.kill();
        }
        seen.push_str(&line);
        seen.push('\n');
    }
    let output = child.wait_with_output().expect("wait");
    let run = Run {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: seen,
    }
    .ok();
    let (ran, failing, _, reused, _) = summary(&run);
    assert!(nginx.child.is_none(), "the server was killed mid-run");
    assert_eq!((ran + reused, failing), (19, 0), "{}", run.stdout);
    assert!(ran > 0 && reused > 0, "{}", run.stdout);
    assert!(run.stdout.contains("stopped answering"), "{}", run.stdout);
    assert_eq!(locks(&killed.root), expected, "nothing changed but speed");
}
