/**
 * What the CLI keeps between runs, in the user's config folder (`$PARTNER_CONFIG_DIR`, else
 * `$XDG_CONFIG_HOME/partner`, else `~/.config/partner`; the folder 0700, every file 0600):
 *
 *  - `session.json`: one session per API URL (`{ accessToken, refreshToken, user }`), written at sign-in
 *    and after every token refresh (refresh tokens are single use: the newest must be kept);
 *  - `keys.json`: the full API keys this CLI created or rotated (shown once by the API), by key id, so
 *    that `--key <id>` can call the partner API with them.
 *
 * Writes go to a temporary file that is renamed over the old one, so a reader never sees half a file.
 * `withLock` serialises token refreshes between CLI processes (a long `partner listen` and a
 * `partner keys list` in another terminal share one refresh token; presenting a used one again would
 * end the session everywhere).
 */
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredUser {
  id: string;
  phone: string;
  role: string;
  partnerId: string | null;
  partnerName: string | null;
}

export interface StoredSession {
  accessToken: string | null;
  refreshToken: string;
  user: StoredUser | null;
  savedAt: string;
}

export interface StoredKey {
  /** The full key, `svc_live_…` or `svc_sandbox_…`. */
  key: string;
  name: string;
  environment: 'LIVE' | 'SANDBOX';
  apiUrl: string;
  savedAt: string;
}

interface SessionFile {
  sessions: Record<string, StoredSession>;
}

interface KeysFile {
  keys: Record<string, StoredKey>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PARTNER_CONFIG_DIR) return env.PARTNER_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'partner');
}

const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 15_000;

export class ConfigStore {
  constructor(readonly dir: string) {}

  readSession(apiUrl: string): StoredSession | null {
    return this.read<SessionFile>('session.json', { sessions: {} }).sessions[apiUrl] ?? null;
  }

  writeSession(apiUrl: string, session: StoredSession | null): void {
    const file = this.read<SessionFile>('session.json', { sessions: {} });
    if (session) file.sessions[apiUrl] = session;
    else delete file.sessions[apiUrl];
    this.write('session.json', file);
  }

  readKey(id: string): StoredKey | null {
    return this.read<KeysFile>('keys.json', { keys: {} }).keys[id] ?? null;
  }

  keys(): Record<string, StoredKey> {
    return this.read<KeysFile>('keys.json', { keys: {} }).keys;
  }

  writeKey(id: string, key: StoredKey | null): void {
    const file = this.read<KeysFile>('keys.json', { keys: {} });
    if (key) file.keys[id] = key;
    else delete file.keys[id];
    this.write('keys.json', file);
  }

  /** Runs `fn` while holding the folder's lock file (other CLI processes wait; a stale lock is taken over). */
  async withLock<T>(fn: () => Promise<T>): Promise<T> {
    this.ensureDir();
    const path = join(this.dir, 'session.lock');
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        closeSync(openSync(path, 'wx', 0o600));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const age = Date.now() - (statMtime(path) ?? Date.now());
        if (age > LOCK_STALE_MS) rmSync(path, { force: true });
        else if (Date.now() > deadline)
          throw new Error(`${path} is held by another partner process; remove it if none is running`);
        else await new Promise((r) => setTimeout(r, 50));
      }
    }
    try {
      return await fn();
    } finally {
      rmSync(path, { force: true });
    }
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  private read<T>(name: string, empty: T): T {
    try {
      return JSON.parse(readFileSync(join(this.dir, name), 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty;
      throw new Error(`${join(this.dir, name)} is unreadable (${(err as Error).message}); delete it and sign in again`);
    }
  }

  private write(name: string, data: unknown): void {
    this.ensureDir();
    const path = join(this.dir, name);
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temporary, 0o600); // the mode of writeFileSync is masked by the umask
    renameSync(temporary, path);
  }
}

function statMtime(path: string): number | null {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return null;
  }
}
