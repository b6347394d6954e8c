/**
 * Every recorded provider stream (test/fixtures/shared/recorded, manifest.json) is served by the fake
 * upstream and read by each client format through the real gateway. The client's official SDK parser
 * must accept the result, and the reassembled text, tool calls, stop reason and usage must match what
 * the recording says (mapped from the upstream's vocabulary into the client's, REFERENCE §5.1, §5.10).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { manifest, recordedBytes, type ManifestEntry } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { endpointOf, viewReply, type ClientFormat } from "../support/client-reply.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["anthc", "anthropic-compatible"], ["chat", "openai-compatible"], ["resp", "openai-responses"], ["gem", "gemini"], ["anth", "anthropic"])}
accounts:
  - id: anth-1
    provider: anth
    api_key: env:FAKE_KEY
  - id: chat-1
    provider: chat
    api_key: env:FAKE_KEY
  - id: resp-1
    provider: resp
    api_key: env:FAKE_KEY
  - id: gem-1
    provider: gem
    api_key: env:FAKE_KEY
  - id: anthc-1
    provider: anthc
    api_key: env:FAKE_KEY
`;
const PROVIDER: Record<string, string> = { "anthropic-messages": "anthc", "openai-chat": "chat", "openai-responses": "resp", gemini: "gem" };
const CLIENTS: ClientFormat[] = ["anthropic-messages", "openai-chat", "openai-responses"];

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});
afterEach(async () => {
  for (const a of ["chat-1", "resp-1", "gem-1", "anthc-1", "anth-1"]) {
    await gw.app.store.clearCooldown(a);
    await gw.app.store.clearLock(a);
  }
  gw.app.registry.loadState(await gw.app.store.loadAccountState());
});

type Stop = "end" | "tool" | "length" | "refusal" | "error";
interface Canonical {
  text: string;
  toolCalls: Array<{ id?: string; name: string; arguments: unknown }>;
  stop: Stop;
  /** Cache counts are undefined when the upstream format does not report them. */
  usage?: { input: number; cacheRead?: number; cacheWrite?: number; output: number };
}

/** What a recording says, in format-neutral terms. */
function canonical(e: ManifestEntry): Canonical {
  const r = e.recorded!;
  const u = r.usage;
  switch (e.format) {
    case "anthropic-messages":
      return {
        text: r.text,
        toolCalls: r.tool_calls.map((t: any) => ({ id: t.id, name: t.name, arguments: t.arguments })),
        stop: ({ end_turn: "end", tool_use: "tool", max_tokens: "length", refusal: "refusal" } as Record<string, Stop>)[r.stop_reason],
        usage: { input: u.input_tokens, cacheRead: u.cache_read_input_tokens, cacheWrite: u.cache_creation_input_tokens, output: u.output_tokens },
      };
    case "openai-chat": {
      const tools = r.tool_calls.map((t: any) => ({ id: t.id, name: t.name, arguments: t.arguments }));
      const stop = ({ stop: tools.length ? "tool" : "end", tool_calls: "tool", length: "length", content_filter: "refusal" } as Record<string, Stop>)[r.finish_reason];
      return {
        text: r.text,
        toolCalls: tools,
        stop,
        // xAI counts reasoning outside completion_tokens (total = prompt + completion + reasoning); the hub's
        // output includes reasoning (REFERENCE §5.10), so the gateway adds it back.
        usage: u
          ? {
              input: u.prompt_tokens - (u.cached_tokens ?? 0),
              cacheRead: u.cached_tokens,
              output: u.completion_tokens + (u.reasoning_tokens && u.total_tokens === u.prompt_tokens + u.completion_tokens + u.reasoning_tokens ? u.reasoning_tokens : 0),
            }
          : undefined,
      };
    }
    case "openai-responses": {
      const tools = r.function_calls.map((t: any) => ({ id: t.call_id, name: t.name, arguments: t.arguments }));
      const stop: Stop = r.status === "failed" ? "error" : r.status === "incomplete" ? (r.incomplete_details?.reason === "content_filter" ? "refusal" : "length") : tools.length ? "tool" : "end";
      return {
        text: r.text,
        toolCalls: tools,
        stop,
        usage: u ? { input: u.input_tokens - (u.cached_tokens ?? 0), cacheRead: u.cached_tokens, output: u.output_tokens } : undefined,
      };
    }
    case "gemini": {
      const tools = r.function_calls.map((t: any) => ({ id: t.id, name: t.name, arguments: t.arguments }));
      const stop: Stop = r.prompt_feedback ? "refusal" : r.finish_reason === "MAX_TOKENS" ? "length" : tools.length ? "tool" : "end";
      return {
        text: r.text,
        toolCalls: tools,
        stop,
        usage: {
          input: u.promptTokenCount - (u.cachedContentTokenCount ?? 0),
          cacheRead: u.cachedContentTokenCount,
          output: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
        },
      };
    }
  }
}

