/**
 * @module plugins/npm-failure
 * npm's stderr after a failed `npm install`, cut to what tells the user why: npm's own words,
 * without its advice boilerplate and with credentials in registry URLs masked. A package or
 * version the registry does not have (E404, ETARGET) becomes one line naming it.
 */

/** Lines npm prints on every 404 that say nothing about this one. */
const BOILERPLATE = [/^npm error 404\s*$/, /Note that you can also install from a/, /tarball, folder, http url, or git url/, /^npm error A complete log of this run can be found in/];

/** The reason a failed `npm install` gives, from its stderr (at most `maxLines` lines). */
export function npmFailureReason(stderr: string, maxLines = 12): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !/^npm (warn|notice)/i.test(line));
  const code = lines.map((line) => /^npm error code (E[A-Z0-9]+)/.exec(line)?.[1]).find((found) => found !== undefined);
  if (code === 'E404') {
    const missing = lines.map((line) => /'([^']+)' could not be found/.exec(line)?.[1]).find((found) => found !== undefined);
    const request = lines.map((line) => /404 Not Found - (GET \S+)/.exec(line)?.[1]).find((found) => found !== undefined);
    if (missing !== undefined) return mask(`the registry has no package ${missing.replace(/@\*$/, '')} (npm E404${request ? `, ${request}` : ''})`);
  }
  if (code === 'ETARGET') {
    const wanted = lines.map((line) => /No matching version found for (\S+?)\.?$/.exec(line)?.[1]).find((found) => found !== undefined);
    if (wanted !== undefined) return mask(`the registry has no version matching ${wanted} (npm ETARGET)`);
  }
  return mask(
    lines
      .filter((line) => !BOILERPLATE.some((pattern) => pattern.test(line)))
      .slice(-maxLines)
      .join('\n'),
  );
}

/** `https://user:token@host` → `https://user:***@host`. */
function mask(text: string): string {
  return text.replace(/(\/\/[^/\s:]+:)[^@\s]+@/g, '$1***@');
}
