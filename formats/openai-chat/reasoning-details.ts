/**
 * Signed reasoning for Chat clients in OpenRouter-style `reasoning_details` (REFERENCE §5 reasoning
 * rules: "for Chat clients `reasoning_details`/opaque field"). Chat has no slot of its own for a
 * thinking signature, so a translated reply whose thinking is signed (an Anthropic signature, a Gemini
 * thought signature, a Responses `encrypted_content`) also carries, on the assistant message (JSON) or
 * all in one delta just before the finish chunk (stream), `reasoning_details: [{type: "reasoning.text", text,
 * signature, index}]` with the block's whole text and its signature tagged `sy|<family>|…`
 * ({@link OPAQUE_TAG}); redacted thinking is `{type: "reasoning.encrypted", data, index}`. The openai
 * SDK keeps a message's unknown fields (its stream helper assigns a delta's unknown fields onto the
 * message), so an app that appends the assistant message as it got it sends them back, and
 * {@link readReasoningDetails} turns them into signed thinking again: the state goes back only to the
 * provider that issued it (SPEC F-8) and a tool loop keeps its thinking on.
 *
 * Only tagged values are read back: an untagged `reasoning_details` entry is a Chat provider's own
 * (OpenRouter's, passed through on a native lane) whose issuer is unknown here.
 */
import { OPAQUE_TAG, type Opaque, type RedactedThinkingPart, type ThinkingPart } from "../hub.ts";

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

/** One `reasoning_details` entry for a signed thinking block (its whole text) or redacted thinking. */
export function reasoningDetail(part: ThinkingPart | RedactedThinkingPart, index: number): Record<string, unknown> | undefined {
  if (part.type === "redacted_thinking") return { type: "reasoning.encrypted", data: tagged(part.data), index };
  if (!part.signature) return undefined;
  return { type: "reasoning.text", text: part.text, signature: tagged(part.signature), index };
}

/**
 * An assistant message's `reasoning_details` sent back by a Chat client → hub thinking parts, in
 * order: `reasoning.text` entries with a tagged `signature` → signed thinking (the entry's `text`),
 * `reasoning.encrypted` entries with tagged `data` → redacted thinking. Anything else (not an array,
 * untagged values, other entry types) is left out. Never throws.
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
    } else if (e.type === "reasoning.encrypted") {
      const data = untag(e.data);
      if (data) out.push({ type: "redacted_thinking", data });
    }
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
