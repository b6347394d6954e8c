/**
 * `DATA_DIR/service.env` for `switchyard service install`: on Linux the systemd unit reads it as its
 * `EnvironmentFile`, so the secrets a config names as `env:VAR` reach the service without being
 * written into the unit; launchd has no such file, so on macOS install copies its lines into the
 * agent's `EnvironmentVariables` (a plist of mode 0600, see service.ts). Install writes the variables the config needs, with their values from the
 * installing shell; lines already in the file are kept as they are (an edited file is never
 * overwritten). Values are never printed.
 *
 * File format (systemd.exec "EnvironmentFile="): one `KEY=value` per line; a value with spaces,
 * quotes, `\`, `$` or `#` is written in double quotes with `\` and `"` escaped.
 *
 * Beside it, `service.env.written` (mode 0600) holds a SHA-256 of each line install wrote (no value),
 * so that `service uninstall` can tell the lines a user added or changed by hand (the install output
 * asks for some) and keep them: {@link removeServiceEnv}.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { OTEL_VARIABLES } from "../telemetry/otel-env.ts";
import { dirname } from "node:path";
import { ENV_ACCOUNTS } from "../config/builtins.ts";

const ENV_REF = /^env:([A-Za-z_][A-Za-z0-9_]*)$/;

/** The variables a config file's text reads as `env:NAME` (anywhere in the document), in first-use order. */
export function envReferences(yamlText: string): string[] {
  const names: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") {
      const m = ENV_REF.exec(v.trim());
      if (m && !names.includes(m[1])) names.push(m[1]);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x);
    } else if (v && typeof v === "object") {
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(Bun.YAML.parse(yamlText));
  return names;
}

/**
 * The variables the service needs from its environment file: the config file's `env:` references, or,
 * without a config file (the built-in default), the API-key variables the default reads
 * (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY). An unreadable file needs none (install refuses
 * a broken config before this).
 */
export function serviceEnvNames(configPath: string | undefined): string[] {
  if (!configPath) return ENV_ACCOUNTS.map((e) => e.env);
  try {
    return envReferences(readFileSync(configPath, "utf8"));
  } catch {
    return [];
  }
}

/**
 * The OpenTelemetry variables the gateway reads (src/telemetry/otel-env.ts {@link OTEL_VARIABLES}, the
 * list otel.ts reads by; README "OpenTelemetry") set (not empty) in `env`, in that order. A service
 * starts without the installing shell's environment, so one set there is carried into service.env as
 * the config's secrets are (an instance started by hand with export on would otherwise export nothing
 * once installed); one not set is not needed and not reported.
 */
export function shellTelemetry(env: Record<string, string | undefined>): string[] {
  return OTEL_VARIABLES.filter((name) => (env[name] ?? "") !== "");
}

