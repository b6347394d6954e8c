/**
 * Gemini CLI's utility model settings that `switchyard setup gemini` writes (newuser14 K1).
 *
 * Gemini CLI 0.61.0 runs its helper tasks under model-config aliases of its own, whatever `-m` or
 * `model.name` says (its `DEFAULT_MODEL_CONFIGS.aliases`, docs/reference/configuration.md
 * `modelConfigs.aliases`): the session summary (`summarizer-default`), shell output summaries,
 * edit correction, prompt completion and the model router's classifier on the alias `flash-lite`
 * (resolved to `gemini-3.1-flash-lite` / `gemini-3.5-flash-lite`); the next-speaker check, loop
 * detection, the LLM edit fixer, context snapshots and the web-fetch fallback on
 * `gemini-3-flash-preview`; loop detection's double check on `gemini-3-pro-preview`; chat compression on
 * a `chat-compression-*` alias (`chat-compression-default`: `gemini-3-pro-preview`, for a model it does
 * not know). A gateway without an account of the built-in `gemini` provider answers those bare ids
 * with 404, and Gemini CLI's retry loop (a 404 asks its fallback handler, which resets the attempt
 * count) sent 1,339 of them in 5 s for one session summary.
 *
 * Gemini CLI's `modelConfigs.customOverrides` (merged with its built-in overrides; an override whose
 * `match.model` names an alias of the request's alias chain may set any field, the model included:
 * its ModelConfigService.internalGetResolvedConfig) points each of these aliases at a model the
 * gateway serves. Matching the aliases, not the model ids, leaves a user's own `-m gemini-3-pro-preview`
 * alone. `modelConfigs.modelIdResolutions` would need `experimental.dynamicModelConfiguration`, so it is
 * not used. `web-search` and `web-fetch` are left out: they need Google's hosted tools (`googleSearch`,
 * `urlContext`), which only a Gemini model has.
 */

/** The utility aliases of Gemini CLI 0.61.0 that setup points at the gateway's model. */
export const GEMINI_UTILITY_ALIASES = [
  "classifier",
  "prompt-completion",
  "fast-ack-helper",
  "edit-corrector",
  "summarizer-default",
  "summarizer-shell",
  "web-fetch-fallback",
  "loop-detection",
  "loop-detection-double-check",
  "llm-edit-fixer",
  "next-speaker-checker",
  "context-snapshotter",
  "agent-history-provider-summarizer",
  "chat-compression-3-pro",
  "chat-compression-3-flash",
  "chat-compression-3.1-flash-lite",
  "chat-compression-2.5-pro",
  "chat-compression-2.5-flash",
  "chat-compression-2.5-flash-lite",
  "chat-compression-default",
] as const;

/**
 * The bare model ids Gemini CLI 0.61.0 answers with when no model is set (`-m`, `model.name`,
 * `GEMINI_MODEL`): its default `auto` mode sends a prompt to `gemini-3.1-pro-preview`, or to
 * `gemini-3-flash-preview` when its router's classifier picks the flash model (newuser13's tryout saw
 * the first).
 */
export const GEMINI_CLI_ANSWER_MODELS = ["gemini-3.1-pro-preview", "gemini-3-flash-preview"] as const;

/**
 * The bare model ids behind {@link GEMINI_UTILITY_ALIASES} (the module comment says which alias goes
 * where): asked for whatever the answer model is, unless setup points the aliases elsewhere.
 */
export const GEMINI_CLI_UTILITY_MODELS = ["gemini-3.1-flash-lite", "gemini-3.5-flash-lite", "gemini-3-flash-preview", "gemini-3-pro-preview"] as const;

/** One entry of Gemini CLI's `modelConfigs.customOverrides`. */
export interface GeminiOverride {
  match: Record<string, unknown>;
  modelConfig: Record<string, unknown>;
}

/** True for an override that only matches one of {@link GEMINI_UTILITY_ALIASES} by name (setup's own, or one it replaces). */
function isUtilityAliasOverride(o: unknown): boolean {
  if (typeof o !== "object" || o === null) return false;
  const match = (o as { match?: unknown }).match;
  if (typeof match !== "object" || match === null) return false;
  const keys = Object.keys(match);
  return keys.length === 1 && keys[0] === "model" && (GEMINI_UTILITY_ALIASES as readonly string[]).includes((match as { model?: unknown }).model as string);
}

/**
 * The `modelConfigs.customOverrides` array to write: the entries of `existing` that do not match a
 * utility alias alone (the user's own overrides, kept in their order), then one entry per utility
 * alias setting its model to `model`. Running it again on its own output gives the same array.
 * @throws Error when `existing` is neither undefined nor an array (setup will not guess what it meant).
 */
export function geminiUtilityOverrides(existing: unknown, model: string, path: string): unknown[] {
  if (existing !== undefined && !Array.isArray(existing)) throw new Error(`${path}: modelConfigs.customOverrides is not an array; nothing was written: fix or move it, then run setup again`);
  const kept = (existing ?? []).filter((o) => !isUtilityAliasOverride(o));
  return [...kept, ...GEMINI_UTILITY_ALIASES.map((alias): GeminiOverride => ({ match: { model: alias }, modelConfig: { model } }))];
}
