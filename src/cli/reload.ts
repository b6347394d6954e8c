/**
 * `switchyard reload`: the running instance re-reads its config file (`POST /admin/api/config/reload`,
 * as SIGHUP does), and the command prints what changed, which changed settings wait for a restart
 * (src/config/restart-only.ts) and the file's warnings. A rejected file is the admin API's 400, which
 * the command prints as an error (the running configuration stays).
 */
import { describeReload, type FileChange } from "../config/describe-changes.ts";
import type { ConfigChanges } from "../config/diff.ts";

/** The admin API's answer to a reload that was accepted (src/admin/config-routes.ts). */
export interface ReloadAnswer {
  reloaded: true;
  file: string;
  changed: ConfigChanges;
  /** When nothing changed: the last re-read of the file that changed something (usually the instance's own, on the edit). */
  lastFileChange?: FileChange;
  restartNeeded: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
}

/**
 * The lines `switchyard reload` prints: `reloaded FILE: combo fast added; server port changed` (or
 * `nothing changed since the file was last read (at 2026-12-04T23:05:12.000Z: combo tools added)`:
 * src/config/describe-changes.ts), then one line per
 * setting that waits for a restart (changed by this re-read or an earlier one) and one per warning.
 */
export function reloadLines(r: ReloadAnswer): string[] {
  const lines = [`reloaded ${r.file}: ${describeReload(r.changed, r.lastFileChange, (ms) => new Date(ms).toISOString())}`];
  for (const w of r.restartNeeded ?? []) lines.push(`restart needed: ${w.message}`);
  for (const w of r.warnings ?? []) lines.push(`warning: ${w.path}: ${w.message}`);
  return lines;
}
