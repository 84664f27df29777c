/**
 * What the scratch app installs from the npm registry besides the two packed
 * libraries: one NestJS major per install, the newest release of each, and
 * the peers the `./nest` and `./redis` entries need.
 */
export const NEST_MAJORS = [11, 12] as const;

/** A NestJS major the scratch app is installed against. */
export type NestMajor = (typeof NEST_MAJORS)[number];

/** The scratch app's `dependencies` and `devDependencies` for one NestJS major. */
export function scratchDependencies(major: NestMajor): { dependencies: Record<string, string>; devDependencies: Record<string, string> } {
  return {
    dependencies: {
      '@nestjs/common': `^${major}.0.0`,
      '@nestjs/core': `^${major}.0.0`,
      '@nestjs/platform-express': `^${major}.0.0`,
      ioredis: '^6.0.0',
      'prom-client': '^15.0.0',
      'reflect-metadata': '^0.2.2',
      rxjs: '^7.8.0',
    },
    devDependencies: { '@types/node': '^20.19.0' },
  };
}
