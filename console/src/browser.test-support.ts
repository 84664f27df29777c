import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's `chromium` package (never a downloaded browser); `CHROMIUM_PATH` names another. */
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** What runs headless in a container: no sandbox, GPU, QUIC or background traffic. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a profile of its own, and how to close it and remove the profile. */
export interface OpenBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless chromium on a fresh user-data-dir. */
export async function openBrowser(): Promise<OpenBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      timeout: 120_000,
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(
      `chromium did not start from ${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH): ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
}
