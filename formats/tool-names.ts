/**
 * Tool names a provider refuses, mapped per request (SPEC F-2): a format allows characters another
 * refuses — Gemini takes `[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}` (REFERENCE §4.1), Anthropic only
 * `^[a-zA-Z0-9_-]{1,128}$` (its 400 "tools.0.custom.name: String should match pattern"), OpenAI (Chat
 * and Responses) only `^[a-zA-Z0-9_-]{1,64}$` (its API reference: "a-z, A-Z, 0-9, or contain
 * underscores and dashes, with a maximum length of 64"), while MCP clients name tools
 * `docker.io:list_images`, `github.create issue` or in other scripts. A builder maps every name of a
 * request deterministically and collision-safe ({@link ToolNameMap}), in one fixed order
 * ({@link registerToolNames}), and hands the reverse map to its decoder as `toolNames` (codec.ts
 * `DecoderOptions`) so the client's tool calls carry the names it declared. Pure.
 */
import { portableTools } from "./tool-kinds.ts";
import type { HubRequest, Warnings } from "./hub.ts";
import { shortHash } from "./openai-chat/mapping.ts";
import { chatCustomName } from "./openai-chat/custom-calls.ts";

/** The longest tool name Gemini and Anthropic take. */
const MAX = 128;

/** A provider's tool-name rule: whether a name passes as it is, and what a name that does not becomes. */
export interface ToolNameRule {
  valid: RegExp;
  /** The longest name the provider takes, in characters (UTF-16 code units; every valid name is ASCII). */
  max: number;
  /** A valid name for any name (at most {@link max} characters). */
  sanitize(name: string): string;
}

/**
 * A per-request name map: `map(name)` returns the same provider name for the same client name every
 * time, never the same provider name for two different client names (a numeric suffix resolves clashes).
 */
export class ToolNameMap {
  private readonly forward = new Map<string, string>();
  private readonly used = new Map<string, string>();

  constructor(readonly rule: ToolNameRule) {}

  map(name: string): string {
    const known = this.forward.get(name);
    if (known !== undefined) return known;
    let out = this.rule.sanitize(name);
    if (this.used.has(out) && this.used.get(out) !== name) {
      const base = out.slice(0, this.rule.max - 4);
      for (let i = 2; this.used.has(out); i++) out = `${base}_${i}`;
    }
    this.forward.set(name, out);
    this.used.set(out, name);
    return out;
  }

  /** Provider name → client name, only for names that changed. */
  renamed(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [given, orig] of this.used) if (given !== orig) out[given] = orig;
    return out;
  }
}

/**
 * Every function name of a request registered in `names` in a fixed order (valid declared names first,
 * so they keep their identity; then other declared names; then names in history and tool_choice), so a
 * builder and whatever asks for the reverse map of the same request agree. `chatCustom`: a Chat
 * client's own `custom` tools count as declared (the Chat builder sends them; other builders drop them,
 * so their names are not theirs to rename). Returns `names`.
 */
export function registerToolNames(req: HubRequest, names: ToolNameMap, chatCustom = false): ToolNameMap {
  const declared: string[] = [];
  for (const t of portableTools(req.tools)) {
    if (t.kind === "function") declared.push(t.name);
    else if (chatCustom && t.format === "openai-chat") {
      const name = chatCustomName(t.raw);
      if (name) declared.push(name);
    }
  }
  for (const n of declared) if (names.rule.valid.test(n)) names.map(n);
  for (const n of declared) names.map(n);
  for (const m of req.messages) {
    for (const p of m.content) {
      if (p.type === "tool_call") names.map(p.name);
      else if (p.type === "tool_result" && p.name) names.map(p.name);
    }
  }
  if (req.toolChoice?.type === "tool") names.map(req.toolChoice.name);
  else if (req.toolChoice?.type === "allowed") for (const n of req.toolChoice.names) names.map(n);
  return names;
}

/** Anthropic's rule (`^[a-zA-Z0-9_-]{1,128}$`): every other character → `_`, cut to 128; empty → `_`. */
export const ANTHROPIC_TOOL_NAMES: ToolNameRule = {
  valid: /^[a-zA-Z0-9_-]{1,128}$/,
  max: MAX,
  sanitize(name) {
    if (this.valid.test(name)) return name;
    return (name.replace(/[^a-zA-Z0-9_-]/g, "_") || "_").slice(0, MAX);
  },
};

/** The longest tool name OpenAI takes (Chat `tools[].function.name`, Responses `tools[].name`). */
const OPENAI_MAX = 64;

/**
 * OpenAI's rule, Chat Completions and Responses alike (`^[a-zA-Z0-9_-]{1,64}$`, the API reference's
 * "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"): every other
 * character → `_`, empty → `_`; a name then longer than 64 keeps its first 55 characters and gets `_`
 * and 8 hex digits of a digest of the whole name (formats/openai-chat/mapping.ts `shortHash`), so two
 * long names alike in their first 64 characters stay two names whatever order they come in. Used for
 * the Chat and Responses builders' targets (`openai`, `openai-compatible`, `openai-responses`, `codex`).
 */
export const OPENAI_TOOL_NAMES: ToolNameRule = {
  valid: /^[a-zA-Z0-9_-]{1,64}$/,
  max: OPENAI_MAX,
  sanitize(name) {
    if (this.valid.test(name)) return name;
    const out = name.replace(/[^a-zA-Z0-9_-]/g, "_") || "_";
    return out.length <= OPENAI_MAX ? out : `${out.slice(0, OPENAI_MAX - 9)}_${shortHash(name).slice(0, 8)}`;
  },
};

/**
 * The `renamed_tool` warnings of a builder's name map ({@link ToolNameMap.renamed}), one per name it
 * changed, naming the provider (`Anthropic`, `OpenAI`), and the decoder hints that map the reply's
 * names back (codec.ts `DecoderOptions.toolNames`); `undefined` hints when no name changed.
 */
export function renamedToolWarnings(names: ToolNameMap, provider: string, w: Warnings): { toolNames: Record<string, string> } | undefined {
  const renamed = names.renamed();
  let any = false;
  for (const [given, orig] of Object.entries(renamed)) {
    any = true;
    w.add("renamed_tool", `The tool name ${JSON.stringify(orig)} is not a valid ${provider} tool name; sent as ${JSON.stringify(given)}.`);
  }
  return any ? { toolNames: renamed } : undefined;
}

/**
 * The client's name for a tool name in a provider's reply: its entry in `toolNames` (a decoder's
 * DecoderOptions.toolNames, {@link ToolNameMap.renamed}), own members only (a tool named `constructor`
 * is not Object's), else the name as it came.
 */
export function clientToolName(toolNames: Record<string, string> | undefined, name: string): string {
  return toolNames !== undefined && Object.hasOwn(toolNames, name) ? toolNames[name]! : name;
}
