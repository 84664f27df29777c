// The public API of every published entry, as API Extractor reports it:
// one `api/<entry>.api.md` per subpath of each published package's `exports`,
// committed beside the package so every change of surface is seen in review.
//
//   node scripts/api-report.mjs           fail when a report differs from the built package
//   node scripts/api-report.mjs --local   rewrite the reports (after a deliberate change)
//
// Run after `npm run build`: it reads the declarations in each package's dist/.
// An export without a release tag fails either way. The report is the
// complete one: `@beta` and `@internal` items appear in it marked as such,
// so a review sees a promise weakened as well as one added.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PUBLISHED = ['packages/idempotency', 'packages/http-client', 'packages/verify'];
const local = process.argv.includes('--local');
const scratch = mkdtempSync(join(tmpdir(), 'api-report-'));
let failed = 0;
// The bundled compiler's banner says nothing a reader needs.
const quiet = (message) => {
  if (message.messageId === 'console-compiler-version-notice') message.handled = true;
};

try {
  for (const folder of PUBLISHED) {
    const projectFolder = join(root, folder);
    const packageJsonFullPath = join(projectFolder, 'package.json');
    const pkg = JSON.parse(readFileSync(packageJsonFullPath, 'utf8'));
    if (local) mkdirSync(join(projectFolder, 'api'), { recursive: true });
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      if (typeof target !== 'object' || !target.types) continue; // ./package.json
      const entry = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
      const config = ExtractorConfig.prepare({
        configObject: {
          projectFolder,
          mainEntryPointFilePath: join(projectFolder, target.types),
          compiler: { tsconfigFilePath: join(projectFolder, 'tsconfig.build.json') },
          apiReport: {
            enabled: true,
            reportFileName: `${entry}.api.md`,
            reportFolder: join(projectFolder, 'api'),
            reportTempFolder: scratch,
          },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          messages: {
            extractorMessageReporting: {
              // Declarations the entry uses but does not export are part of its surface all the same.
              'ae-forgotten-export': { logLevel: 'none' },
              // Every export says what it promises: `@public`, `@beta` (may change in a 0.x minor) or `@internal`.
              'ae-missing-release-tag': { logLevel: 'error', addToApiReportFile: false },
            },
          },
        },
        configObjectFullPath: undefined,
        packageJsonFullPath,
      });
      const result = Extractor.invoke(config, { localBuild: local, messageCallback: quiet });
      const name = `${pkg.name}${subpath === '.' ? '' : subpath.slice(1)}`;
      if (!result.succeeded) {
        failed++;
        console.error(
          `api-report: ${name}: ${result.errorCount > 0 ? `${result.errorCount} errors` : 'the API changed; run `npm run api:update` and commit api/'}`,
        );
      } else {
        console.log(`api-report: ${name}${result.apiReportChanged ? ' (report updated)' : ''}`);
      }
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(failed > 0 ? 1 : 0);
