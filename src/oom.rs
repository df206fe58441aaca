//! Running out of memory says so: which step ran out, and what to try.
//! (And the system allocator is told to keep freed memory for reuse, see
//! [`keep_freed_memory`].)
//!
//! When an allocation fails, Rust prints `memory allocation of N bytes
//! failed` and aborts (SIGABRT, exit status 134); a user under `ulimit -v`
//! or a container's limit learns neither which command ran out nor what to
//! do. [`Reporting`], the binary's global allocator, passes every request
//! to the system allocator and only notes the size of a request that
//! failed; [`install`] adds a SIGABRT action that, when such a failure was
//! noted, writes one sentence naming the step ([`set_step`], the command
//! the shell is running) and what to try. The process still ends as
//! before: `abort` restores the default action and raises SIGABRT again
//! after the action returns.
//!
//! Why not print in the allocator: a failed request may be one that its
//! caller handles (`try_reserve`), so only an abort means mapvis gave up.
//! (`std::alloc::set_alloc_error_hook` would be the place, but it is not
//! stable.) The results already in the folder are never touched: every
//! file is written aside and renamed into place whole (see
//! [`crate::workdir`]).
//!
//! Cost: one branch per allocation (on its result) and one relaxed store
//! per command.
//!
//! `unsafe` here (one of the three modules allowed it; the crate denies it
//! elsewhere), and its invariants: the allocator forwards to `System`
//! unchanged (so `GlobalAlloc`'s contract holds as `System` keeps it), and
//! the signal action calls only `write(2)` on a buffer on its own stack and
//! reads and swaps atomics (async-signal-safe, no allocation, no lock).
#![allow(unsafe_code)]
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The size of the last allocation request that failed (0: none).
static FAILED: AtomicUsize = AtomicUsize::new(0);
/// The step running now: a pointer to a `&'static str` (null: none).
static STEP: AtomicPtr<&'static str> = AtomicPtr::new(std::ptr::null_mut());

/// The system allocator, noting the size of a request that fails.
pub struct Reporting;

// SAFETY: every method forwards to `System` with the caller's arguments and
// returns its result unchanged; the only addition is a store to an atomic.
unsafe impl GlobalAlloc for Reporting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller keeps `alloc`'s contract, which `System` has.
        noted(unsafe { System.alloc(layout) }, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        noted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, which is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator, which is `System`'s.
        noted(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

/// `p`, noting `size` as a failed request when `p` is null.
fn noted(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        FAILED.store(size.max(1), Ordering::Relaxed);
    }
    p
}

/// Names the step that runs from now on (the shell's command), for the
/// message of an abort for want of memory. `step` must live for the whole
/// run (a command's name in its static table).
pub fn set_step(step: &'static &'static str) {
    STEP.store(step as *const &'static str as *mut _, Ordering::Relaxed);
}

/// No step runs (between commands).
pub fn clear_step() {
    STEP.store(std::ptr::null_mut(), Ordering::Relaxed);
}

/// Installs the SIGABRT action that explains an abort for want of memory.
/// Idempotent. Without [`Reporting`] as the global allocator no failure is
/// noted and the action says nothing.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `explain` is async-signal-safe: it reads atomics and calls
        // write(2) on buffers on its stack, allocating nothing.
        let _ = unsafe { signal_hook::low_level::register(libc::SIGABRT, explain) };
        quiet_out_of_memory_panics();
    });
}

/// Makes a panic for want of memory ([`is_out_of_memory`]) print nothing
/// itself: the command that catches it says so (shell::tcl), and a panic
/// in one of the analysis' threads is carried on to the command
/// (`filter::joined`). Other panics print as before.
///
/// Why: printing a panic takes std's backtrace lock and, with
/// `RUST_BACKTRACE` set, symbolizes the backtrace, which allocates. A
/// thread started under an address-space limit panicked when it could not
/// map its signal stack; symbolizing then ran out of memory, and the
/// message of that failure waited on the lock the thread itself held:
/// mapvis hung.
fn quiet_out_of_memory_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if panic_text(info.payload()).is_some_and(is_out_of_memory) {
            return;
        }
        default(info)
    }));
}

/// Makes the system allocator keep the memory the analysis frees for its
/// next requests, instead of handing it back to the kernel each time.
///
/// Why: the analysis streams the access list as row groups of about 21 MB
/// of columns, one after another, allocated on one thread and freed on
/// others once written. With glibc's defaults (a dynamic mmap threshold
/// from 128 KiB, the heap trimmed past twice that threshold) much of that
/// memory went back to the kernel and was asked for again, each page
/// faulted in and zeroed anew. Now:
/// - blocks of up to 32 MiB (glibc's largest threshold) come from the heap;
/// - up to [`KEEP_FREED`] of free memory stays at the top of a heap;
/// - a thread arena's heap is kept once wholly free ([`TOP_PAD`]); glibc
///   unmaps such a heap whatever the trim threshold, unless its top pad
///   covers it. Not under an address-space limit, which the pad counts
///   against whole.
///
/// Measured (docs/PERFORMANCE.md, 2026-11-27): on a 2 G-access analysis
/// the page faults fell from 3.2 to 5.5 M to 0.17 M, the system time from
/// 15 s to 4 to 6 s, the wall time by 11 to 13%. Cost: the peak grows by
/// what stays free, about 200 MB on that analysis (0.49 to 0.70 GB).
///
/// Only with glibc; elsewhere the allocator keeps its own policy.
pub fn keep_freed_memory() {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: mallopt only sets malloc's parameters; called before any
        // other thread is started, with values in their documented ranges
        // (it returns 0 and changes nothing on a value out of range).
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, KEEP_FREED);
            if !address_space_limited() {
                libc::mallopt(libc::M_TOP_PAD, TOP_PAD);
            }
        }
    }
}

