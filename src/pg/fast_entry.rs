//! Entry points PostgreSQL calls without pgrx's wrapper, for the per-row functions whose common
//! case touches nothing of PostgreSQL's (`snowflake_next()`, `uuidv7_next()`, `ulid_next()`).
//!
//! pgrx runs every `#[pg_extern]` function inside a guard: it turns a Rust panic or a PostgreSQL
//! ERROR into the right kind of exit, saves and restores the memory context and checks that it
//! runs on PostgreSQL's thread. That costs about 10 ns a call, as much as the rest of a Snowflake
//! ID. Here the common case runs first, bare: it reads atomics, plain statics and the clock,
//! allocates nothing, calls nothing of PostgreSQL's and raises nothing. Whenever it cannot finish
//! (an error to raise, a generator to build, a wait, a reservation, anything it does not know)
//! it gives up before changing anything, and the call goes to the pgrx wrapper of the full
//! function, which decides everything again under the guard. Its answer, and only its answer, is
//! turned into a Datum outside it (a `uuid` or a `text` is allocated with `palloc`).
//!
//! The SQL function keeps the symbol pgrx gave it (`<name>_wrapper`), which every released
//! script names; the full function is a `#[pg_extern(sql = false)]` of its own.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, UnwindSafe};

use pgrx::pg_sys;

/// The record behind every `pg_finfo_<symbol>`: "version-1 calling convention".
pub static V1: pg_sys::Pg_finfo_record = pg_sys::Pg_finfo_record { api_version: 1 };

/// Declares the SQL function `$name` (`$sql`, its CREATE FUNCTION, which names `$symbol`) and its
/// version-1 C function `$symbol` (with `$finfo`, its `pg_finfo_` record), which runs `$fast`
/// and, when it gives up, `$guarded`, the pgrx wrapper of the full function. `$fast` returns
/// `Option<T>`; `$into_datum` turns its answer into the function's result outside the fast path
/// (it may allocate).
macro_rules! fast_entry {
    // A function of arguments: `$fast` takes the call record (and reads them with `arg`).
    (args, $name:literal, $sql:literal, $finfo:ident, $symbol:ident, $fast:expr, $into_datum:expr, $guarded:path) => {
        pgrx::extension_sql!($sql, name = $name);
        $crate::pg::fast_entry::fast_entry!(c_only, $finfo, $symbol, $fast, $into_datum, $guarded);
    };
    // The C functions alone, for a SQL function created in a file of sql/install/ (where its
    // schema and its place among the other objects are written).
    (c_only, $finfo:ident, $symbol:ident, $fast:expr, $into_datum:expr, $guarded:path) => {
        #[no_mangle]
        #[doc(hidden)]
        pub extern "C" fn $finfo() -> &'static pgrx::pg_sys::Pg_finfo_record {
            &$crate::pg::fast_entry::V1
        }

        #[no_mangle]
        #[doc(hidden)]
        /// # Safety
        /// Called by PostgreSQL's function manager, on its thread, with its call record.
        pub unsafe extern "C-unwind" fn $symbol(
            fcinfo: pgrx::pg_sys::FunctionCallInfo,
        ) -> pgrx::pg_sys::Datum {
            let call = $crate::pg::fast_entry::Call(fcinfo);
            let fast = move || $fast(call);
            // SAFETY: passed on as PostgreSQL gave it.
            unsafe { $crate::pg::fast_entry::run(fcinfo, fast, $into_datum, $guarded) }
        }
    };
    // A function of no arguments: `$fast` takes nothing.
    ($name:literal, $sql:literal, $finfo:ident, $symbol:ident, $fast:expr, $into_datum:expr, $guarded:path) => {
        $crate::pg::fast_entry::fast_entry!(
            args,
            $name,
            $sql,
            $finfo,
            $symbol,
            |_: $crate::pg::fast_entry::Call| $fast(),
            $into_datum,
            $guarded
        );
    };
}
pub(crate) use fast_entry;

/// A call record, for a fast path to read its arguments.
#[derive(Clone, Copy)]
pub struct Call(pub pg_sys::FunctionCallInfo);

// A raw pointer PostgreSQL gave for this call; nothing is written through it and nothing of it
// outlives the call, unwinding or not.
impl std::panic::UnwindSafe for Call {}

impl Call {
    /// Argument `i` (counted from 0), or None when it is NULL.
    #[inline(always)]
    pub fn arg(self, i: usize) -> Option<pg_sys::Datum> {
        // SAFETY: PostgreSQL's call record holds `nargs` arguments; `i` is checked against it.
        unsafe {
            let fcinfo = &*self.0;
            if i >= fcinfo.nargs as usize {
                return None;
            }
            let a = *fcinfo.args.as_ptr().add(i);
            (!a.isnull).then_some(a.value)
        }
    }

