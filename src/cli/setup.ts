/**
 * `switchyard setup claude-code|codex|gemini [--model NAME] [--dry-run]` (SPEC 2.2): points a coding
 * CLI at this gateway by writing its own settings files, with the model's real context window and a
 * compaction limit so the CLI compacts in time.
 *
 * What each CLI gets (setting names read from the CLIs themselves: Claude Code 2.1's binary, Codex's
 * `config.toml` reference, Gemini CLI's `settingsSchema.ts` and `tokenLimits.ts`):
 * - Claude Code, `~/.claude/settings.json`, the `env` block: `ANTHROPIC_BASE_URL`,
 *   `ANTHROPIC_AUTH_TOKEN` (sent as Bearer; no "use this API key?" prompt), and with `--model`:
 *   `ANTHROPIC_MODEL` and `ANTHROPIC_DEFAULT_HAIKU_MODEL` (its small/fast model, so no request goes out
 *   under a name the gateway does not know); with a known context window: `CLAUDE_CODE_MAX_CONTEXT_TOKENS`
 *   (the window of a model Claude Code does not know) and `CLAUDE_CODE_AUTO_COMPACT_WINDOW` (the window
 *   auto-compaction measures against; either one silences the "doesn't recognize the model … assumes a
 *   context window" notice); with a known output limit: `CLAUDE_CODE_MAX_OUTPUT_TOKENS`; for a name
 *   `provider/claude-…`, `modelOverrides.<claude-…>` = the name (see {@link claudeModelBehind}).
 * - Codex, `$CODEX_HOME/config.toml` (default `~/.codex`): top-level `model_provider = "switchyard"`,
 *   and with `--model`: `model`, `model_context_window`, `model_auto_compact_token_limit` (90 % of the
 *   window); the table `[model_providers.switchyard]` with `name`, `base_url` (`…/v1`), `wire_api =
 *   "responses"`, `supports_websockets = true` (SPEC 2.5) and `experimental_bearer_token`; when the
 *   installed Codex's prompt could be read (src/cli/codex-instructions.ts), `model_catalog_json`
 *   naming `switchyard-models.json` next to `config.toml`: Codex's model catalog of every model the
 *   gateway lists ({@link codexModelInfo}), so Codex has their metadata instead of its fallback. An
 *   `env_key` in that table (README's and the dashboard's snippet name the key's variable so) is
 *   commented out, with a note: Codex reads that variable before `experimental_bearer_token`.
 * - Gemini CLI, `~/.gemini/.env`: `GOOGLE_GEMINI_BASE_URL`, `GEMINI_API_KEY`, and with `--model`
 *   `GEMINI_MODEL`; `~/.gemini/settings.json`: `security.auth.selectedType: "gemini-api-key"` (without
 *   it the CLI refuses to run non-interactively), with `--model` `model.name`, and with a known window
 *   `model.compressionThreshold`: Gemini CLI assumes 1,048,576 tokens for a model it does not know and
 *   compresses at a fraction of that, so the fraction is set to compress at half the real window (its
 *   default fraction), capped at 0.5; with `--model` (or `--utility-model`) `modelConfigs.customOverrides`
 *   entries that point Gemini CLI's utility aliases at that model (src/cli/gemini-utility-models.ts), so
 *   its session summaries and checks do not ask for `gemini-…-flash-lite` ids the gateway may not serve.
 *
 * Rules: only these keys are touched (everything else in the files stays, comments and order of a TOML
 * or .env file included, a rewritten TOML line's trailing comment too, a multi-line TOML value read
 * whole: src/cli/toml-edit.ts); a changed file is first
 * copied (`<file>.switchyard-original` the first time, `<file>.switchyard-backup-<time>` later), and `setup CLI --undo` puts it back (src/cli/setup-undo.ts); the
 * change is printed as a unified diff with the key masked (Codex's model catalog as one summary line);
 * a second run with the same arguments changes nothing (and says so); `--dry-run` prints the diff and
 * writes nothing. The key is the client key the CLI will present: `--key`, else `$SWITCHYARD_KEY`,
 * else the placeholder `switchyard` (enough from loopback while `require_api_key` is off).
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { describeFailure, tomlFailure } from "./parse-position.ts";
import { isObj } from "../../formats/json.ts";
import { editJson, parseJsonFile } from "./edit-json.ts";
import { dirname, join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { CODEX_PROVIDER_ID, codexProviderTable } from "../codex-provider.ts";
import { geminiUtilityOverrides } from "./gemini-utility-models.ts";
import { writeRecorded } from "./setup-undo.ts";
import { editTomlText, TomlScanError, tomlStatements } from "./toml-edit.ts";

/** The CLIs `setup` knows. */
export type SetupTarget = "claude-code" | "codex" | "gemini";

