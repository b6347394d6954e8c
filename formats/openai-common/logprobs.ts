/**
 * Token log probabilities in OpenAI's shapes, both ways (hub {@link TokenLogprob}). Chat and Responses
 * share the token object `{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}`:
 * - Chat: `choices[].logprobs.content[]` of a reply and of each stream chunk, `bytes` a list of UTF-8
 *   byte values or `null` (platform.openai.com/docs/api-reference/chat/object, ChatCompletionTokenLogprob);
 * - Responses: `output_text.logprobs[]` of a content part, `bytes` required
 *   (…/api-reference/responses/object, ResponseOutputText.Logprob); the `response.output_text.delta`
 *   event's `logprobs[]` is `{token, logprob, top_logprobs: [{token, logprob}]}` with no bytes
 *   (…/api-reference/responses-streaming/response/output_text/delta, ResponseTextDeltaEvent.Logprob).
 * Pure: no I/O.
 */
import type { TokenAlternative, TokenLogprob } from "../hub.ts";
import { isObj } from "../json.ts";

const UTF8 = new TextEncoder();

function readAlternative(v: unknown): TokenAlternative | undefined {
  if (!isObj(v) || typeof v.token !== "string" || typeof v.logprob !== "number") return undefined;
  const a: TokenAlternative = { token: v.token, logprob: v.logprob };
  if (Array.isArray(v.bytes)) a.bytes = v.bytes as number[];
  return a;
}

/**
 * An OpenAI token list (Chat `logprobs.content`, a Responses part's or delta event's `logprobs`) → hub
 * tokens; entries without a string `token` and a number `logprob` are skipped. Undefined for anything
 * that is not a non-empty list of such tokens (`null`, `[]`: the reply carries none).
 */
export function readOpenAILogprobs(list: unknown): TokenLogprob[] | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  const out: TokenLogprob[] = [];
  for (const v of list) {
    const t = readAlternative(v) as TokenLogprob | undefined;
    if (!t) continue;
    const top = (v as Record<string, unknown>).top_logprobs;
    if (Array.isArray(top) && top.length > 0) {
      const alts: TokenAlternative[] = [];
      for (const x of top) {
        const a = readAlternative(x);
        if (a) alts.push(a);
      }
      if (alts.length > 0) t.top = alts;
    }
    out.push(t);
  }
  return out.length > 0 ? out : undefined;
}

/** A token's bytes for a field that requires them: the provider's, else the UTF-8 of its text. */
function bytesOf(a: TokenAlternative): number[] {
  return a.bytes ?? Array.from(UTF8.encode(a.token));
}

/** Hub tokens → Chat's `logprobs.content` list (`bytes` `null` when the provider gave none). */
export function chatLogprobs(list: readonly TokenLogprob[]): Array<Record<string, unknown>> {
  return list.map((t) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: t.bytes ?? null,
    top_logprobs: (t.top ?? []).map((a) => ({ token: a.token, logprob: a.logprob, bytes: a.bytes ?? null })),
  }));
}

/** {@link chatLogprobs} as JSON text (the stream encoder's chunk member). */
export function chatLogprobsJson(list: readonly TokenLogprob[]): string {
  return JSON.stringify(chatLogprobs(list));
}

/** Hub tokens → a Responses `output_text` part's `logprobs` list (`bytes` always a list). */
export function responsesPartLogprobs(list: readonly TokenLogprob[]): Array<Record<string, unknown>> {
  return list.map((t) => ({
    token: t.token,
    logprob: t.logprob,
    bytes: bytesOf(t),
    top_logprobs: (t.top ?? []).map((a) => ({ token: a.token, logprob: a.logprob, bytes: bytesOf(a) })),
  }));
}

/** {@link responsesPartLogprobs} as JSON text (the stream encoder's part and `.done` members). */
export function responsesPartLogprobsJson(list: readonly TokenLogprob[]): string {
  return JSON.stringify(responsesPartLogprobs(list));
}

/** Hub tokens → a `response.output_text.delta` event's `logprobs` JSON text (no bytes). */
export function responsesDeltaLogprobsJson(list: readonly TokenLogprob[]): string {
  return JSON.stringify(
    list.map((t) => ({ token: t.token, logprob: t.logprob, top_logprobs: (t.top ?? []).map((a) => ({ token: a.token, logprob: a.logprob })) })),
  );
}
