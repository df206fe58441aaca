//! The pins' own accesses: which traced accesses GL_START and GL_STOP make
//! themselves, so that every reader of a trace leaves the same ones out.
//!
//! The pins are Valgrind client requests (`pins/gleipnir.h`). Each fills a
//! block of [`STOP_ARG_WORDS`] words on the stack (`_zzq_args`) and then
//! executes the request's magic sequence; the tool sees the request only
//! at its end. Inside a region that gives two kinds of traffic that is the
//! tracer's, not the program's:
//!
//! - GL_STOP's argument stores, just *before* its [`RegionStop`] event: at
//!   most [`STOP_ARG_WORDS`] stores of the stopping thread into
//!   `arg_block`. They are recognised only when the event arrives, so a
//!   reader holds back its last [`HOLD_BACK`] accesses ([`stop_arg_stores`]
//!   picks them out).
//! - GL_START's store of the request's result (`_zzq_result`), the
//!   starting thread's next access after its [`RegionStart`], made by the
//!   instruction right after the request ([`StartResult`]).
//!
//! With debug information the same accesses also name the client-request
//! locals ([`is_client_request_local`]): a Gleipnir text trace, which
//! carries names but no instruction addresses, can only be filtered that
//! way.

use super::format::{RegionStart, RegionStop};

/// Words (8 bytes each) of a client request's argument block: GL_STOP
/// stores this many just before its request.
pub const STOP_ARG_WORDS: usize = 6;

/// How many of its latest accesses a reader holds back until the next
/// event shows whether they were GL_STOP's own stores: the six stores,
/// with room for ten accesses of other threads interleaved with them.
pub const HOLD_BACK: usize = 16;

/// Bytes of the magic sequence's last instruction (`xchg %rbx,%rbx` on
/// x86-64), at the innermost frame's ip of [`RegionStart`]: the store of
/// the request's result follows it.
const REQUEST_TAIL_BYTES: u64 = 3;

/// Prefix of the locals Valgrind's client-request macros declare
/// (`_zzq_args`, `_zzq_result`).
const CLIENT_REQUEST_PREFIX: &str = "_zzq_";

/// Whether `name` (a variable's name, possibly with an element path such
/// as `_zzq_args[5]`) is one of the client-request macros' locals.
pub fn is_client_request_local(name: &str) -> bool {
    name.starts_with(CLIENT_REQUEST_PREFIX)
}

/// One access as the pins' rules see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// The thread that made it.
    pub tid: u32,
    /// Whether it is a store (not a load or a modify).
    pub store: bool,
    /// The data address.
    pub addr: u64,
}

/// Which of the `recent` accesses (oldest first; at most the last
/// [`HOLD_BACK`] of the trace before `stop`) are GL_STOP's own argument
/// stores: walking back from the newest, the stores of the stopping thread
/// into its argument block, at most [`STOP_ARG_WORDS`] of them. Accesses of
/// other threads are passed over (a thread switch may fall between the
/// stores); the stopping thread's first access of any other kind ends the
/// walk, since its own traffic before the macro is the program's. An
/// unknown block (`arg_block` 0) gives none. Returns the indices into
/// `recent`, newest first, so removing them in that order keeps the
/// others' positions. O(`recent`).
pub fn stop_arg_stores(recent: &[Seen], stop: &RegionStop) -> Vec<usize> {
    let mut own = Vec::new();
    if stop.arg_block == 0 {
        return own;
    }
    let end = stop.arg_block + 8 * STOP_ARG_WORDS as u64;
    for (i, a) in recent.iter().enumerate().rev() {
        if own.len() == STOP_ARG_WORDS {
            break;
        }
        if a.tid != stop.tid {
            continue;
        }
        if !(a.store && a.addr >= stop.arg_block && a.addr < end) {
            break;
        }
        own.push(i);
    }
    own
}

/// GL_START's store of its request's result, still to come: the starting
/// thread's next access, when it is a store by the instruction after the
/// request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartResult {
    tid: u32,
    ip: u64,
}

