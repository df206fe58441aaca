//! The consumers of named accesses, on a thread of their own.
//!
//! The analysis is a pipeline of three threads, so that a two-core machine
//! keeps both cores busy:
//!
//! 1. the caller's thread reads the trace and names each access
//!    (the driver module);
//! 2. the consumer thread (this module) counts each batch into the lookup
//!    table ([`super::lookup`]) and the caller's extra consumer (a
//!    [`SpanSink`]: the pattern states) and copies it into the access
//!    list's columns ([`super::store::AccessWriter`]);
//! 3. the access list's own thread encodes and writes the dataset;
//! 4. when the caller hands one in, a follower thread feeds each batch,
//!    once the consumer thread is done with it, to the caller's
//!    [`AccessSink`] (the cache model and the reuse distances), and gives
//!    the batch back to the naming thread.
//!
//! Batches travel by ownership, never by copy: the naming thread sends a
//! full batch and takes an emptied one back. At most [`IN_FLIGHT`] batches
//! wait for each consumer thread, so memory stays at a few megabytes of
//! batches whatever the trace's length.
//!
//! The consumers index by address from a variable's span, which the naming
//! thread sends with the batch that first may use the variable (every new
//! variable row's span, in row order: spans never change once a row exists,
//! see the span of an input's source).
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::access::{AccessSink, NamedAccess, SpanSink, VarId};
use super::error::FilterError;
use super::lookup::LookupTable;
use super::model::Span;
use super::store::{AccessList, AccessWriter};

/// Batches waiting for the consumer thread at most (and for the follower).
///
/// Why 16 (5 MiB of batches a queue): five threads share two cores, and a
/// batch takes a consumer about a third of a millisecond, less than the
/// scheduler's time slice. With 4, a thread that lost its core for a slice
/// soon stalled the others (the naming thread waits for emptied batches),
/// and the cores were busy 85% of the time; with 16 they are busy 92%, and
/// the analysis of the 256 x 256 matrix multiply took 11.1 s instead of
/// 12.5 to 14.5 s. 32 and 64 gained nothing more.
const IN_FLIGHT: usize = 16;

/// One batch for the consumers.
struct Work {
    /// Named accesses, their times stamped.
    batch: Vec<NamedAccess>,
    /// Spans of the variable rows created since the previous batch.
    spans: Vec<Span>,
    /// The traced region the batch belongs to.
    region: u32,
}

/// What the consumers built, once every batch is in.
pub(crate) struct Consumed<S, F> {
    pub(crate) lookup: LookupTable,
    pub(crate) extra: Option<S>,
    pub(crate) list: AccessList,
    /// The follower's sink, when one was handed in.
    pub(crate) follow: Option<F>,
}

/// The consumers as the thread owns them.
struct Consumers<S> {
    lookup: LookupTable,
    /// The caller's consumer, when the source's spans are final.
    extra: Option<S>,
    writer: AccessWriter,
    /// Every variable row's span, by row.
    spans: Vec<Span>,
}

impl<S: SpanSink> Consumers<S> {
    /// Counts one batch and appends it to the access list.
    fn take(&mut self, w: &Work) -> Result<(), FilterError> {
        let first = self.spans.len();
        for (k, s) in w.spans.iter().enumerate() {
            if !super::byvar::sorted_by_var(s) {
                self.writer.leave_out_of_by_var(VarId((first + k) as u32));
            }
        }
        self.spans.extend_from_slice(&w.spans);
        let spans = &self.spans;
        let span = |v: VarId| spans.get(v.index()).copied().unwrap_or_default();
        self.lookup.add(&w.batch, &span)?;
        if let Some(p) = &mut self.extra {
            p.add(&w.batch, &|v| {
                let s = span(v);
                (s.base, s.elem)
            });
        }
        self.writer.push(&w.batch, w.region)
    }
}

/// The consumer thread, seen from the naming thread.
pub(crate) struct ConsumerThread<S, F> {
    to: Option<SyncSender<Work>>,
    back: Receiver<Vec<NamedAccess>>,
    thread: Option<JoinHandle<Result<Consumed<S, F>, FilterError>>>,
    /// Variable rows whose spans were sent.
    spans_sent: usize,
}

