//! The queues from a server's connections to their writer threads, bounded in
//! bytes: per connection and across all of a server's connections.
//!
//! A frame counts from the moment it is queued until the writer has written all
//! of it, so a client that reads nothing holds at most its connection's share.
//! A response waits for room (the connection's reading side waits with it, so
//! a client that does not read its answers is not read from either: its requests
//! stay in its own socket buffer); a notification never waits and is dropped
//! when there is no room. One exception keeps every connection moving: a
//! connection with nothing queued may always queue one frame, however large
//! (the frame limit bounds it), as long as the server's total allows it — or
//! nothing at all is queued anywhere.
//!
//! All queues share one lock: a frame's place in its connection's queue and
//! the server-wide total change together, and a response waiting for the total
//! wakes when any connection frees room.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// The default bound on what may wait for one client: 1 MiB.
pub const DEFAULT_OUTBOX_BYTES: usize = 1 << 20;

/// The default bound on what may wait for all of a server's clients together:
/// 64 MiB, four frames of the largest size.
pub const DEFAULT_OUTBOX_TOTAL_BYTES: usize = 64 << 20;

/// The queues of one server's connections.
pub(crate) struct Outboxes {
    ledger: Mutex<Ledger>,
    /// Signalled whenever bytes are freed or a queue closes.
    room: Condvar,
    per_connection: usize,
    total: usize,
}

#[derive(Default)]
struct Ledger {
    queued: usize,
    next_id: u64,
    queues: BTreeMap<u64, Queue>,
}

struct Queue {
    frames: VecDeque<Vec<u8>>,
    /// Queued or being written.
    bytes: usize,
    /// The writer gave up (the client is gone or does not read).
    closed: bool,
    /// The connection will queue nothing more.
    finished: bool,
    /// Signalled when a frame is queued or the queue is finished.
    ready: Arc<Condvar>,
}

impl Outboxes {
    pub fn new(per_connection: usize, total: usize) -> Arc<Outboxes> {
        Arc::new(Outboxes {
            ledger: Mutex::new(Ledger::default()),
            room: Condvar::new(),
            per_connection,
            total,
        })
    }

    /// Opens one connection's queue: its sending end and its writer's end.
    pub fn open(self: &Arc<Self>) -> (Outbox, WriterQueue) {
        let mut ledger = self.lock();
        ledger.next_id += 1;
        let id = ledger.next_id;
        let ready = Arc::new(Condvar::new());
        ledger.queues.insert(
            id,
            Queue {
                frames: VecDeque::new(),
                bytes: 0,
                closed: false,
                finished: false,
                ready: Arc::clone(&ready),
            },
        );
        let outbox = Outbox {
            outboxes: Arc::clone(self),
            id,
        };
        let writer = WriterQueue {
            outboxes: Arc::clone(self),
            id,
            ready,
        };
        (outbox, writer)
    }

    /// What all queues hold now (tests and diagnostics).
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.lock().queued
    }

    fn lock(&self) -> MutexGuard<'_, Ledger> {
        // A panic never happens under this lock; recover the data if one did.
        self.ledger
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn fits(&self, ledger: &Ledger, queue: &Queue, size: usize) -> bool {
        let own = queue.bytes == 0 || queue.bytes + size <= self.per_connection;
        let all = ledger.queued == 0 || ledger.queued + size <= self.total;
        own && all
    }
}

/// The sending end of one connection's queue; dropping it lets the writer end
/// once it has written what is queued.
pub(crate) struct Outbox {
    outboxes: Arc<Outboxes>,
    id: u64,
}