/** What the gateway says about a model (`GET /v1/models[/{id}]`). */
export interface SetupModel {
  id: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  /** Reasoning effort levels (`reasoning_efforts`), when known; empty: no reasoning. */
  reasoningEfforts?: string[];
}

/** Inputs of one setup run. */
export interface SetupOptions {
  target: SetupTarget;
  /** The gateway's base URL (`http://127.0.0.1:20128`). */
  gatewayUrl: string;
  /** The client key to write (never printed). */
  key: string;
  model?: SetupModel;
  /**
   * Gemini CLI only: the model its utility aliases (session summaries, next-speaker checks, chat
   * compression, …) are pointed at (src/cli/gemini-utility-models.ts); default `model`'s id.
   */
  utilityModel?: string;
  /**
   * Every model the gateway lists for this key (`GET /v1/models`), for Codex's model catalog; `model`
   * goes first when given. Undefined: no catalog is written.
   */
  catalog?: SetupModel[];
  /**
   * The prompt the installed Codex sends for a model it does not know (src/cli/codex-instructions.ts):
   * every catalog entry must carry instructions, and these keep Codex's prompt unchanged. The catalog
   * is written only with it.
   */
  codexInstructions?: string;
  /** The user's home directory (`~`). */
  home: string;
  /** `$CODEX_HOME` when set. */
  codexHome?: string;
  dryRun: boolean;
  /** Wall clock (ms) for backup names. */
  now?: () => number;
}

/** One file's planned change. */
export interface FileChange {
  path: string;
  before: string | undefined;
  after: string;
  /** Printed instead of the file's diff (a generated file too long to read as a diff). */
  summary?: string;
  /** A note about this change, printed with the run's notes (e.g. the comments a rewrite left out). */
  note?: string;
  /** The settings setup writes in this file (`env.ANTHROPIC_BASE_URL`, `[model_providers.switchyard]`, …): what to remove by hand. */
  keys: string[];
}

/** The outcome of a run: the files that change (empty when nothing does), their diff, the backups made. */
export interface SetupResult {
  changes: FileChange[];
  diff: string;
  /** The copies made before writing (src/cli/setup-undo.ts): `original` for the file before the first setup. */
  backups: Array<{ path: string; original: boolean; pointedAlready?: boolean }>;
  /** The files this run created (there was nothing to back up). */
  created: string[];
  /** What the user should know about the CLI's reading of these files (one line each). */
  notes: string[];
}

/**
 * The key written when none is given (`--key`, `$SWITCHYARD_KEY`): enough from loopback while keys
 * are not required, and no secret, so the diff shows it wherever it is not the key (Codex's provider
 * is named `switchyard` too).
 */
export const PLACEHOLDER_KEY = "switchyard";

/** The file setup writes Codex's model catalog to, next to its `config.toml`. */
export const CODEX_CATALOG_FILE = "switchyard-models.json";

/** Reasoning efforts Codex 0.171 parses (its `ReasoningEffort`); others are left out of the catalog. */
const CODEX_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"];

/**
 * One entry of Codex's model catalog (`model_catalog_json`, a `ModelsResponse` `{models: [ModelInfo]}`;
 * field names from Codex 0.171's bundled catalog and `model_info_from_slug`). Everything a gateway
 * cannot know is what Codex itself uses for a model it has no metadata for (its fallback: default
 * shell tool, no personality messages, 10,000-byte tool-output truncation, no parallel tool calls,
 * and as `base_instructions` the very prompt it sends then, captured from it); what the gateway knows
 * replaces the fallback's guesses: the
 * context window (and 90 % of it as the compaction limit) and the reasoning efforts. `slug` is the
 * gateway's model name exactly (Codex matches names by longest prefix).
 */
