/**
 * The command table, run by commander: each command is a path of words (`keys create`), its options, its
 * positionals and examples, declared as data, and a `run` that gets a context with the output, the config
 * folder and the SDK clients. commander parses the arguments, checks them and writes the help.
 */
import type { DeveloperClient, PartnerClient } from '@partner-logistics/sdk';
import { CommanderError, Option, Command as Program } from 'commander';
import { ConfigStore, configDir } from './config-store.js';
import { CliError, createOutput, type Output } from './output.js';
import { developerClient, type Endpoints, partnerClient } from './session.js';

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  /** Shown in the help after the option: `--key <id>`. */
  placeholder?: string;
  description: string;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  out: Output;
  store: ConfigStore;
  endpoints: Endpoints;
  env: NodeJS.ProcessEnv;
  /** Resolves when the user interrupts (Ctrl-C, SIGTERM): long-running commands stop then. */
  interrupted: Promise<void>;
  /** The developer client of the stored session (throws when signed out). */
  developer(): DeveloperClient;
  /** A partner client for `--key <id>` or PARTNER_API_KEY. */
  partner(keyId?: string): PartnerClient;
}

export interface Command {
  path: string[];
  summary: string;
  /** The positionals, as the usage line shows them: `<code> <status>`, `<code…>` for one or more. */
  args?: string;
  /** How many positionals it takes (default: none). */
  positionals?: { min: number; max: number };
  options?: Record<string, OptionSpec>;
  examples?: string[];
  run(ctx: Context, values: Values, positionals: string[]): Promise<void>;
}

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  'api-url': text('<url>', 'the API (live listener); env PARTNER_API_URL, default http://localhost:3000'),
  'sandbox-url': text(
    '<url>',
    'the sandbox listener, for partner calls with a sandbox key; env PARTNER_SANDBOX_URL, default http://localhost:3001',
  ),
  json: flag('print the API’s JSON instead of tables'),
};

function toOption(name: string, spec: OptionSpec): Option {
  const value = spec.type === 'string' ? ` ${spec.placeholder ?? '<value>'}` : '';
  const option = new Option(`${spec.short ? `-${spec.short}, ` : ''}--${name}${value}`, spec.description);
  return spec.multiple ? option.argParser((v: string, previous: string[] = []) => [...previous, v]) : option;
}

/** The options as the commands read them: by their names (`page-size`, `no-customer`), not commander's. */
function valuesOf(options: Record<string, OptionSpec>, opts: Record<string, unknown>): Values {
  return Object.fromEntries(
    Object.keys(options).map((name) => {
      const attribute = new Option(`--${name}`).attributeName();
      // commander reads `--no-x` as x = false.
      return [name, name.startsWith('no-') ? opts[attribute] === false || undefined : (opts[attribute] as Values[string])];
    }),
  );
}

/** The program: one commander command per path, grouped by their first word. */
function program(commands: readonly Command[], env: NodeJS.ProcessEnv, exit: { code: number }): Program {
  const root = new Program('partner')
    .exitOverride()
    .showHelpAfterError()
    // A command's options follow its words (`partner offers accept ID --key K`): `offers` does not take
    // the `--key` of `offers accept`.
    .enablePositionalOptions();
  const made = new Map<string, Program>();
  const at = (path: string[]): Program => {
    const key = path.join(' ');
    let cmd = made.get(key);
    if (!cmd) {
      cmd = (path.length === 1 ? root : at(path.slice(0, -1))).command(path[path.length - 1]);
      cmd.exitOverride().showHelpAfterError();
      made.set(key, cmd);
    }
    return cmd;
  };
  for (const command of commands) {
    const cmd = at(command.path).description(command.summary);
    const options = { ...command.options, ...GLOBAL_OPTIONS };
    for (const [name, spec] of Object.entries(options)) cmd.addOption(toOption(name, spec));
    for (const arg of command.args?.split(' ') ?? []) cmd.argument(arg.replace('…', '...'));
    if (command.examples?.length)
      cmd.addHelpText('after', ['', 'Examples:', ...command.examples.map((e) => `  ${e}`)].join('\n'));
    cmd.action(async (...received: unknown[]) => {
      const self = received[received.length - 1] as Program;
      const { max } = command.positionals ?? { max: 0 };
      if (self.args.length > max) self.error(`error: ${command.args} takes at most ${max}`);
      exit.code = await runCommand(command, valuesOf(options, self.opts()), self.args, env);
    });
  }
  // A group (`keys`) is described by its commands.
  for (const cmd of made.values()) {
    if (!cmd.description()) cmd.description(`${cmd.commands.map((c) => c.name()).join(', ')}`);
  }
  return root;
}

