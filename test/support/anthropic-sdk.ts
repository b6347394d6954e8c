/**
 * Test helpers for Anthropic Messages streams: run bytes through the official `@anthropic-ai/sdk`
 * stream accumulator (no network: the client's `fetch` answers with the given bytes), and parse SSE
 * text into `{event, data}` pairs.
 */
import Anthropic from "@anthropic-ai/sdk";
import { SseReader, type SseEvent } from "../../formats/sse.ts";

/** An Anthropic SDK client whose every request is answered by `body` as `text/event-stream`. */
export function sdkClientFor(body: string | Uint8Array): Anthropic {
  return new Anthropic({
    apiKey: "test",
    baseURL: "http://127.0.0.1:1",
    maxRetries: 0,
    fetch: (async () =>
      new Response(body, { headers: { "content-type": "text/event-stream" } })) as unknown as typeof fetch,
  });
}

/**
 * Runs an SSE body through `messages.stream(...).finalMessage()` (the accumulator Claude Code-style
 * clients use). Resolves with the final message or rejects with what the SDK threw.
 */
export async function sdkFinalMessage(body: string | Uint8Array): Promise<Anthropic.Message> {
  const client = sdkClientFor(body);
  return client.messages
    .stream({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] })
    .finalMessage();
}

/** Parses SSE text into events (REFERENCE §0 algorithm, via the project's reader). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  const r = new SseReader((e) => out.push(e));
  r.pushText(text);
  r.end();
  return out;
}

/** SSE event names in order, pings removed (cases/README.md `event_types`). */
export function eventTypes(text: string): string[] {
  return parseSse(text)
    .map((e) => e.event ?? "")
    .filter((n) => n !== "ping");
}
