/**
 * npm run sdk:generate: builds the app in process (embedded database in memory, nothing kept, no port),
 * takes the documents it serves and writes the SDK's generated types.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { createContext } from '../../../src/context.js';
import { checkedIn, renderAll, SDK_ROOT } from './codegen.js';

// A fixed configuration: the documents must not depend on the caller's environment.
const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: 'memory://', LOG_LEVEL: 'silent' });
const ctx = await createContext(config);
const app = await buildApp(ctx, 'LIVE');
try {
  await app.ready();
  for (const { file, text } of await renderAll(app)) {
    const path = join(SDK_ROOT, file);
    const changed = checkedIn(file) !== text;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    console.log(`${changed ? 'wrote    ' : 'unchanged'} packages/sdk/${file}`);
  }
} finally {
  await app.close();
  await ctx.close();
}
