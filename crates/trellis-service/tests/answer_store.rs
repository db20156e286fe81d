//! The answers kept on disk (design §7.16): a service that starts on a root
//! nothing has touched answers `check` and `status` from them, exactly as a
//! cold start computes them; a store that does not fit the root — a file
//! edited, added or removed, reference data edited, a racy file edited in
//! place with its stamp put back, a torn or edited store, another build — is
//! never taken; and a
//! daemon's service loads the root behind the stored answers and takes over.

#![allow(clippy::disallowed_methods, reason = "tests write roots")]

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use trellis_service::Service;
use trellis_service::answer_cache::STORE;

fn temp_root(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("trellis-store-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let shape = trellis_db::shaped::Shape::mixed(60);
    for (path, text) in trellis_db::shaped::shaped_root(&shape) {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("mkdir");
        std::fs::write(target, text).expect("write");
    }
    // A definition that fails its check, so the answers carry findings.
    let broken = root.join(trellis_db::shaped::shaped_soil_path(&shape, 30));
    let text = std::fs::read_to_string(&broken).expect("read");
    std::fs::write(
        &broken,
        text.replacen("let base = ", "let base = \"no\" + ", 1),
    )
    .expect("write");
    // A reference directory: its data are inputs too.
    std::fs::create_dir_all(root.join("ref")).expect("mkdir");
    std::fs::write(root.join("ref/oracle.py"), "def f(x):\n    return x\n").expect("write");
    std::fs::write(root.join("ref/table.csv"), "a,b\n1,2\n").expect("write");
    root
}

/// `method`'s answer of a fresh one-shot service, its timings left out, and
/// whether it came from the store; what it answered is then stored, as a
/// one-shot command stores it.
fn answer(root: &Path, method: &str) -> (Value, bool) {
    let (mut service, answer) = ask_fresh(root, method);
    let from_store = service.answers_from_store();
    service.store_answers_of_one_shot();
    (answer, from_store)
}

/// A fresh one-shot service after answering `method`, and its answer.
fn ask_fresh(root: &Path, method: &str) -> (Service, Value) {
    let mut service = Service::new(root.to_owned());
    let answer = ask(&mut service, method);
    (service, answer)
}

fn ask(service: &mut Service, method: &str) -> Value {
    let params = match method {
        "check" => json!({ "def": null }),
        _ => json!({}),
    };
    let mut answer = service
        .handle(method, &params, &mut |_| {})
        .expect("answered");
    answer.as_object_mut().expect("an object").remove("timings");
    answer
}

/// A cold start's answer: the store moved aside first.
fn cold(root: &Path, method: &str) -> Value {
    let store = root.join(STORE);
    let aside = store.with_extension("aside");
    let moved = std::fs::rename(&store, &aside).is_ok();
    let (answer, from_store) = answer(root, method);
    assert!(!from_store);
    if moved {
        std::fs::rename(&aside, &store).expect("put back");
    }
    answer
}

#[test]
fn stored_answers_are_the_answers_a_cold_start_computes() {
    let root = temp_root("same");
    let (check, from_store) = answer(&root, "check");
    assert!(!from_store, "nothing stored yet");
    assert!(
        !check["errors"].as_array().expect("errors").is_empty(),
        "the broken definition is found"
    );
    let (status, _) = answer(&root, "status");
    assert!(root.join(STORE).is_file());
    for (method, first) in [("check", &check), ("status", &status)] {
        let (again, from_store) = answer(&root, method);
        assert!(from_store, "{method} is answered from the store");
        assert_eq!(&again, first, "{method}");
        assert_eq!(again, cold(&root, method), "{method} recomputed");
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A one-shot `check` stores the status beside it, and a one-shot `status`
/// the check: the next one-shot command, whichever it asks, finds it stored.
#[test]
fn a_one_shot_answer_stores_the_other_kind_beside_it() {
    let root = temp_root("other");
    for (first, then) in [("check", "status"), ("status", "check")] {
        let _ = std::fs::remove_file(root.join(STORE));
        let (_, from_store) = answer(&root, first);
        assert!(!from_store, "{first} is answered cold");
        let (other, from_store) = answer(&root, then);
        assert!(
            from_store,
            "{then} after {first} is answered from the store"
        );
        assert_eq!(other, cold(&root, then), "{then} recomputed");
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// What the walk finds wrong — here a name that is not UTF-8 where an
/// input's would be — is no file the fingerprint covers: answers given while
/// it is there are not stored, so once it is gone the next start does not
/// take them back and report it still (it did).
#[test]
fn answers_given_beside_a_problem_of_the_walk_are_not_stored() {
    use std::os::unix::ffi::OsStrExt;
    let root = temp_root("walk-problem");
    let bad = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.tr"));
    std::fs::write(&bad, "x").expect("write");
    let unreadable = |answer: &Value| answer.to_string().contains("root-unreadable");
    for method in ["check", "status"] {
        let (answer, from_store) = answer(&root, method);
        assert!(!from_store);
        assert!(unreadable(&answer), "{method} reports the name: {answer}");
    }
    assert!(
        !root.join(STORE).exists(),
        "nothing stored beside the problem"
    );
    std::fs::remove_file(&bad).expect("remove");
    for method in ["check", "status"] {
        let (answer, _) = answer(&root, method);
        assert!(
            !unreadable(&answer),
            "{method} after the name is gone: {answer}"
        );
        assert_eq!(answer, cold(&root, method), "{method} recomputed");
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

#[test]
fn a_store_that_does_not_fit_the_root_is_never_taken() {
    let root = temp_root("unfit");
    let spec = root.join("s0001/g000025.tr");
    type Spoil = fn(&Path, &Path);
    let spoils: [(&str, Spoil); 10] = [
        ("a spec edited", |_, spec| {
            let text = std::fs::read_to_string(spec).expect("read");
            std::fs::write(
                spec,
                text.replacen("A generated", "An edited, generated", 1),
            )
            .expect("write");
        }),
        (
            "a spec edited in place, its size and time put back",
            |_, spec| {
                let file = std::fs::File::options()
                    .write(true)
                    .open(spec)
                    .expect("open");
                let modified = file.metadata().expect("stat").modified().expect("mtime");
                drop(file);
                let text = std::fs::read_to_string(spec).expect("read");
                let edited = text.replacen("tags: [shaped]", "tags: [shapes]", 1);
                assert_eq!(edited.len(), text.len());
                assert_ne!(edited, text);
                std::fs::write(spec, edited).expect("write");
                let file = std::fs::File::options()
                    .write(true)
                    .open(spec)
                    .expect("open");
                file.set_modified(modified).expect("set the time back");
            },
        ),
        ("reference data edited", |root, _| {
            std::fs::write(root.join("ref/table.csv"), "a,b\n1,3\n3,4\n").expect("write")
        }),
        ("a file added", |root, _| {
            std::fs::write(root.join("s0001/extra.soil"), "extra x =\n  x\n").expect("write")
        }),
        ("a file removed", |root, _| {
            std::fs::remove_file(root.join("s0001/extra.soil")).expect("remove")
        }),
        ("the store torn", |root, _| {
            let store = root.join(STORE);
            let text = std::fs::read(&store).expect("read");
            std::fs::write(&store, &text[..text.len() / 2]).expect("write");
        }),
        ("the store edited", |root, _| {
            let store = root.join(STORE);
            let text = std::fs::read_to_string(&store).expect("read");
            let edited = text.replacen("not-lowered", "not-lowerad", 1);
            assert_ne!(edited, text);
            std::fs::write(&store, edited).expect("write");
        }),
        ("an older format's store", |root, _| {
            let store = root.join(STORE);
            let text = std::fs::read_to_string(&store).expect("read");
            let edited = text.replacen("trellis-answers/1", "trellis-answers/0", 1);
            assert_ne!(edited, text);
            std::fs::write(&store, edited).expect("write");
        }),
        ("another build's store", |root, _| {
            let store = root.join(STORE);
            let text = std::fs::read_to_string(&store).expect("read");
            std::fs::write(
                &store,
                text.replacen("\"build\":\"", "\"build\":\"other ", 1),
            )
            .expect("write");
        }),
        // Last: the store is read while the walk's stamps are gathered, and
        // a walk that cannot vouch for the root (an open question) keeps it
        // untaken all the same.
        ("an open question in the root", |root, _| {
            std::fs::write(root.join("s0001/g000025.question.json"), "{}").expect("write")
        }),
    ];
    for (what, spoil) in spoils {
        // Answered cold and stored, then spoiled; the spec is written just
        // before, so it is racy when stored.
        std::fs::remove_file(root.join(STORE)).ok();
        let text = std::fs::read_to_string(&spec).expect("read");
        std::fs::write(&spec, text).expect("write");
        answer(&root, "status");
        assert!(answer(&root, "status").1, "{what}: stored");
        spoil(&root, &spec);
        let (status, from_store) = answer(&root, "status");
        assert!(!from_store, "{what}: the store is not taken");
        assert_eq!(status, cold(&root, "status"), "{what}");
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

#[test]
fn a_daemon_s_service_loads_the_root_behind_the_stored_answers() {
    let root = temp_root("daemon");
    answer(&root, "check");
    answer(&root, "status");
    let expected = cold(&root, "status");
    let expected_check = cold(&root, "check");
    // A request the store cannot answer loads the root, and reports what a
    // daemon that loaded at its start reports: no file changed.
    let mut started = Service::watching(root.clone(), true);
    assert!(started.start_from_store());
    let refreshed = started
        .handle("refresh", &json!({}), &mut |_| {})
        .expect("answered");
    assert!(!started.answers_from_store());
    assert_eq!(refreshed["timings"]["files_changed"], 0, "{refreshed}");
    drop(started);
    answer(&root, "status");
    // The root moves under a service that serves the store: it loads.
    let mut moved = Service::watching(root.clone(), true);
    assert!(moved.start_from_store());
    assert_eq!(ask(&mut moved, "check"), expected_check);
    assert!(moved.answers_from_store());
    let spec = root.join("s0002/g000045.tr");
    let text = std::fs::read_to_string(&spec).expect("read");
    std::fs::write(&spec, text.replacen("-> I64\n```", "-> Bool\n```", 1)).expect("write");
    let after = ask(&mut moved, "check");
    assert!(!moved.answers_from_store(), "the edit is loaded");
    assert_ne!(after, expected_check, "the edit fails a check");
    std::fs::write(&spec, text).expect("put back");
    drop(moved);
    // Nothing moves: the warm-up takes over, and answers as the store did.
    answer(&root, "status");
    let service = Service::watching(root.clone(), true);
    let service = std::sync::Mutex::new(service);
    assert!(service.lock().expect("lock").start_from_store());
    Service::warm_up(&service);
    let mut service = service.into_inner().expect("not poisoned");
    assert_eq!(ask(&mut service, "status"), expected);
    assert!(!service.answers_from_store(), "served from the loaded root");
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// An edit while the load behind the stored answers runs waits for that load
/// and is applied to what it loaded, as any edit after a start: the root is
/// read once, not a second time beside it on the same cores.
#[test]
fn an_edit_during_the_load_behind_the_store_waits_for_it() {
    let root = temp_root("edit-warming");
    answer(&root, "check");
    answer(&root, "status");
    let spec = root.join("s0002/g000045.tr");
    let text = std::fs::read_to_string(&spec).expect("read");
    let edited = text.replacen("-> I64\n```", "-> Bool\n```", 1);
    std::fs::write(&spec, &edited).expect("write");
    let expected_check = cold(&root, "check");
    std::fs::write(&spec, &text).expect("put back");
    answer(&root, "check");
    let service = std::sync::Arc::new(std::sync::Mutex::new(Service::watching(root.clone(), true)));
    assert!(service.lock().expect("lock").start_from_store());
    let warming = {
        let service = std::sync::Arc::clone(&service);
        std::thread::spawn(move || Service::warm_up(&service))
    };
    // Until the thread has started its load (or, on a quick machine,
    // already handed it over).
    loop {
        let service = service.lock().expect("lock");
        if service.warming_up() || !service.answers_from_store() {
            break;
        }
        drop(service);
        std::thread::yield_now();
    }
    std::fs::write(&spec, &edited).expect("write");
    let after = ask(&mut service.lock().expect("lock"), "check");
    warming.join().expect("the load behind the store");
    let service = service.lock().expect("lock");
    assert_eq!(after, expected_check, "the edit is answered");
    assert!(!service.answers_from_store());
    assert_eq!(
        service.full_loads(),
        0,
        "the load behind the store was taken over"
    );
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A one-shot request walks the root once whatever the store holds: none,
/// one that fits (no load), or one the root moved under (the walk that
/// compared its stamps is the load's).
#[test]
fn a_request_walks_the_root_once_whatever_the_store_holds() {
    let root = temp_root("walks");
    let walks = |root: &Path| {
        let (mut service, _) = ask_fresh(root, "check");
        let (walks, from_store) = (service.walks(), service.answers_from_store());
        service.store_answers(false);
        (walks, from_store)
    };
    assert_eq!(walks(&root), (1, false), "no store");
    assert_eq!(walks(&root), (1, true), "a store that fits");
    let spec = root.join("s0002/g000045.tr");
    let text = std::fs::read_to_string(&spec).expect("read");
    std::fs::write(&spec, format!("{text}\nMoved.\n")).expect("write");
    assert_eq!(walks(&root), (1, false), "a store the root moved under");
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A daemon stores each kind of answer once it has given it, not only its
/// first: asked `check` and then `status`, its next start answers both from
/// the store, as a cold start would.
#[test]
fn a_daemon_stores_each_kind_of_answer_once_it_is_out() {
    let root = temp_root("kinds");
    let from_store = |method: &str| {
        let (service, answer) = ask_fresh(&root, method);
        (answer, service.answers_from_store())
    };
    let mut daemon = Service::watching(root.clone(), true);
    ask(&mut daemon, "check");
    assert!(daemon.untidy());
    daemon.tidy();
    assert!(from_store("check").1, "the first answer is stored");
    assert!(!from_store("status").1, "status was not asked yet");
    let status = ask(&mut daemon, "status");
    assert!(daemon.untidy(), "an answer leaves work for the tidy");
    daemon.tidy();
    assert!(!daemon.untidy());
    let (stored, taken) = from_store("status");
    assert!(taken, "status is stored once it is out");
    assert_eq!(stored, status);
    assert_eq!(stored, cold(&root, "status"));
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A root whose every input was modified "just now" (1.5 s ago): racy when
/// read at once. Returns it, that time and how many inputs it has.
fn racy_root(name: &str) -> (PathBuf, SystemTime, usize) {
    let root = temp_root(name);
    let written = SystemTime::now() - Duration::from_millis(1500);
    let walked = trellis_service::walk::walk(&root);
    for path in walked.files.iter().chain(&walked.data) {
        set_modified(&root.join(path), written);
    }
    (root, written, walked.files.len() + walked.data.len())
}

fn set_modified(path: &Path, time: SystemTime) {
    let file = std::fs::File::options().write(true).open(path);
    file.and_then(|file| file.set_modified(time))
        .expect("set mtime");
}

/// Waits until files modified at `written` are no longer racy.
fn wait_until_settled(written: SystemTime) {
    let settled_at = written + Duration::from_millis(2100);
    if let Ok(wait) = settled_at.duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
}

/// The paths the store at `root` holds as racy.
fn stored_racy(root: &Path) -> Vec<String> {
    let store = std::fs::read_to_string(root.join(STORE)).expect("a store");
    let body: Value =
        serde_json::from_str(store.split_once('\n').expect("a body").1).expect("JSON");
    (body["racy"].as_array().expect("a list").iter())
        .map(|entry| entry[0].as_str().expect("a path").to_owned())
        .collect()
}

/// The racy files a start reads back as they were answered, well after they
/// were modified, are racy no more: the store is written again without them,
/// and later starts stat them instead of reading them. A root written just
/// before its first load has every file racy.
#[test]
fn racy_files_read_back_as_answered_are_settled() {
    let (root, written, inputs) = racy_root("settle");
    let (expected, from_store) = answer(&root, "status");
    assert!(!from_store);
    assert_eq!(
        stored_racy(&root).len(),
        inputs,
        "every file was modified just before it was read"
    );
    wait_until_settled(written);
    assert_eq!(answer(&root, "status"), (expected.clone(), true));
    assert!(stored_racy(&root).is_empty(), "settled");
    assert_eq!(answer(&root, "status"), (expected, true), "still taken");
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A daemon settles its racy files as it stops: those whose stamp and bytes
/// are still the ones it read are stored as any other file, so the next
/// start stats them; one rewritten in place with its stamp put back is not,
/// and that start reads it, sees it moved, and does not take the store.
#[test]
fn a_stopping_daemon_settles_its_racy_files_but_not_a_moved_one() {
    let (root, written, inputs) = racy_root("settle-daemon");
    let mut daemon = Service::watching(root.clone(), true);
    let expected = ask(&mut daemon, "status");
    wait_until_settled(written);
    // One spec rewritten in place after the load, size and time put back.
    let spec = root.join("s0002/g000045.tr");
    let text = std::fs::read_to_string(&spec).expect("read");
    let moved = text.replacen("-> I64\n```", "-> U64\n```", 1);
    assert_eq!(moved.len(), text.len());
    std::fs::write(&spec, &moved).expect("write");
    set_modified(&spec, written);
    assert_eq!(daemon.settle_racy(), inputs - 1, "all but the moved spec");
    daemon.store_answers(true);
    drop(daemon);
    assert_eq!(stored_racy(&root), ["s0002/g000045.tr"]);
    // The next start reads the moved spec and computes anew.
    let (status, from_store) = answer(&root, "status");
    assert!(!from_store, "the moved spec is seen");
    assert_eq!(status, cold(&root, "status"));
    assert_ne!(status, expected, "the moved spec changed the answer");
    std::fs::remove_dir_all(&root).expect("clean up");
}
