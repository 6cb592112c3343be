import pkg from '../package.json' with { type: 'json' };

/** The package version of this build, shown by `--version` and health `release`. */
export const RELEASE: string = pkg.version;
