/**
 * The command table and its parser: each command is a path of words (`keys create`), its options (Node's
 * own util.parseArgs, with the global ones merged in), a help text built from the same declarations, and
 * a `run` that gets a context with the output, the config folder and the SDK clients.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { DeveloperClient, PartnerClient } from '@partner-logistics/sdk';
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
  /** The positionals, as the usage line shows them: `<code> <status>`. */
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
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

function optionLabel(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '';
  return `${short}--${name}${spec.type === 'string' ? ` ${spec.placeholder ?? '<value>'}` : ''}`;
}

function optionLines(options: Record<string, OptionSpec>): string[] {
  const labels = Object.entries(options).map(([name, spec]) => [optionLabel(name, spec), spec.description] as const);
  const width = Math.max(...labels.map(([label]) => label.length));
  return labels.map(([label, description]) => `  ${label.padEnd(width)}  ${description}`);
}

export function commandHelp(command: Command): string {
  const lines = [
    `Usage: partner ${command.path.join(' ')}${command.args ? ` ${command.args}` : ''} [options]`,
    '',
    command.summary,
  ];
  if (command.options && Object.keys(command.options).length > 0) lines.push('', 'Options:', ...optionLines(command.options));
  lines.push('', 'Global options:', ...optionLines(GLOBAL_OPTIONS));
  if (command.examples?.length) lines.push('', 'Examples:', ...command.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}

export function overviewHelp(commands: readonly Command[], prefix: string[] = []): string {
  const shown = commands.filter((c) => prefix.every((word, i) => c.path[i] === word));
  const names = shown.map((c) => `partner ${c.path.join(' ')}${c.args ? ` ${c.args}` : ''}`);
  const width = Math.max(...names.map((n) => n.length));
  return [
    prefix.length ? `Usage: partner ${prefix.join(' ')} <command> [options]` : 'Usage: partner <command> [options]',
    '',
    ...shown.map((c, i) => `  ${names[i].padEnd(width)}  ${c.summary}`),
    '',
    'Run `partner <command> --help` for a command’s options. Global options:',
    ...optionLines(GLOBAL_OPTIONS),
  ].join('\n');
}

/** Runs the command `argv` names; resolves with the exit code. */
export async function runCli(commands: readonly Command[], argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const words: string[] = [];
  for (const arg of argv) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  let command: Command | undefined;
  for (let n = words.length; n > 0 && !command; n--) {
    command = commands.find((c) => c.path.length === n && c.path.every((w, i) => w === words[i]));
  }
  const early = createOutput(false);
  if (!command) {
    const group = commands.some((c) => words.length > 0 && c.path[0] === words[0]) ? words.slice(0, 1) : [];
    const asked = argv.length === 0 || argv.includes('--help') || argv.includes('-h') || argv[0] === 'help';
    if (asked || (group.length > 0 && words.length === 1)) {
      early.line(overviewHelp(commands, group));
      return asked ? 0 : 2;
    }
    early.note(`Error: unknown command \`${words.join(' ')}\`\n\n${overviewHelp(commands, group)}`);
    return 2;
  }

  const options = { ...command.options, ...GLOBAL_OPTIONS };
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.slice(command.path.length),
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ) as ParseArgsConfig['options'],
      allowPositionals: true,
      strict: true,
    }) as { values: Values; positionals: string[] };
  } catch (err) {
    early.note(`Error: ${(err as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    early.line(commandHelp(command));
    return 0;
  }
  const { min, max } = command.positionals ?? { min: 0, max: 0 };
  if (positionals.length < min || positionals.length > max) {
    early.note(`Error: expected ${command.args ?? 'no arguments'}\n\n${commandHelp(command)}`);
    return 2;
  }

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