    /// Argument `i` as the bytes of a `text` stored plainly (not compressed, not out of line);
    /// None for NULL or any other form, which the guarded path reads instead.
    #[inline(always)]
    pub fn plain_text(self, i: usize) -> Option<&'static [u8]> {
        let p = self.arg(i)?.cast_mut_ptr::<u8>();
        if p.is_null() || cfg!(target_endian = "big") {
            return None;
        }
        // SAFETY: a text argument points at a varlena of PostgreSQL's: its first byte says which
        // header it has (little-endian: low bit 1 a one-byte header, its length in the upper
        // seven bits, 0x01 alone an out-of-line pointer; low two bits 00 a four-byte header of
        // an uncompressed value, its length in the upper 30 bits). The bytes stay for the call.
        unsafe {
            let first = *p;
            if first == 0x01 {
                None
            } else if first & 0x01 == 0x01 {
                let len = (first >> 1) as usize;
                Some(std::slice::from_raw_parts(p.add(1), len.checked_sub(1)?))
            } else if first & 0x03 == 0x00 {
                let len = (u32::from_le_bytes(*(p as *const [u8; 4])) >> 2) as usize;
                Some(std::slice::from_raw_parts(p.add(4), len.checked_sub(4)?))
            } else {
                None
            }
        }
    }
}

/// The body of every `fast_entry!`.
///
/// # Safety
/// `fcinfo` is PostgreSQL's call record of this call; `guarded` is a pgrx wrapper.
#[inline(always)]
pub unsafe fn run<T>(
    fcinfo: pg_sys::FunctionCallInfo,
    fast: impl FnOnce() -> Option<T> + UnwindSafe,
    into_datum: impl FnOnce(T) -> pg_sys::Datum,
    guarded: unsafe extern "C-unwind" fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum,
) -> pg_sys::Datum {
    // Nothing of the fast path is alive past this match, so an ERROR of `into_datum`, `guarded`
    // or `raise_panic` (a longjmp) crosses only plain frames.
    match catch_unwind(fast) {
        Ok(Some(v)) => into_datum(v),
        // SAFETY: the caller's contract.
        Ok(None) => unsafe { cold(guarded, fcinfo) },
        Err(panic) => raise_panic(panic),
    }
}

/// A fast path is written not to panic; if one ever did, its unwinding must not reach
/// PostgreSQL's C frames. It goes on under pgrx's guard instead, which makes it the ERROR any
/// other pgrx function's panic would be (with its message and place).
#[cold]
#[inline(never)]
fn raise_panic(panic: Box<dyn Any + Send>) -> pg_sys::Datum {
    // SAFETY: called from a version-1 function PostgreSQL called, as pgrx's own wrappers call it.
    unsafe { pg_sys::panic::pgrx_extern_c_guard(move || resume_unwind(panic)) }
}

/// The call to the guarded function, out of line: the fast path's frame stays small (no room
/// for the unwinding machinery, fewer registers to save).
#[cold]
#[inline(never)]
unsafe fn cold(
    guarded: unsafe extern "C-unwind" fn(pg_sys::FunctionCallInfo) -> pg_sys::Datum,
    fcinfo: pg_sys::FunctionCallInfo,
) -> pg_sys::Datum {
    // SAFETY: `run`'s contract.
    unsafe { guarded(fcinfo) }
}

unsafe extern "C-unwind" {
    /// PostgreSQL's `GetUserId`, bound without pgrx's guard: it returns a static of the backend
    /// and raises nothing.
    #[link_name = "GetUserId"]
    fn get_user_id_unguarded() -> pg_sys::Oid;

    /// PostgreSQL's `palloc`, bound without pgrx's guard (which turns an ERROR into a Rust panic,
    /// one that no guard would catch here): its one ERROR, out of memory, goes back to PostgreSQL
    /// as a plain longjmp across the entry point's frame, which holds nothing to drop.
    #[link_name = "palloc"]
    fn palloc_unguarded(size: usize) -> *mut c_void;
}

/// The current user id (GetUserId), for a fast path.
#[inline(always)]
pub fn current_user() -> pg_sys::Oid {
    // SAFETY: reads a variable of the backend, set before any function runs.
    unsafe { get_user_id_unguarded() }
}

/// Whether the transaction is read-only (XactReadOnly), for a fast path.
#[inline(always)]
pub fn read_only() -> bool {
    // SAFETY: reads a flag of the backend's transaction state.
    unsafe { pg_sys::XactReadOnly }
}

/// A by-reference Datum holding `bytes` (a `uuid`), copied into the current memory context.
pub fn bytes_datum<const N: usize>(bytes: [u8; N]) -> pg_sys::Datum {
    // SAFETY: palloc returns N writable bytes (or does not return); we copy N into them.
    unsafe {
        let p = palloc_unguarded(N).cast::<u8>();
        p.copy_from_nonoverlapping(bytes.as_ptr(), N);
        pg_sys::Datum::from(p)
    }
}

/// A `text` Datum of `ascii` (a few dozen bytes, valid in every server encoding), in the
/// current memory context.
pub fn text_datum<const N: usize>(ascii: [u8; N]) -> pg_sys::Datum {
    let size = pg_sys::VARHDRSZ + N;
    // SAFETY: palloc returns `size` writable bytes (or does not return): a 4-byte varlena header
    // (written by pgrx's set_varsize_4b, plain arithmetic) and N bytes copied after it.
    unsafe {
        let p = palloc_unguarded(size).cast::<u8>();
        pgrx::set_varsize_4b(p.cast(), size as i32);
        p.add(pg_sys::VARHDRSZ)
            .copy_from_nonoverlapping(ascii.as_ptr(), N);
        pg_sys::Datum::from(p)
    }
}
