/**
 * What `switchyard setup` reads from the running gateway beside the CLI's own files (src/cli/setup.ts
 * edits those): a model entry of `GET /v1/models` as setup uses it, the admin token to ask the admin API
 * with, and the note for a gateway that has no account yet. Imported by `setup` only (src/main.ts).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { SetupModel } from "./setup.ts";

/** A model entry of the gateway's `GET /v1/models[/{id}]` as setup uses it (unknown members ignored). */
export function setupModel(id: string, entry: unknown): SetupModel {
  const m = (typeof entry === "object" && entry !== null ? entry : {}) as { context_window?: unknown; max_output_tokens?: unknown; reasoning_efforts?: unknown };
  const model: SetupModel = { id };
  if (typeof m.context_window === "number") model.contextWindow = m.context_window;
  if (typeof m.max_output_tokens === "number") model.maxOutputTokens = m.max_output_tokens;
  if (Array.isArray(m.reasoning_efforts)) model.reasoningEfforts = m.reasoning_efforts.filter((x): x is string => typeof x === "string");
  return model;
}

/**
 * The admin token for `url`: `$SWITCHYARD_ADMIN_KEY`, else the one in the data directory's
 * `instance.json` when that file names this URL; undefined when neither (a local caller needs none
 * while keys are not required).
 */
export function adminTokenFor(url: string, dataDir: string): string | undefined {
  if (process.env.SWITCHYARD_ADMIN_KEY) return process.env.SWITCHYARD_ADMIN_KEY;
  try {
    const inst = JSON.parse(readFileSync(join(dataDir, "instance.json"), "utf8")) as { url?: string; adminToken?: string };
    return inst.url?.replace(/\/+$/, "") === url ? inst.adminToken : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The note setup prints for a gateway that has no account at all (a first run before any was added):
 * every request the CLI sends will fail until one is, so say how to add one. Asked through the admin
 * API (`GET /admin/api/accounts`, with {@link adminTokenFor}'s token); undefined when it has accounts
 * (an implicit keyless one included) or cannot be asked.
 */
export async function noAccountsNote(url: string, dataDir: string): Promise<string | undefined> {
  const token = adminTokenFor(url, dataDir);
  try {
    const res = await fetch(`${url}/admin/api/accounts`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    if (!res.ok) return void (await res.body?.cancel());
    const accounts = ((await res.json()) as { accounts?: unknown[] }).accounts;
    if (!Array.isArray(accounts) || accounts.length > 0) return undefined;
  } catch {
    return undefined;
  }
  return `note: the gateway at ${url} has no account yet, so every request the CLI sends fails until one is added: accounts: in its config file (an api_key per account), switchyard login claude-code|codex, or switchyard import claude-code|codex (switchyard accounts status lists them)`;
}