export function codexModelInfo(m: SetupModel, priority: number, instructions: string): Record<string, unknown> {
  const efforts = (m.reasoningEfforts ?? []).filter((e) => CODEX_EFFORTS.includes(e));
  const reasoning = efforts.length > 0;
  const info: Record<string, unknown> = {
    slug: m.id,
    display_name: m.id,
    description: "Served by switchyard",
    default_reasoning_level: reasoning ? (efforts.includes("medium") ? "medium" : efforts[0]) : null,
    supported_reasoning_levels: efforts.map((effort) => ({ effort, description: effort })),
    shell_type: "default",
    visibility: "list",
    supported_in_api: true,
    priority,
    minimal_client_version: "0.0.0",
    upgrade: null,
    availability_nux: null,
    base_instructions: instructions,
    model_messages: null,
    supports_reasoning_summaries: reasoning,
    supports_reasoning_summary_parameter: reasoning,
    default_reasoning_summary: "auto",
    support_verbosity: false,
    default_verbosity: null,
    apply_patch_tool_type: null,
    web_search_tool_type: "text",
    truncation_policy: { mode: "bytes", limit: 10_000 },
    supports_parallel_tool_calls: false,
    supports_image_detail_original: false,
    input_modalities: ["text", "image"],
    experimental_supported_tools: [],
    additional_speed_tiers: [],
    service_tiers: [],
    default_service_tier: null,
    available_in_plans: [],
    include_skills_usage_instructions: false,
    include_apps_usage_instructions: false,
    include_plugin_usage_instructions: false,
    supports_search_tool: false,
    use_responses_lite: false,
    prefer_websockets: true,
    auto_review_model_override: null,
    model_specialty: null,
    tool_mode: null,
    multi_agent_version: null,
    node_repl_auto_review_required: false,
    node_repl_disabled: false,
    comp_hash: null,
    effective_context_window_percent: 95,
  };
  if (m.contextWindow !== undefined) {
    info.context_window = m.contextWindow;
    info.max_context_window = m.contextWindow;
    info.auto_compact_token_limit = codexCompactLimit(m.contextWindow);
  } else {
    info.context_window = null;
    info.max_context_window = null;
    info.auto_compact_token_limit = null;
  }
  return info;
}

/** Codex's catalog file: `model` first, then every other listed model, in the gateway's order. */
export function codexCatalog(catalog: SetupModel[], instructions: string, model?: SetupModel): string {
  const models = model ? [model, ...catalog.filter((m) => m.id !== model.id)] : catalog;
  return JSON.stringify({ models: models.map((m, i) => codexModelInfo(m, i, instructions)) }, null, 2) + "\n";
}

/** The compaction limit Codex gets: 90 % of the context window, in tokens. */
export function codexCompactLimit(window: number): number {
  return Math.floor(window * 0.9);
}

/** The tokens Gemini CLI assumes for a model it does not know (its tokenLimits.ts default). */
export const GEMINI_ASSUMED_WINDOW = 1_048_576;

/** Gemini CLI's `model.compressionThreshold` that compresses at half of `window` (at most its default 0.5). */
export function geminiCompressionThreshold(window: number): number {
  return Math.min(0.5, Math.round(((window * 0.5) / GEMINI_ASSUMED_WINDOW) * 10_000) / 10_000);
}

function readText(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}


// ---------------------------------------------------------------------------------------------
// .env (KEY=value lines)
// ---------------------------------------------------------------------------------------------

/** `.env` text with each `KEY=value` of `sets` replaced in place or appended; other lines untouched. */
export function editDotenv(before: string | undefined, sets: Array<[string, string]>): string {
  const lines = before === undefined || before === "" ? [] : before.replace(/\n$/, "").split("\n");
  for (const [key, value] of sets) {
    const line = `${key}=${value}`;
    const re = new RegExp(`^\\s*(export\\s+)?${key}\\s*=`);
    const i = lines.findIndex((l) => re.test(l));
    if (i >= 0) lines[i] = line;
    else lines.push(line);
  }
  return lines.join("\n") + "\n";
}

// ---------------------------------------------------------------------------------------------
// TOML (statement edits: comments, order, other keys and tables stay byte for byte)
// ---------------------------------------------------------------------------------------------

/**
 * TOML text with top-level keys `top` and the keys `table` of table `[tableName]` (a dotted name:
 * `model_providers.switchyard`) set, every other byte kept, a multi-line value of any key read whole
 * (src/cli/toml-edit.ts {@link editTomlText}); each key of `commentOut` that the table sets is
 * commented out below a comment line `# <why>`. Throws a {@link TomlScanError} on text the scan cannot
 * read, and Bun's parse error when the result is not TOML (the table set in a form the edit does not
 * reach: dotted keys, an inline table); the caller says so.
 */
export function editToml(
  before: string | undefined,
  top: Array<[string, string | number | boolean]>,
  tableName: string,
  table: Array<[string, string | number | boolean]>,
  commentOut: { keys: string[]; why: string } = { keys: [], why: "" },
): string {
  const out = editTomlText(before, top, tableName.split("."), table, commentOut);
  Bun.TOML.parse(out); // throws on a file this edit made invalid
  return out;
}

