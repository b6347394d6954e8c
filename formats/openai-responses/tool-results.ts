/**
 * Text slots of a Responses request body (REFERENCE §3), for the pipeline stages that rewrite text in
 * place: the token savers (SPEC S-1) read and shorten tool results, redaction (R-1) replaces PII in
 * every text the model reads. Pure and lenient: anything not shaped as expected is skipped.
 *
 * Where the text lives: `instructions`; `input` (a string, or items): `message` items' `content` (a
 * string, or parts with `text`: `input_text`, `output_text`); `function_call.arguments` (a JSON string,
 * treated as text) and `custom_tool_call.input`; tool results are `function_call_output` and
 * `custom_tool_call_output` items whose `output` is a string, parts with `text`, or (older Codex) an
 * object `{content, success}` where `success: false` marks an error. Reasoning items are signed /
 * encrypted and never yielded.
 */
import type { TextSlot, ToolResultSlot } from "../codec.ts";
import { isObj, type JsonObject as Obj } from "../json.ts";

function slot(parent: Obj | unknown[], key: string | number): TextSlot {
  const text = (parent as Record<string | number, unknown>)[key] as string;
  return {
    text,
    set(t: string) {
      (parent as Record<string | number, unknown>)[key] = t;
    },
  };
}

/** A slot over JSON text (tool-call `arguments`): {@link TextSlot.json}. */
function jsonSlot(parent: Obj, key: string): TextSlot {
  return { ...slot(parent, key), json: true };
}

const TEXT_PARTS = new Set(["input_text", "output_text", "text"]);

function partSlots(parts: unknown[], out: TextSlot[]): void {
  for (const p of parts) if (isObj(p) && TEXT_PARTS.has(p.type as string) && typeof p.text === "string") out.push(slot(p, "text"));
}

function itemsOf(body: Obj): Obj[] {
  return Array.isArray(body.input) ? (body.input.filter(isObj) as Obj[]) : [];
}

const OUTPUT_ITEMS = new Set(["function_call_output", "custom_tool_call_output"]);

/** The text slots of one tool-output item's `output`, and whether the output says it failed. */
function outputSlots(item: Obj, out: TextSlot[]): boolean {
  const o = item.output;
  if (typeof o === "string") out.push(slot(item, "output"));
  else if (Array.isArray(o)) partSlots(o, out);
  else if (isObj(o)) {
    if (typeof o.content === "string") out.push(slot(o, "content"));
    return o.success === false;
  }
  return false;
}

/**
 * The text slots of every `function_call_output` / `custom_tool_call_output` item, in body order
 * (SPEC S-1). `isError` only for the legacy `{success: false}` object form: the current wire format has
 * no error flag.
 */
export function toolResults(body: Obj): ToolResultSlot[] {
  const out: ToolResultSlot[] = [];
  let result = 0;
  for (const item of itemsOf(body)) {
    if (!OUTPUT_ITEMS.has(item.type as string)) continue;
    const slots: TextSlot[] = [];
    const isError = outputSlots(item, slots);
    const n = result++;
    for (const s of slots) out.push({ ...s, result: n, isError });
  }
  return out;
}

/**
 * Every text slot the model reads (SPEC R-1), in body order: `instructions`, then `input` (a string,
 * message contents, tool-call arguments, custom tool inputs, tool outputs). Not reasoning, ids, names,
 * tools, media.
 */
export function promptText(body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  if (typeof body.instructions === "string") out.push(slot(body, "instructions"));
  if (typeof body.input === "string") {
    out.push(slot(body, "input"));
    return out;
  }
  for (const item of itemsOf(body)) {
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    if (type === "message") {
      if (typeof item.content === "string") out.push(slot(item, "content"));
      else if (Array.isArray(item.content)) partSlots(item.content, out);
    } else if (type === "function_call") {
      if (typeof item.arguments === "string") out.push(jsonSlot(item, "arguments"));
    } else if (type === "custom_tool_call") {
      if (typeof item.input === "string") out.push(slot(item, "input"));
    } else if (OUTPUT_ITEMS.has(type as string)) {
      outputSlots(item, out);
    }
  }
  return out;
}