impl Outbox {
    /// Queues a frame that may be lost (a notification); never waits.
    pub fn offer(&self, frame: Vec<u8>) -> io::Result<()> {
        let outboxes = &self.outboxes;
        let mut ledger = outboxes.lock();
        let ledger = &mut *ledger;
        let Some(queue) = ledger.queues.get(&self.id) else {
            return Err(gone());
        };
        if queue.closed {
            return Err(gone());
        }
        if !outboxes.fits(ledger, queue, frame.len()) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "the client is not reading; the notification was dropped",
            ));
        }
        push(ledger, self.id, frame);
        Ok(())
    }

    /// Queues a frame that must not be lost (a response), waiting for room;
    /// the writer's timeout bounds the wait.
    pub fn send(&self, frame: Vec<u8>) -> io::Result<()> {
        let outboxes = &self.outboxes;
        let mut guard = outboxes.lock();
        loop {
            let ledger = &mut *guard;
            let Some(queue) = ledger.queues.get(&self.id) else {
                return Err(gone());
            };
            if queue.closed {
                return Err(gone());
            }
            if outboxes.fits(ledger, queue, frame.len()) {
                push(ledger, self.id, frame);
                return Ok(());
            }
            guard = outboxes
                .room
                .wait(guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let mut ledger = self.outboxes.lock();
        if let Some(queue) = ledger.queues.get_mut(&self.id) {
            queue.finished = true;
            queue.ready.notify_all();
        }
    }
}

fn push(ledger: &mut Ledger, id: u64, frame: Vec<u8>) {
    ledger.queued += frame.len();
    if let Some(queue) = ledger.queues.get_mut(&id) {
        queue.bytes += frame.len();
        queue.frames.push_back(frame);
        queue.ready.notify_all();
    }
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the client was dropped")
}

/// The writer's end of one connection's queue. Dropping it releases whatever
/// is still counted against the connection.
pub(crate) struct WriterQueue {
    outboxes: Arc<Outboxes>,
    id: u64,
    ready: Arc<Condvar>,
}

impl WriterQueue {
    /// The next frame to write, waiting for one; `None` once the sending end is
    /// gone and everything queued has been handed out. The frame still counts
    /// until [`WriterQueue::written`].
    pub fn next(&self) -> Option<Vec<u8>> {
        let mut guard = self.outboxes.lock();
        loop {
            let queue = guard.queues.get_mut(&self.id)?;
            if let Some(frame) = queue.frames.pop_front() {
                return Some(frame);
            }
            if queue.finished || queue.closed {
                return None;
            }
            guard = self
                .ready
                .wait(guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A frame of `size` bytes has been written: its room is free.
    pub fn written(&self, size: usize) {
        let mut ledger = self.outboxes.lock();
        ledger.queued -= size;
        if let Some(queue) = ledger.queues.get_mut(&self.id) {
            queue.bytes -= size;
        }
        self.outboxes.room.notify_all();
    }

    /// The client is gone or does not read: drops what is queued, and a
    /// response waiting for room learns it at once.
    pub fn close(&self) {
        let mut ledger = self.outboxes.lock();
        let ledger = &mut *ledger;
        if let Some(queue) = ledger.queues.get_mut(&self.id) {
            queue.closed = true;
            queue.frames.clear();
            ledger.queued -= queue.bytes;
            queue.bytes = 0;
        }
        self.outboxes.room.notify_all();
    }
}

impl Drop for WriterQueue {
    fn drop(&mut self) {
        self.close();
        self.outboxes.lock().queues.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;
    use std::time::Duration;

    #[test]
    fn a_connection_holds_its_share_and_one_frame_always_fits() {
        let outboxes = Outboxes::new(100, 1000);
        let (outbox, writer) = outboxes.open();
        // An empty queue takes a frame over the share…
        outbox.send(vec![b'a'; 150]).expect("queued");
        // …but nothing more, not even a small notification.
        let dropped = outbox.offer(vec![b'n'; 10]).expect_err("no room");
        assert_eq!(dropped.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(outboxes.queued(), 150);
        let frame = writer.next().expect("a frame");
        assert_eq!(frame.len(), 150);
        // Handed to the writer is still held until written.
        assert!(outbox.offer(vec![b'n'; 10]).is_err());
        writer.written(frame.len());
        outbox.offer(vec![b'n'; 10]).expect("room again");
        outbox.offer(vec![b'n'; 90]).expect("exactly the share");
        assert!(outbox.offer(vec![b'n'; 1]).is_err());
        assert_eq!(outboxes.queued(), 100);
    }

    #[test]
    fn a_response_waits_for_room_and_a_closed_queue_refuses_it() {
        let outboxes = Outboxes::new(100, 1000);
        let (outbox, writer) = outboxes.open();
        outbox.send(vec![b'a'; 80]).expect("queued");
        let waiting = thread::spawn(move || {
            let sent = outbox.send(vec![b'b'; 80]);
            (outbox, sent)
        });
        thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "the second answer waits for room");
        let frame = writer.next().expect("a frame");
        writer.written(frame.len());
        let (outbox, sent) = waiting.join().expect("joins");
        sent.expect("queued once room was free");
        // A writer that gives up frees everything and refuses what waits.
        outbox.send(vec![b'c'; 20]).expect("fits");
        let waiting = thread::spawn(move || outbox.send(vec![b'd'; 80]));
        thread::sleep(Duration::from_millis(50));
        writer.close();
        let refused = waiting.join().expect("joins").expect_err("gone");
        assert_eq!(refused.kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(outboxes.queued(), 0);
    }

    #[test]
    fn the_total_bounds_all_connections_together() {
        let outboxes = Outboxes::new(100, 150);
        let (first, first_writer) = outboxes.open();
        let (second, _second_writer) = outboxes.open();
        first.send(vec![b'a'; 100]).expect("queued");
        // The second connection's queue is empty, but the total is not.
        assert!(second.offer(vec![b'b'; 60]).is_err());
        second.offer(vec![b'b'; 50]).expect("within the total");
        let waiting = thread::spawn(move || second.send(vec![b'c'; 40]));
        thread::sleep(Duration::from_millis(50));
        assert!(!waiting.is_finished(), "waits for the total");
        // Room freed on the first connection lets the second go on.
        let frame = first_writer.next().expect("a frame");
        first_writer.written(frame.len());
        waiting.join().expect("joins").expect("queued");
        assert_eq!(outboxes.queued(), 90);
        drop(first);
        assert!(first_writer.next().is_none(), "finished and drained");
    }

    #[test]
    fn a_finished_queue_is_drained_before_the_writer_ends() {
        let outboxes = Outboxes::new(100, 1000);
        let (outbox, writer) = outboxes.open();
        outbox.send(b"one".to_vec()).expect("queued");
        outbox.send(b"two".to_vec()).expect("queued");
        drop(outbox);
        assert_eq!(writer.next().as_deref(), Some(&b"one"[..]));
        writer.written(3);
        assert_eq!(writer.next().as_deref(), Some(&b"two"[..]));
        writer.written(3);
        assert_eq!(writer.next(), None);
        drop(writer);
        assert_eq!(outboxes.queued(), 0);
    }
}
