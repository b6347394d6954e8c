/**
 * Access to the shared fixtures, vendored under test/fixtures/shared so a clean clone is self-contained:
 * `clients/` (real Claude Code and Codex requests), `recorded/` (real provider streams, with
 * `manifest.json`), `cases/` (regression cases, format in CASES.md).
 */
import { join } from "node:path";

export const FIXTURES = join(import.meta.dir, "..", "fixtures", "shared");

/** One entry of recorded/manifest.json. `recorded` is in the upstream format's own vocabulary. */
export interface ManifestEntry {
  file: string;
  kind: "sse" | "json";
  format: "anthropic-messages" | "openai-chat" | "openai-responses" | "gemini";
  exercises: string;
  events?: number;
  recorded?: Record<string, any>;
}

/** The recorded-stream manifest. */
export async function manifest(): Promise<ManifestEntry[]> {
  return Bun.file(join(FIXTURES, "recorded", "manifest.json")).json();
}

/** Raw bytes of a recorded file, e.g. `anthropic-messages/text.sse`. */
export async function recordedBytes(file: string): Promise<Uint8Array> {
  return new Uint8Array(await Bun.file(join(FIXTURES, "recorded", file)).arrayBuffer());
}

/** A real client request body, e.g. `claude-code-default.json`. */
export async function clientRequest(file: string): Promise<any> {
  return Bun.file(join(FIXTURES, "clients", file)).json();
}

/** A regression case by id, e.g. `B12-chat`. */
export async function regressionCase(id: string): Promise<any> {
  return Bun.file(join(FIXTURES, "cases", `${id}.json`)).json();
}

/** Ids of every regression case file. */
export async function caseIds(): Promise<string[]> {
  const glob = new Bun.Glob("B*.json");
  const ids: string[] = [];
  for await (const f of glob.scan(join(FIXTURES, "cases"))) ids.push(f.replace(/\.json$/, ""));
  return ids.sort();
}
