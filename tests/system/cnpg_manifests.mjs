// Validates CloudNativePG manifests against the schema of CloudNativePG's own API, as compiled by
// the npm package @kubernetes-models/cloudnative-pg (generated from CloudNativePG's Go API types,
// the ones its CRDs are generated from). For tests/system/image.sh.
//
// Usage: node cnpg_manifests.mjs MODULES_DIR < manifests.json
//   MODULES_DIR: where `npm install @kubernetes-models/cloudnative-pg` put node_modules;
//   manifests.json: an array of manifests (Cluster or Database).
// Prints one line a manifest: "valid <kind> <name>" or "invalid <kind> <name>: <what the schema says>".
import { readFileSync } from "node:fs";

const modules = process.argv[2];
const models = `${modules}/node_modules/@kubernetes-models/cloudnative-pg/postgresql.cnpg.io/v1`;
const kinds = {
  Cluster: (await import(`${models}/Cluster.js`)).Cluster,
  Database: (await import(`${models}/Database.js`)).Database,
};
for (const manifest of JSON.parse(readFileSync(0, "utf8"))) {
  const Kind = kinds[manifest.kind];
  const what = `${manifest.kind} ${manifest.metadata?.name}`;
  if (!Kind) {
    console.log(`invalid ${what}: not a kind this validates`);
    continue;
  }
  try {
    new Kind(manifest).validate();
    console.log(`valid ${what}`);
  } catch (e) {
    console.log(`invalid ${what}: ${String(e.message).split("\n")[0]}`);
  }
}
