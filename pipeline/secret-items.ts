/**
 * Items of an array under a secret-named member (SPEC R-1; pipeline/redact.ts): in
 * `{"passwords": ["P@ssw0rd123!", "hunter2!abc"]}` each item is read as the member's value is
 * (`memberSecretOk`: a secret whole, whatever its characters), as the plural name says. Before, only a
 * member's own string value was, and such items went upstream in clear. Not under `secrets` as a
 * whole name: there an array lists secrets by their names (a Compose service's `secrets:
 * [db_password]`), which are not secrets. (`tokens` is not secret-named at all: `token` counts only in
 * the singular, as `max_tokens` and a tokenizer's `tokens` list are not secrets.)
 */

/** Names under which an array's items are not the member's values: a list of secrets' names. */
const NAMES_LIST = /^secrets$/i;

/**
 * The member name an array item under `member` is redacted with (see the module doc): `member`, or
 * undefined where such an array lists names (the item is then plain text).
 */
export function itemMember(member: string | undefined): string | undefined {
  return member === undefined || NAMES_LIST.test(member) ? undefined : member;
}