/// What [`StartResult::check`] says of one access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Another thread's access: keep it, and keep watching.
    Watching,
    /// The result store: leave it out; the watch is over.
    Own,
    /// The starting thread's next access is the program's: the watch is
    /// over.
    Program,
}

impl StartResult {
    /// The result store to expect after `start`; `None` when the event
    /// carries no call stack (the request's address is unknown) or came
    /// from no client request (argument block 0: a region by code, which
    /// begins at the program's own instruction).
    pub fn after(start: &RegionStart) -> Option<StartResult> {
        if start.arg_block == 0 {
            return None;
        }
        start.frames.first().map(|f| StartResult {
            tid: start.tid,
            ip: f.0 + REQUEST_TAIL_BYTES,
        })
    }

    /// Whether the access of thread `tid` by instruction `ip` (a store when
    /// `store`) is the result store.
    pub fn check(&self, tid: u32, ip: u64, store: bool) -> Verdict {
        if tid != self.tid {
            Verdict::Watching
        } else if store && ip == self.ip {
            Verdict::Own
        } else {
            Verdict::Program
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: u64 = 0x7ff0_0100;

    fn stop(tid: u32) -> RegionStop {
        RegionStop {
            id: 1,
            tid,
            arg_block: BLOCK,
            time: 0,
        }
    }

    fn store(tid: u32, addr: u64) -> Seen {
        Seen {
            tid,
            store: true,
            addr,
        }
    }

    fn args(tid: u32) -> Vec<Seen> {
        (0..6).map(|k| store(tid, BLOCK + 8 * k)).collect()
    }

    #[test]
    fn the_six_stores_before_the_stop_are_the_pins() {
        let mut recent = vec![store(1, 0x1000)];
        recent.extend(args(1));
        assert_eq!(stop_arg_stores(&recent, &stop(1)), vec![6, 5, 4, 3, 2, 1]);
        // Another thread's stop, or an unknown block: none.
        assert!(stop_arg_stores(&recent, &stop(2)).is_empty());
        let unknown = RegionStop {
            arg_block: 0,
            ..stop(1)
        };
        assert!(stop_arg_stores(&recent, &unknown).is_empty());
    }

    /// The case where the three readers once differed: another thread's
    /// access between the argument stores and the stop. The namer stopped
    /// at it and kept all six stores as the program's; the memtrace export
    /// looked at the last six accesses of any thread and let the first
    /// store through. All six are the pins'.
    #[test]
    fn another_threads_access_between_them_is_passed_over() {
        let mut recent = args(1);
        recent.insert(3, store(2, 0x2000));
        recent.push(Seen {
            tid: 2,
            store: false,
            addr: 0x2008,
        });
        assert_eq!(stop_arg_stores(&recent, &stop(1)), vec![6, 5, 4, 2, 1, 0]);
    }

    /// The stopping thread's own earlier store into the block (the same
    /// stack slot, reused by an earlier GL_STOP or by the program) is not
    /// taken once one of its other accesses lies between.
    #[test]
    fn the_walk_ends_at_the_threads_other_access() {
        let mut recent = vec![store(1, BLOCK), store(1, 0x1000)];
        recent.extend(args(1).into_iter().skip(3));
        assert_eq!(stop_arg_stores(&recent, &stop(1)), vec![4, 3, 2]);
    }

    #[test]
    fn the_result_store_is_the_starting_threads_next_access() {
        let start = RegionStart {
            id: 1,
            tid: 1,
            arg_block: BLOCK,
            frames: vec![(0x401000, 0, 0)],
            time: 0,
        };
        let r = StartResult::after(&start).unwrap();
        assert_eq!(r.check(2, 0x401003, true), Verdict::Watching);
        assert_eq!(r.check(1, 0x401003, true), Verdict::Own);
        assert_eq!(r.check(1, 0x401003, false), Verdict::Program);
        assert_eq!(r.check(1, 0x401010, true), Verdict::Program);
        let bare = RegionStart {
            frames: vec![],
            ..start
        };
        assert_eq!(StartResult::after(&bare), None);
    }
}