/** One `KEY=value` line, the value quoted when systemd would otherwise read it differently. */
function envLine(name: string, value: string): string {
  if (/^[A-Za-z0-9_@+=:,./-]*$/.test(value)) return `${name}=${value}`;
  return `${name}="${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/** What {@link writeServiceEnv} did, by variable name (never values). */
export interface ServiceEnvResult {
  path: string;
  /** Written now, from the installing shell's environment. */
  written: string[];
  /** Already in the file: left as they were. */
  kept: string[];
  /** Needed but neither in the file nor set in the shell (or not writable: a value with a line break). */
  missing: string[];
}

/**
 * Adds the `names` not yet in the file at `path` with their values from `env` (the installing shell),
 * creating the file (mode 0600, directory 0700) when needed. Existing lines are kept unchanged.
 */
export function writeServiceEnv(path: string, names: string[], env: Record<string, string | undefined>): ServiceEnvResult {
  const existing = existsSync(path) ? readFileSync(path, "utf8") : "";
  const present = new Set(
    existing
      .split("\n")
      .map((l) => /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined),
  );
  const result: ServiceEnvResult = { path, written: [], kept: [], missing: [] };
  const lines: string[] = [];
  for (const name of names) {
    if (present.has(name)) {
      result.kept.push(name);
      continue;
    }
    const value = env[name];
    if (value === undefined || value === "" || /[\r\n]/.test(value)) {
      result.missing.push(name);
      continue;
    }
    lines.push(envLine(name, value));
    result.written.push(name);
  }
  if (lines.length > 0 || !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const header = "# Secrets for the switchyard service (KEY=value lines); read by its systemd unit (macOS: copied into its launchd agent by service install).";
    const head = existing === "" ? header + "\n" : existing.endsWith("\n") ? existing : existing + "\n";
    writeFileSync(path, head + lines.map((l) => l + "\n").join(""), { mode: 0o600 });
    chmodSync(path, 0o600);
    noteWritten(path, existing === "" ? [header, ...lines] : lines, existing.trim() !== "");
  }
  return result;
}

/** The file beside `path` that lists what install wrote into it (see the module comment). */
const writtenFile = (path: string) => `${path}.written`;

/** A line's digest in {@link writtenFile}: SHA-256 of its text, hex (no value can be read back from it). */
const lineSum = (line: string) => createHash("sha256").update(line).digest("hex");

/**
 * The digests of the lines install wrote into `path`, and whether the record began on a file that held
 * lines already (`before`: written by hand, or by an install before session 38, which kept no record);
 * undefined when there is no record.
 */
function writtenSums(path: string): { sums: Set<string>; before: boolean } | undefined {
  try {
    const j = JSON.parse(readFileSync(writtenFile(path), "utf8")) as { lines?: unknown; before?: unknown };
    return Array.isArray(j.lines) ? { sums: new Set(j.lines.filter((x): x is string => typeof x === "string")), before: j.before === true } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Adds `lines`, just written into `path` by install, to its record (mode 0600); `before`: the file held
 * lines before this write. A record that cannot be written leaves uninstall keeping a copy.
 */
function noteWritten(path: string, lines: string[], before: boolean): void {
  const had = writtenSums(path);
  const sums = had?.sums ?? new Set<string>();
  for (const l of lines) sums.add(lineSum(l));
  const earlier = had ? had.before : before;
  try {
    writeFileSync(writtenFile(path), JSON.stringify({ about: "SHA-256 of each line switchyard service install wrote into service.env; service uninstall keeps a copy of the file when it holds others", lines: [...sums], ...(earlier ? { before: true } : {}) }) + "\n", { mode: 0o600 });
    chmodSync(writtenFile(path), 0o600);
  } catch {
    // no record: uninstall keeps the file as a copy rather than guess
  }
}

/**
 * What {@link removeServiceEnv} did: the file removed (nothing in it but what install wrote), or kept
 * renamed to `keptAs` since it held `byHand` lines install did not write (added or changed by hand), or
 * `unknown`: the lines install wrote cannot all be told (no record, or one begun on a file that held
 * lines already: written by hand, or by an install before session 38, which kept none).
 */
export type ServiceEnvRemoval = { removed: true } | { keptAs: string; byHand: number; unknown: boolean };

/**
 * Uninstall's removal of the service.env at `path` (it exists): removed, with its record, when every
 * non-blank line is one install wrote; otherwise renamed to `path.bak` (`path.bak-<ms>` when that
 * exists already: an earlier copy is never overwritten), mode kept (0600), so the lines a user added
 * by hand survive. @throws the file system's error when it can be neither removed nor renamed.
 */
export function removeServiceEnv(path: string): ServiceEnvRemoval {
  const record = writtenSums(path);
  const lines = readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "");
  const byHand = record ? lines.filter((l) => !record.sums.has(lineSum(l))).length : lines.length;
  if (byHand === 0) {
    rmSync(path, { force: true });
    rmSync(writtenFile(path), { force: true });
    return { removed: true };
  }
  const bak = existsSync(`${path}.bak`) ? `${path}.bak-${Date.now()}` : `${path}.bak`;
  renameSync(path, bak);
  rmSync(writtenFile(path), { force: true });
  return { keptAs: bak, byHand, unknown: record === undefined || record.before };
}

/**
 * The `KEY=value` lines of a service.env file (as {@link writeServiceEnv} writes them or a user edits
 * them: `export ` allowed, a double-quoted value with `\\` and `\"` escapes, `#` comments), by name.
 * A missing file has none.
 */
export function readServiceEnv(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(path)) return out;
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m) continue;
    const raw = m[2];
    out[m[1]] = raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1).replace(/\\(["\\])/g, "$1") : raw;
  }
  return out;
}

