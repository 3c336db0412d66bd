//! FF1, the format-preserving encryption of NIST SP 800-38G (rev. 1), over AES (RustCrypto's
//! `aes` crate), for the domains of public IDs: numeral strings whose halves fit in 96 bits.
//!
//! FF1 is a 10-round Feistel network whose round function is AES-CBC-MAC over a block `P` that
//! names the domain (radix, length, tweak length) and a block `Q` that carries the tweak, the
//! round number and one half. Because `P` and every block of `Q` but the last are the same in
//! every round, [`Ff1::domain`] computes their CBC-MAC state once; a round is then one AES block.
//! That is the whole difference from the text of the standard, and the tests check it against
//! the standard's sample vectors (radix 10 and 36, AES-128/192/256, with and without a tweak)
//! and against the `fpe` crate (an implementation of the standard over big integers) on random
//! values of every domain used here.
//!
//! The limit (halves below 2^96 after encoding, so one AES block of round output is enough:
//! `d <= 16` in the standard's terms) covers radix 2 up to 192 digits and every sample of the
//! standard; [`Domain::new`] refuses what is outside it.

use aes::cipher::consts::U16;
use aes::cipher::{
    Array, BlockCipherEncBackend, BlockCipherEncClosure, BlockCipherEncrypt, BlockSizeUser, KeyInit,
};
use aes::{Aes128, Aes192, Aes256};

/// Why a key or a domain was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ff1Error {
    /// AES keys are 16, 24 or 32 bytes.
    KeyLength(usize),
    /// The radix is 2 to 65536.
    Radix(u32),
    /// The domain (radix^length) is below the standard's minimum of 1,000,000, or its halves
    /// are beyond this implementation's 96 bits.
    Length(usize),
    /// A digit at or above the radix.
    Digit,
}

impl std::fmt::Display for Ff1Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ff1Error::KeyLength(n) => write!(f, "an AES key is 16, 24 or 32 bytes, not {n}"),
            Ff1Error::Radix(r) => write!(f, "FF1's radix is 2 to 65536, not {r}"),
            Ff1Error::Length(n) => write!(
                f,
                "a numeral string of {n} digits is outside the supported FF1 domains"
            ),
            Ff1Error::Digit => write!(f, "a digit is not below the radix"),
        }
    }
}

#[derive(Clone)]
enum Cipher {
    A128(Box<Aes128>),
    A192(Box<Aes192>),
    A256(Box<Aes256>),
}

/// An FF1 key: AES with its round keys expanded.
#[derive(Clone)]
pub struct Ff1 {
    cipher: Cipher,
}

impl Ff1 {
    /// The key is 16, 24 or 32 bytes (AES-128, -192, -256).
    pub fn new(key: &[u8]) -> Result<Ff1, Ff1Error> {
        let bad = |_| Ff1Error::KeyLength(key.len());
        let cipher = match key.len() {
            16 => Cipher::A128(Box::new(Aes128::new_from_slice(key).map_err(bad)?)),
            24 => Cipher::A192(Box::new(Aes192::new_from_slice(key).map_err(bad)?)),
            32 => Cipher::A256(Box::new(Aes256::new_from_slice(key).map_err(bad)?)),
            n => return Err(Ff1Error::KeyLength(n)),
        };
        Ok(Ff1 { cipher })
    }

    fn ciph(&self, block: [u8; 16]) -> [u8; 16] {
        let mut b = Array::from(block);
        match &self.cipher {
            Cipher::A128(c) => c.encrypt_block(&mut b),
            Cipher::A192(c) => c.encrypt_block(&mut b),
            Cipher::A256(c) => c.encrypt_block(&mut b),
        }
        b.into()
    }

    /// Runs `rounds` with the cipher's backend: the AES implementation (AES-NI, VAES or software,
    /// chosen at run time) is set up once for all the blocks of one encryption instead of once
    /// per block, which for a single block costs more than the block itself.
    fn with_backend(&self, rounds: Feistel<'_>) {
        match &self.cipher {
            Cipher::A128(c) => c.encrypt_with_backend(rounds),
            Cipher::A192(c) => c.encrypt_with_backend(rounds),
            Cipher::A256(c) => c.encrypt_with_backend(rounds),
        }
    }

    /// The domain of numeral strings of `len` digits in `radix`, with `tweak`: the part of the
    /// round function that is the same in every round, computed once.
    pub fn domain(&self, radix: u32, len: usize, tweak: &[u8]) -> Result<Domain, Ff1Error> {
        Domain::new(self, radix, len, tweak)
    }

