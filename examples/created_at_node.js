// A free created_at as node-postgres (npm "pg") asks for it (docs/snowflake.md#a-free-created_at).
//   node examples/created_at_node.js 'postgres://postgres@127.0.0.1:5432/postgres'
// A table keyed by Snowflake IDs and a view that names the time inside the key created_at; then
// the queries by time a node application writes: a JavaScript Date as the parameter (pg sends it
// as text with its offset, which PostgreSQL reads as a timestamptz), a day as a 'YYYY-MM-DD'
// string (a date), and "on a day" as created_at::date = $1 and date_trunc('day', created_at) = $1.
// Prints one JSON line: for each, the rows it found, the rows with idgen.time_conditions off, and
// what its plan reads: "range" (the key range alone: a local day too, in a zone whose clocks do
// not change near it, its bounds computed while planning), "around" (a range around a local day,
// the comparison kept beside it) or "scan" (the condition on every row).
const { Client } = require('pg');

function how(plan) {
  if (plan.includes('idgen_internal.time_local_') || plan.includes('idgen_internal.time_trunc_')) return 'around';
  // (A bound of a timestamptz parameter is folded into a number when the plan is made.)
  return /\(id [<>]= /.test(plan) && !plan.includes('id_timestamp(') ? 'range' : 'scan';
}

async function main() {
  const client = new Client({ connectionString: process.argv[2] });
  await client.connect();
  try {
    await client.query(`DROP VIEW IF EXISTS js_ca_v; DROP TABLE IF EXISTS js_ca;
      CREATE TABLE js_ca (id bigint PRIMARY KEY, v int);
      INSERT INTO js_ca SELECT id_from_timestamp(now() - g * interval '1 minute') + g % 1000, g
        FROM generate_series(1, 60000) g;
      CREATE VIEW js_ca_v AS SELECT *, id_timestamp(id) AS created_at FROM js_ca;
      ANALYZE js_ca`);
    // The session's zone is the application's; one of odd offset shows the day is read there.
    await client.query("SET TimeZone = 'Asia/Kathmandu'");
    const since = new Date(Date.now() - 3 * 86400 * 1000);
    const day = (await client.query("SELECT (current_date - 10)::text AS d")).rows[0].d;
    const midnight = (await client.query("SELECT (current_date - 10)::timestamptz AS t")).rows[0].t;
    const cases = {
      js_date: ['created_at >= $1', [since]],
      day_string: ['created_at >= $1 AND created_at < $1::date + 1', [day]],
      cast_date: ['created_at::date = $1', [day]],
      date_trunc: ["date_trunc('day', created_at) = $1", [midnight]],
    };
    const found = {};
    for (const [name, [where, params]] of Object.entries(cases)) {
      const rows = Number((await client.query(`SELECT count(*) AS n FROM js_ca_v WHERE ${where}`, params)).rows[0].n);
      const plan = (await client.query(`EXPLAIN SELECT * FROM js_ca_v WHERE ${where}`, params))
        .rows.map((r) => r['QUERY PLAN']).join('\n');
      await client.query('SET idgen.time_conditions = off');
      const off = Number((await client.query(`SELECT count(*) AS n FROM js_ca_v WHERE ${where}`, params)).rows[0].n);
      await client.query('RESET idgen.time_conditions');
      found[name] = { rows, rows_off: off, how: how(plan) };
    }
    await client.query('DROP VIEW js_ca_v; DROP TABLE js_ca');
    console.log(JSON.stringify(found));
  } finally {
    await client.end();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
