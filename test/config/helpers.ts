/** Shared helpers for the config tests. */
import { ConfigError, type ConfigIssue, parseConfig, type ParseOptions, type RuntimeConfig } from "../../src/config/index.ts";

/** Parses YAML that must be valid. */
export function ok(yaml: string, opts: ParseOptions = {}): RuntimeConfig {
  return parseConfig(yaml, { env: {}, ...opts });
}

/** Parses YAML that must be invalid; returns the issues. */
export function issues(yaml: string, opts: ParseOptions = {}): ConfigIssue[] {
  try {
    parseConfig(yaml, { env: {}, ...opts });
  } catch (e) {
    if (e instanceof ConfigError) return e.issues;
    throw e;
  }
  throw new Error("expected a ConfigError, the config was accepted");
}

/** The issue at `path` (exactly one), for assertions on its message. */
export function issueAt(list: ConfigIssue[], path: string): ConfigIssue {
  const found = list.filter((i) => i.path === path);
  if (found.length !== 1) {
    throw new Error(`expected one issue at ${path}, got ${found.length}: ${JSON.stringify(list, null, 2)}`);
  }
  return found[0];
}

/** Strips the common indentation of a template literal so YAML can be written indented in tests. */
export function yaml(strings: TemplateStringsArray, ...values: unknown[]): string {
  const raw = strings.reduce((acc, s, i) => acc + s + (i < values.length ? String(values[i]) : ""), "");
  const lines = raw.replace(/^\n/, "").split("\n");
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.match(/^ */)![0].length));
  return lines.map((l) => l.slice(indent)).join("\n");
}