    /// Encrypts a numeral string (most significant digit first), as the standard's FF1.Encrypt.
    pub fn encrypt(&self, tweak: &[u8], radix: u32, x: &[u16]) -> Result<Vec<u16>, Ff1Error> {
        let d = self.domain(radix, x.len(), tweak)?;
        let (a, b) = d.split(x)?;
        let (a, b) = d.encrypt_halves(self, a, b);
        Ok(d.join(a, b))
    }

    /// Decrypts a numeral string, as the standard's FF1.Decrypt.
    pub fn decrypt(&self, tweak: &[u8], radix: u32, x: &[u16]) -> Result<Vec<u16>, Ff1Error> {
        let d = self.domain(radix, x.len(), tweak)?;
        let (a, b) = d.split(x)?;
        let (a, b) = d.decrypt_halves(self, a, b);
        Ok(d.join(a, b))
    }
}

/// One FF1 domain (radix, length, tweak) under one key: the CBC-MAC state after `P` and the
/// tweak's full blocks, and the constant head of the last block of `Q`.
#[derive(Clone, Debug)]
pub struct Domain {
    radix: u32,
    u: u32,
    v: u32,
    /// radix^u and radix^v.
    pow_u: u128,
    pow_v: u128,
    /// The byte length of a half's number in `Q` (the standard's `b`) and of `S` (`d`).
    b: usize,
    d: usize,
    state: [u8; 16],
    last: [u8; 16],
}

fn pow(radix: u32, e: u32) -> Option<u128> {
    (radix as u128).checked_pow(e)
}

/// The number of bits of `x` (0 for 0).
fn bit_len(x: u128) -> u32 {
    128 - x.leading_zeros()
}

fn xor(a: [u8; 16], b: &[u8; 16]) -> [u8; 16] {
    std::array::from_fn(|i| a[i] ^ b[i])
}

impl Domain {
    fn new(key: &Ff1, radix: u32, len: usize, tweak: &[u8]) -> Result<Domain, Ff1Error> {
        if !(2..=65536).contains(&radix) {
            return Err(Ff1Error::Radix(radix));
        }
        let n = u32::try_from(len).map_err(|_| Ff1Error::Length(len))?;
        let (u, v) = (n / 2, n - n / 2);
        let (pow_u, pow_v) = match (pow(radix, u), pow(radix, v)) {
            (Some(pu), Some(pv)) => (pu, pv),
            _ => return Err(Ff1Error::Length(len)),
        };
        // The standard's minimum domain (rev. 1): radix^n >= 1,000,000.
        if pow_u.saturating_mul(pow_v) < 1_000_000 {
            return Err(Ff1Error::Length(len));
        }
        // b = ceil(ceil(v * log2(radix)) / 8), and ceil(log2(N)) is the bit length of N - 1.
        let b = bit_len(pow_v - 1).div_ceil(8) as usize;
        let d = 4 * b.div_ceil(4) + 4;
        if d > 16 {
            return Err(Ff1Error::Length(len));
        }
        let t = tweak.len();
        let mut p = [0u8; 16];
        p[..3].copy_from_slice(&[1, 2, 1]);
        p[3..6].copy_from_slice(&radix.to_be_bytes()[1..]);
        p[6] = 10;
        p[7] = (u % 256) as u8;
        p[8..12].copy_from_slice(&n.to_be_bytes());
        p[12..16].copy_from_slice(&(t as u32).to_be_bytes());
        // Q = T || 0^((-t-b-1) mod 16) || [i]^1 || [NUM(B)]^b, a multiple of 16 bytes; all of
        // it but the round number and the half is the same in every round.
        let pad = (16 - (t + b + 1) % 16) % 16;
        let mut head = tweak.to_vec();
        head.resize(t + pad, 0);
        let mut state = key.ciph(p);
        let full = (head.len() + b + 1) / 16 - 1;
        for block in head[..16 * full].chunks(16) {
            state = key.ciph(xor(state, block.try_into().expect("16 bytes")));
        }
        let mut last = [0u8; 16];
        last[..15 - b].copy_from_slice(&head[16 * full..]);
        Ok(Domain {
            radix,
            u,
            v,
            pow_u,
            pow_v,
            b,
            d,
            state,
            last,
        })
    }

    fn modulus(&self, i: u8) -> u128 {
        if i.is_multiple_of(2) {
            self.pow_u
        } else {
            self.pow_v
        }
    }

    /// `x` mod `m`, `m` being radix^u or radix^v: a mask for radix 2 (the domains of public IDs),
    /// whose u128 division would cost more than the AES block of the round.
    #[inline(always)]
    fn reduce(x: u128, m: u128) -> u128 {
        if m.is_power_of_two() {
            x & (m - 1)
        } else {
            x % m
        }
    }

