/** Where the CLI entry lives: the fresh compiled build, or the TypeScript sources. */
export function resolveEntry(): { kind: 'dist' | 'src'; root: string };
