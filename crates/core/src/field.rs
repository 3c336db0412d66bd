//! The fields of a Snowflake-style ID. Their own file, so that the layouts and the preset table
//! both read them without reading each other.

/// One field of an ID, from the high end to the low end in the order a layout names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Time,
    Datacenter,
    Worker,
    Rollback,
    Sequence,
    Reserved,
}

impl Field {
    pub const ALL: [Field; 6] = [
        Field::Time,
        Field::Datacenter,
        Field::Worker,
        Field::Rollback,
        Field::Sequence,
        Field::Reserved,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Field::Time => "time",
            Field::Datacenter => "datacenter",
            Field::Worker => "worker",
            Field::Rollback => "rollback",
            Field::Sequence => "sequence",
            Field::Reserved => "reserved",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Field> {
        Some(match s {
            "time" | "timestamp" => Field::Time,
            "datacenter" | "dc" => Field::Datacenter,
            "worker" | "machine" | "shard" => Field::Worker,
            "rollback" => Field::Rollback,
            "sequence" | "seq" => Field::Sequence,
            "reserved" => Field::Reserved,
            _ => return None,
        })
    }

    pub(crate) fn index(self) -> usize {
        self as usize
    }
}
