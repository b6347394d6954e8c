/**
 * Combo and alias names that a person cannot tell apart (SPEC 5, R-2). A client's model name is matched
 * exactly (pipeline/resolve.ts: `aliases.get(name)`, `combos.get(name)`, case-sensitive, code point by
 * code point), so `Fast` and `fast`, or a precomposed `é` (U+00E9) and `e` + U+0301, are different
 * names that both route; they read as one in tables, `/v1/models` and logs. The admin API refuses a new
 * such name (409, src/admin/config-routes.ts; creates at the same moment too: the changes run one at a
 * time, src/admin/config-writer.ts, and the store's create checks the stored names in the same step as
 * its insert, across instances sharing PostgreSQL); the config loader only warns about one in the file
 * (src/config/load.ts), so a file that already has one keeps loading. Client keys have their own rule
 * (case only: src/admin/admin-api.ts `POST /keys`).
 */

/** How `name` collides with another name: equal after Unicode NFC normalization, or then equal ignoring case. */
export type LookalikeWhy = "nfc" | "case";

/** The form names are compared in: Unicode NFC, then lower-cased (`String.prototype.toLowerCase`). */
export function nameFold(name: string): string {
  return name.normalize("NFC").toLowerCase();
}

/**
 * The first of `names` (other than `name` itself, compared exactly) that `name` cannot be told apart
 * from, and how: "nfc" when both are the same text after NFC normalization (they look identical), else
 * "case" when they differ only in case; undefined when there is none.
 */
export function lookalikeOf(name: string, names: Iterable<string>): { name: string; why: LookalikeWhy } | undefined {
  const nfc = name.normalize("NFC");
  const fold = nfc.toLowerCase();
  for (const other of names) {
    if (other === name) continue;
    const otherNfc = other.normalize("NFC");
    if (otherNfc === nfc) return { name: other, why: "nfc" };
    if (otherNfc.toLowerCase() === fold) return { name: other, why: "case" };
  }
  return undefined;
}

/**
 * The clause of a message saying how a name collides with `other` (a description such as
 * `the alias "fast" of config.yaml`): "looks identical to …" or "differs only in case from …", with why it matters.
 */
export function lookalikeClause(why: LookalikeWhy, other: string): string {
  return why === "nfc"
    ? `looks identical to ${other} (the same text after Unicode NFC normalization, written with other code points)`
    : `differs only in case from ${other} (model names are matched exactly: both would route, but they read as one name)`;
}
