/** `loko version`: the version of loko and of Node.js. */
import { Command } from 'commander';
import { ExitCode } from '../util/errors.js';
import { version } from '../version.js';
import type { RunAction } from './shared/context.js';

/** Defines the command. */
export function versionCommand(runAction: RunAction): Command {
  return new Command('version').description('print the version of loko').action(
    runAction(async (ctx) => {
      if (ctx.host.format === 'json') ctx.host.json({ version: version(), node: process.version });
      else ctx.host.out(`loko ${version()} (node ${process.version})`);
      return ExitCode.ok;
    }),
  );
}
