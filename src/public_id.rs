//! Public IDs (docs/public-ids.md): keyed, reversible encryption of IDs with FF1 (NIST SP
//! 800-38G) over AES, so the database keeps its ordered keys and the world sees ciphertext. The
//! cipher and the forms are in the core crate (`ff1`, `public_id`); here are the keys and the
//! SQL functions.
//!
//! Keys live in `idgen_internal.public_keys` (sql/install/public_ids.sql), which only its owner (a
//! superuser) may read. Each backend keeps the keys it has read, with their AES round keys
//! expanded, in a cache read from the table by a heap scan under the latest snapshot
//! (pg/latest_scan.rs): no privilege check and no code of any role, so a caller may use a key
//! it can never see. A change to the table clears every backend's cache at its commit: a
//! statement trigger sends a relcache invalidation of the table, which PostgreSQL delivers to
//! each backend with the commit, and the callback registered here marks the cache stale.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};

use pg_idgen_core::public_id::{ParsedText, PublicIdError, PublicKey};
use pgrx::prelude::*;
use pgrx::{FromDatum, PgSqlErrorCode};
use zeroize::Zeroize;

use crate::pg::backend_local::BackendLocal;
use crate::pg::errors::IdError;
use crate::pg::latest_scan::scan_latest;

extension_sql_file!(
    "../sql/install/public_ids.sql",
    name = "public_ids",
    requires = [
        public_keys_changed,
        public_key_random,
        public_key_fingerprint,
        encrypt_id,
        decrypt_id,
        encrypt_id_js_safe,
        decrypt_id_js_safe,
        encrypt_uuid,
        decrypt_uuid,
        id_to_public,
        public_to_id,
        uuid_to_public,
        public_to_uuid
    ],
);

/// The versions of one named key; the highest is the one new public IDs are made with.
struct Ring {
    current: u16,
    versions: HashMap<u16, Rc<PublicKey>>,
}

struct Cache {
    /// The value of INVALIDATIONS when the keys were read; stale when it moved.
    read_at: Option<u64>,
    rings: BTreeMap<String, Ring>,
}

static CACHE: BackendLocal<Cache> = BackendLocal::new(Cache {
    read_at: None,
    rings: BTreeMap::new(),
});
/// Relcache invalidations of the keys' table seen by this backend (process-local; counted by the
/// callback, which may run in the middle of a read, so it touches nothing else).
static INVALIDATIONS: AtomicU64 = AtomicU64::new(0);
static TABLE_OID: AtomicU32 = AtomicU32::new(0);
static CALLBACK: AtomicBool = AtomicBool::new(false);

#[pg_guard]
unsafe extern "C-unwind" fn invalidate(_arg: pg_sys::Datum, relid: pg_sys::Oid) {
    if relid == pg_sys::InvalidOid || u32::from(relid) == TABLE_OID.load(Relaxed) {
        INVALIDATIONS.fetch_add(1, Relaxed);
    }
}

fn undefined_key(name: &str) -> IdError {
    IdError::new(PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT, format!("public key \"{name}\" does not exist"))
        .hint(format!("An administrator (idgen_admin) creates it with SELECT idgen.public_key_create('{name}'); idgen.public_keys lists the keys."))
}

/// Reads every key from the table.
fn read_rings() -> Result<BTreeMap<String, Ring>, IdError> {
    let mut rings: BTreeMap<String, Ring> = BTreeMap::new();
    let mut bad: Option<IdError> = None;
    let table = scan_latest(c"idgen_internal", c"public_keys", |col| {
        // SAFETY: the columns are name text, version int4, prefix text, key bytea (NULL once
        // dropped), as sql/install/public_ids.sql makes them; each is copied out here.
        let (name, version, prefix, key) = unsafe {
            (
                col(1).and_then(|d| String::from_datum(d, false)),
                col(2).and_then(|d| i32::from_datum(d, false)),
                col(3).and_then(|d| String::from_datum(d, false)),
                col(4).and_then(|d| Vec::<u8>::from_datum(d, false)),
            )
        };
        let (Some(name), Some(version), Some(prefix)) = (name, version, prefix) else {
            return;
        };
        let ring = rings.entry(name.clone()).or_insert(Ring {
            current: 0,
            versions: HashMap::new(),
        });
        let version = version as u16;
        ring.current = ring.current.max(version);
        if let Some(mut key) = key {
            let made = PublicKey::new(&key, &prefix, version);
            key.zeroize();
            match made {
                Ok(k) => {
                    ring.versions.insert(version, Rc::new(k));
                }
                // The table's checks make this unreachable; never name the key's bytes.
                Err(e) => {
                    bad = Some(IdError::new(
                        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
                        format!("public key \"{name}\" version {version} is not usable: {e}"),
                    ))
                }
            }
        }
    });
    if let Some(e) = bad {
        return Err(e);
    }
    let Some(table) = table else {
        return Err(IdError::new(
            PgSqlErrorCode::ERRCODE_UNDEFINED_TABLE,
            "pg_idgen's table of public keys (idgen_internal.public_keys) does not exist in this database",
        )
        .hint("Update the extension: ALTER EXTENSION pg_idgen UPDATE."));
    };
    TABLE_OID.store(u32::from(table), Relaxed);
    Ok(rings)
}

