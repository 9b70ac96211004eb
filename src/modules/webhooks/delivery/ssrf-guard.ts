/**
 * The HTTP agent deliveries go out through. In production it refuses to connect anywhere that is not
 * the public internet (docs/decisions-log.md, 'Webhooks'), checked where it matters, at connect time:
 *  1. a host name is resolved by our lookup, which refuses it when ANY of its addresses is forbidden
 *     (a name with one public and one private address could otherwise be steered to the private one);
 *  2. an IP-literal host (no lookup happens for those) is checked before the socket is opened;
 *  3. once connected, the address actually connected to is checked again before a single byte of the
 *     request is written, so DNS rebinding between resolution and connection gains nothing.
 * Outside production it is a plain agent: localhost endpoints are how developers and tests work.
 * Redirects are never followed (undici's request does not follow them), so a 3xx cannot lead inside.
 */
import dns, { type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { isForbiddenAddress } from '../url-policy.js';

export class BlockedAddressError extends Error {
  readonly code = 'E_WEBHOOK_ADDRESS_BLOCKED';
  constructor(host: string) {
    super(`refusing to connect to ${host}: not a public address`);
    this.name = 'BlockedAddressError';
  }
}

type BaseLookup = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

const systemLookup: BaseLookup = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/** A `lookup` for net/tls.connect that fails for names resolving to any forbidden address. */
export function guardedLookup(base: BaseLookup = systemLookup): LookupFunction {
  return ((hostname: string, options: LookupOneOptions | LookupAllOptions, callback: (...args: unknown[]) => void) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err);
      if (addresses.length === 0) {
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
      }
      if (addresses.some((a) => isForbiddenAddress(a.address))) return callback(new BlockedAddressError(hostname));
      // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily), else for one.
      if ((options as LookupAllOptions).all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  }) as LookupFunction;
}

export interface DeliveryAgentOptions {
  production: boolean;
  connectTimeoutMs: number;
  /** Replaces the system resolver (tests). */
  lookup?: BaseLookup;
}

export function createDeliveryAgent(options: DeliveryAgentOptions): Agent {
  const common = { keepAliveTimeout: 4_000, keepAliveMaxTimeout: 30_000 };
  if (!options.production) return new Agent({ ...common, connect: { timeout: options.connectTimeoutMs } });

  const connectDirect = buildConnector({ timeout: options.connectTimeoutMs, lookup: guardedLookup(options.lookup) });
  const connect: buildConnector.connector = (target, callback) => {
    const literal = target.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(literal) && isForbiddenAddress(literal)) return callback(new BlockedAddressError(target.hostname), null);
    connectDirect(target, (err, socket) => {
      if (err || !socket) return callback(err ?? new Error('connection failed'), null);
      const remote = socket.remoteAddress;
      if (!remote || isForbiddenAddress(remote)) {
        socket.destroy();
        return callback(new BlockedAddressError(target.hostname), null);
      }
      callback(null, socket);
    });
  };
  return new Agent({ ...common, connect });
}