// ---------------------------------------------------------------------------------------------
// Plans per CLI
// ---------------------------------------------------------------------------------------------

/**
 * The Anthropic model id behind a gateway name of the form `provider/claude-…` (`anth/claude-sonnet-4-5`
 * → `claude-sonnet-4-5`), else undefined. Claude Code 2.1 reports every name outside its own catalog
 * as unrecognized (`[claude-code:unrecognized_model]`); its `modelOverrides` setting maps a model it
 * knows to the id a provider serves it under, which makes the gateway name a known model (its limits,
 * prices, features). Only a name that says which Claude model it is gets one: mapping any other model
 * onto a Claude model would misstate what it is.
 */
export function claudeModelBehind(id: string): string | undefined {
  const slash = id.lastIndexOf("/");
  if (slash < 0) return undefined;
  const name = id.slice(slash + 1);
  // `claude-<family>-<version>` or `claude-<version>-…`: a name that says which model it is.
  return /^claude-([a-z]+-)?\d[a-z0-9.-]*$/.test(name) ? name : undefined;
}

function claudeCode(o: SetupOptions): FileChange[] {
  const path = join(o.home, ".claude", "settings.json");
  const before = readText(path);
  const env: Array<[string, string]> = [
    ["ANTHROPIC_BASE_URL", o.gatewayUrl],
    ["ANTHROPIC_AUTH_TOKEN", o.key],
  ];
  const m = o.model;
  if (m) {
    env.push(["ANTHROPIC_MODEL", m.id], ["ANTHROPIC_DEFAULT_HAIKU_MODEL", m.id]);
    if (m.contextWindow !== undefined) {
      env.push(["CLAUDE_CODE_MAX_CONTEXT_TOKENS", String(m.contextWindow)], ["CLAUDE_CODE_AUTO_COMPACT_WINDOW", String(m.contextWindow)]);
    }
    if (m.maxOutputTokens !== undefined) env.push(["CLAUDE_CODE_MAX_OUTPUT_TOKENS", String(m.maxOutputTokens)]);
  }
  const sets: Array<[string[], unknown]> = env.map(([k, v]) => [["env", k], v]);
  const claudeId = m ? claudeModelBehind(m.id) : undefined;
  if (claudeId !== undefined) sets.push([["modelOverrides", claudeId], m!.id]);
  return [{ path, before, after: editJson(path, before, sets), keys: sets.map(([k]) => k.join(".")) }];
}

function codex(o: SetupOptions): FileChange[] {
  const dir = o.codexHome ?? join(o.home, ".codex");
  const path = join(dir, "config.toml");
  const before = readText(path);
  if (before !== undefined) {
    const where = tomlFailure(before);
    if (where) throw new Error(`${path} is not valid TOML at ${describeFailure(where)}; nothing was written: fix or move it, then run setup again`);
    try {
      tomlStatements(before);
    } catch (e) {
      if (!(e instanceof TomlScanError)) throw e;
      throw new Error(`${path}: setup cannot edit this file: at ${e.message} (Bun's TOML parser reads it, setup's reading of its lines does not); nothing was written: set the keys by hand (${CODEX_KEYS_BY_HAND})`);
    }
  }
  const top: Array<[string, string | number]> = [["model_provider", CODEX_PROVIDER_ID]];
  const m = o.model;
  if (m) {
    top.push(["model", m.id]);
    if (m.contextWindow !== undefined) top.push(["model_context_window", m.contextWindow], ["model_auto_compact_token_limit", codexCompactLimit(m.contextWindow)]);
  }
  const changes: FileChange[] = [];
  if (o.catalog && o.catalog.length > 0 && o.codexInstructions) {
    // Codex reads model metadata of an API-key provider only from its bundled catalog or this file
    // (never from the provider's /models): without it every gateway model gets its fallback metadata.
    const catalogPath = join(dir, CODEX_CATALOG_FILE);
    top.push(["model_catalog_json", catalogPath]);
    const after = codexCatalog(o.catalog, o.codexInstructions, m);
    const slugs = (JSON.parse(after) as { models: { slug: string }[] }).models.map((x) => x.slug);
    const before = readText(catalogPath);
    const summary = `${catalogPath} (${before === undefined ? "new file" : "changed"}): Codex model catalog of ${slugs.length} models: ${slugs.join(", ")}\n`;
    changes.push({ path: catalogPath, before, after, summary, keys: ["the whole file (Codex's model catalog)"] });
  }
  const table: Array<[string, string | boolean]> = [...codexProviderTable(o.gatewayUrl), ["experimental_bearer_token", o.key]];
  const keys = [...top.map(([k]) => k), `[model_providers.${CODEX_PROVIDER_ID}]`];
  // The provider table of README's snippet (and the dashboard's) names the key's variable with
  // `env_key`; Codex 0.171 reads that before `experimental_bearer_token`: it sends the variable's value
  // and, without the variable, refuses to start ("Missing environment variable"). So it goes, commented out.
  const envKey = before === undefined ? undefined : codexEnvKey(Bun.TOML.parse(before));
  const commentOut = { keys: ["env_key"], why: ENV_KEY_COMMENT };
  let after: string;
  try {
    after = editToml(before, top, `model_providers.${CODEX_PROVIDER_ID}`, table, commentOut);
  } catch (e) {
    // the provider table (or a key setup sets) already given as dotted keys or an inline table: adding the table would define it twice
    const why = e instanceof Error ? e.message.replace(/^TOML Parse error:\s*/, "") : String(e);
    throw new Error(`${path}: setup's settings would not fit this file (${why}): it sets model_providers.${CODEX_PROVIDER_ID} or one of setup's keys in a form setup does not edit (dotted keys, an inline table); nothing was written: make it a [model_providers.${CODEX_PROVIDER_ID}] table, or remove it, then run setup again`);
  }
  const note = envKey === undefined ? undefined : codexEnvKeyNote(path, envKey, codexEnvKey(Bun.TOML.parse(after)) === undefined);
  return [{ path, before, after, keys, ...(note ? { note } : {}) }, ...changes];
}

