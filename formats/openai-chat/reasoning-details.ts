/**
 * Signed reasoning for Chat clients in OpenRouter-style `reasoning_details` (REFERENCE §5 reasoning
 * rules: "for Chat clients `reasoning_details`/opaque field"). Chat has no slot of its own for a
 * thinking signature, so a translated reply whose thinking is signed (an Anthropic signature, a Gemini
 * thought signature, a Responses `encrypted_content`) also carries, on the assistant message (JSON) or
 * all in one delta just before the finish chunk (stream), `reasoning_details: [{type: "reasoning.text", text,
 * signature, index}]` with the block's whole text and its signature tagged `sy|<family>|…`
 * ({@link OPAQUE_TAG}); redacted thinking is `{type: "reasoning.encrypted", data, index}`; a tool call's
 * own signature (a Gemini thought signature on a functionCall part) is `{type: "reasoning.encrypted",
 * data, id: <tool call id>, format: "google-gemini-v1", index}`, as OpenRouter hands out Gemini's
 * function-call signatures (`format` only for a Gemini signature). The openai
 * SDK keeps a message's unknown fields (its stream helper assigns a delta's unknown fields onto the
 * message), so an app that appends the assistant message as it got it sends them back, and
 * {@link readReasoningDetails} turns them into signed thinking again, {@link readCallSignatures} into
 * the tool calls' signatures (matched by tool call id): the state goes back only to the provider that
 * issued it (SPEC F-8), a tool loop keeps its thinking on, and Gemini gets its own signature on the
 * functionCall part instead of Google's placeholder.
 *
 * Only tagged values are read back: an untagged `reasoning_details` entry is a Chat provider's own
 * (OpenRouter's, passed through on a native lane) whose issuer is unknown here.
 */
import { OPAQUE_TAG, type Opaque, type RedactedThinkingPart, type ThinkingPart, type ToolCallPart } from "../hub.ts";

/** OpenRouter's `format` of a `reasoning_details` entry holding a Gemini thought signature. */
const GEMINI_FORMAT = "google-gemini-v1";

/** Hub {@link Opaque} → the tagged string a Chat client gets: `sy|<family>|<value>`, whatever the family. */
function tagged(o: Opaque): string {
  return OPAQUE_TAG + o.family + "|" + o.value;
}

/** A tagged string → hub {@link Opaque}; `undefined` for an untagged or malformed value. */
function untag(value: unknown): Opaque | undefined {
  if (typeof value !== "string" || !value.startsWith(OPAQUE_TAG)) return undefined;
  const bar = value.indexOf("|", OPAQUE_TAG.length);
  if (bar <= OPAQUE_TAG.length) return undefined;
  return { family: value.slice(OPAQUE_TAG.length, bar) as Opaque["family"], value: value.slice(bar + 1) };
}

/**
 * One `reasoning_details` entry for a signed thinking block (its whole text), redacted thinking, or a
 * tool call's signature (`id` = the call's id); `undefined` for unsigned thinking or an unsigned call.
 */
export function reasoningDetail(
  part: ThinkingPart | RedactedThinkingPart | Pick<ToolCallPart, "type" | "id" | "signature">,
  index: number,
): Record<string, unknown> | undefined {
  if (part.type === "redacted_thinking") return { type: "reasoning.encrypted", data: tagged(part.data), index };
  if (part.type === "tool_call") {
    if (!part.signature) return undefined;
    const d: Record<string, unknown> = { type: "reasoning.encrypted", data: tagged(part.signature), id: part.id };
    if (part.signature.family === "gemini") d.format = GEMINI_FORMAT;
    d.index = index;
    return d;
  }
  if (!part.signature) return undefined;
  return { type: "reasoning.text", text: part.text, signature: tagged(part.signature), index };
}

/**
 * An assistant message's `reasoning_details` sent back by a Chat client → hub thinking parts, in
 * order: `reasoning.text` entries with a tagged `signature` → signed thinking (the entry's `text`),
 * `reasoning.encrypted` entries with tagged `data` and no `id` → redacted thinking (one with a string
 * `id` is a tool call's signature, {@link readCallSignatures}). Anything else (not an array, untagged
 * values, other entry types) is left out. Never throws.
 */
export function readReasoningDetails(details: unknown): Array<ThinkingPart | RedactedThinkingPart> {
  const out: Array<ThinkingPart | RedactedThinkingPart> = [];
  if (!Array.isArray(details)) return out;
  for (const d of details) {
    if (!d || typeof d !== "object") continue;
    const e = d as Record<string, unknown>;
    if (e.type === "reasoning.text") {
      const signature = untag(e.signature);
      if (signature) out.push({ type: "thinking", text: typeof e.text === "string" ? e.text : "", signature });
    } else if (e.type === "reasoning.encrypted" && typeof e.id !== "string") {
      const data = untag(e.data);
      if (data) out.push({ type: "redacted_thinking", data });
    }
  }
  return out;
}

/**
 * An assistant message's `reasoning_details` sent back by a Chat client → the tool calls' signatures
 * by tool call id: `reasoning.encrypted` entries with a string `id` and tagged `data` (what
 * {@link reasoningDetail} writes for a signed call). Untagged entries (a Chat provider's own) and
 * anything malformed are left out; the first entry for an id wins. Never throws.
 */
export function readCallSignatures(details: unknown): Map<string, Opaque> {
  const out = new Map<string, Opaque>();
  if (!Array.isArray(details)) return out;
  for (const d of details) {
    if (!d || typeof d !== "object") continue;
    const e = d as Record<string, unknown>;
    if (e.type !== "reasoning.encrypted" || typeof e.id !== "string" || out.has(e.id)) continue;
    const data = untag(e.data);
    if (data) out.set(e.id, data);
  }
  return out;
}

/**
 * A Chat client's `reasoning_details` without the entries this gateway tagged (for a Chat provider on
 * a native lane: the tagged state was minted by another provider and must not reach this one verbatim,
 * SPEC F-8); `undefined` when nothing is left. Entries of the provider's own (untagged) are kept.
 */
export function untaggedDetails(details: unknown[]): unknown[] | undefined {
  const kept = details.filter((d) => {
    if (!d || typeof d !== "object") return true;
    const e = d as Record<string, unknown>;
    return untag(e.signature) === undefined && untag(e.data) === undefined;
  });
  return kept.length > 0 ? kept : undefined;
}
