/**
 * GET /v1/models (SPEC 2.1): provider models, combos and aliases the caller may use, in OpenAI's list
 * shape, or Anthropic's when the client sent `anthropic-version`. (Token counts, POST
 * /v1/messages/count_tokens and Gemini's `:countTokens`, are the pipeline's: pipeline/count-tokens.ts.)
 */
import type { RuntimeConfig } from "../config/types.ts";

interface Entry {
  id: string;
  owner: string;
}

/**
 * Models discovered per provider id (SPEC P-6: the union of what a subscription pool's accounts
 * advertised), listed under the provider prefix next to the configured ones.
 */
export type DiscoveredModels = Map<string, string[]>;

function entries(cfg: RuntimeConfig, discovered?: DiscoveredModels): Entry[] {
  const out: Entry[] = [];
  for (const p of cfg.providers.values()) {
    const names = new Set(Object.keys(p.models));
    for (const m of discovered?.get(p.id) ?? []) names.add(m);
    for (const m of names) out.push({ id: `${p.id}/${m}`, owner: p.id });
  }
  for (const name of cfg.combos.keys()) out.push({ id: name, owner: "switchyard-combo" });
  for (const name of cfg.aliases.keys()) out.push({ id: name, owner: "switchyard-alias" });
  return out;
}

const CREATED = 1_700_000_000;

/**
 * One list entry: OpenAI's `{id, object, created, owned_by}` or Anthropic's `{type, id, display_name,
 * created_at}`, plus what the config or discovery says about the model (SPEC P-8; what `switchyard
 * setup` and the CLIs read): `context_window` and `max_output_tokens` in tokens and
 * `reasoning_efforts`, each only when known (extra members the SDKs ignore).
 */
function shape(cfg: RuntimeConfig, e: Entry, anthropic: boolean, discovered?: DiscoveredModels): unknown {
  const base: Record<string, unknown> = anthropic
    ? { type: "model", id: e.id, display_name: e.id, created_at: new Date(CREATED * 1000).toISOString() }
    : { id: e.id, object: "model", created: CREATED, owned_by: e.owner };
  const meta = modelMetadata(cfg, e.id, discovered);
  if (meta?.contextWindow !== undefined) base.context_window = meta.contextWindow;
  if (meta?.maxOutputTokens !== undefined) base.max_output_tokens = meta.maxOutputTokens;
  if (meta?.reasoningEfforts !== undefined) base.reasoning_efforts = meta.reasoningEfforts;
  return base;
}

/** The model list body. */
export function modelList(cfg: RuntimeConfig, anthropic: boolean, discovered?: DiscoveredModels, allowed?: (id: string) => boolean): unknown {
  const list = entries(cfg, discovered)
    .filter((e) => !allowed || allowed(e.id))
    .map((e) => shape(cfg, e, anthropic, discovered));
  if (anthropic) {
    return { data: list, has_more: false, first_id: (list[0] as { id?: string })?.id ?? null, last_id: (list.at(-1) as { id?: string })?.id ?? null };
  }
  return { object: "list", data: list };
}

/** One model entry, or undefined when the id is not listed. */
export function modelEntry(cfg: RuntimeConfig, id: string, anthropic: boolean, discovered?: DiscoveredModels, allowed?: (id: string) => boolean): unknown | undefined {
  if (allowed && !allowed(id)) return undefined;
  const e = entries(cfg, discovered).find((x) => x.id === id);
  return e ? shape(cfg, e, anthropic, discovered) : undefined;
}

/** What a model name offers, as far as the config and discovery say (SPEC P-8, 2.2). */
export interface ModelMetadata {
  /** The name as listed (`provider/model`, a combo or an alias). */
  id: string;
  /** Context window in tokens, when known. */
  contextWindow?: number;
  /** Output-token limit in tokens, when known. */
  maxOutputTokens?: number;
  /** Reasoning effort levels, when known (empty: no reasoning). */
  reasoningEfforts?: string[];
  /** Whether it reads images, when known. */
  images?: boolean;
}

/**
 * The metadata of a listed model name: `provider/model` from that provider's configured models;
 * an alias through what it points at; a combo from its first target (what serves it when nothing
 * fails), following nested combos and aliases (at most 8 hops). Undefined when the name is not listed.
 */
export function modelMetadata(cfg: RuntimeConfig, id: string, discovered?: DiscoveredModels): ModelMetadata | undefined {
  if (!entries(cfg, discovered).some((e) => e.id === id)) return undefined;
  const out: ModelMetadata = { id };
  let name = id;
  for (let hop = 0; hop < 8; hop++) {
    const alias = cfg.aliases.get(name);
    if (alias !== undefined) {
      name = alias;
      continue;
    }
    const combo = cfg.combos.get(name);
    if (combo) {
      const first = combo.targets[0];
      if (!first) return out;
      name = first.model;
      continue;
    }
    const slash = name.indexOf("/");
    if (slash <= 0) return out;
    const info = cfg.providers.get(name.slice(0, slash))?.models[name.slice(slash + 1)];
    if (info) {
      if (info.contextWindow !== undefined) out.contextWindow = info.contextWindow;
      if (info.maxOutputTokens !== undefined) out.maxOutputTokens = info.maxOutputTokens;
      if (info.reasoningEfforts !== undefined) out.reasoningEfforts = info.reasoningEfforts;
      if (info.images !== undefined) out.images = info.images;
    }
    return out;
  }
  return out;
}

/**
 * One model in the Gemini API's `Model` shape (`GET /v1beta/models[/{model}]`, SPEC 2.1): `name`
 * `models/<id>`, limits from {@link modelMetadata} (absent when unknown), the methods this gateway
 * serves, and `thinking: true` when the model has reasoning levels.
 */
function geminiShape(cfg: RuntimeConfig, e: Entry, discovered?: DiscoveredModels): Record<string, unknown> {
  const meta = modelMetadata(cfg, e.id, discovered);
  const out: Record<string, unknown> = {
    name: `models/${e.id}`,
    version: "switchyard",
    displayName: e.id,
    description: e.owner === "switchyard-combo" ? "switchyard combo" : e.owner === "switchyard-alias" ? "switchyard alias" : `${e.owner} model via switchyard`,
  };
  if (meta?.contextWindow !== undefined) out.inputTokenLimit = meta.contextWindow;
  if (meta?.maxOutputTokens !== undefined) out.outputTokenLimit = meta.maxOutputTokens;
  out.supportedGenerationMethods = ["generateContent", "streamGenerateContent", "countTokens"];
  if (meta?.reasoningEfforts && meta.reasoningEfforts.length > 0) out.thinking = true;
  return out;
}

/** `GET /v1beta/models`: every listed model in the Gemini API's list shape `{models: [...]}`. */
export function geminiModelList(cfg: RuntimeConfig, discovered?: DiscoveredModels, allowed?: (id: string) => boolean): { models: Record<string, unknown>[] } {
  return { models: entries(cfg, discovered).filter((e) => !allowed || allowed(e.id)).map((e) => geminiShape(cfg, e, discovered)) };
}

/** `GET /v1beta/models/{model}` (a leading `models/` accepted); undefined when not listed. */
export function geminiModelEntry(cfg: RuntimeConfig, id: string, discovered?: DiscoveredModels, allowed?: (id: string) => boolean): Record<string, unknown> | undefined {
  const name = id.startsWith("models/") ? id.slice(7) : id;
  if (allowed && !allowed(name)) return undefined;
  const e = entries(cfg, discovered).find((x) => x.id === name);
  return e ? geminiShape(cfg, e, discovered) : undefined;
}
