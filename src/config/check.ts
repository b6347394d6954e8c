/**
 * `switchyard check-config FILE` (SPEC 2.2): validates a configuration file without starting anything.
 */
import { BUILTIN_KINDS } from "./builtins.ts";
import { ConfigError, issueText, ROOT_PATH } from "./errors.ts";
import { loadConfigFile } from "./load.ts";
import type { Env } from "./secrets.ts";

/** The outcome of {@link checkConfig}: print `lines` one per line; exit 0 when `ok`, else 1. */
export interface CheckResult {
  ok: boolean;
  lines: string[];
}

/**
 * Loads the file at `path` as `start` would (secrets resolved from `env`, so a missing variable is
 * reported) and describes the result:
 * - invalid: one line per problem, `path (line N): message` (e.g. `combos[1].targets[0].model (line 12): …`,
 *   the line where that key, or the nearest key or item around it, is written); a problem
 *   of the whole file (unreadable, not YAML, not a mapping) is led by the file's name as given
 *   (`my.yaml: YAML syntax error near line 3: …`);
 * - valid: `warning: path: message` lines for non-fatal remarks, then
 *   `ok: 6 providers (5 built in), 1 account, 1 combo, 0 aliases, 2 keys`.
 * Never throws for a bad file; no line contains a secret value.
 */
export function checkConfig(path: string, env: Env = process.env): CheckResult {
  const where = (p: string) => (p === ROOT_PATH ? path : p);
  try {
    const cfg = loadConfigFile(path, env);
    const lines = cfg.warnings.map((w) => `warning: ${where(w.path)}: ${w.message}`);
    // A built-in provider the file sets (a base_url, models) is still a built-in one: it counted as not
    // built in ("8 providers (5 built in)" read "(4 built in)" once the file named one of them).
    const builtins = [...cfg.providers.values()].filter((p) => Object.hasOwn(BUILTIN_KINDS, p.id));
    const set = builtins.filter((p) => p.source === "config").length;
    const builtin = builtins.length > 0 ? ` (${builtins.length} built in${set > 0 ? `, ${set} of them set in the file` : ""})` : "";
    lines.push(
      `ok: ${counted(cfg.providers.size, "provider")}${builtin}, ${counted(cfg.accounts.length, "account")}, ` +
        `${counted(cfg.combos.size, "combo")}, ${counted(cfg.aliases.size, "alias", "aliases")}, ${counted(cfg.keys.length, "key")}`,
    );
    return { ok: true, lines };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, lines: err.issues.map((i) => issueText(i, path)) };
    return { ok: false, lines: [`${path}: ${err instanceof Error ? err.message : String(err)}`] };
  }
}

/** "1 account", "0 accounts", "2 aliases". */
const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
