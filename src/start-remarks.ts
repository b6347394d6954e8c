import { ONLY_THE_STARTING_FILE } from "./config/live.ts";

/**
 * What `switchyard start` tells a new user at start (README "On a fresh machine"): things they would
 * otherwise only find out from failing requests. Each is one JSON log line (SPEC O-4's shape).
 */

/** What the remarks are made from. */
export interface StartFacts {
  /** Accounts the registry holds. */
  accounts: number;
  /** Whether a provider needs no account (a `*-compatible` provider gets a keyless one). */
  keylessProvider: boolean;
  /** The config file the instance started with; undefined on the built-in default. */
  configPath?: string;
  /** Where `start` looks for a config file by default (`$SWITCHYARD_HOME` or `~/.switchyard`). */
  defaultConfigPath: string;
  /** ms since the epoch, for the lines' `time`. */
  now: number;
}

/**
 * The start-up remarks as JSON log lines: no account at all (requests will fail) and, on the built-in
 * default, where a config file goes and that one written now is read at the next start, and why
 * (config/live.ts ONLY_THE_STARTING_FILE: a file's address and store settings are read only at start).
 */
export function startRemarks(f: StartFacts): string[] {
  const lines: string[] = [];
  if (f.accounts === 0 && !f.keylessProvider) {
    lines.push(JSON.stringify({ level: "warn", time: f.now, msg: "no accounts are configured: requests will fail until one is added (accounts: in the config file, ANTHROPIC_API_KEY / OPENAI_API_KEY / GEMINI_API_KEY with the default config, or switchyard login / import)" }));
  }
  if (f.configPath === undefined) {
    lines.push(JSON.stringify({ level: "info", time: f.now, msg: `no config file at ${f.defaultConfigPath}: running the built-in default; write one there (examples/config.yaml is a commented example) or pass --config FILE, and restart switchyard (switchyard stop, then switchyard start) to use it: ${ONLY_THE_STARTING_FILE}` }));
  }
  return lines;
}