impl<S: SpanSink, F: AccessSink + Send + 'static> ConsumerThread<S, F> {
    /// Starts the thread with its consumers: `lookup` is the empty lookup
    /// table (spilling or not), `extra` is the caller's own
    /// (if any), `writer` is where the access list goes; `follow`, when
    /// given, is fed every batch after them on a thread of its own.
    pub(crate) fn start(
        lookup: LookupTable,
        extra: Option<S>,
        writer: AccessWriter,
        follow: Option<F>,
    ) -> Result<ConsumerThread<S, F>, FilterError> {
        let (to, from) = sync_channel::<Work>(IN_FLIGHT);
        let (give_back, back) = sync_channel::<Vec<NamedAccess>>(2 * IN_FLIGHT + 2);
        let c = Consumers {
            lookup,
            extra,
            writer,
            spans: Vec::new(),
        };
        let follow = match follow {
            Some(f) => Some(Follower::start(f, give_back.clone())?),
            None => None,
        };
        let thread = std::thread::Builder::new()
            .name("mapvis-tables".into())
            .spawn(move || run(c, from, give_back, follow))
            .map_err(|source| {
                super::error::thread_not_started(
                    "analysis consumer",
                    "(analysis consumer thread)".into(),
                    source,
                )
            })?;
        Ok(ConsumerThread {
            to: Some(to),
            back,
            thread: Some(thread),
            spans_sent: 0,
        })
    }

    /// Hands `batch` (times stamped) of `region` over, with the spans of
    /// the variable rows up to `vars` not sent yet (`span` gives them), and
    /// returns an empty batch to fill next: one the thread gave back when
    /// there is one.
    pub(crate) fn send(
        &mut self,
        batch: Vec<NamedAccess>,
        region: u32,
        vars: usize,
        span: &dyn Fn(VarId) -> Span,
    ) -> Result<Vec<NamedAccess>, FilterError> {
        let spans = (self.spans_sent..vars)
            .map(|v| span(VarId(v as u32)))
            .collect();
        self.spans_sent = self.spans_sent.max(vars);
        let cap = batch.capacity();
        let work = Work {
            batch,
            spans,
            region,
        };
        let sent = self.to.as_ref().is_some_and(|t| t.send(work).is_ok());
        if !sent {
            // The thread stopped: its error says why.
            self.finish()?;
            return Err(stopped());
        }
        Ok(self
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(cap)))
    }

    /// Waits for every batch to be consumed and returns what was built.
    pub(crate) fn finish(&mut self) -> Result<Consumed<S, F>, FilterError> {
        self.to = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(end) => super::error::joined(
                end,
                "analysis consumer",
                "(analysis consumer thread)".as_ref(),
            ),
            None => Err(stopped()),
        }
    }
}

impl<S, F> Drop for ConsumerThread<S, F> {
    /// An analysis abandoned on an error still stops its threads (and
    /// closes the dataset's files) before its folder is removed.
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn stopped() -> FilterError {
    FilterError::Write {
        path: "(analysis consumer thread)".into(),
        source: std::io::Error::other("the analysis consumer thread stopped"),
    }
}

/// The thread's loop: consume each batch, give the emptied batch back.
fn run<S: SpanSink, F: AccessSink + Send + 'static>(
    mut c: Consumers<S>,
    from: Receiver<Work>,
    give_back: SyncSender<Vec<NamedAccess>>,
    mut follow: Option<Follower<F>>,
) -> Result<Consumed<S, F>, FilterError> {
    for w in from {
        c.take(&w)?;
        let mut b = w.batch;
        if let Some(f) = &mut follow {
            b = match f.pass(b) {
                None => continue,
                // The feed's thread stopped: it answers at the end.
                Some(b) => b,
            };
        }
        b.clear();
        let _ = give_back.try_send(b);
    }
    let follow = match follow {
        Some(f) => Some(f.finish()?),
        None => None,
    };
    Ok(Consumed {
        lookup: c.lookup,
        extra: c.extra,
        list: c.writer.finish()?,
        follow,
    })
}

/// The follower thread, seen from the consumer thread: it feeds each batch
/// to the caller's sink and gives it back to the naming thread.
struct Follower<F> {
    to: Option<SyncSender<Vec<NamedAccess>>>,
    thread: Option<JoinHandle<F>>,
}

impl<F: AccessSink + Send + 'static> Follower<F> {
    fn start(
        mut feed: F,
        give_back: SyncSender<Vec<NamedAccess>>,
    ) -> Result<Follower<F>, FilterError> {
        let (to, from) = sync_channel::<Vec<NamedAccess>>(IN_FLIGHT);
        let thread = std::thread::Builder::new()
            .name("mapvis-follow".into())
            .spawn(move || {
                for mut b in from {
                    feed.accesses(&b);
                    b.clear();
                    let _ = give_back.try_send(b);
                }
                feed
            })
            .map_err(|source| {
                super::error::thread_not_started(
                    "analysis follower",
                    "(analysis follower thread)".into(),
                    source,
                )
            })?;
        Ok(Follower {
            to: Some(to),
            thread: Some(thread),
        })
    }

    /// Hands `b` over; gives it back when the thread has stopped.
    fn pass(&mut self, b: Vec<NamedAccess>) -> Option<Vec<NamedAccess>> {
        match self.to.as_ref().map(|t| t.send(b)) {
            Some(Ok(())) => None,
            Some(Err(e)) => Some(e.0),
            None => None,
        }
    }

    /// Waits for the thread to feed every batch, and returns the feed.
    fn finish(mut self) -> Result<F, FilterError> {
        self.to = None;
        let end = self.thread.take().map(|t| t.join().map(Ok));
        match end {
            Some(end) => super::error::joined(
                end,
                "analysis follower",
                "(analysis follower thread)".as_ref(),
            ),
            None => Err(stopped()),
        }
    }
}

impl<F> Drop for Follower<F> {
    /// Stops the thread with the analysis that dropped it.
    fn drop(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
