/**
 * @module verification/stages/static-analysis/secret-paths
 * Which string literals in code name a home-directory secret or a system credential store
 * (issue #23): SSH keys and config, cloud and registry credentials, keychains and keyrings,
 * the shadow password file. Shared by the JavaScript and Python analysers, which feed it the
 * literals their parsers found (comments never reach it). A literal is matched as a path
 * fragment (`'.ssh'` alone counts: `join(homedir(), '.ssh', 'id_rsa')` splits the path).
 */

/** Path fragments of secrets a tool server has no ordinary reason to read. */
const SECRET_PATH = new RegExp(
  [
    String.raw`(^|[\/\\~])\.ssh([\/\\]|$)`,
    String.raw`\bid_(rsa|dsa|ecdsa|ed25519)(\.pub)?$|\bid_(rsa|dsa|ecdsa|ed25519)\b(?!\w)`,
    String.raw`(^|[\/\\~])\.aws([\/\\]|$)`,
    String.raw`(^|[\/\\~])\.(npmrc|netrc|pypirc|git-credentials|pgpass)$`,
    String.raw`(^|[\/\\~])\.(npmrc|netrc|pypirc|git-credentials|pgpass)[\/\\'"]`,
    String.raw`(^|[\/\\~])\.(gnupg|kube|docker)[\/\\](config(\.json)?|.*\.(gpg|kbx))?`,
    String.raw`(^|[\/\\~])\.gnupg$`,
    String.raw`(^|[\/\\])\.config[\/\\](gcloud|gh)([\/\\]|$)`,
    String.raw`Library[\/\\]Keychains|\blogin\.keychain|\bfind-(generic|internet)-password\b|\bsecret-tool\b|\bgnome-keyring\b`,
    String.raw`^\/etc\/(shadow|gshadow)$`,
  ].join('|'),
);

/** Whether a string literal's value names a home-directory secret (see the module comment). */
export function namesSecretPath(literal: string): boolean {
  if (literal.length === 0 || literal.length > 300) return false;
  return SECRET_PATH.test(literal);
}
