import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const api = process.env.PORTAL_API ?? 'http://localhost:3000';

// The developer portal: a single-page app served under /portal by the API process.
export default defineConfig({
  root,
  base: '/portal/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  // `npx vite --config portal/vite.config.ts`: hot reload on :5173 against an API running on :3000.
  server: {
    proxy: {
      '/v1': api,
      '/socket.io': { target: api, ws: true },
    },
  },
});
