/**
 * Gemini's function-call signatures for client formats with no slot on a tool call (Anthropic Messages
 * `tool_use`, Responses `function_call`; Chat has `reasoning_details`, openai-chat/reasoning-details.ts).
 *
 * Gemini's rule (https://ai.google.dev/gemini-api/docs/thought-signatures, "Signatures in function
 * calling parts"): a single call carries a `thoughtSignature`; of parallel calls only the first
 * functionCall part does; "you must return this signature in the exact part where it was received"
 * when the history is sent back, and the first functionCall part of each step of the current turn must
 * carry its signature, else a 400 (REFERENCE §4.3). Without it the Gemini builder sends Google's
 * placeholder, which Gemini accepts but which drops the model's reasoning context.
 *
 * So such a call reaches those clients preceded by a signature-only thinking block (Messages:
 * `thinking: ""`; Responses: a reasoning item with no summary and the signature as `encrypted_content`),
 * the form a Gemini signature alone already takes there, and which those clients keep and send back. A
 * signature that comes only after the call started streaming (a `signature` delta on the tool block:
 * Vertex's streamed arguments may sign a continuation piece, gemini/decoder.ts) gets the same block just
 * after the call instead, the streaming encoders having sent the call's start already.
 * Its signature string names the call it belongs to: `sy|gemini-call|<call id>|<signature>`
 * ({@link callSignatureOpaque}; the tool_use `id` / function_call `call_id` the client sees), so
 * {@link signaturesOntoCalls} puts it back on the call with that id when the client's request is
 * parsed, wherever the client put the block: a client that reorders the calls or the thinking blocks,
 * drops one of two calls (the signature of a dropped call is dropped with it: its part is gone) or adds
 * a call of its own still gets each signature on its own call. A signature-only `sy|gemini|…` block
 * without an id (handed out before 2026-12-07) still goes onto the unsigned call right after it.
 *
 * Only `gemini`-family signatures move this way: an Anthropic thinking block may be empty and signed too
 * (thinking display omitted), and stays a thinking block.
 */
import type { HubMessage, HubPart, Opaque, ProviderFamily, ThinkingPart, ToolCallPart } from "./hub.ts";

/**
 * The family written into a call's signature string (`sy|gemini-call|…`). It is no provider's: a path
 * that reads the string without {@link signaturesOntoCalls} (a native lane's tidy step) takes it for
 * another provider's state and leaves it out, as it does a foreign signature.
 */
const CALL_FAMILY = "gemini-call" as ProviderFamily;

/** Whether a tool call's signature goes to a Messages or Responses client as a thinking block before the call. */
export function isCallSignatureShown(signature: Opaque | undefined): signature is Opaque {
  return signature !== undefined && signature.family === "gemini" && signature.value.length > 0;
}

/**
 * The opaque value of the signature-only thinking block shown before call `callId`: written by the
 * encoders' usual tagging as `sy|gemini-call|<callId>|<signature>`. A Gemini signature is base64
 * (no `|`), so the last `|` ends the id whatever characters the id holds.
 */
export function callSignatureOpaque(callId: string, signature: Opaque): Opaque {
  return { family: CALL_FAMILY, value: callId + "|" + signature.value };
}

/**
 * The family that issued a piece of opaque state read back from a client: `gemini` for a call's
 * signature ({@link callSignatureOpaque}), else its own. For messages that name the issuer (a native
 * lane's tidy step drops such state with a warning saying whose it was).
 */
export function issuerOf(o: Opaque): ProviderFamily {
  return o.family === CALL_FAMILY ? "gemini" : o.family;
}

/** A {@link callSignatureOpaque} value read back → the call id and the Gemini signature; undefined for anything else. */
function readCallSignature(o: Opaque | undefined): { callId: string; signature: Opaque } | undefined {
  if (o === undefined || o.family !== CALL_FAMILY) return undefined;
  const bar = o.value.lastIndexOf("|");
  if (bar < 0 || bar === o.value.length - 1) return undefined;
  return { callId: o.value.slice(0, bar), signature: { family: "gemini", value: o.value.slice(bar + 1) } };
}

/**
 * A finished reply's parts with a signature-only thinking part ({@link callSignatureOpaque}) before each
 * tool call whose signature {@link isCallSignatureShown}; the same array when there is none. Pure.
 */
export function callSignaturesAsThinking(content: HubPart[]): HubPart[] {
  if (!content.some((p) => p.type === "tool_call" && isCallSignatureShown(p.signature))) return content;
  const out: HubPart[] = [];
  for (const p of content) {
    if (p.type === "tool_call" && isCallSignatureShown(p.signature)) out.push({ type: "thinking", text: "", signature: callSignatureOpaque(p.id, p.signature) });
    out.push(p);
  }
  return out;
}

/** Whether a part is a signature-only thinking part of the older form, `sy|gemini|…` with no call id. */
function isSignatureOnly(p: HubPart): p is ThinkingPart & { signature: Opaque } {
  return p.type === "thinking" && p.text.length === 0 && !p.summary?.some((s) => s.length > 0) && isCallSignatureShown(p.signature);
}

/**
 * In a parsed client request, each call signature a thinking part carries ({@link callSignatureOpaque})
 * goes onto the tool call with its id that has no signature of its own: one in the same assistant
 * message first, else one in any assistant message (a Responses client may send the items of one reply
 * apart); the thinking part is removed, matched or not (a signature whose call the client dropped has
 * no part to go on). Then, for older histories, a `sy|gemini|…` signature-only thinking part directly
 * followed by an unsigned call becomes that call's signature. Mutates `messages` and returns it.
 */
export function signaturesOntoCalls(messages: HubMessage[]): HubMessage[] {
  /** Signatures not matched in their own message, by call id (the first for an id). */
  const loose = new Map<string, Opaque>();
  for (const m of messages) {
    if (m.role !== "assistant" || !m.content.some((p) => p.type === "thinking" && readCallSignature(p.signature))) continue;
    const byId = new Map<string, Opaque>();
    const kept: HubPart[] = [];
    for (const p of m.content) {
      const read = p.type === "thinking" ? readCallSignature(p.signature) : undefined;
      if (read) {
        if (!byId.has(read.callId)) byId.set(read.callId, read.signature);
      } else kept.push(p);
    }
    m.content = kept.map((p) => {
      if (p.type !== "tool_call" || p.signature !== undefined) return p;
      const signature = byId.get(p.id);
      if (signature === undefined) return p;
      byId.delete(p.id);
      return { ...p, signature };
    });
    for (const [id, signature] of byId) if (!loose.has(id)) loose.set(id, signature);
  }
  if (loose.size > 0) {
    for (const m of messages) {
      if (m.role !== "assistant") continue;
      m.content = m.content.map((p) => {
        if (p.type !== "tool_call" || p.signature !== undefined) return p;
        const signature = loose.get(p.id);
        if (signature === undefined) return p;
        loose.delete(p.id);
        return { ...p, signature } satisfies ToolCallPart;
      });
    }
  }
  for (const m of messages) {
    if (m.role !== "assistant" || m.content.length < 2) continue;
    let moved = false;
    const out: HubPart[] = [];
    for (let i = 0; i < m.content.length; i++) {
      const p = m.content[i]!;
      const next = m.content[i + 1];
      if (isSignatureOnly(p) && next?.type === "tool_call" && next.signature === undefined) {
        out.push({ ...next, signature: p.signature });
        i++;
        moved = true;
        continue;
      }
      out.push(p);
    }
    if (moved) m.content = out;
  }
  return messages;
}