/// The key `name`, in `version` (None: the current one).
fn key(name: &str, version: Option<i32>) -> Rc<PublicKey> {
    let found = CACHE.with(|cache| -> Result<Rc<PublicKey>, IdError> {
        let now = INVALIDATIONS.load(Relaxed);
        if cache.read_at != Some(now) {
            if !CALLBACK.swap(true, Relaxed) {
                // SAFETY: registers a relcache callback for this backend's life (as
                // node/citus_group.rs does); the function is a plain extern "C" function of this
                // library.
                unsafe { pg_sys::CacheRegisterRelcacheCallback(Some(invalidate), pg_sys::Datum::from(0)) };
            }
            cache.rings = read_rings()?;
            cache.read_at = Some(now);
        }
        let ring = cache.rings.get(name).ok_or_else(|| undefined_key(name))?;
        let v = match version {
            None => ring.current,
            Some(v) => u16::try_from(v).unwrap_or(0),
        };
        ring.versions.get(&v).cloned().ok_or_else(|| {
            IdError::new(
                PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
                format!("public key \"{name}\" has no version {}", version.unwrap_or(v as i32)),
            )
            .hint("idgen.public_keys lists the versions of each key: a dropped version decrypts nothing, and a public ID made with another key of the same prefix names versions of that key.")
        })
    });
    found.unwrap_or_else(|e| e.raise())
}

/// The key of the version a text form names, for decryption: first what can be said of the
/// form without it (22P02: another prefix, another length or alphabet), then the version, which
/// must exist (42704: one never made, or dropped).
fn key_of_text(name: &str, parsed: &ParsedText<'_>, chars: usize) -> Rc<PublicKey> {
    or_public(key(name, None).check_form(parsed, chars));
    key(name, Some(i32::from(parsed.version)))
}

fn public_error(e: PublicIdError) -> ! {
    let code = match e {
        PublicIdError::NotJsSafe => PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
        PublicIdError::NotUuidV7 | PublicIdError::NotUuidV4 => {
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE
        }
        _ => PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
    };
    let hint = match e {
        PublicIdError::NotJsSafe => "Use idgen.encrypt_id() for IDs of all 64 bits; a layout with js_safe keeps Snowflake IDs in this range.",
        PublicIdError::NotUuidV7 => "idgen.encrypt_uuid() takes UUIDv7s (uuidv7_next()); other UUIDs are random already.",
        PublicIdError::NotUuidV4 => "idgen.decrypt_uuid() takes what idgen.encrypt_uuid() made: version-4 UUIDs.",
        PublicIdError::WrongPrefix => "A public ID decrypts only with the key it was made with (its prefix names it).",
        PublicIdError::Version => "Its two characters after the prefix name no key version (00): it is damaged, or no public ID.",
        _ => "Public IDs are read back exactly as they were handed out (letters in either case).",
    };
    IdError::new(code, e.to_string()).hint(hint).raise()
}

fn or_public<T>(r: Result<T, PublicIdError>) -> T {
    r.unwrap_or_else(|e| public_error(e))
}

fn uuid_bits(u: &pgrx::Uuid) -> u128 {
    u128::from_be_bytes(*u.as_bytes())
}

fn uuid_of(bits: u128) -> pgrx::Uuid {
    pgrx::Uuid::from_bytes(bits.to_be_bytes())
}

#[pg_schema]
mod idgen {
    use pgrx::prelude::*;

    use super::{key_of_text, or_public, uuid_bits, uuid_of};
    use pg_idgen_core::public_id::{parse_text, ID_CHARS, UUID_CHARS};