const STOP_IN: Record<ClientFormat, Record<Stop, string>> = {
  "anthropic-messages": { end: "end_turn", tool: "tool_use", length: "max_tokens", refusal: "refusal", error: "" },
  "openai-chat": { end: "stop", tool: "tool_calls", length: "length", refusal: "content_filter", error: "" },
  "openai-responses": { end: "completed", tool: "completed", length: "incomplete", refusal: "incomplete", error: "failed" },
};

function expectedUsage(client: ClientFormat, u: NonNullable<Canonical["usage"]>): Record<string, unknown> {
  const total = u.input + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0);
  const out: Record<string, unknown> = {};
  switch (client) {
    case "anthropic-messages":
      Object.assign(out, { input_tokens: u.input, output_tokens: u.output });
      if (u.cacheRead !== undefined) out.cache_read_input_tokens = u.cacheRead;
      if (u.cacheWrite !== undefined) out.cache_creation_input_tokens = u.cacheWrite;
      return out;
    case "openai-chat":
      Object.assign(out, { prompt_tokens: total, completion_tokens: u.output });
      if (u.cacheRead !== undefined) out.prompt_tokens_details = { cached_tokens: u.cacheRead };
      return out;
    case "openai-responses":
      Object.assign(out, { input_tokens: total, output_tokens: u.output });
      if (u.cacheRead !== undefined) out.input_tokens_details = { cached_tokens: u.cacheRead };
      return out;
  }
}

function request(client: ClientFormat, model: string): any {
  switch (client) {
    case "anthropic-messages":
      return { model, max_tokens: 1000, stream: true, messages: [{ role: "user", content: "hi" }] };
    case "openai-chat":
      return { model, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] };
    case "openai-responses":
      return { model, stream: true, input: "hi" };
  }
}

const entries = (await manifest()).filter((e) => e.kind === "sse");
/**
 * The SDK rejects this one as recorded (its item ids change mid-stream); a native Responses passthrough
 * forwards a stream that starts with `response.created` byte for byte (SPEC F-3). A stream that has none
 * (incomplete-max-output-tokens.sse) is repaired instead (formats/openai-responses/tap.ts: a
 * `response.created` of its own, rising sequence numbers, the final event's `output`), which the SDK reads.
 */
const MALFORMED_FOR_NATIVE = new Set(["openai-responses/rotating-item-ids.sse"]);

/**
 * The lanes: each client format reads every recording from the provider of its format (anthropic-compatible
 * for Messages: the hub lane), and a Messages client reads the Anthropic recordings from kind `anthropic`
 * too (the native passthrough, formats/anthropic-messages/tap.ts).
 */
const LANES: Array<{ client: ClientFormat; name: string; files: ManifestEntry[]; provider: (e: ManifestEntry) => string }> = [
  ...CLIENTS.map((client) => ({ client, name: `recorded streams → ${client} client`, files: entries, provider: (e: ManifestEntry) => PROVIDER[e.format] })),
  {
    client: "anthropic-messages",
    name: "recorded Anthropic streams → anthropic-messages client through kind anthropic (passthrough)",
    files: entries.filter((e) => e.format === "anthropic-messages"),
    provider: () => "anth",
  },
];

for (const { client, name, files, provider } of LANES) {
  describe(name, () => {
    for (const e of files) {
      test(e.file, async () => {
        const bytes = await recordedBytes(e.file);
        gw.fake.reset();
        gw.fake.handle(() => ({ sse: new TextDecoder().decode(bytes) }));
        const body = request(client, `${provider(e)}/${e.recorded?.model ?? "recorded-model"}`);
        const res = await fetch(`${gw.url}${endpointOf(client)}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        const native = client === "openai-responses" && e.format === "openai-responses";
        if (native && MALFORMED_FOR_NATIVE.has(e.file)) {
          const sent = await res.text();
          const recorded = new TextDecoder().decode(bytes);
          expect(sent).toBe(recorded);
          return;
        }
        const view = await viewReply(client, res, body);
        const want = canonical(e);
        const ctx = `${e.file} → ${client}\n${view.raw.slice(0, 2500)}`;
        if (want.stop === "error") {
          // Nothing usable arrived before the error: the client gets a plain HTTP error in its format.
          expect(view.status, ctx).toBeGreaterThanOrEqual(400);
          expect(view.error?.inBand, ctx).toBe(false);
          return;
        }
        expect(view.status, ctx).toBe(200);
        expect(view.error, ctx).toBeUndefined();
        expect(view.text, ctx).toBe(want.text);
        expect(view.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments })), ctx).toEqual(want.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments })));
        want.toolCalls.forEach((t, i) => {
          if (t.id) expect(view.toolCalls[i].id, ctx).toBe(t.id);
        });
        expect(view.stopReason, ctx).toBe(STOP_IN[client][want.stop]);
        if (want.usage) expect(view.usage, ctx).toMatchObject(expectedUsage(client, want.usage));
        // Reasoning never leaks into the visible text.
        for (const k of ["thinking", "reasoning_content", "reasoning_text", "thought_text"]) {
          const r = e.recorded?.[k];
          if (typeof r === "string" && r.length > 20) expect(view.text.includes(r.slice(0, 20)), ctx).toBe(false);
        }
      });
    }
  });
}
