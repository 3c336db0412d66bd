//! Snowflake keys made by the database, from Rust: tokio-postgres and sqlx. For each client, a
//! table whose key is `bigint DEFAULT snowflake_next()`, one row and a batch of 100 inserted
//! without a key, the keys read back with `RETURNING id` as `i64` and compared with the table's.
//! Prints one JSON line per client.
//!
//! The recipe: the key is an `i64` (PostgreSQL's `bigint`, exact in Rust); insert without it and
//! take it back from `RETURNING id`. With sqlx, `query_scalar::<_, i64>` (or a `FromRow` struct
//! with an `i64` field); with tokio-postgres, `row.get::<_, i64>("id")`. Send it to JavaScript
//! as a string (serde's `serialize_with`, or `id::text` in SQL): JavaScript rounds numbers above
//! 2^53.

use std::error::Error;

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

const N: i64 = 100;

/// One JSON line: what a client got back, against the rows of its table.
fn report(client: &str, mut returned: Vec<i64>, mut in_table: Vec<i64>) -> String {
    returned.sort_unstable();
    in_table.sort_unstable();
    let distinct = {
        let mut d = returned.clone();
        d.dedup();
        d.len()
    };
    let above = returned.iter().filter(|&&id| id > 1i64 << 53).count();
    format!(
        "{{\"client\":\"{client}\",\"rows\":{},\"returned\":{},\"exact\":{},\"distinct\":{distinct},\"above_2_pow_53\":{above}}}",
        in_table.len(),
        returned.len(),
        returned == in_table
    )
}

async fn with_tokio_postgres(url: &str) -> Result<String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    client
        .batch_execute(
            "DROP TABLE IF EXISTS tokio_orders;
             CREATE TABLE tokio_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text NOT NULL)",
        )
        .await?;
    let mut returned: Vec<i64> = Vec::new();
    let one = client
        .query_one(
            "INSERT INTO tokio_orders (item) VALUES ($1) RETURNING id",
            &[&"one"],
        )
        .await?;
    returned.push(one.get("id"));
    let many = client
        .query(
            "INSERT INTO tokio_orders (item) SELECT 'item ' || g FROM generate_series(1, $1::bigint) g RETURNING id",
            &[&N],
        )
        .await?;
    returned.extend(many.iter().map(|r| r.get::<_, i64>("id")));
    let in_table = client
        .query("SELECT id FROM tokio_orders", &[])
        .await?
        .iter()
        .map(|r| r.get::<_, i64>(0))
        .collect();
    client.batch_execute("DROP TABLE tokio_orders").await?;
    Ok(report("tokio-postgres", returned, in_table))
}

#[derive(sqlx::FromRow)]
struct Order {
    id: i64,
    item: String,
}

async fn with_sqlx(url: &str) -> Result<String> {
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(url)
        .await?;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS sqlx_orders;
         CREATE TABLE sqlx_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text NOT NULL)",
    )
    .execute(&pool)
    .await?;
    let mut returned: Vec<i64> = Vec::new();
    let one: i64 = sqlx::query_scalar("INSERT INTO sqlx_orders (item) VALUES ($1) RETURNING id")
        .bind("one")
        .fetch_one(&pool)
        .await?;
    returned.push(one);
    let items: Vec<String> = (1..=N).map(|i| format!("item {i}")).collect();
    let many: Vec<Order> = sqlx::query_as(
        "INSERT INTO sqlx_orders (item) SELECT unnest($1::text[]) RETURNING id, item",
    )
    .bind(&items)
    .fetch_all(&pool)
    .await?;
    assert!(many.iter().all(|o| o.item.starts_with("item ")));
    returned.extend(many.iter().map(|o| o.id));
    let in_table: Vec<i64> = sqlx::query_scalar("SELECT id FROM sqlx_orders")
        .fetch_all(&pool)
        .await?;
    sqlx::raw_sql("DROP TABLE sqlx_orders")
        .execute(&pool)
        .await?;
    pool.close().await;
    Ok(report("sqlx", returned, in_table))
}

#[tokio::main]
async fn main() -> Result<()> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: pg_idgen_rust_example 'postgres://user@host:port/db'")?;
    println!("{}", with_tokio_postgres(&url).await?);
    println!("{}", with_sqlx(&url).await?);
    Ok(())
}