async function runCommand(command: Command, values: Values, positionals: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const endpoints: Endpoints = {
    apiUrl: trimSlash((values['api-url'] as string | undefined) ?? env.PARTNER_API_URL ?? 'http://localhost:3000'),
    sandboxUrl: trimSlash((values['sandbox-url'] as string | undefined) ?? env.PARTNER_SANDBOX_URL ?? 'http://localhost:3001'),
  };
  const store = new ConfigStore(configDir(env));
  const interrupted = new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  let developer: DeveloperClient | null = null;
  const ctx: Context = {
    out: createOutput(values.json === true),
    store,
    endpoints,
    env,
    interrupted,
    developer: () => {
      developer ??= developerClient(store, endpoints.apiUrl, { signedIn: true });
      return developer;
    },
    partner: (keyId) => partnerClient(store, endpoints, keyId, env),
  };
  await command.run(ctx, values, positionals);
  return 0;
}

/**
 * Runs the command `argv` names; resolves with the exit code: 0 (help included), 2 for a usage mistake
 * (commander has said what and shown the help). A failure of the command itself is thrown.
 */
export async function runCli(commands: readonly Command[], argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const exit = { code: 0 };
  try {
    await program(commands, env, exit).parseAsync(argv, { from: 'user' });
    return exit.code;
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // Help asked for (or `partner` alone) is an answer; anything else commander refused is a usage mistake.
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || argv.length === 0 ? 0 : 2;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

// --- Declaring options and arguments ---------------------------------------------------------------

/** An option with a value: `--key <id>`. */
export function text(placeholder: string, description: string): OptionSpec {
  return { type: 'string', placeholder, description };
}

/** An option without a value: `--all`. */
export function flag(description: string): OptionSpec {
  return { type: 'boolean', description };
}

/** Exactly these positionals, in this order: `...takes('<code>', '<status>')`. */
export function takes(...names: string[]): Pick<Command, 'args' | 'positionals'> {
  return { args: names.join(' '), positionals: { min: names.length, max: names.length } };
}

/** `--page` and `--page-size` of a paged list (read them with `pageQuery`). */
export const PAGE_OPTIONS: Record<string, OptionSpec> = {
  page: text('<n>', 'page number, default 1'),
  'page-size': text('<n>', '1 to 50, default 20'),
};

// --- Reading option values --------------------------------------------------------------------------

export function stringOption(values: Values, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function requiredOption(values: Values, name: string): string {
  const v = stringOption(values, name);
  if (v === undefined || v === '') throw new CliError(`--${name} is required`, 2);
  return v;
}

/** A comma-separated list (`--events a,b`, or the option repeated). */
export function listOption(values: Values, name: string): string[] | undefined {
  const v = values[name];
  if (v === undefined || typeof v === 'boolean') return undefined;
  const items = (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim());
  return items.filter((s) => s !== '');
}

export function intOption(values: Values, name: string): number | undefined {
  const v = stringOption(values, name);
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) throw new CliError(`--${name} must be a whole number, not "${v}"`, 2);
  return Number(v);
}

/** An instant: an ISO date-time, or a duration back from now (`90s`, `15m`, `2h`, `7d`). */
export function timeOption(values: Values, name: string): string | undefined {
  const v = stringOption(values, name);
  if (v === undefined) return undefined;
  const ago = /^(\d+)\s*(s|m|h|d)$/.exec(v);
  if (ago) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(Date.now() - Number(ago[1]) * unit).toISOString();
  }
  const at = new Date(v);
  if (Number.isNaN(at.getTime()))
    throw new CliError(`--${name} must be a date-time (2026-11-24T10:00:00Z) or a duration (15m, 2h, 7d), not "${v}"`, 2);
  return at.toISOString();
}

/** The `page` and `pageSize` of a paged list from PAGE_OPTIONS. */
export function pageQuery(values: Values): { page: number; pageSize: number } {
  return { page: intOption(values, 'page') ?? 1, pageSize: intOption(values, 'page-size') ?? 20 };
}