/** What to set by hand in Codex's config.toml when setup cannot edit it. */
const CODEX_KEYS_BY_HAND = `model_provider = "${CODEX_PROVIDER_ID}" and a [model_providers.${CODEX_PROVIDER_ID}] table as README's snippet shows`;

/** The comment line setup writes above the `env_key` line it comments out in Codex's provider table. */
export const ENV_KEY_COMMENT = "switchyard setup: env_key commented out: Codex would send that variable, not experimental_bearer_token";

/** The `env_key` of `[model_providers.switchyard]` in a parsed Codex `config.toml`, when it sets one. */
function codexEnvKey(config: unknown): unknown {
  const providers = isObj(config) ? config.model_providers : undefined;
  const table = isObj(providers) ? providers[CODEX_PROVIDER_ID] : undefined;
  return isObj(table) ? table.env_key : undefined;
}

/**
 * The note for an `env_key` of Codex's provider table (`value`: what it was; named when it reads as a
 * variable's name, which is what it must be, never printed otherwise): commented out (`done`), or, set
 * in a form setup does not edit (a dotted key, an inline table), to be removed by hand.
 */
function codexEnvKeyNote(path: string, value: unknown, done: boolean): string {
  const name = typeof value === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value) ? `env_key = "${value}"` : "env_key";
  const why = `Codex reads the key from that variable before experimental_bearer_token (without the variable it stops with "Missing environment variable"; with it, it sends the variable's value, not the key setup writes)`;
  return done
    ? `note: ${path}: setup commented out ${name} in [model_providers.${CODEX_PROVIDER_ID}]: ${why}; the line stays in the file, commented out, and so does the file as it was in setup's copy of it (backup:)`
    : `note: ${path} sets ${name} for [model_providers.${CODEX_PROVIDER_ID}] in a form setup does not edit: remove it by hand: ${why}`;
}

function gemini(o: SetupOptions): FileChange[] {
  const envPath = join(o.home, ".gemini", ".env");
  const envBefore = readText(envPath);
  const env: Array<[string, string]> = [
    ["GOOGLE_GEMINI_BASE_URL", o.gatewayUrl],
    ["GEMINI_API_KEY", o.key],
  ];
  if (o.model) env.push(["GEMINI_MODEL", o.model.id]);
  const settingsPath = join(o.home, ".gemini", "settings.json");
  const settingsBefore = readText(settingsPath);
  const sets: Array<[string[], unknown]> = [[["security", "auth", "selectedType"], "gemini-api-key"]];
  if (o.model) {
    sets.push([["model", "name"], o.model.id]);
    if (o.model.contextWindow !== undefined) sets.push([["model", "compressionThreshold"], geminiCompressionThreshold(o.model.contextWindow)]);
  }
  const utility = o.utilityModel ?? o.model?.id;
  if (utility !== undefined) {
    const existing = parseJsonFile(settingsPath, settingsBefore, true).modelConfigs;
    const overrides = isObj(existing) ? existing.customOverrides : undefined;
    sets.push([["modelConfigs", "customOverrides"], geminiUtilityOverrides(overrides, utility, settingsPath)]);
  }
  // Gemini CLI reads its settings.json with comments (strip-json-comments): so does setup, and its
  // edit keeps them.
  const settings = editJson(settingsPath, settingsBefore, sets, true);
  return [
    { path: envPath, before: envBefore, after: editDotenv(envBefore, env), keys: env.map(([k]) => k) },
    {
      path: settingsPath,
      before: settingsBefore,
      after: settings,
      keys: sets.map(([k]) => k.join(".")),
    },
  ];
}

