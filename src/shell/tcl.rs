//! A minimal, hand-written safe wrapper over libtcl8.6.
//!
//! This is one of the three modules of mapvis allowed to contain `unsafe`
//! (the crate denies it elsewhere; the others are `src/trace/record/ffi.rs`,
//! for the child process of a traced run, and `src/oom.rs`, the global
//! allocator). It declares the few Tcl C functions the shell needs and wraps them
//! in [`Interp`], which owns one Tcl interpreter, evaluates scripts, reads
//! and writes variables and registers Rust closures as Tcl commands.
//!
//! Invariants the wrapper keeps:
//! * every `Tcl_Obj` we create is held through [`Obj`], which increments its
//!   reference count on creation and decrements it on drop, so objects are
//!   freed exactly once and never used after Tcl frees them;
//! * an [`Interp`] is `!Send` (it holds raw pointers): Tcl interpreters must be
//!   used from the thread that created them;
//! * a Rust panic inside a command closure is caught in the trampoline and
//!   turned into a Tcl error, so no unwinding ever crosses the C boundary.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CString};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, Once};

/// Opaque `Tcl_Interp`.
#[repr(C)]
struct RawInterp {
    _private: [u8; 0],
}

/// Opaque `Tcl_Obj`; we never touch its fields directly.
#[repr(C)]
struct RawObj {
    _private: [u8; 0],
}

type ClientData = *mut c_void;
type ObjCmdProc =
    unsafe extern "C" fn(ClientData, *mut RawInterp, c_int, *const *mut RawObj) -> c_int;
type CmdDeleteProc = unsafe extern "C" fn(ClientData);
type AsyncProc = unsafe extern "C" fn(ClientData, *mut RawInterp, c_int) -> c_int;

const TCL_OK: c_int = 0;
const TCL_ERROR: c_int = 1;
const TCL_RETURN: c_int = 2;
const TCL_GLOBAL_ONLY: c_int = 1;
const TCL_LEAVE_ERR_MSG: c_int = 0x200;
const TCL_EVAL_GLOBAL: c_int = 0x20000;

// The library itself is linked by build.rs (`cargo:rustc-link-lib=tcl8.6`).
extern "C" {
    fn Tcl_FindExecutable(argv0: *const c_char);
    fn Tcl_CreateInterp() -> *mut RawInterp;
    fn Tcl_DeleteInterp(interp: *mut RawInterp);
    fn Tcl_Init(interp: *mut RawInterp) -> c_int;
    fn Tcl_EvalEx(
        interp: *mut RawInterp,
        script: *const c_char,
        num_bytes: c_int,
        flags: c_int,
    ) -> c_int;
    fn Tcl_EvalFile(interp: *mut RawInterp, file_name: *const c_char) -> c_int;
    fn Tcl_GetObjResult(interp: *mut RawInterp) -> *mut RawObj;
    fn Tcl_SetObjResult(interp: *mut RawInterp, obj: *mut RawObj);
    fn Tcl_NewStringObj(bytes: *const c_char, length: c_int) -> *mut RawObj;
    fn Tcl_NewListObj(objc: c_int, objv: *const *mut RawObj) -> *mut RawObj;
    fn Tcl_ListObjAppendElement(
        interp: *mut RawInterp,
        list: *mut RawObj,
        obj: *mut RawObj,
    ) -> c_int;
    fn Tcl_NewDictObj() -> *mut RawObj;
    fn Tcl_DictObjPut(
        interp: *mut RawInterp,
        dict: *mut RawObj,
        key: *mut RawObj,
        value: *mut RawObj,
    ) -> c_int;
    fn Tcl_DictObjGet(
        interp: *mut RawInterp,
        dict: *mut RawObj,
        key: *mut RawObj,
        value: *mut *mut RawObj,
    ) -> c_int;
    fn Tcl_NewWideIntObj(value: i64) -> *mut RawObj;
    fn Tcl_NewDoubleObj(value: f64) -> *mut RawObj;
    fn Tcl_CreateObjCommand(
        interp: *mut RawInterp,
        name: *const c_char,
        proc_: ObjCmdProc,
        client_data: ClientData,
        delete_proc: Option<CmdDeleteProc>,
    ) -> *mut c_void;
    fn Tcl_GetStringFromObj(obj: *mut RawObj, length: *mut c_int) -> *const c_char;
    fn Tcl_CommandComplete(cmd: *const c_char) -> c_int;
    fn Tcl_SplitList(
        interp: *mut RawInterp,
        list: *const c_char,
        argc: *mut c_int,
        argv: *mut *mut *const c_char,
    ) -> c_int;
    fn Tcl_Free(ptr: *mut c_char);
    fn Tcl_SetVar2Ex(
        interp: *mut RawInterp,
        name1: *const c_char,
        name2: *const c_char,
        value: *mut RawObj,
        flags: c_int,
    ) -> *mut RawObj;
    fn Tcl_GetVar2Ex(
        interp: *mut RawInterp,
        name1: *const c_char,
        name2: *const c_char,
        flags: c_int,
    ) -> *mut RawObj;
    fn Tcl_GetReturnOptions(interp: *mut RawInterp, result: c_int) -> *mut RawObj;
    fn Tcl_DbIncrRefCount(obj: *mut RawObj, file: *const c_char, line: c_int);
    fn Tcl_DbDecrRefCount(obj: *mut RawObj, file: *const c_char, line: c_int);
    fn Tcl_AsyncCreate(proc_: AsyncProc, client_data: ClientData) -> *mut c_void;
    fn Tcl_AsyncMark(async_: *mut c_void);
    fn Tcl_AsyncDelete(async_: *mut c_void);
}