    /// FF1.Encrypt on the halves' numbers: `a` < radix^u, `b` < radix^v.
    pub fn encrypt_halves(&self, key: &Ff1, a: u128, b: u128) -> (u128, u128) {
        let mut out = (a, b);
        key.with_backend(Feistel {
            domain: self,
            decrypt: false,
            halves: &mut out,
        });
        out
    }

    /// FF1.Decrypt on the halves' numbers.
    pub fn decrypt_halves(&self, key: &Ff1, a: u128, b: u128) -> (u128, u128) {
        let mut out = (a, b);
        key.with_backend(Feistel {
            domain: self,
            decrypt: true,
            halves: &mut out,
        });
        out
    }

    /// Radix 2: the `u + v` bits of `x` (most significant first), encrypted.
    pub fn encrypt_bits(&self, key: &Ff1, x: u128) -> u128 {
        debug_assert!(self.radix == 2 && self.u + self.v <= 128);
        let (a, b) = self.encrypt_halves(key, x >> self.v, x & (self.pow_v - 1));
        (a << self.v) | b
    }

    /// Radix 2: the inverse of [`Domain::encrypt_bits`].
    pub fn decrypt_bits(&self, key: &Ff1, x: u128) -> u128 {
        debug_assert!(self.radix == 2 && self.u + self.v <= 128);
        let (a, b) = self.decrypt_halves(key, x >> self.v, x & (self.pow_v - 1));
        (a << self.v) | b
    }

    fn split(&self, x: &[u16]) -> Result<(u128, u128), Ff1Error> {
        let num = |digits: &[u16]| {
            digits.iter().try_fold(0u128, |acc, &c| {
                if (c as u32) < self.radix {
                    Ok(acc * self.radix as u128 + c as u128)
                } else {
                    Err(Ff1Error::Digit)
                }
            })
        };
        let u = self.u as usize;
        Ok((num(&x[..u])?, num(&x[u..])?))
    }

    fn join(&self, a: u128, b: u128) -> Vec<u16> {
        let digits = |mut x: u128, m: u32| {
            let mut out = vec![0u16; m as usize];
            for slot in out.iter_mut().rev() {
                *slot = (x % self.radix as u128) as u16;
                x /= self.radix as u128;
            }
            out
        };
        let mut out = digits(a, self.u);
        out.extend(digits(b, self.v));
        out
    }
}

/// The ten rounds of FF1 on one pair of halves, run with an AES backend.
struct Feistel<'a> {
    domain: &'a Domain,
    decrypt: bool,
    halves: &'a mut (u128, u128),
}

impl BlockSizeUser for Feistel<'_> {
    type BlockSize = U16;
}

