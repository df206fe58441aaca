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
//! 3. the access list's own thread encodes and writes the dataset.
//!
//! Batches travel by ownership, never by copy: the naming thread sends a
//! full batch and takes an emptied one back. At most [`IN_FLIGHT`] batches
//! wait, so memory stays at a few batches whatever the trace's length.
//!
//! The consumers index by address from a variable's span, which the naming
//! thread sends with the batch that first may use the variable (every new
//! variable row's span, in row order: spans never change once a row exists,
//! see the span of an input's source).
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::access::{NamedAccess, SpanSink, VarId};
use super::error::FilterError;
use super::lookup::LookupTable;
use super::model::Span;
use super::store::{AccessList, AccessWriter};

/// Batches waiting for the consumer thread at most.
const IN_FLIGHT: usize = 4;

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
pub(crate) struct Consumed<S> {
    pub(crate) lookup: LookupTable,
    pub(crate) extra: Option<S>,
    pub(crate) list: AccessList,
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
pub(crate) struct ConsumerThread<S> {
    to: Option<SyncSender<Work>>,
    back: Receiver<Vec<NamedAccess>>,
    thread: Option<JoinHandle<Result<Consumed<S>, FilterError>>>,
    /// Variable rows whose spans were sent.
    spans_sent: usize,
}

impl<S: SpanSink> ConsumerThread<S> {
    /// Starts the thread with its consumers: `lookup` is the empty lookup
    /// table (spilling or not), `extra` is the caller's own
    /// (if any), `writer` is where the access list goes.
    pub(crate) fn start(
        lookup: LookupTable,
        extra: Option<S>,
        writer: AccessWriter,
    ) -> Result<ConsumerThread<S>, FilterError> {
        let (to, from) = sync_channel::<Work>(IN_FLIGHT);
        let (give_back, back) = sync_channel::<Vec<NamedAccess>>(IN_FLIGHT + 2);
        let c = Consumers {
            lookup,
            extra,
            writer,
            spans: Vec::new(),
        };
        let thread = std::thread::Builder::new()
            .name("mapvis-tables".into())
            .spawn(move || run(c, from, give_back))
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
    pub(crate) fn finish(&mut self) -> Result<Consumed<S>, FilterError> {
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

impl<S> Drop for ConsumerThread<S> {
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
fn run<S: SpanSink>(
    mut c: Consumers<S>,
    from: Receiver<Work>,
    give_back: SyncSender<Vec<NamedAccess>>,
) -> Result<Consumed<S>, FilterError> {
    for w in from {
        c.take(&w)?;
        let mut b = w.batch;
        b.clear();
        let _ = give_back.try_send(b);
    }
    Ok(Consumed {
        lookup: c.lookup,
        extra: c.extra,
        list: c.writer.finish()?,
    })
}
