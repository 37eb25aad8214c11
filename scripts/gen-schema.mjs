#!/usr/bin/env node
// Writes schema/lokocfg.schema.json from the config loader's specs (src/config/spec.ts) and every
// registered component's body spec (src/components/registry.ts), via the built modules so the
// schema is exactly what the shipped loader validates. Needs `npm run build`.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const built = path.join(root, 'dist', 'config', 'index.js');
const registry = path.join(root, 'dist', 'components', 'registry.js');

let mod;
let components;
try {
  mod = await import(pathToFileURL(built).href);
  components = await import(pathToFileURL(registry).href);
} catch (err) {
  console.error(`Cannot load the built modules (${err.message}); run \`npm run build\` first.`);
  process.exit(1);
}

const out = path.join(root, 'schema', 'lokocfg.schema.json');
await mkdir(path.dirname(out), { recursive: true });
await writeFile(
  out,
  JSON.stringify(mod.configJsonSchema(components.componentSpecs()), null, 2) + '\n',
);
console.log(`wrote ${path.relative(process.cwd(), out)}`);
