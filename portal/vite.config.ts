import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const api = process.env.PORTAL_API ?? 'http://localhost:3000';

/**
 * A Brotli and a gzip copy beside every script and style sheet of the build: the server sends the one
 * the browser accepts (docs/portal.md, "Building and testing"), compressed once here rather than on
 * every first load.
 */
function precompressed(): Plugin {
  return {
    name: 'portal-precompressed',
    apply: 'build',
    writeBundle(options, bundle) {
      const dir = options.dir ?? join(root, 'dist');
      for (const file of Object.keys(bundle)) {
        if (!/\.(js|css)$/.test(file)) continue;
        const path = join(dir, file);
        const source = readFileSync(path);
        writeFileSync(`${path}.br`, brotliCompressSync(source, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
        writeFileSync(`${path}.gz`, gzipSync(source, { level: 9 }));
      }
    },
  };
}

// The developer portal: a single-page app served under /portal by the API process.
export default defineConfig({
  root,
  base: '/portal/',
  plugins: [react(), precompressed()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  // `npx vite --config portal/vite.config.ts`: hot reload on :5173 against an API running on :3000.
  server: {
    proxy: {
      '/v1': api,
      '/socket.io': { target: api, ws: true },
    },
  },
});
