/**
 * Test helpers for OpenAI Chat Completions streams: run bytes through the official `openai` SDK
 * (no network: the client's `fetch` answers with the given bytes), decode/normalize/encode with the
 * Chat codec, parse SSE text into JSON payloads, and read JSON pointers.
 */
import OpenAI from "openai";
import { openaiChat } from "../../formats/openai-chat/index.ts";
import { EventNormalizer } from "../../formats/normalize.ts";
import { SseReader } from "../../formats/sse.ts";
import type { EncoderOptions } from "../../formats/codec.ts";
import type { HubEvent } from "../../formats/hub.ts";

/** An OpenAI SDK client whose every request is answered by `body` as `text/event-stream`. */
export function chatSdkClient(body: string | Uint8Array): OpenAI {
  return new OpenAI({
    apiKey: "test",
    baseURL: "http://127.0.0.1:1",
    maxRetries: 0,
    fetch: (async () => new Response(body, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch,
  });
}

/**
 * Runs an SSE body through `chat.completions.stream(...).finalChatCompletion()`, the SDK's
 * accumulating helper. Resolves with the completion or rejects with what the SDK threw.
 */
export async function sdkFinalChatCompletion(body: string | Uint8Array, includeUsage = false) {
  return chatSdkClient(body)
    .chat.completions.stream({
      model: "gpt-test",
      messages: [{ role: "user", content: "hi" }],
      ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
    })
    .finalChatCompletion();
}

/** Every raw chunk the SDK's plain stream iterator yields (raises like the SDK does). */
export async function sdkChunks(body: string | Uint8Array): Promise<any[]> {
  const stream = await chatSdkClient(body).chat.completions.create({
    model: "gpt-test",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  const out: any[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

/** Decodes provider bytes (pushed as the given pieces) into loose hub events. */
export function decodeChat(pieces: Uint8Array[], family: "openai" | `provider:${string}` = "openai"): HubEvent[] {
  const out: HubEvent[] = [];
  const d = openaiChat.createDecoder({ family }, (e) => out.push(e));
  for (const p of pieces) d.push(p);
  d.end();
  return out;
}

/** Encodes CANONICAL hub events into Chat SSE text with fixed id/clock. */
export function encodeChat(events: HubEvent[], opts: Partial<EncoderOptions> = {}): string {
  let text = "";
  const enc = openaiChat.createEncoder!(
    { model: "gpt-test", now: () => 1_750_000_000_000, newId: (p) => `${p}test1`, ...opts },
    (t) => (text += t),
  );
  for (const e of events) enc.event(e);
  enc.end();
  return text;
}

/** Provider bytes → decoder → normalizer → Chat encoder, in one pass (the translating pipeline's shape). */
export function reencodeChat(bytes: Uint8Array, opts: Partial<EncoderOptions> = {}): string {
  let text = "";
  const enc = openaiChat.createEncoder!(
    { model: "gpt-test", now: () => 1_750_000_000_000, newId: (p) => `${p}test1`, ...opts },
    (t) => (text += t),
  );
  const n = new EventNormalizer((e) => enc.event(e));
  const d = openaiChat.createDecoder({ family: "openai" }, (e) => n.event(e));
  d.push(bytes);
  d.end();
  n.end();
  enc.end();
  return text;
}

/** The `data:` payloads of an SSE text, in order (`[DONE]` kept as the string). */
export function ssePayloads(text: string): Array<any> {
  const out: any[] = [];
  const r = new SseReader((e) => out.push(e.data === "[DONE]" ? "[DONE]" : JSON.parse(e.data)));
  r.pushText(text);
  r.end();
  return out;
}

