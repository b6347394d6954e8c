/**
 * `switchyard reload`: the running instance re-reads its config file (`POST /admin/api/config/reload`,
 * as SIGHUP does), and the command prints what changed, which changed settings wait for a restart
 * (src/config/restart-only.ts) and the file's warnings. A rejected file is the admin API's 400, which
 * the command prints as an error (the running configuration stays).
 */
import type { ConfigChanges, SectionChanges } from "../config/diff.ts";

/** The admin API's answer to a reload that was accepted (src/admin/config-routes.ts). */
export interface ReloadAnswer {
  reloaded: true;
  file: string;
  changed: ConfigChanges;
  restartNeeded: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
}

/**
 * The lines `switchyard reload` prints: `reloaded FILE: combo fast added; server port changed` (or
 * `nothing changed`), then one line per setting that waits for a restart and one per warning.
 */
export function reloadLines(r: ReloadAnswer): string[] {
  const parts: string[] = [];
  const ids = (one: string, many: string, c: SectionChanges | undefined) => {
    if (!c) return;
    for (const [verb, list] of [["added", c.added], ["removed", c.removed], ["changed", c.changed]] as const) {
      if (list.length > 0) parts.push(`${list.length > 1 ? many : one} ${list.join(", ")} ${verb}`);
    }
  };
  ids("provider", "providers", r.changed.providers);
  ids("account", "accounts", r.changed.accounts);
  ids("combo", "combos", r.changed.combos);
  ids("alias", "aliases", r.changed.aliases);
  ids("key", "keys", r.changed.keys);
  if (r.changed.settings?.length) parts.push(`settings ${r.changed.settings.join(", ")} changed`);
  if (r.changed.server?.length) parts.push(`server ${r.changed.server.join(", ")} changed`);
  const lines = [`reloaded ${r.file}: ${parts.length > 0 ? parts.join("; ") : "nothing changed"}`];
  for (const w of r.restartNeeded ?? []) lines.push(`restart needed: ${w.message}`);
  for (const w of r.warnings ?? []) lines.push(`warning: ${w.path}: ${w.message}`);
  return lines;
}
