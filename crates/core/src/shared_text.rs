//! A short text in shared memory that one process writes and any process reads: the lease
//! keeper's last error, a startup or replay error that disables generation (the pgrx layer puts
//! it in shared memory; here it is plain atomics, tested with threads).
//!
//! A seqlock over atomic bytes. Every access is atomic, so a reader racing a writer is not
//! undefined behaviour (a plain byte array written through a pointer cast from a shared reference
//! is, and the compiler did drop such writes); the sequence number, odd while a write is under
//! way, makes the reader retry instead of returning a torn text. Writers take the odd number by
//! compare-and-swap, so two writers cannot interleave either.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::atomic::{fence, AtomicU64, AtomicU8};

/// All-zero is the empty text, so the cell can live in zeroed shared memory.
#[repr(C)]
pub struct SharedText<const N: usize> {
    seq: AtomicU64,
    bytes: [AtomicU8; N],
}

impl<const N: usize> SharedText<N> {
    /// Replaces the text (cut to fit at a character boundary); "" clears it.
    pub fn set(&self, msg: &str) {
        let mut n = msg.len().min(N - 1);
        while !msg.is_char_boundary(n) {
            n -= 1;
        }
        let seq = loop {
            let s = self.seq.load(Relaxed);
            if s.is_multiple_of(2)
                && self
                    .seq
                    .compare_exchange_weak(s, s + 1, Acquire, Relaxed)
                    .is_ok()
            {
                break s + 1;
            }
            std::hint::spin_loop();
        };
        fence(Release);
        for (dst, b) in self.bytes.iter().zip(msg.as_bytes()[..n].iter()) {
            dst.store(*b, Relaxed);
        }
        self.bytes[n].store(0, Relaxed);
        self.seq.store(seq + 1, Release);
    }

    /// True when no text is set: what `get() == None` says, without reading the text.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.bytes[0].load(Acquire) == 0
    }

    /// The text, or None when it is empty. An empty text (the usual case, checked on every ID)
    /// costs one load; a text being set at that moment reads as the old one or the new one.
    #[inline]
    pub fn get(&self) -> Option<String> {
        if self.bytes[0].load(Acquire) == 0 {
            return None;
        }
        self.read()
    }

    #[cold]
    fn read(&self) -> Option<String> {
        let mut buf = Vec::new();
        loop {
            let before = self.seq.load(Acquire);
            if before.is_multiple_of(2) {
                buf.clear();
                for src in self.bytes.iter() {
                    match src.load(Relaxed) {
                        0 => break,
                        b => buf.push(b),
                    }
                }
                fence(Acquire);
                if self.seq.load(Relaxed) == before {
                    break;
                }
            }
            std::hint::spin_loop();
        }
        (!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into_owned())
    }
}

impl<const N: usize> Default for SharedText<N> {
    fn default() -> Self {
        SharedText {
            seq: AtomicU64::new(0),
            bytes: std::array::from_fn(|_| AtomicU8::new(0)),
        }
    }
}
#[cfg(test)]
mod tests {
    use super::SharedText;

    #[test]
    fn empty_set_get_clear_and_cut() {
        let t = SharedText::<8>::default();
        assert_eq!(t.get(), None);
        t.set("hello");
        assert_eq!(t.get().as_deref(), Some("hello"));
        t.set("a longer text");
        assert_eq!(t.get().as_deref(), Some("a longe"));
        t.set("");
        assert_eq!(t.get(), None);
        // A multi-byte character is never cut in half.
        t.set("abcdefé");
        assert_eq!(t.get().as_deref(), Some("abcdef"));
    }

    #[test]
    #[allow(unsafe_code)] // the one unsafe line of the crate: what shared memory holds at first
    fn zeroed_memory_is_the_empty_text() {
        let t = std::mem::MaybeUninit::<SharedText<16>>::zeroed();
        // SAFETY: all-zero atomics are valid values.
        let t = unsafe { t.assume_init() };
        assert_eq!(t.get(), None);
    }

    #[test]
    fn readers_never_see_a_torn_text() {
        let t = SharedText::<64>::default();
        let texts = ["a".repeat(40), "b".repeat(20)];
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..20_000 {
                    t.set(&texts[i % 2]);
                }
            });
            s.spawn(|| {
                for _ in 0..20_000 {
                    if let Some(got) = t.get() {
                        assert!(texts.contains(&got), "torn text {got:?}");
                    }
                }
            });
        });
    }
}
