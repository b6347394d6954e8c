/**
 * A reload's changes in words, as `switchyard reload` prints them (src/cli/reload.ts) and the
 * dashboard's Config file card shows them (src/dashboard/client/config-reload.tsx): `combo fast added;
 * keys ci, build removed; server port changed`. Ids and key names only, never values (src/config/diff.ts
 * makes them). The shapes live here, with no import, so the dashboard's browser bundle can use them.
 */

/** Ids added, removed and changed in one section. */
export interface SectionChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** The non-empty sections of a change; `{}` when nothing changed. */
export interface ConfigChanges {
  providers?: SectionChanges;
  accounts?: SectionChanges;
  combos?: SectionChanges;
  aliases?: SectionChanges;
  keys?: SectionChanges;
  /** Top-level settings keys whose value changed. */
  settings?: string[];
  /** `server` keys whose value changed (host and port apply at the next start). */
  server?: string[];
}

/**
 * Said of a reload that found the file as the instance last read it. The instance re-reads its file
 * when it changes (src/config/watch.ts), so an explicit reload after an edit usually finds the edit in
 * force already; "nothing changed" alone read as if the edit had been missed, and contradicted a
 * `restart needed` line that an earlier re-read's change still holds.
 */
export const NOTHING_CHANGED = "nothing changed since the file was last read";

/** `changed` in words (`alias smart added; server port changed`), or {@link NOTHING_CHANGED}. */
export function describeChanges(changed: ConfigChanges): string {
  const parts: string[] = [];
  const ids = (one: string, many: string, c: SectionChanges | undefined) => {
    if (!c) return;
    for (const [verb, list] of [["added", c.added], ["removed", c.removed], ["changed", c.changed]] as const) {
      if (list?.length > 0) parts.push(`${list.length > 1 ? many : one} ${list.join(", ")} ${verb}`);
    }
  };
  ids("provider", "providers", changed.providers);
  ids("account", "accounts", changed.accounts);
  ids("combo", "combos", changed.combos);
  ids("alias", "aliases", changed.aliases);
  ids("key", "keys", changed.keys);
  if (changed.settings?.length) parts.push(`settings ${changed.settings.join(", ")} changed`);
  if (changed.server?.length) parts.push(`server ${changed.server.join(", ")} changed`);
  return parts.length > 0 ? parts.join("; ") : NOTHING_CHANGED;
}

/** A re-read of the config file that changed the configuration: when (ms since the epoch) and what. */
export interface FileChange {
  at: number;
  changed: ConfigChanges;
}

/**
 * A reload's answer in words: {@link describeChanges}, and for a reload that found the file as last
 * read, what the last re-read that changed something (usually the instance's own, on the file's change)
 * changed and when, written by `time`: `nothing changed since the file was last read (at 23:05:12: combo
 * tools added)`. A user who had just edited the file read "nothing changed" alone as the edit missed.
 */
export function describeReload(changed: ConfigChanges, lastFileChange: FileChange | undefined, time: (ms: number) => string): string {
  const said = describeChanges(changed);
  if (said !== NOTHING_CHANGED || lastFileChange === undefined) return said;
  return `${NOTHING_CHANGED} (at ${time(lastFileChange.at)}: ${describeChanges(lastFileChange.changed)})`;
}
