// Snowflake keys made by the database, through the JavaScript ORMs people use: Drizzle ORM, Knex,
// TypeORM and Sequelize, each over node-postgres.
//   npm install pg@8 drizzle-orm@0.45 knex@3 typeorm@1 sequelize@6
//   node examples/orm.js 'postgres://postgres@127.0.0.1:5432/postgres'
// For each ORM: a table whose key is `bigint DEFAULT snowflake_next()`, one row and a batch of 100
// inserted through the ORM without a key, the keys the ORM hands back compared with the rows in
// the table, and a JSON round trip. Prints one JSON line per ORM.
//
// The recipe, in every ORM: declare the key 64-bit and let the database fill it in (a default the
// ORM does not send), and read it back as a string or a BigInt, never a JavaScript number (which is
// exact only below 2^53, and every Snowflake ID of the default layout made since 2024 is above it).
// - Drizzle:   bigint('id', { mode: 'bigint' }).primaryKey().default(sql`snowflake_next()`),
//              insert(...).values(...).returning({ id })                      -> BigInt
// - Knex:      knex(table).insert(rows).returning('id')                       -> string
// - TypeORM:   { type: 'bigint', primary: true, default: () => 'snowflake_next()' }, save()
//                                                                             -> string
// - Sequelize: { type: DataTypes.BIGINT, primaryKey: true,
//                defaultValue: Sequelize.literal('snowflake_next()') }, create() / bulkCreate()
//                                                                             -> string
const { Client } = require('pg');

const url = process.argv[2];
const N = 100;

// The keys an ORM returned, as strings, against the table's rows (read with ::text).
async function compare(name, table, returned) {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT id::text AS id FROM ${table} ORDER BY id`);
    const inTable = rows.map((r) => r.id);
    const got = returned.map((v) => String(v)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const { rows: dec } = await c.query(`SELECT count(*)::int AS n FROM ${table}, id_decode(id) d WHERE d.worker_id IS NOT NULL`);
    // JSON: the keys as strings survive JSON.stringify / JSON.parse exactly.
    const json = JSON.parse(JSON.stringify(got));
    return {
      orm: name,
      rows: inTable.length,
      returned: got.length,
      types: [...new Set(returned.map((v) => typeof v))].join(','),
      exact: got.length === inTable.length && got.every((v, i) => v === inTable[i]),
      distinct: new Set(got).size,
      above_2_pow_53: got.filter((v) => BigInt(v) > 2n ** 53n).length,
      decoded: dec[0].n,
      json_exact: json.every((v, i) => v === got[i]),
    };
  } finally {
    await c.end();
  }
}

async function setup(table) {
  const c = new Client({ connectionString: url });
  await c.connect();
  await c.query(`DROP TABLE IF EXISTS ${table}`);
  await c.query(`CREATE TABLE ${table} (id bigint PRIMARY KEY DEFAULT snowflake_next(), item text NOT NULL)`);
  await c.end();
}

const items = (n) => Array.from({ length: n }, (_, i) => ({ item: `item ${i}` }));

// Drizzle with its bigint in `mode`: 'bigint' is the recipe; 'number' is the hazard, kept for
// comparison: it turns each key into a JavaScript number, which rounds every ID above 2^53.
async function drizzleIn(mode, name, table) {
  const { drizzle } = require('drizzle-orm/node-postgres');
  const { pgTable, bigint, text } = require('drizzle-orm/pg-core');
  const { sql } = require('drizzle-orm');
  await setup(table);
  const orders = pgTable(table, {
    id: bigint('id', { mode }).primaryKey().default(sql`snowflake_next()`),
    item: text('item').notNull(),
  });
  const db = drizzle(url);
  const one = await db.insert(orders).values({ item: 'one' }).returning({ id: orders.id });
  const many = await db.insert(orders).values(items(N)).returning({ id: orders.id });
  await db.$client.end();
  return compare(name, table, [...one, ...many].map((r) => r.id));
}

const drizzle = () => drizzleIn('bigint', 'drizzle-orm', 'drizzle_orders');
const drizzleNumber = () => drizzleIn('number', 'drizzle-orm mode number (the hazard)', 'drizzle_number_orders');

async function knex() {
  const k = require('knex')({ client: 'pg', connection: url });
  await setup('knex_orders');
  try {
    const one = await k('knex_orders').insert({ item: 'one' }).returning('id');
    const many = await k('knex_orders').insert(items(N)).returning('id');
    return compare('knex', 'knex_orders', [...one, ...many].map((r) => r.id));
  } finally {
    await k.destroy();
  }
}

async function typeorm() {
  const { DataSource, EntitySchema } = require('typeorm');
  await setup('typeorm_orders');
  const Order = new EntitySchema({
    name: 'Order',
    tableName: 'typeorm_orders',
    columns: {
      id: { type: 'bigint', primary: true, default: () => 'snowflake_next()' },
      item: { type: 'text' },
    },
  });
  const ds = new DataSource({ type: 'postgres', url, entities: [Order], synchronize: false, logging: false });
  await ds.initialize();
  try {
    const repo = ds.getRepository(Order);
    const one = await repo.save({ item: 'one' });
    const many = await repo.save(items(N));
    return compare('typeorm', 'typeorm_orders', [one, ...many].map((r) => r.id));
  } finally {
    await ds.destroy();
  }
}

async function sequelize() {
  const { Sequelize, DataTypes } = require('sequelize');
  await setup('sequelize_orders');
  const s = new Sequelize(url, { logging: false });
  const Order = s.define('Order', {
    id: { type: DataTypes.BIGINT, primaryKey: true, defaultValue: Sequelize.literal('snowflake_next()') },
    item: { type: DataTypes.TEXT, allowNull: false },
  }, { tableName: 'sequelize_orders', timestamps: false });
  try {
    const one = await Order.create({ item: 'one' });
    const many = await Order.bulkCreate(items(N), { returning: ['id'] });
    return compare('sequelize', 'sequelize_orders', [one, ...many].map((r) => r.get('id')));
  } finally {
    await s.close();
  }
}

async function main() {
  for (const run of [drizzle, drizzleNumber, knex, typeorm, sequelize]) {
    let out;
    try {
      out = await run();
    } catch (e) {
      out = { orm: run.name, error: String(e && e.message ? e.message : e) };
    }
    console.log(JSON.stringify(out));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
