import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { DEFAULTS_FILE, PROJECT_ROOT } from '../src/config/load.ts';
import { defaultsText, tableRegion, tableText } from './config-reference.ts';

/**
 * `npm run config:docs`: writes config/default.json and the configuration table (between its
 * markers) from the schema, src/config/schema.ts. Run it after changing a key.
 */
writeFileSync(DEFAULTS_FILE, defaultsText());
const region = tableRegion();
writeFileSync(region.file, `${region.text.slice(0, region.start)}${tableText()}\n${region.text.slice(region.end)}`);
process.stdout.write(`wrote ${relative(PROJECT_ROOT, DEFAULTS_FILE)} and the table in ${relative(PROJECT_ROOT, region.file)}\n`);
