/**
 * Gemini's function-call signatures for client formats with no slot on a tool call (Anthropic Messages
 * `tool_use`, Responses `function_call`; Chat has `reasoning_details`, openai-chat/reasoning-details.ts).
 * Gemini 3 puts a `thoughtSignature` on the first functionCall part of a step and wants it back on that
 * part; without it the Gemini builder sends Google's placeholder, which drops the model's reasoning
 * context (REFERENCE §4.3). So such a call reaches those clients preceded by a signature-only thinking
 * block (Messages: `thinking: ""` with the signature tagged `sy|gemini|…`; Responses: a reasoning item
 * with no summary and the signature as `encrypted_content`), the form a Gemini signature alone already
 * takes there, and which those clients keep and send back. {@link signaturesOntoCalls} puts such a
 * signature back on the call that follows it when the client's request is parsed.
 *
 * Only `gemini`-family signatures move this way: an Anthropic thinking block may be empty and signed too
 * (thinking display omitted), and stays a thinking block.
 */
import type { HubMessage, HubPart, Opaque, ThinkingPart } from "./hub.ts";

/** Whether a tool call's signature goes to a Messages or Responses client as a thinking block before the call. */
export function isCallSignatureShown(signature: Opaque | undefined): signature is Opaque {
  return signature !== undefined && signature.family === "gemini" && signature.value.length > 0;
}

/**
 * A finished reply's parts with a signature-only thinking part before each tool call whose signature
 * {@link isCallSignatureShown}; the same array when there is none. Pure.
 */
export function callSignaturesAsThinking(content: HubPart[]): HubPart[] {
  if (!content.some((p) => p.type === "tool_call" && isCallSignatureShown(p.signature))) return content;
  const out: HubPart[] = [];
  for (const p of content) {
    if (p.type === "tool_call" && isCallSignatureShown(p.signature)) out.push({ type: "thinking", text: "", signature: p.signature });
    out.push(p);
  }
  return out;
}

/** Whether a part is the signature-only thinking {@link callSignaturesAsThinking} writes (a Gemini signature, no text). */
function isSignatureOnly(p: HubPart): p is ThinkingPart & { signature: Opaque } {
  return p.type === "thinking" && p.text.length === 0 && !p.summary?.some((s) => s.length > 0) && isCallSignatureShown(p.signature);
}

/**
 * In each assistant message of a parsed client request, a signature-only `gemini` thinking part
 * directly followed by a tool call without a signature becomes that call's signature (the thinking
 * part is removed). Mutates `messages` and returns it.
 */
export function signaturesOntoCalls(messages: HubMessage[]): HubMessage[] {
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