/// File name passed to Tcl's debugging reference-count functions.
const SRC_FILE: &[u8] = b"src/shell/tcl.rs\0";

/// Initializes the Tcl library once per process (encodings, executable name).
fn ensure_library() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        let argv0 = std::env::args_os()
            .next()
            .and_then(|a| CString::new(a.into_encoded_bytes()).ok());
        let ptr = argv0.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
        // SAFETY: called once, before any interpreter exists; `ptr` is either
        // null (allowed) or a NUL-terminated string alive for the call.
        unsafe { Tcl_FindExecutable(ptr) };
    });
}

/// An owned reference to a `Tcl_Obj`.
///
/// Invariant: `raw` is non-null and we hold exactly one reference count on it,
/// taken in [`Obj::own`] and released in `Drop`.
struct Obj {
    raw: *mut RawObj,
}

impl Obj {
    /// Takes a reference on `raw`. Returns `None` for a null pointer.
    fn own(raw: *mut RawObj) -> Option<Obj> {
        if raw.is_null() {
            return None;
        }
        // SAFETY: `raw` is a live Tcl_Obj (fresh from a Tcl_New* call or
        // handed to us by Tcl); incrementing its count keeps it alive.
        unsafe { Tcl_DbIncrRefCount(raw, SRC_FILE.as_ptr().cast(), line!() as c_int) };
        Some(Obj { raw })
    }

    /// A new string object. Strings longer than 2 GiB are truncated at a
    /// character boundary, as Tcl 8.6 lengths are C `int`s.
    fn string(s: &str) -> Obj {
        let mut end = s.len().min(c_int::MAX as usize);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        // SAFETY: the pointer/length pair describes valid UTF-8 bytes of `s`,
        // which Tcl copies before returning.
        let raw = unsafe { Tcl_NewStringObj(s.as_ptr().cast(), end as c_int) };
        Obj::own(raw).expect("Tcl_NewStringObj never returns null")
    }

