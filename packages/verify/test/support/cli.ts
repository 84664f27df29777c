import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** The built command, run as CI runs it (turbo builds it before the tests); throws with how to build it when missing. */
export function builtCli(): string {
  const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: npx turbo run build --filter=@idempotency-chain/verify`);
  return cli;
}
