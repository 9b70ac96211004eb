/** `partner login`, `partner logout`, `partner whoami`. */
import { createInterface } from 'node:readline/promises';
import { PartnerApiError } from '@partner-logistics/sdk';
import type { Command } from '../command.js';
import { flag, stringOption, text } from '../command.js';
import { CliError } from '../output.js';
import { developerClient } from '../session.js';

/** Reads one answer: from the terminal, or the next line of a piped stdin. */
async function ask(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY === true });
  try {
    const answer = await rl.question(question);
    return answer.trim();
  } catch {
    throw new CliError(`no answer to "${question.trim()}" (stdin closed)`, 2);
  } finally {
    rl.close();
  }
}

export const authCommands: Command[] = [
  {
    path: ['login'],
    summary: 'Sign in with your phone and a one-time code (the tokens are kept in your config folder)',
    options: {
      phone: text('<+994…>', 'the phone of your partner account (asked when not given)'),
      code: text('<123456>', 'the one-time code, for scripts (asked when not given)'),
      'code-sent': flag('a code was already requested for this phone: only check it'),
    },
    examples: ['partner login', 'partner login --phone +994501234567 --code 123456   # OTP_FIXED_CODE servers, scripts'],
    async run(ctx, values) {
      const phone = stringOption(values, 'phone') ?? (await ask('Phone (+994…): '));
      const dev = developerClient(ctx.store, ctx.endpoints.apiUrl, { signedIn: false });
      if (!values['code-sent']) {
        const sent = await dev.requestCode(phone);
        ctx.out.note(`A 6-digit code was sent to ${phone}; it is valid ${Math.round(sent.expiresInSec / 60)} min.`);
      }
      const code = stringOption(values, 'code') ?? (await ask('Code: '));
      const tokens = await dev.verifyCode(phone, code);
      if (tokens.user.role !== 'PARTNER') {
        await dev.signOut().catch(() => {});
        throw new CliError(`${phone} is a ${tokens.user.role} account: the developer API is for partner accounts`);
      }
      ctx.out.result({ user: tokens.user, apiUrl: ctx.endpoints.apiUrl }, () =>
        ctx.out.line(`Signed in as ${tokens.user.phone} (${tokens.user.partnerName}) on ${ctx.endpoints.apiUrl}`),
      );
    },
  },
  {
    path: ['logout'],
    summary: 'End the session (on the server too) and forget its tokens',
    async run(ctx) {
      if (!ctx.store.readSession(ctx.endpoints.apiUrl)) {
        ctx.out.result({ signedOut: true }, () => ctx.out.line(`Not signed in to ${ctx.endpoints.apiUrl}`));
        return;
      }
      try {
        await ctx.developer().signOut();
      } catch (err) {
        // A session the server already ended (expired, signed out elsewhere) is as good as signed out.
        if (!(err instanceof PartnerApiError && err.status === 401)) throw err;
      } finally {
        // Forgotten here even when the server could not be told (the tokens expire by themselves).
        ctx.store.writeSession(ctx.endpoints.apiUrl, null);
      }
      ctx.out.result({ signedOut: true }, () => ctx.out.line(`Signed out of ${ctx.endpoints.apiUrl}`));
    },
  },
  {
    path: ['whoami'],
    summary: 'Show the signed-in account (and check that the session still works)',
    async run(ctx) {
      const keys = await ctx.developer().keys.list(); // refreshes the access token when it has expired
      const user = ctx.store.readSession(ctx.endpoints.apiUrl)?.user ?? null;
      ctx.out.result({ user, apiUrl: ctx.endpoints.apiUrl, keys: keys.items.length }, () =>
        ctx.out.record([
          ['Phone', user?.phone],
          ['Partner', user?.partnerName],
          ['Role', user?.role],
          ['API', ctx.endpoints.apiUrl],
          ['Keys', `${keys.items.filter((k) => k.isActive).length} active of ${keys.items.length}`],
        ]),
      );
    },
  },
];
