#!/usr/bin/env node
import { type Command, runCli } from './command.js';
/**
 * `partner`: the Partner Logistics API from the terminal (docs/decisions-log.md, 'CLI and listen sessions'). Every HTTP call goes through
 * @partner-logistics/sdk; the realtime channel through socket.io-client. See README.md.
 */
import { authCommands } from './commands/auth.js';
import { keyCommands } from './commands/keys.js';
import { listenCommands } from './commands/listen.js';
import { logCommands } from './commands/logs.js';
import { offerCommands } from './commands/offers.js';
import { orderCommands } from './commands/orders.js';
import { paymentCommands } from './commands/payments.js';
import { trackCommands } from './commands/track.js';
import { triggerCommands } from './commands/trigger.js';
import { courierCommands } from './commands/trigger-courier.js';
import { webhookCommands } from './commands/webhooks.js';
import { describeError, exitCodeOf } from './output.js';

export const COMMANDS: readonly Command[] = [
  ...authCommands,
  ...keyCommands,
  ...orderCommands,
  ...offerCommands,
  ...paymentCommands,
  ...trackCommands,
  ...webhookCommands,
  ...triggerCommands,
  ...courierCommands,
  ...logCommands,
  ...listenCommands,
];

try {
  process.exitCode = await runCli(COMMANDS, process.argv.slice(2), process.env);
} catch (err) {
  process.stderr.write(`${describeError(err)}\n`);
  process.exitCode = exitCodeOf(err);
}
// Long-running commands leave sockets and timers behind once they are done: end here.
process.exit();
