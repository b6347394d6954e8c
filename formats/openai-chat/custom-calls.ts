/**
 * A Chat client's own `custom` (freeform) tools (`{type:"custom", custom:{name, description, format}}`,
 * OpenAI Chat Completions reference `ChatCompletionCustomTool`), called with raw text
 * (`{id, type:"custom", custom:{name, input}}`, `ChatCompletionMessageCustomToolCall`), on the hub
 * lane to a Chat provider: the hub holds such a call as a tool call whose arguments are
 * `{"input": "<raw text>"}` (formats/tool-kinds.ts `FREEFORM_INPUT_ARG`, as for a Responses
 * `custom_tool_call`); these helpers name the tools, read and write the calls. Pure.
 */
import { FREEFORM_INPUT_ARG } from "../tool-kinds.ts";
import type { HubTool } from "../hub.ts";
import { isObj, type JsonObject as Json } from "../json.ts";

/** A request's tool name map (formats/tool-names.ts `ToolNameMap`; its shape only: that module reads this one). */
interface NameMap {
  map(name: string): string;
}

/** The name of a Chat `custom` tool definition (`custom.name`, else a top-level `name`), or undefined for any other tool. */
export function chatCustomName(raw: Json): string | undefined {
  if (raw.type !== "custom") return undefined;
  const name = isObj(raw.custom) ? raw.custom.name : raw.name;
  return typeof name === "string" && name.length > 0 ? name : undefined;
}

/** The names of a hub request's Chat `custom` tools (the client's own). */
export function chatCustomToolNames(tools: readonly HubTool[]): Set<string> {
  const out = new Set<string>();
  for (const t of tools) {
    if (t.kind !== "provider" || t.format !== "openai-chat") continue;
    const name = chatCustomName(t.raw);
    if (name) out.add(name);
  }
  return out;
}

/** A Chat `custom` tool definition with its name as `names` sends it; the same object when that is its own. */
export function customToolRenamed(raw: Json, names: NameMap): Json {
  const name = chatCustomName(raw);
  if (!name) return raw;
  const given = names.map(name);
  if (given === name) return raw;
  return isObj(raw.custom) ? { ...raw, custom: { ...raw.custom, name: given } } : { ...raw, name: given };
}

/** The hub arguments of a custom call's raw `input` (`{"input": …}`). */
export function customCallArguments(input: unknown): string {
  return JSON.stringify({ [FREEFORM_INPUT_ARG]: typeof input === "string" ? input : "" });
}

/** The raw input of a custom call's hub arguments (`{"input": "…"}`; any other text is the input itself). */
export function customCallInput(args: string): string {
  try {
    const o = JSON.parse(args) as unknown;
    if (isObj(o) && typeof o[FREEFORM_INPUT_ARG] === "string") return o[FREEFORM_INPUT_ARG] as string;
  } catch {
    // not JSON: the raw text is the input
  }
  return args;
}

/** A Chat `tool_calls` entry for a custom call: `{id, type:"custom", custom:{name, input}}`. */
export function customCallJson(id: string, name: string, args: string): Json {
  return { id, type: "custom", custom: { name, input: customCallInput(args) } };
}

/** A Chat client's `{type:"custom", custom:{name}}` tool_choice (kept in `source.extra`) naming its tool as the builder sent it; any other value as it is. */
export function customChoiceRenamed(tc: unknown, names: NameMap): unknown {
  if (!isObj(tc) || tc.type !== "custom" || !isObj(tc.custom) || typeof tc.custom.name !== "string") return tc;
  const name = names.map(tc.custom.name);
  return name === tc.custom.name ? tc : { ...tc, custom: { ...tc.custom, name } };
}

/** The names of the `custom` tools in a Chat client body's `tools`; undefined when it has none (the common case). */
export function chatCustomToolsOfBody(tools: unknown): Set<string> | undefined {
  if (!Array.isArray(tools)) return undefined;
  let out: Set<string> | undefined;
  for (const t of tools) {
    const name = isObj(t) ? chatCustomName(t) : undefined;
    if (name) (out ??= new Set()).add(name);
  }
  return out;
}