    /// Builds the Tcl representation of `value`.
    fn from_value(value: &Value) -> Obj {
        match value {
            Value::Empty => Obj::string(""),
            Value::Str(s) => Obj::string(s),
            // SAFETY: constructors without preconditions; they return a new
            // object with reference count 0, which `own` takes over.
            Value::Int(i) => Obj::own(unsafe { Tcl_NewWideIntObj(*i) }).expect("non-null"),
            // SAFETY: as above.
            Value::Float(f) => Obj::own(unsafe { Tcl_NewDoubleObj(*f) }).expect("non-null"),
            Value::List(items) => {
                // SAFETY: an empty list needs no element array.
                let list =
                    Obj::own(unsafe { Tcl_NewListObj(0, std::ptr::null()) }).expect("non-null");
                for item in items {
                    let elem = Obj::from_value(item);
                    // SAFETY: `list` is unshared (we hold its only reference)
                    // as Tcl requires for in-place modification; the list
                    // takes its own reference on `elem`.
                    unsafe { Tcl_ListObjAppendElement(std::ptr::null_mut(), list.raw, elem.raw) };
                }
                list
            }
            Value::Dict(pairs) => {
                // SAFETY: constructor without preconditions.
                let dict = Obj::own(unsafe { Tcl_NewDictObj() }).expect("non-null");
                for (key, val) in pairs {
                    let k = Obj::string(key);
                    let v = Obj::from_value(val);
                    // SAFETY: `dict` is unshared; the dict takes its own
                    // references on key and value.
                    unsafe { Tcl_DictObjPut(std::ptr::null_mut(), dict.raw, k.raw, v.raw) };
                }
                dict
            }
        }
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        // SAFETY: we hold one reference (type invariant); releasing it may
        // free the object, after which `raw` is never used again.
        unsafe { Tcl_DbDecrRefCount(self.raw, SRC_FILE.as_ptr().cast(), line!() as c_int) };
    }
}

/// Reads the string representation of a live object without taking a
/// reference (the caller guarantees it stays alive during the call).
fn raw_to_string(raw: *mut RawObj) -> String {
    let mut len: c_int = 0;
    // SAFETY: `raw` is a live Tcl_Obj; Tcl_GetStringFromObj returns a pointer
    // to `len` bytes owned by the object, which we copy immediately.
    unsafe {
        let ptr = Tcl_GetStringFromObj(raw, &mut len);
        if ptr.is_null() || len <= 0 {
            return String::new();
        }
        let bytes = std::slice::from_raw_parts(ptr.cast::<u8>(), len as usize);
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// A value a command returns to Tcl.
///
/// Lists and dicts become real Tcl lists and dicts, so scripts can use
/// `lindex`, `dict get` and `foreach` on command results without re-parsing.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// The empty string (what most side-effect commands return).
    Empty,
    /// A string.
    Str(String),
    /// A 64-bit integer.
    Int(i64),
    /// A double.
    Float(f64),
    /// A Tcl list.
    List(Vec<Value>),
    /// A Tcl dict, in insertion order.
    Dict(Vec<(String, Value)>),
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Str(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}

impl<T: Into<Value>> From<Vec<T>> for Value {
    fn from(items: Vec<T>) -> Value {
        Value::List(items.into_iter().map(Into::into).collect())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(s.to_string())
    }
}

/// A failed Tcl evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct TclError {
    /// The error message (the interpreter result).
    pub message: String,
    /// Tcl's `errorInfo` stack trace; may be empty.
    pub error_info: String,
    /// Innermost script file and line that failed, when the error came from
    /// [`Interp::eval_file`] (or a `source` inside it). The line is where the
    /// failing top-level command of that file starts: for an error inside a
    /// proc or a loop body it is the line of the call or of the loop.
    pub location: Option<(PathBuf, u32)>,
}

impl TclError {
    fn plain(message: impl Into<String>) -> TclError {
        TclError {
            message: message.into(),
            error_info: String::new(),
            location: None,
        }
    }
}

impl fmt::Display for TclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TclError {}

/// Finds the innermost `(file "NAME" line N)` frame in a Tcl `errorInfo`.
fn parse_file_location(error_info: &str) -> Option<(PathBuf, u32)> {
    error_info.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("(file \"")?.strip_suffix(')')?;
        let (name, num) = rest.rsplit_once("\" line ")?;
        Some((PathBuf::from(name), num.parse().ok()?))
    })
}

