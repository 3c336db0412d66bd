// An application written the JavaScript ORMs' ordinary way, its sequences adopted by pg_idgen
// (docs/adopting.md, "Adopting sequences"): not one line of it mentions pg_idgen.
//   npm install pg@8 knex@3 sequelize@6
//   node examples/adopted_orm.js 'postgres://postgres@127.0.0.1:5432/db' create   # the schema, as the ORMs make it
//   node examples/adopted_orm.js 'postgres://postgres@127.0.0.1:5432/db' run      # after idgen.adopt_sequences
// - Knex: table.bigIncrements('id') (a bigserial); insert(...).returning('id'), one row and 100;
// - Sequelize: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true } (a bigserial, made
//   by sync()); create() and bulkCreate();
// - node-postgres: the application's own nextval().
// `run` prints one JSON line: the keys each handed back, as strings (bigint arrives as a string).
const { Client } = require('pg');
const knexLib = require('knex');
const { Sequelize, DataTypes } = require('sequelize');

const url = process.argv[2];
const step = process.argv[3];

function models(sequelize) {
  return sequelize.define('Ticket', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    title: DataTypes.STRING,
  }, { tableName: 'sq_tickets', timestamps: false });
}

async function main() {
  const knex = knexLib({ client: 'pg', connection: url });
  const sequelize = new Sequelize(url, { logging: false });
  const Ticket = models(sequelize);
  try {
    if (step === 'create') {
      await knex.schema.createTable('kx_items', (t) => { t.bigIncrements('id'); t.string('sku'); });
      await Ticket.sync();
      console.log(JSON.stringify({ created: true }));
      return;
    }
    const out = {};
    const one = await knex('kx_items').insert({ sku: 'one' }).returning('id');
    const many = await knex('kx_items').insert([...Array(100).keys()].map((i) => ({ sku: `s${i}` }))).returning('id');
    out.knex = [...one, ...many].map((r) => String(r.id));
    const t = await Ticket.create({ title: 'one' });
    const ts = await Ticket.bulkCreate([...Array(100).keys()].map((i) => ({ title: `t${i}` })), { returning: true });
    out.sequelize = [t, ...ts].map((r) => String(r.id));
    const c = new Client({ connectionString: url });
    await c.connect();
    const { rows } = await c.query("SELECT nextval('kx_items_id_seq')::text AS id");
    await c.end();
    out.nextval = rows.map((r) => r.id);
    console.log(JSON.stringify(out));
  } finally {
    await knex.destroy();
    await sequelize.close();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
