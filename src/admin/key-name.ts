/**
 * The rule for a client key's name made through the admin API (`POST /admin/api/keys`, so also
 * `switchyard keys create NAME` and the dashboard's Keys form, SPEC 2.2, 9.3): the config file's rule for
 * `keys[].name` (letters, digits, ".", "_" and "-", starting with a letter or digit), at most
 * {@link MAX_KEY_NAME} characters, surrounding whitespace ignored. A key name is typed on command lines
 * (`keys revoke NAME`), put in URL paths, shown in tables and filters and named in alerts (`key:NAME`):
 * spaces, quotes, slashes, control and invisible characters would make it hard to type, read or tell apart.
 * Keys stored before this rule keep their names (listing and revoking them still work).
 */

/** The longest key name the admin API accepts, in characters. */
export const MAX_KEY_NAME = 64;

/** The config file's id rule (src/config/schema.ts `id`). */
const KEY_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** `name` quoted for a message, every character outside printable ASCII written as `\u{…}` (so an invisible one shows). */
export function quotedName(name: string): string {
  const chars = [...name];
  let out = "";
  for (const ch of chars.slice(0, 40)) {
    const c = ch.codePointAt(0)!;
    out += c < 0x20 || c > 0x7e ? `\\u{${c.toString(16)}}` : ch === '"' || ch === "\\" ? `\\${ch}` : ch;
  }
  return `"${out}"${chars.length > 40 ? "…" : ""}`;
}

/**
 * Why `name` (already trimmed) cannot name a new key, as a message for the API's 400 (`name …`), or
 * undefined when it can.
 */
export function keyNameProblem(name: string): string | undefined {
  if (name.length === 0) return "name must not be empty (e.g. laptop or ci-runner)";
  if (name.length > MAX_KEY_NAME) return `name is at most ${MAX_KEY_NAME} characters; this one has ${name.length}`;
  if (!KEY_NAME_RE.test(name)) {
    return `name ${quotedName(name)} may use letters, digits, ".", "_" and "-" only, starting with a letter or digit (the rule for keys[].name in the config file), e.g. laptop or ci-runner`;
  }
  return undefined;
}