/// Signature of a command closure: receives the interpreter and the
/// arguments (without the command name).
type CommandFn = dyn FnMut(&Interp, &[String]) -> Result<Value, String>;

/// What Tcl holds as `clientData` for a Rust command.
struct CommandData {
    name: String,
    f: RefCell<Box<CommandFn>>,
}

/// Tcl calls this for every Rust command.
unsafe extern "C" fn command_trampoline(
    client_data: ClientData,
    interp: *mut RawInterp,
    objc: c_int,
    objv: *const *mut RawObj,
) -> c_int {
    // The command's name, for the message of a panic that ran out of memory.
    let name_of_panicked = if objc > 0 {
        // SAFETY: Tcl passes `objc` live objects in `objv`; the first is the
        // command's own name.
        raw_to_string(unsafe { *objv })
    } else {
        String::new()
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: `client_data` came from `Rc::into_raw` in `register` and
        // Tcl only drops it (in `command_delete`) after deleting the command.
        // We take an extra strong count for the duration of the call, so a
        // script that deletes this very command while it runs cannot free it.
        let data: Rc<CommandData> = unsafe {
            Rc::increment_strong_count(client_data as *const CommandData);
            Rc::from_raw(client_data as *const CommandData)
        };
        let count = usize::try_from(objc).unwrap_or(0);
        // SAFETY: Tcl passes `objc` live objects in `objv` for this call.
        let objs = unsafe { std::slice::from_raw_parts(objv, count) };
        let args: Vec<String> = objs.iter().skip(1).map(|&o| raw_to_string(o)).collect();
        let view = Interp::borrowed(interp);
        let result = match data.f.try_borrow_mut() {
            Ok(mut f) => f(&view, &args),
            Err(_) => Err(format!(
                "command \"{}\" was called again while it was still running; \
                 it cannot call itself, so restructure the script",
                data.name
            )),
        };
        (data.name.clone(), result)
    }));
    let (code, value) = match outcome {
        Ok((_, Ok(value))) => (TCL_OK, Obj::from_value(&value)),
        Ok((_, Err(message))) => (TCL_ERROR, Obj::string(&message)),
        Err(panic) => {
            let detail = crate::oom::panic_text(panic.as_ref()).unwrap_or("unknown cause");
            let msg = if crate::oom::is_out_of_memory(detail) {
                crate::oom::caught_message(&name_of_panicked, detail)
            } else {
                format!(
                    "internal error: the command panicked ({detail}); \
                     this is a bug in mapvis, please report it"
                )
            };
            (TCL_ERROR, Obj::string(&msg))
        }
    };
    // SAFETY: `interp` is the live interpreter running this command;
    // Tcl_SetObjResult takes its own reference on `value`.
    unsafe { Tcl_SetObjResult(interp, value.raw) };
    code
}

/// Tcl calls this when a Rust command is deleted (renamed away, replaced, or
/// the interpreter is deleted).
unsafe extern "C" fn command_delete(client_data: ClientData) {
    let _ = catch_unwind(|| {
        // SAFETY: balances the `Rc::into_raw` in `register`; Tcl calls the
        // delete proc exactly once per command.
        drop(unsafe { Rc::from_raw(client_data as *const CommandData) });
    });
}

/// Checked by the async handler; returns the error message to abort with.
type InterruptCheck = dyn Fn() -> Option<String>;

/// Tcl calls this at a safe point after [`InterruptHandle::trigger`].
unsafe extern "C" fn async_proc(
    client_data: ClientData,
    interp: *mut RawInterp,
    code: c_int,
) -> c_int {
    if interp.is_null() {
        return code;
    }
    let outcome = catch_unwind(|| {
        // SAFETY: `client_data` points to the boxed check owned by the
        // `AsyncSlot`, which outlives the async handler (deleted first).
        let check = unsafe { &*(client_data as *const Box<InterruptCheck>) };
        check()
    });
    match outcome {
        Ok(Some(message)) => {
            let obj = Obj::string(&message);
            // SAFETY: `interp` is the live interpreter Tcl is running.
            unsafe { Tcl_SetObjResult(interp, obj.raw) };
            TCL_ERROR
        }
        _ => code,
    }
}

