/**
 * A whole Chat Completions reply as a Chat stream, every field kept (codec `replayAsStream`): what a
 * native streaming Chat client gets when the upstream answered its stream request with JSON (SPEC
 * F-9), instead of a replay through the hub, which has no slot for `audio`, annotations, vendor
 * fields or Azure's `prompt_filter_results`, and nothing to replay for a reply with `choices: []`.
 */
import type { EncoderOptions } from "../codec.ts";
import { isObj } from "../json.ts";

/**
 * `body` (a `chat.completion` object) → one `chat.completion.chunk` with every top-level field but
 * `usage`, each choice's `message` as its `delta` (tool calls given their `index`) with its
 * `finish_reason` and `logprobs`; then, when the client asked for usage (`opts.includeUsage`, as the
 * passthrough withholds it otherwise, SPEC F-3), the usage chunk (`choices: []`); then `[DONE]`
 * (REFERENCE §2.3).
 */
export function replayAsStream(body: unknown, opts: EncoderOptions): string {
  const b = isObj(body) ? body : {};
  const { usage, choices, ...rest } = b;
  const chunk = { ...rest, object: "chat.completion.chunk", choices: Array.isArray(choices) ? choices.map(chunkChoice) : [] };
  let out = `data: ${JSON.stringify(chunk)}\n\n`;
  if (opts.includeUsage && isObj(usage)) {
    out += `data: ${JSON.stringify({ id: rest.id, object: "chat.completion.chunk", created: rest.created, model: rest.model, choices: [], usage })}\n\n`;
  }
  return out + "data: [DONE]\n\n";
}

/** One choice of a reply as a chunk's choice: `message` → `delta`, tool calls with their slot `index`. */
function chunkChoice(c: unknown, i: number): unknown {
  if (!isObj(c)) return c;
  const { message, ...rest } = c;
  const delta: Record<string, unknown> = isObj(message) ? { ...message } : {};
  if (Array.isArray(delta.tool_calls)) delta.tool_calls = delta.tool_calls.map((t: unknown, k: number) => (isObj(t) ? { index: k, ...t } : t));
  return { index: i, ...rest, delta, finish_reason: rest.finish_reason ?? null };
}
