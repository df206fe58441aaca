//! The system calls the tracing stage makes through `libc` in a child
//! process between `fork` and `exec`: one of the three modules of mapvis
//! allowed to contain `unsafe` (the crate denies it elsewhere; the others
//! are the Tcl wrapper, `shell::tcl`, and the global allocator, `oom`).
//!
//! Invariant: the closure given to [`CommandExt::pre_exec`] runs in the
//! forked child, where only async-signal-safe functions may be called; it
//! calls only `prctl(2)` and `getppid(2)`, both async-signal-safe, reads
//! only its captured integer and `errno`, and allocates nothing (its
//! errors are OS error codes), since another thread may have held the
//! allocator's lock at the fork.
#![allow(unsafe_code)]
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child started by `cmd` receive SIGKILL when mapvis ends, by
/// any means (SIGTERM, SIGHUP, SIGKILL, a crash): Valgrind and the traced
/// program never outlive the session that started them. If mapvis has
/// already ended when the child starts, the child is not started.
///
/// The signal is tied to the thread that spawns the child, which must live
/// until the child has ended (the commands wait for it).
pub fn end_with_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec; it calls only the
    // async-signal-safe prctl and getppid and allocates nothing (see the
    // module's invariant).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            // mapvis ended before the prctl: the signal will never come.
            // (An OS error code: building the error allocates nothing.)
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