/// The `Tcl_AsyncHandler` token, shared with other threads; null once deleted.
struct AsyncToken(*mut c_void);

// SAFETY: Tcl_AsyncMark is documented as callable from any thread; the token
// is only marked while the mutex is held and non-null, and it is only deleted
// (by the owning thread) under the same mutex.
unsafe impl Send for AsyncToken {}

/// The async handler owned by an interpreter.
struct AsyncSlot {
    token: Arc<Mutex<AsyncToken>>,
    check: *mut Box<InterruptCheck>,
}

/// A thread-safe handle that asks the interpreter to abort the running script
/// at its next safe point (Tcl checks between bytecode instructions).
///
/// Cheap to clone; triggering after the interpreter is gone does nothing.
#[derive(Clone)]
pub struct InterruptHandle {
    token: Arc<Mutex<AsyncToken>>,
}

impl InterruptHandle {
    /// Marks the interpreter's async handler. The handler then runs the check
    /// passed to [`Interp::install_interrupt`] and, if it returns a message,
    /// aborts the current evaluation with that error.
    pub fn trigger(&self) {
        let guard = match self.token.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !guard.0.is_null() {
            // SAFETY: the token is live while non-null under the lock (see
            // `AsyncToken`); Tcl_AsyncMark is thread-safe.
            unsafe { Tcl_AsyncMark(guard.0) };
        }
    }
}

/// One Tcl interpreter.
///
/// Owns the `Tcl_Interp` and deletes it on drop. `!Send`: use it only from
/// the thread that created it. The views passed to command closures borrow
/// the interpreter and do not delete it.
pub struct Interp {
    raw: *mut RawInterp,
    owned: bool,
    async_slot: RefCell<Option<AsyncSlot>>,
}

impl Interp {
    /// Creates an interpreter and runs `Tcl_Init` (which loads `init.tcl` and
    /// so defines `auto_load`, `parray`, ...). If `init.tcl` cannot be found
    /// the interpreter still works with the built-in commands only.
    pub fn new() -> Result<Interp, TclError> {
        ensure_library();
        // SAFETY: the library is initialized; Tcl_CreateInterp has no other
        // preconditions.
        let raw = unsafe { Tcl_CreateInterp() };
        if raw.is_null() {
            return Err(TclError::plain(
                "the Tcl library could not create an interpreter; check that libtcl8.6 is installed",
            ));
        }
        let interp = Interp {
            raw,
            owned: true,
            async_slot: RefCell::new(None),
        };
        // SAFETY: `raw` is a fresh live interpreter.
        if unsafe { Tcl_Init(raw) } != TCL_OK {
            // Missing init.tcl: keep going with the core commands.
            let _ = interp.eval("");
        }
        Ok(interp)
    }

    /// A non-owning view of an interpreter Tcl handed to a command.
    fn borrowed(raw: *mut RawInterp) -> Interp {
        Interp {
            raw,
            owned: false,
            async_slot: RefCell::new(None),
        }
    }

    /// Evaluates `script` at global level and returns its result.
    pub fn eval(&self, script: &str) -> Result<String, TclError> {
        let len = c_int::try_from(script.len()).map_err(|_| {
            TclError::plain("the script is larger than 2 GiB, which Tcl cannot evaluate")
        })?;
        // SAFETY: pointer/length describe `script`, alive for the call;
        // Tcl_EvalEx does not need NUL termination when a length is given.
        let code = unsafe { Tcl_EvalEx(self.raw, script.as_ptr().cast(), len, TCL_EVAL_GLOBAL) };
        self.finish(code)
    }

