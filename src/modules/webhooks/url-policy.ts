/**
 * Where webhooks may point (docs/decisions-log.md, 'Webhooks').
 *
 * Two layers, because a URL that looks public can still lead inside the network:
 *  1. `assertWebhookUrlAllowed` runs when a URL is saved: HTTPS only (plain http for localhost outside
 *     production), no credentials, bounded length, and in production no IP literal in a non-public
 *     range and no localhost name.
 *  2. `isForbiddenAddress` runs at connect time in production (delivery/ssrf-guard.ts) on every address
 *     a host name resolves to and on the address actually connected to, so DNS rebinding and names
 *     that resolve to private addresses are refused too.
 */
import { BlockList, isIP } from 'node:net';
import { AppError } from '../../errors.js';
import { MAX_WEBHOOK_URL_LENGTH } from './webhooks.schemas.js';

// Every range that is not the public internet: "this network", private, shared (CGNAT), loopback,
// link-local (cloud metadata lives at 169.254.169.254), IETF/documentation/benchmark nets, multicast,
// reserved; for IPv6 ::/96 (unspecified, loopback, deprecated IPv4-compatible), link-local, unique-local (fd00:ec2::254 is AWS metadata),
// site-local, multicast, documentation, discard and Teredo.
const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 96],
  ['fe80::', 10],
  ['fc00::', 7],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['2001::', 32],
  ['100::', 64],
] as const) {
  BLOCKED.addSubnet(net, prefix, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (zone id dropped, embedded dotted quad expanded). */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const octets = dotted[1].split('.').map(Number);
    if (octets.some((o) => o > 255)) return null;
    text = `${text.slice(0, -dotted[1].length)}${((octets[0] << 8) | octets[1]).toString(16)}:${((octets[2] << 8) | octets[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => Number.parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function ipv4FromGroups(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach an IPv4 host: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
 * (2002:AABB:CCDD::).
 */
function embeddedIpv4(groups: number[]): string | null {
  const zeros = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zeros(0, 5) && groups[5] === 0xffff) return ipv4FromGroups(groups[6], groups[7]);
  if (zeros(0, 4) && groups[4] === 0xffff && groups[5] === 0) return ipv4FromGroups(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zeros(2, 6)) return ipv4FromGroups(groups[6], groups[7]);
  if (groups[0] === 0x2002) return ipv4FromGroups(groups[1], groups[2]);
  return null;
}

/** True when an IP address is not on the public internet (or is not an IP address at all). */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare.split('%')[0]);
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  if (family !== 6) return true;
  const groups = ipv6Groups(bare);
  if (!groups) return true;
  const v4 = embeddedIpv4(groups);
  if (v4) return BLOCKED.check(v4, 'ipv4');
  return BLOCKED.check(groups.map((g) => g.toString(16)).join(':'), 'ipv6');
}

const LOCAL_HTTP_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function invalid(message: string): AppError {
  return new AppError('ERR_WEBHOOK_URL_INVALID', message);
}

/** Throws 400 ERR_WEBHOOK_URL_INVALID unless `raw` is a URL webhooks may be sent to. */
export function assertWebhookUrlAllowed(raw: string, options: { production: boolean }): void {
  if (raw.length === 0) throw invalid('url must not be empty');
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) throw invalid(`url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  // The URL parser silently trims and drops some characters; refuse them instead of storing one URL
  // and calling another.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw invalid('url must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url is not a valid absolute URL');
  }
  // `https:example.com` and `http:/localhost` parse as if the slashes were there: refuse the sloppy
  // form rather than store one text and call another URL.
  if (!/^https?:\/\/[^/\\]/i.test(raw) && (url.protocol === 'https:' || url.protocol === 'http:')) {
    throw invalid('url must start with https:// followed by the host');
  }
  // `https://@host` parses with an empty user name; look at the authority as written, too.
  const authority = raw.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').split(/[/?#\\]/)[0];
  if (url.username || url.password || authority.includes('@')) {
    throw invalid('url must not contain credentials');
  }
  const host = url.hostname.toLowerCase();
  if (!host) throw invalid('url must name a host');
  if (url.protocol === 'http:') {
    if (options.production) throw invalid('url must use https');
    if (!LOCAL_HTTP_HOSTS.has(host)) throw invalid('url must use https (plain http is accepted for localhost only)');
    return;
  }
  if (url.protocol !== 'https:') throw invalid('url must use https');
  if (!options.production) return;

  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (isIP(literal)) {
    if (isForbiddenAddress(literal)) throw invalid('url must not point to a private, loopback, link-local or reserved address');
    return;
  }
  if (host === 'localhost' || host.endsWith('.localhost')) throw invalid('url must not point to localhost');
  if (!host.includes('.')) throw invalid('url must name a public host');
}
