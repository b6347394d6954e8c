/**
 * Tool kinds only the Responses API has, as the closest faithful equivalent for formats without them
 * (Chat Completions, Anthropic Messages, Gemini). Pure.
 *
 * - A `custom` (freeform) tool — Codex's `apply_patch`, declared with a Lark grammar and called with
 *   raw text, not JSON — becomes a function tool of the same name with ONE required string argument,
 *   `input`, that carries the raw text. Its description keeps the client's and adds how to pass the
 *   input and, when the tool has one, the grammar it must follow (the model cannot be constrained by
 *   it there, so it is told). The call comes back as arguments `{"input": "<raw text>"}`, which is
 *   also how the hub already holds a `custom_tool_call` from history (formats/openai-responses/parse.ts),
 *   so history and replies use one shape; the Responses encoder turns a call of a `custom` tool back
 *   into a `custom_tool_call` with the raw `input`.
 * - Hosted tools (`web_search`, `file_search`, `code_interpreter`, `image_generation`, …) run on
 *   OpenAI's servers: no other provider can run them, so they stay provider tools and the builders
 *   drop them with a warning (never pretend a search happened).
 *
 * Used by the builders of the formats other than Responses before they write their tool lists.
 */
import type { FunctionTool, HubTool } from "./hub.ts";

/** The argument that carries a freeform tool's raw input (also the hub shape of `custom_tool_call`). */
export const FREEFORM_INPUT_ARG = "input";

/**
 * `tools` with every Responses `custom` tool replaced by its function-tool equivalent (module doc);
 * other tools are returned as they are. The array is returned unchanged when there is nothing to
 * replace (the common case).
 */
export function portableTools(tools: HubTool[]): HubTool[] {
  let out: HubTool[] | undefined;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i]!;
    const fn = t.kind === "provider" && t.format === "openai-responses" && t.raw.type === "custom" ? freeformAsFunction(t.raw) : undefined;
    if (fn) {
      out ??= tools.slice(0, i);
      out.push(fn);
    } else out?.push(t);
  }
  return out ?? tools;
}

/** Whether a hub tool list declares a Responses `custom` (freeform) tool named `name`. */
export function isFreeformTool(tools: readonly HubTool[], name: string): boolean {
  return tools.some((t) => t.kind === "provider" && t.format === "openai-responses" && t.raw.type === "custom" && t.raw.name === name);
}

/** A Responses `custom` tool definition → the function tool of the module doc; undefined without a name. */
export function freeformAsFunction(raw: Record<string, unknown>): FunctionTool | undefined {
  if (typeof raw.name !== "string" || raw.name.length === 0) return undefined;
  const format = typeof raw.format === "object" && raw.format !== null ? (raw.format as Record<string, unknown>) : undefined;
  const lines: string[] = [];
  if (typeof raw.description === "string" && raw.description.length > 0) lines.push(raw.description);
  lines.push(`Pass the raw input text, exactly as it should be applied, as the string argument \`${FREEFORM_INPUT_ARG}\`; do not add any other argument.`);
  if (format?.type === "grammar" && typeof format.definition === "string") {
    const syntax = typeof format.syntax === "string" ? `${format.syntax} ` : "";
    lines.push(`The input must match this ${syntax}grammar:\n${format.definition}`);
  }
  return {
    kind: "function",
    name: raw.name,
    description: lines.join("\n\n"),
    parameters: {
      type: "object",
      properties: { [FREEFORM_INPUT_ARG]: { type: "string", description: "The raw input text." } },
      required: [FREEFORM_INPUT_ARG],
      additionalProperties: false,
    },
  };
}