    /// Evaluates a script file (like Tcl's `source`): sets `info script`,
    /// and on error records the file and line of the failing command in
    /// [`TclError::location`].
    pub fn eval_file(&self, path: &Path) -> Result<String, TclError> {
        if let Err(e) = std::fs::metadata(path) {
            return Err(TclError::plain(format!(
                "cannot read script \"{}\": {e}; check the path",
                path.display()
            )));
        }
        let c_path = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| TclError::plain("the script path contains a NUL byte; rename the file"))?;
        // SAFETY: `c_path` is NUL-terminated and alive for the call.
        let code = unsafe { Tcl_EvalFile(self.raw, c_path.as_ptr()) };
        self.finish(code)
    }

    /// Turns a Tcl completion code into a result.
    fn finish(&self, code: c_int) -> Result<String, TclError> {
        let result = self.result();
        if code == TCL_OK || code == TCL_RETURN {
            return Ok(result);
        }
        let error_info = self.return_option(code, "-errorinfo").unwrap_or_default();
        let location = parse_file_location(&error_info);
        let message = if code == TCL_ERROR {
            result
        } else {
            format!("the script ended with unexpected return code {code} ({result})")
        };
        Err(TclError {
            message,
            error_info,
            location,
        })
    }

    /// The interpreter's current result as a string.
    pub fn result(&self) -> String {
        // SAFETY: the interpreter is live; the result object stays alive
        // until the next Tcl call, and raw_to_string copies it first.
        raw_to_string(unsafe { Tcl_GetObjResult(self.raw) })
    }

    /// Replaces the interpreter's result.
    pub fn set_result(&self, value: &Value) {
        let obj = Obj::from_value(value);
        // SAFETY: live interpreter; Tcl takes its own reference.
        unsafe { Tcl_SetObjResult(self.raw, obj.raw) };
    }

    /// Reads one key of the return-options dict for completion code `code`.
    fn return_option(&self, code: c_int, key: &str) -> Option<String> {
        // SAFETY: live interpreter; the returned dict has count 0 and `own`
        // takes a reference on it.
        let opts = Obj::own(unsafe { Tcl_GetReturnOptions(self.raw, code) })?;
        let key = Obj::string(key);
        let mut value: *mut RawObj = std::ptr::null_mut();
        // SAFETY: `opts` and `key` are live; on success `value` points to an
        // object owned by `opts`, which we copy before `opts` is dropped.
        let rc = unsafe { Tcl_DictObjGet(std::ptr::null_mut(), opts.raw, key.raw, &mut value) };
        if rc != TCL_OK || value.is_null() {
            return None;
        }
        Some(raw_to_string(value))
    }

    /// Registers `f` as the Tcl command `name`, replacing any command of that
    /// name. `f` receives the arguments without the command name; `Ok` becomes
    /// the command result, `Err(message)` a Tcl error. The closure is freed
    /// when the command is deleted. A command cannot re-enter itself (for
    /// example through `eval`); such a call fails with an error.
    pub fn register<F>(&self, name: &str, f: F) -> Result<(), TclError>
    where
        F: FnMut(&Interp, &[String]) -> Result<Value, String> + 'static,
    {
        let c_name = CString::new(name)
            .map_err(|_| TclError::plain("a command name cannot contain a NUL byte"))?;
        let data = Rc::new(CommandData {
            name: name.to_string(),
            f: RefCell::new(Box::new(f)),
        });
        let client_data = Rc::into_raw(data) as ClientData;
        // SAFETY: live interpreter; `c_name` is NUL-terminated; Tcl keeps
        // `client_data` until it calls `command_delete`, which frees it.
        unsafe {
            Tcl_CreateObjCommand(
                self.raw,
                c_name.as_ptr(),
                command_trampoline,
                client_data,
                Some(command_delete),
            )
        };
        Ok(())
    }

    /// Sets the global variable `name` (an array element with `name(key)`).
    pub fn set_var(&self, name: &str, value: &Value) -> Result<(), TclError> {
        let c_name = CString::new(name)
            .map_err(|_| TclError::plain("a variable name cannot contain a NUL byte"))?;
        let obj = Obj::from_value(value);
        // SAFETY: live interpreter, NUL-terminated name, live value object
        // (Tcl takes its own reference when storing it).
        let stored = unsafe {
            Tcl_SetVar2Ex(
                self.raw,
                c_name.as_ptr(),
                std::ptr::null(),
                obj.raw,
                TCL_GLOBAL_ONLY | TCL_LEAVE_ERR_MSG,
            )
        };
        if stored.is_null() {
            return Err(TclError::plain(self.result()));
        }
        Ok(())
    }

    /// Reads the global variable `name`; `None` if it does not exist.
    pub fn get_var(&self, name: &str) -> Option<String> {
        let c_name = CString::new(name).ok()?;
        // SAFETY: live interpreter and NUL-terminated name; the returned
        // object belongs to the variable and is copied at once.
        let obj =
            unsafe { Tcl_GetVar2Ex(self.raw, c_name.as_ptr(), std::ptr::null(), TCL_GLOBAL_ONLY) };
        if obj.is_null() {
            None
        } else {
            Some(raw_to_string(obj))
        }
    }

    /// Whether `script` is a complete Tcl command (no open brace, bracket or
    /// quote), as decided by `Tcl_CommandComplete`. Used for multi-line
    /// input. A script with a NUL byte counts as complete (evaluation will
    /// report it).
    pub fn is_complete(script: &str) -> bool {
        ensure_library();
        match CString::new(script) {
            // SAFETY: NUL-terminated string alive for the call; the function
            // only parses it.
            Ok(c) => unsafe { Tcl_CommandComplete(c.as_ptr()) != 0 },
            Err(_) => true,
        }
    }

    /// The elements of Tcl list `list` (`{transpose} {pad 64}` gives
    /// `transpose` and `pad 64`), split by Tcl's own `Tcl_SplitList`;
    /// `None` when it is not a well-formed list (an open brace or quote).
    pub fn split_list(list: &str) -> Option<Vec<String>> {
        ensure_library();
        let c = CString::new(list).ok()?;
        let mut argc: c_int = 0;
        let mut argv: *mut *const c_char = std::ptr::null_mut();
        // SAFETY: `c` is NUL-terminated and alive for the call; a null
        // interpreter is allowed (no error message is left anywhere). On
        // success Tcl sets `argv` to one allocation holding `argc` pointers
        // to NUL-terminated strings, which we copy before freeing it once
        // with Tcl_Free.
        unsafe {
            if Tcl_SplitList(std::ptr::null_mut(), c.as_ptr(), &mut argc, &mut argv) != TCL_OK {
                return None;
            }
            let out = (0..argc as usize)
                .map(|k| {
                    std::ffi::CStr::from_ptr(*argv.add(k))
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            Tcl_Free(argv.cast());
            Some(out)
        }
    }

    /// Installs an async handler so that another thread (for instance a
    /// SIGINT watcher) can abort a running script: after
    /// [`InterruptHandle::trigger`], Tcl calls `check` at its next safe point
    /// and, if it returns `Some(message)`, the evaluation fails with that
    /// message. Replaces an earlier handler of this interpreter.
    pub fn install_interrupt<F>(&self, check: F) -> InterruptHandle
    where
        F: Fn() -> Option<String> + 'static,
    {
        self.remove_interrupt();
        let boxed: Box<InterruptCheck> = Box::new(check);
        let check_ptr = Box::into_raw(Box::new(boxed));
        // SAFETY: `check_ptr` stays valid until `remove_interrupt`, which
        // deletes the async handler before freeing it.
        let token = unsafe { Tcl_AsyncCreate(async_proc, check_ptr.cast()) };
        let token = Arc::new(Mutex::new(AsyncToken(token)));
        *self.async_slot.borrow_mut() = Some(AsyncSlot {
            token: token.clone(),
            check: check_ptr,
        });
        InterruptHandle { token }
    }

    /// Deletes the async handler, if any (on the owning thread, as Tcl
    /// requires).
    fn remove_interrupt(&self) {
        if let Some(slot) = self.async_slot.borrow_mut().take() {
            let mut guard = match slot.token.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            if !guard.0.is_null() {
                // SAFETY: created by Tcl_AsyncCreate on this thread and not
                // yet deleted; nulled under the lock so no thread marks it.
                unsafe { Tcl_AsyncDelete(guard.0) };
                guard.0 = std::ptr::null_mut();
            }
            // SAFETY: from Box::into_raw in install_interrupt; the handler
            // that used it is deleted.
            drop(unsafe { Box::from_raw(slot.check) });
        }
    }
}

impl Drop for Interp {
    fn drop(&mut self) {
        self.remove_interrupt();
        if self.owned {
            // SAFETY: we own the interpreter; Tcl defers the deletion while
            // it is still executing and frees our command closures.
            unsafe { Tcl_DeleteInterp(self.raw) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_and_values() {
        let interp = Interp::new().unwrap();
        assert_eq!(interp.eval("expr {6*7}").unwrap(), "42");
        interp
            .register("mk", |_, args| {
                Ok(Value::List(vec![
                    Value::Int(args.len() as i64),
                    Value::Float(1.5),
                    Value::Dict(vec![("a".into(), Value::Str("x y".into()))]),
                    Value::Empty,
                ]))
            })
            .unwrap();
        assert_eq!(interp.eval("mk p q").unwrap(), "2 1.5 {a {x y}} {}");
        assert_eq!(interp.eval("dict get [lindex [mk] 2] a").unwrap(), "x y");
        let err = interp.eval("error boom").unwrap_err();
        assert_eq!(err.message, "boom");
        assert!(err.error_info.contains("boom"));
    }

    #[test]
    fn panics_and_reentry_become_errors() {
        let interp = Interp::new().unwrap();
        interp.register("bad", |_, _| panic!("kaput")).unwrap();
        let err = interp.eval("bad").unwrap_err();
        assert!(err.message.contains("kaput"), "{}", err.message);
        interp
            .register("again", |i, _| {
                i.eval("again").map(Value::Str).map_err(|e| e.message)
            })
            .unwrap();
        let err = interp.eval("again").unwrap_err();
        assert!(err.message.contains("called again"), "{}", err.message);
        // A command deleting itself while running must not crash.
        interp
            .register("selfdel", |i, _| {
                i.eval("rename selfdel {}")
                    .map(Value::Str)
                    .map_err(|e| e.message)
            })
            .unwrap();
        interp.eval("selfdel").unwrap();
        assert!(interp.eval("selfdel").is_err());
    }

    #[test]
    fn vars_and_completeness() {
        let interp = Interp::new().unwrap();
        interp
            .set_var("argv", &Value::List(vec!["a b".into(), "c".into()]))
            .unwrap();
        assert_eq!(interp.eval("llength $argv").unwrap(), "2");
        assert_eq!(interp.get_var("argv").as_deref(), Some("{a b} c"));
        assert_eq!(interp.get_var("nope"), None);
        assert!(Interp::is_complete("set x 1"));
        assert!(!Interp::is_complete("proc f {} {"));
        assert!(!Interp::is_complete("puts \"abc"));
    }

    #[test]
    fn file_errors_carry_location() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.tcl");
        std::fs::write(&path, "set x 1\n\nnosuchcommand 3\n").unwrap();
        let interp = Interp::new().unwrap();
        let err = interp.eval_file(&path).unwrap_err();
        assert_eq!(err.location, Some((path.clone(), 3)));
    }

    #[test]
    fn interrupt_aborts_a_loop() {
        let interp = Interp::new().unwrap();
        let handle = interp.install_interrupt(|| Some("stopped".to_string()));
        let h = handle.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            h.trigger();
        });
        let err = interp.eval("while 1 {incr i}").unwrap_err();
        t.join().unwrap();
        assert_eq!(err.message, "stopped");
    }
}
