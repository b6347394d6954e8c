/**
 * `switchyard check-config FILE` (SPEC 2.2): validates a configuration file without starting anything.
 */
import { ConfigError } from "./errors.ts";
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
 * - invalid: one line per problem, `path: message` (e.g. `combos[1].targets[0].model: …`);
 * - valid: `warning: path: message` lines for non-fatal remarks, then
 *   `ok: N providers, N accounts, N combos, N aliases, N keys` (providers include the built-ins).
 * Never throws for a bad file; no line contains a secret value.
 */
export function checkConfig(path: string, env: Env = process.env): CheckResult {
  try {
    const cfg = loadConfigFile(path, env);
    const lines = cfg.warnings.map((w) => `warning: ${w.path}: ${w.message}`);
    lines.push(
      `ok: ${cfg.providers.size} providers, ${cfg.accounts.length} accounts, ${cfg.combos.size} combos, ` +
        `${cfg.aliases.size} aliases, ${cfg.keys.length} keys`,
    );
    return { ok: true, lines };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, lines: err.issues.map((i) => `${i.path}: ${i.message}`) };
    return { ok: false, lines: [`(root): ${err instanceof Error ? err.message : String(err)}`] };
  }
}