impl BlockCipherEncClosure for Feistel<'_> {
    fn call<B: BlockCipherEncBackend<BlockSize = U16>>(self, backend: &B) {
        let dom = self.domain;
        // The round function's `y` for round `i` and half `half` (< radix^v): the CBC-MAC of
        // P || Q, of which only Q's last block changes from round to round. Blocks are
        // big-endian u128s: Q's last block is its constant head, then `i`, then `half` in b bytes.
        let (state, head) = (
            u128::from_be_bytes(dom.state),
            u128::from_be_bytes(dom.last),
        );
        let shift_i = 8 * dom.b as u32;
        let shift_y = 8 * (16 - dom.d as u32);
        let round = |i: u8, half: u128| {
            let q = head | ((i as u128) << shift_i) | half;
            let mut block = Array::from((state ^ q).to_be_bytes());
            backend.encrypt_block((&mut block).into());
            u128::from_be_bytes(block.into()) >> shift_y
        };
        let (mut a, mut b) = *self.halves;
        if self.decrypt {
            for i in (0..10u8).rev() {
                let m = dom.modulus(i);
                let c = Domain::reduce(b + m - Domain::reduce(round(i, a), m), m);
                (b, a) = (a, c);
            }
        } else {
            for i in 0..10u8 {
                let m = dom.modulus(i);
                let c = Domain::reduce(a + Domain::reduce(round(i, b), m), m);
                (a, b) = (b, c);
            }
        }
        *self.halves = (a, b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn digits(s: &str) -> Vec<u16> {
        s.chars().map(|c| c.to_digit(36).unwrap() as u16).collect()
    }

    /// The nine samples of NIST's FF1 examples (FF1samples.pdf, the standard's published test
    /// vectors): AES-128, -192 and -256; radix 10 without and with a tweak, radix 36 with one.
    #[test]
    fn nist_samples() {
        let k128 = "2B7E151628AED2A6ABF7158809CF4F3C";
        let k192 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F";
        let k256 = "2B7E151628AED2A6ABF7158809CF4F3CEF4359D8D580AA4F7F036D6F04FC6A94";
        let t10 = "39383736353433323130";
        let t36 = "3737373770717273373737";
        let samples = [
            (k128, "", 10, "0123456789", "2433477484"),
            (k128, t10, 10, "0123456789", "6124200773"),
            (k128, t36, 36, "0123456789abcdefghi", "a9tv40mll9kdu509eum"),
            (k192, "", 10, "0123456789", "2830668132"),
            (k192, t10, 10, "0123456789", "2496655549"),
            (k192, t36, 36, "0123456789abcdefghi", "xbj3kv35jrawxv32ysr"),
            (k256, "", 10, "0123456789", "6657667009"),
            (k256, t10, 10, "0123456789", "1001623463"),
            (k256, t36, 36, "0123456789abcdefghi", "xs8a0azh2avyalyzuwd"),
        ];
        for (i, (key, tweak, radix, pt, ct)) in samples.iter().enumerate() {
            let ff = Ff1::new(&hex(key)).unwrap();
            let got = ff.encrypt(&hex(tweak), *radix, &digits(pt)).unwrap();
            assert_eq!(got, digits(ct), "sample {}", i + 1);
            assert_eq!(
                ff.decrypt(&hex(tweak), *radix, &got).unwrap(),
                digits(pt),
                "sample {}",
                i + 1
            );
        }
    }

    /// A changed sample is caught (the control of the test above: a wrong round count, tweak
    /// layout or byte order gives other numbers).
    #[test]
    fn a_wrong_key_does_not_give_the_sample() {
        let ff = Ff1::new(&hex("2B7E151628AED2A6ABF7158809CF4F3D")).unwrap();
        assert_ne!(
            ff.encrypt(&[], 10, &digits("0123456789")).unwrap(),
            digits("2433477484")
        );
    }

    /// Against the `fpe` crate (FF1 over big integers), on random values of the domains pg_idgen
    /// uses: radix 2 of 53, 64, 100, 122 and 160 bits, with and without a tweak.
    #[test]
    fn agrees_with_the_fpe_crate() {
        use fpe::ff1::{FlexibleNumeralString, FF1};
        let key = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        let ours = Ff1::new(&key).unwrap();
        let theirs = FF1::<Aes256>::new(&key, 2).unwrap();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (bits, tweak) in [
            (53, &b""[..]),
            (64, b""),
            (100, b"inv"),
            (122, b""),
            (160, b"order"),
        ] {
            let dom = ours.domain(2, bits, tweak).unwrap();
            for _ in 0..300 {
                let digits: Vec<u16> = (0..bits).map(|_| (next() >> 33) as u16 & 1).collect();
                let want: Vec<u16> = theirs
                    .encrypt(tweak, &FlexibleNumeralString::from(digits.clone()))
                    .unwrap()
                    .into();
                assert_eq!(
                    ours.encrypt(tweak, 2, &digits).unwrap(),
                    want,
                    "{bits} bits"
                );
                assert_eq!(
                    ours.decrypt(tweak, 2, &want).unwrap(),
                    digits,
                    "{bits} bits, back"
                );
                if bits <= 128 {
                    let pack = |d: &[u16]| d.iter().fold(0u128, |acc, &b| (acc << 1) | b as u128);
                    assert_eq!(
                        dom.encrypt_bits(&ours, pack(&digits)),
                        pack(&want),
                        "{bits} bits, packed"
                    );
                    assert_eq!(
                        dom.decrypt_bits(&ours, pack(&want)),
                        pack(&digits),
                        "{bits} bits, packed back"
                    );
                }
            }
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(Ff1::new(&[0; 15]).err(), Some(Ff1Error::KeyLength(15)));
        let ff = Ff1::new(&[0; 16]).unwrap();
        assert_eq!(ff.domain(1, 64, b"").err(), Some(Ff1Error::Radix(1)));
        assert_eq!(
            ff.domain(2, 19, b"").err(),
            Some(Ff1Error::Length(19)),
            "2^19 < 1,000,000"
        );
        assert!(ff.domain(2, 20, b"").is_ok());
        assert_eq!(ff.domain(2, 193, b"").err(), Some(Ff1Error::Length(193)));
        assert!(ff.domain(2, 192, b"").is_ok());
        assert_eq!(
            ff.encrypt(b"", 10, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]).err(),
            Some(Ff1Error::Digit)
        );
    }
}