    /// Any bigint encrypted under a key (FF1 over AES): a permutation of all 2^64 values. version
    /// NULL: the current one.
    ///
    /// FF1 over AES, radix 2, 64 digits.
    #[pg_extern(stable, parallel_safe)]
    fn encrypt_id(
        id: Option<i64>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<i64> {
        Some(super::key(key?, version).encrypt_id(id?))
    }

    /// The inverse of idgen.encrypt_id(), with the same key version.
    #[pg_extern(stable, parallel_safe)]
    fn decrypt_id(
        id: Option<i64>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<i64> {
        Some(super::key(key?, version).decrypt_id(id?))
    }

    /// An ID from 0 to 2^53 - 1 encrypted to one in the same range (JavaScript-safe).
    #[pg_extern(stable, parallel_safe)]
    fn encrypt_id_js_safe(
        id: Option<i64>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<i64> {
        Some(or_public(super::key(key?, version).encrypt_js_safe(id?)))
    }

    /// The inverse of idgen.encrypt_id_js_safe(), with the same key version.
    #[pg_extern(stable, parallel_safe)]
    fn decrypt_id_js_safe(
        id: Option<i64>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<i64> {
        Some(or_public(super::key(key?, version).decrypt_js_safe(id?)))
    }

    /// A UUIDv7 encrypted to a UUID with version-4 bits (which every client accepts).
    ///
    /// Its other 122 bits are FF1 over AES, radix 2, 122 digits.
    #[pg_extern(stable, parallel_safe)]
    fn encrypt_uuid(
        id: Option<pgrx::Uuid>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<pgrx::Uuid> {
        Some(uuid_of(or_public(
            super::key(key?, version).encrypt_uuid(uuid_bits(&id?)),
        )))
    }

    /// The inverse of idgen.encrypt_uuid(), with the same key version.
    #[pg_extern(stable, parallel_safe)]
    fn decrypt_uuid(
        id: Option<pgrx::Uuid>,
        key: Option<&str>,
        version: default!(Option<i32>, "NULL"),
    ) -> Option<pgrx::Uuid> {
        Some(uuid_of(or_public(
            super::key(key?, version).decrypt_uuid(uuid_bits(&id?)),
        )))
    }

    /// A bigint's public text form under the key's current version: prefix_, 2 characters of key
    /// version, 20 of ciphertext.
    #[pg_extern(stable, parallel_safe, strict)]
    fn id_to_public(id: i64, key: &str) -> String {
        super::key(key, None).id_to_text(id)
    }

    /// The bigint of a public text form of the key (any version still kept); another prefix, a
    /// damaged string or another key's is an error (22P02).
    #[pg_extern(stable, parallel_safe, strict)]
    fn public_to_id(public_id: &str, key: &str) -> i64 {
        let parsed = or_public(parse_text(public_id));
        or_public(key_of_text(key, &parsed, ID_CHARS).text_to_id(&parsed))
    }

    /// A UUIDv7's public text form under the key's current version: prefix_, 2 characters of key
    /// version, 32 of ciphertext.
    #[pg_extern(stable, parallel_safe, strict)]
    fn uuid_to_public(id: pgrx::Uuid, key: &str) -> String {
        or_public(super::key(key, None).uuid_to_text(uuid_bits(&id)))
    }

    /// The UUIDv7 of a public text form of the key; another prefix, a damaged string or another
    /// key's is an error (22P02).
    #[pg_extern(stable, parallel_safe, strict)]
    fn public_to_uuid(public_id: &str, key: &str) -> pgrx::Uuid {
        let parsed = or_public(parse_text(public_id));
        uuid_of(or_public(
            key_of_text(key, &parsed, UUID_CHARS).text_to_uuid(&parsed),
        ))
    }
}

#[pg_schema]
mod idgen_internal {
    use pgrx::prelude::*;

    /// 32 random bytes from pg_strong_random(): a new AES-256 key.
    #[pg_extern(volatile, parallel_safe)]
    fn public_key_random() -> Vec<u8> {
        (0..4)
            .flat_map(|_| crate::pg::strong_random::next_u64().to_le_bytes())
            .collect()
    }

    /// The fingerprint column of idgen.public_keys.
    ///
    /// What tells two nodes' keys apart without showing them: `encrypt_id(0)` under the key's
    /// version, in hex (anyone who may encrypt can compute it).
    #[pg_extern(stable, parallel_safe, strict)]
    fn public_key_fingerprint(name: &str, version: i32) -> Option<String> {
        Some(format!(
            "{:016x}",
            super::key(name, Some(version)).encrypt_id(0) as u64
        ))
    }

    /// The statement trigger of idgen_internal.public_keys: clears every session's cache of keys at
    /// commit.
    ///
    /// Every backend's cache is cleared by a relcache invalidation of the table.
    #[pg_trigger]
    fn public_keys_changed<'a>(
        trigger: &'a pgrx::PgTrigger<'a>,
    ) -> Result<Option<PgHeapTuple<'a, pgrx::AllocatedByPostgres>>, pgrx::PgTriggerError> {
        let relid = trigger.relid()?;
        // SAFETY: queues an invalidation message, sent at commit (dropped at abort).
        unsafe { pg_sys::CacheInvalidateRelcacheByRelid(relid) };
        Ok(None)
    }
}
