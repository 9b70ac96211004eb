import { describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { computeSignature, generateSigningSecret, signatureHeader, verifySignature } from './delivery/signature.js';
import { assertWebhookUrlAllowed, isForbiddenAddress } from './url-policy.js';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.1',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::ffff:0:127.0.0.1',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '::127.0.0.1',
    '[::1]',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700::1111',
    '2a00:1450:4001::200e',
    '::ffff:8.8.8.8',
  ])('allows the public address %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('assertWebhookUrlAllowed', () => {
  const check = (url: string, production: boolean) => {
    try {
      assertWebhookUrlAllowed(url, { production });
      return 'ok';
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('ERR_WEBHOOK_URL_INVALID');
      return 'refused';
    }
  };

  it('allows http only for localhost, 127.0.0.1 and [::1], and only outside production', () => {
    for (const url of ['http://localhost:3000/h', 'http://127.0.0.1/h', 'http://[::1]:8080/h']) {
      expect(check(url, false), url).toBe('ok');
      expect(check(url, true), url).toBe('refused');
    }
    for (const url of ['http://127.0.0.2/h', 'http://example.com/h', 'http://localhost.example.com/h']) {
      expect(check(url, false), url).toBe('refused');
    }
  });

  it('refuses credentials, other schemes, stray whitespace and URLs over 2048 characters', () => {
    for (const url of [
      'https://user@example.com/',
      'https://user:pw@example.com/',
      'ws://example.com/',
      'file:///etc/passwd',
      'https://example.com/\n',
      'https://exa mple.com/',
      `https://example.com/${'x'.repeat(2030)}`,
    ]) {
      expect(check(url, false), url).toBe('refused');
    }
    expect(check(`https://example.com/${'x'.repeat(2000)}`, false)).toBe('ok');
    expect(check('https://example.com/path@with-at?x=@', false)).toBe('ok');
  });

  it('refuses URLs written without the two slashes, which the URL parser would quietly add', () => {
    for (const url of [
      'https:example.com/h',
      'https:/example.com/h',
      'http:/localhost/h',
      'http:localhost:3000/h',
      'https:///example.com',
    ]) {
      expect(check(url, false), url).toBe('refused');
    }
    expect(check('HTTPS://example.com/h', false)).toBe('ok');
  });

  it('allows private addresses outside production (developers point at their own machines)', () => {
    expect(check('https://10.0.0.5/hook', false)).toBe('ok');
    expect(check('https://10.0.0.5/hook', true)).toBe('refused');
  });
});

describe('signatures', () => {
  it('signs "t.body" with HMAC-SHA256 keyed with the secret string', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const header = signatureHeader(secret, 1_700_000_000, '{"a":1}');
    expect(header).toBe(`t=1700000000,v1=${computeSignature(secret, 1_700_000_000, '{"a":1}')}`);
    expect(verifySignature(header, '{"a":1}', secret, { nowSec: 1_700_000_100 })).toBe(true);
    expect(verifySignature(header, '{"a":2}', secret, { nowSec: 1_700_000_100 })).toBe(false);
    expect(verifySignature(header, '{"a":1}', `${secret}x`, { nowSec: 1_700_000_100 })).toBe(false);
    expect(verifySignature(header, '{"a":1}', secret, { nowSec: 1_700_000_301 })).toBe(false);
    expect(verifySignature('t=abc,v1=00', '{"a":1}', secret)).toBe(false);
  });
});