/// Whether the process has an address-space limit (`ulimit -v`,
/// RLIMIT_AS). Under one the top pad is left at glibc's default: it counts
/// whole (64 MiB a heap) against the limit, though untouched.
#[cfg(target_env = "gnu")]
fn address_space_limited() -> bool {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the limit into `l`, a valid rlimit.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut l) } == 0;
    ok && l.rlim_cur != libc::RLIM_INFINITY
}

/// Free memory glibc keeps at the top of a heap: at least a whole heap of
/// a thread's arena (64 MiB on 64-bit), so that a thread's heap is not
/// unmapped once wholly free (glibc keeps a heap whose top is at least
/// this). Virtual memory only: pages are touched when used.
pub const TOP_PAD: i32 = 64 << 20;

/// Free heap memory glibc keeps before it trims the heap (see
/// [`keep_freed_memory`]): the row groups in flight at once, with room.
pub const KEEP_FREED: i32 = 512 << 20;

/// A message built on the stack, to be written in one `write(2)`: two
/// threads that run out of memory at once each abort, and pieces written
/// one by one would interleave into text that names no step.
struct Message {
    buf: [u8; 1024],
    len: usize,
}

impl Message {
    /// Appends `bytes`, cut at the buffer's end (async-signal-safe).
    fn push(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
        self.len += n;
    }

    /// Writes the message to standard error, ignoring failures.
    fn write(&self) {
        // SAFETY: `buf[..len]` is a valid buffer; fd 2 may be closed, which
        // write(2) reports as an error that is ignored.
        let _ = unsafe { libc::write(2, self.buf.as_ptr().cast(), self.len) };
    }
}

/// Whether the sentence was written: only the first thread to abort for
/// want of memory writes it.
static EXPLAINED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Whether the sentence is out (the threads that did not write it wait).
static WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The SIGABRT action: one sentence when an allocation failed, written
/// once, whole, however many threads abort.
fn explain() {
    let size = FAILED.load(Ordering::Relaxed);
    if size == 0 {
        return;
    }
    if EXPLAINED.swap(true, Ordering::AcqRel) {
        // Another thread writes it: wait (a bounded spin, well under a
        // second) so that this thread's abort does not end the process
        // before the sentence is out.
        for _ in 0..100_000_000u64 {
            if WRITTEN.load(Ordering::Acquire) {
                break;
            }
            std::hint::spin_loop();
        }
        return;
    }
    let step = STEP.load(Ordering::Relaxed);
    let mut m = Message {
        buf: [0; 1024],
        len: 0,
    };
    m.push(b"\nmapvis ran out of memory");
    if !step.is_null() {
        m.push(b" in ");
        // SAFETY: `STEP` holds null or a pointer from `set_step`, to a
        // `&'static str` that lives for the whole run.
        m.push(unsafe { *step }.as_bytes());
    }
    m.push(b": it needed ");
    let mut digits = [0u8; 20];
    m.push(decimal(size, &mut digits));
    m.push(b" more bytes and the system (or a limit such as ulimit -v, or a container's) refused them, so mapvis stopped. ");
    m.push(ADVICE.as_bytes());
    m.push(b"\n");
    m.write();
    WRITTEN.store(true, Ordering::Release);
}

/// What to try after running out of memory.
const ADVICE: &str =
    "Files already in the working folder are kept as they were. Try again with more memory: \
close other programs or raise the limit; for memory_trace_analysis, trace a shorter region (move \
GL_START/GL_STOP); for a figure, lower set_point_budget or draw fewer variables (set_mem_alloc).";

/// A panic's message, when its payload is text (`panic!` gives a `&str`
/// or, with arguments, a `String`).
pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}

/// Whether a caught panic's message says the system refused memory: a
/// library that unwraps a failed `mmap` or read (`Cannot allocate memory`,
/// os error 12) panics instead of aborting.
pub fn is_out_of_memory(detail: &str) -> bool {
    detail.contains("OutOfMemory")
        || detail.contains("Cannot allocate memory")
        || detail.contains("os error 12")
}

/// The message of command `step` that stopped for want of memory without
/// aborting (see [`is_out_of_memory`]); `detail` is the library's reason.
pub fn caught_message(step: &str, detail: &str) -> String {
    format!(
        "mapvis ran out of memory in {step}: it needed more than the system (or a limit such as \
         ulimit -v, or a container's) would give ({detail}), so the command stopped. {ADVICE}"
    )
}

/// `n` in decimal, written into the end of `buf`.
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimal_writes_digits() {
        let mut b = [0u8; 20];
        assert_eq!(super::decimal(0, &mut b), b"0");
        assert_eq!(super::decimal(4194304, &mut b), b"4194304");
        assert_eq!(super::decimal(usize::MAX, &mut b), b"18446744073709551615");
    }
}