/** The directory of the files setup writes for `target`, where its record for `--undo` lives (src/cli/setup-undo.ts). */
export function setupDir(target: SetupTarget, home: string, codexHome?: string): string {
  return target === "claude-code" ? join(home, ".claude") : target === "codex" ? (codexHome ?? join(home, ".codex")) : join(home, ".gemini");
}

/** The files a run would change (unchanged files are left out). Throws on a file it cannot edit safely. */
export function planSetup(o: SetupOptions): FileChange[] {
  const all = o.target === "claude-code" ? claudeCode(o) : o.target === "codex" ? codex(o) : gemini(o);
  return all.filter((c) => c.before !== c.after);
}

/**
 * A diff line that sets a key-holding setting, in the three files' syntaxes: JSON `"NAME": "value"`,
 * TOML `name = "value"`, .env `NAME=value` (group 1: everything up to the value).
 */
const KEY_SETTING_LINE = /^([-+ ]\s*"?(?:ANTHROPIC_AUTH_TOKEN|ANTHROPIC_API_KEY|experimental_bearer_token|GEMINI_API_KEY|GOOGLE_API_KEY)"?\s*[:=]\s*"?)[^"\n]*/gm;

/**
 * Masks a diff for printing: the value of every key-holding setting (the key written, and one the
 * file held before) becomes `***`, and so does the key wherever else it appears, unless it is the
 * placeholder (no secret, and the provider's name in Codex's config).
 */
function mask(text: string, key: string): string {
  const masked = text.replace(KEY_SETTING_LINE, "$1***");
  return key.length > 0 && key !== PLACEHOLDER_KEY ? masked.split(key).join("***") : masked;
}

/** Gemini CLI 0.61 reads `~/.gemini/.env` only in a trusted folder (its `findEnvFile`); elsewhere it sees no key. */
const GEMINI_TRUST_NOTE =
  "note: Gemini CLI reads ~/.gemini/.env only in a folder it trusts (it asks on its first interactive start there); " +
  "in an untrusted folder (gemini -p in a new folder) it finds no GEMINI_API_KEY: trust the folder, or export " +
  "GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY in the shell";

/**
 * Plans the change, prints nothing itself, and unless `dryRun` writes it: each changed file that
 * existed is first copied (`<file>.switchyard-original` before the first setup, never overwritten;
 * `<file>.switchyard-backup-<ms>` later), then written (parent folders created, mode 0600 for files
 * that hold the key), and what was written is recorded for `setup --undo` (src/cli/setup-undo.ts).
 * Returns the changes, the masked diff, the backups and the files created.
 */
export function runSetup(o: SetupOptions): SetupResult {
  const changes = planSetup(o);
  const diff = changes
    .map((c) => c.summary ?? mask(createTwoFilesPatch(c.path, c.path, c.before ?? "", c.after, c.before === undefined ? "(new file)" : "before", "after"), o.key))
    .join("");
  const backups: SetupResult["backups"] = [];
  const created: string[] = [];
  if (!o.dryRun) {
    const stamp = (o.now ?? Date.now)();
    for (const c of changes) {
      const made = mkdirSync(dirname(c.path), { recursive: true });
      const w = writeRecorded(c.path, c.before, c.after, c.keys, stamp, made);
      if (w.backup) backups.push({ path: w.backup, original: w.original === true, ...(w.pointedAlready ? { pointedAlready: true } : {}) });
      if (w.created) created.push(c.path);
    }
  }
  const notes = changes.flatMap((c) => (c.note ? [c.note] : []));
  return { changes, diff, backups, created, notes: o.target === "gemini" ? [...notes, GEMINI_TRUST_NOTE] : notes };
}
