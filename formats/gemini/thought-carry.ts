/**
 * Thinking carried on a function call's `thoughtSignature`, for Gemini clients that keep no thought
 * parts in their history (Gemini CLI 0.61.0).
 *
 * A Gemini client gets another provider's reasoning as `thought: true` parts (encoder.ts), the
 * signature tagged `sy|<family>|…`. Gemini CLI drops every thought part when it records the model's
 * turn (packages/core/src/core/geminiChat.ts filters `!part.thought`) but keeps the other parts as it
 * got them, each `functionCall` part with its `thoughtSignature`; only a first call without one gets
 * Google's placeholder `skip_thought_signature_validator`. On the next turn of a tool loop the provider
 * would then get its call back without the reasoning before it: Anthropic refuses a tool-use turn
 * without its signed thinking when thinking is on (so the builder switches thinking off,
 * `dropped_thinking_config`), a Chat thinking model (DeepSeek, Kimi) gets no `reasoning_content`.
 *
 * So a call that has no signature of its own (a Gemini call signature goes to the client unchanged)
 * carries, as its `thoughtSignature`, the reasoning of the reply since the previous call (or the
 * reply's start): `sy|thoughts|<base64url of JSON {v: 1, p: [entry…]}>`, each entry a thinking block
 * `{t: text, s?: "<family>|<signature>", m?: summary parts, r?: raw, i?: item id}` or redacted thinking
 * `{d: "<family>|<data>"}`. Gemini's own rule puts a signature on the first functionCall of a step
 * (https://ai.google.dev/gemini-api/docs/thought-signatures), and the client sends it back on the same
 * part; {@link readCarriedThoughts} turns it back into those parts, placed where they stood: before the
 * call, after the previous call of the same model content (at the content's start for the first call,
 * as Anthropic wants its thinking first). A client that kept the thought parts too (they came back
 * before the call) has them already: the carried copy is not added again.
 *
 * Bound: the carried value is at most {@link MAX_CARRIED_CHARS} characters. Longer reasoning is not
 * carried (its call goes out without a signature, as before, and the encoder says so with a
 * `dropped_thinking` warning): Anthropic checks the thinking text against its signature, so a cut text
 * would be refused, and the client sends the value back with every later request of its session.
 */
import type { HubPart, Opaque, ProviderFamily, RedactedThinkingPart, ThinkingPart } from "../hub.ts";

/** The tag family of a carried-thinking signature (`sy|thoughts|…`); no provider's. */
export const THOUGHTS_FAMILY = "thoughts" as ProviderFamily;

/** Upper bound of a carried value (base64url characters, ~96 KiB of JSON): longer reasoning is not carried. */
export const MAX_CARRIED_CHARS = 128 * 1024;

/** A reasoning part a call may carry: thinking or redacted thinking not signed by Gemini. */
export type CarriedPart = ThinkingPart | RedactedThinkingPart;

/** Whether a reply part is reasoning a following call carries: redacted thinking, or thinking with text or a non-Gemini signature. */
export function isCarried(p: HubPart): p is CarriedPart {
  if (p.type === "redacted_thinking") return p.data.family !== "gemini";
  if (p.type !== "thinking") return false;
  if (p.signature) return p.signature.family !== "gemini" && p.signature.family !== THOUGHTS_FAMILY;
  return p.text.length > 0 || (p.summary?.some((s) => s.length > 0) ?? false);
}

/** `<family>|<value>` of an opaque (the family has no `|`). */
function opaqueText(o: Opaque): string {
  return o.family + "|" + o.value;
}

/** {@link opaqueText} read back; undefined when malformed. */
function readOpaqueText(v: unknown): Opaque | undefined {
  if (typeof v !== "string") return undefined;
  const bar = v.indexOf("|");
  if (bar <= 0) return undefined;
  return { family: v.slice(0, bar) as ProviderFamily, value: v.slice(bar + 1) };
}

/**
 * The reasoning parts before a call → the opaque signature that carries them (family
 * {@link THOUGHTS_FAMILY}); undefined when there is nothing to carry, or when the value would be longer
 * than {@link MAX_CARRIED_CHARS} (then `tooLong` is called with its length).
 */
export function carryThoughts(parts: readonly CarriedPart[], tooLong?: (chars: number) => void): Opaque | undefined {
  if (parts.length === 0) return undefined;
  const p = parts.map((x) => {
    if (x.type === "redacted_thinking") return { d: opaqueText(x.data) };
    const e: Record<string, unknown> = { t: x.text };
    if (x.signature) e.s = opaqueText(x.signature);
    if (x.summary) e.m = x.summary;
    if (x.raw) e.r = true;
    if (x.itemId) e.i = x.itemId;
    return e;
  });
  const value = Buffer.from(JSON.stringify({ v: 1, p }), "utf8").toString("base64url");
  if (value.length > MAX_CARRIED_CHARS) {
    tooLong?.(value.length);
    return undefined;
  }
  return { family: THOUGHTS_FAMILY, value };
}

/** The warning message for reasoning too long to carry ({@link carryThoughts}' `tooLong`). */
export function tooLongMessage(chars: number): string {
  return `Reasoning before a tool call is too long to carry on the call's thoughtSignature (${chars} characters, at most ${MAX_CARRIED_CHARS}); a client that keeps no thought parts (Gemini CLI) will not send it back.`;
}

/**
 * A call's signature read from a Gemini client → the reasoning parts it carries; undefined when it is
 * no carried-thinking signature or cannot be read (then it is no state at all, like the placeholder).
 */
export function readCarriedThoughts(sig: Opaque): CarriedPart[] | undefined {
  if (sig.family !== THOUGHTS_FAMILY) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(sig.value, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof doc !== "object" || doc === null || !Array.isArray((doc as { p?: unknown }).p)) return undefined;
  const out: CarriedPart[] = [];
  for (const e of (doc as { p: unknown[] }).p) {
    if (typeof e !== "object" || e === null) continue;
    const r = e as Record<string, unknown>;
    if (r.d !== undefined) {
      const data = readOpaqueText(r.d);
      if (data) out.push({ type: "redacted_thinking", data });
      continue;
    }
    if (typeof r.t !== "string") continue;
    const t: ThinkingPart = { type: "thinking", text: r.t };
    const s = readOpaqueText(r.s);
    if (s) t.signature = s;
    if (Array.isArray(r.m) && r.m.every((x) => typeof x === "string")) t.summary = r.m as string[];
    if (r.r === true) t.raw = true;
    if (typeof r.i === "string") t.itemId = r.i;
    out.push(t);
  }
  return out;
}

/**
 * Puts carried parts into a model content's parsed parts (`content`, the call not pushed yet): after
 * the last tool call in it, or at its start; not when reasoning stands there already (the client kept
 * the thought parts). Mutates `content`.
 */
export function insertCarried(content: HubPart[], carried: readonly CarriedPart[]): void {
  let at = 0;
  for (let i = content.length - 1; i >= 0; i--) {
    if (content[i]!.type === "tool_call") {
      at = i + 1;
      break;
    }
  }
  for (let i = at; i < content.length; i++) {
    const t = content[i]!.type;
    if (t === "thinking" || t === "redacted_thinking") return;
  }
  content.splice(at, 0, ...carried);
}
