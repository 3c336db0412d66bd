// IDs to JavaScript with node-postgres (npm "pg"): what survives and what does not.
//   node examples/node-postgres.js 'postgres://postgres@127.0.0.1:5432/postgres' [converted_table]
// Prints one JSON line: how many of 1,000 new Snowflake IDs each way of fetching them keeps exact.
// - Rows: node-postgres returns bigint as a string, exact (parse it with BigInt if you compute).
// - JSON made in SQL: json_agg(id) writes numbers, and JSON.parse rounds those above 2^53, so
//   IDs change and collide; json_agg(id::text) and id_to_text(id) keep them exact.
// - On a node with a JavaScript-safe layout (js_safe, js_safe_10ms, js_safe_s) numbers are exact.
const { Client } = require('pg');

async function main() {
  const client = new Client({ connectionString: process.argv[2] });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      'CREATE TEMP TABLE js_orders (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text)');
    const inserted = await client.query(
      "INSERT INTO js_orders (item) SELECT 'item ' || g FROM generate_series(1, 1000) g RETURNING id");
    const ids = inserted.rows.map((r) => r.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const exact = (values) => values.filter((v, i) => BigInt(v).toString() === ids[i]).length;

    const numbers = JSON.parse(
      (await client.query('SELECT json_agg(id ORDER BY id)::text AS j FROM js_orders')).rows[0].j);
    const texts = JSON.parse(
      (await client.query('SELECT json_agg(id::text ORDER BY id)::text AS j FROM js_orders')).rows[0].j);
    // id_to_text: short, order-preserving text; id_from_text turns it back into the bigint.
    const short = JSON.parse((await client.query(
      'SELECT json_agg(id_to_text(id) ORDER BY id)::text AS j FROM js_orders')).rows[0].j);
    const back = (await client.query(
      'SELECT id_from_text(t)::text AS id FROM unnest($1::text[]) WITH ORDINALITY u(t, n) ORDER BY n',
      [short])).rows.map((r) => r.id);
    await client.query('ROLLBACK');
    // A table converted from serial (idgen.convert_to_snowflake), if one is named: one more row.
    let converted = null;
    if (process.argv[3]) {
      const r = await client.query(`INSERT INTO ${process.argv[3]} DEFAULT VALUES RETURNING id`);
      converted = r.rows[0].id;
    }

    console.log(JSON.stringify({
      ids: ids.length,
      type_in_rows: typeof inserted.rows[0].id,
      rows_exact: exact(ids),
      json_numbers_exact: exact(numbers.map((n) => BigInt(n))),
      json_numbers_distinct: new Set(numbers).size,
      json_text_exact: exact(texts),
      id_to_text_exact: exact(back),
      id_to_text_sorted: short.every((s, i) => i === 0 || short[i - 1] < s),
      above_2_pow_53: ids.filter((v) => BigInt(v) > 2n ** 53n).length,
      converted_table_id: converted,
    }));
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
