/**
 * Regression cases (fixtures/cases, CASES.md) that involve Chat, played at codec level (no HTTP):
 *
 * - client openai-chat: the case request is parsed with the Chat parser and built with the upstream
 *   format's builder (`expect.upstream_request` pointers); the upstream stream is decoded with the
 *   upstream codec, normalized, encoded for Chat and read back with the `openai` SDK's accumulator
 *   (`expect.text`, `stop_reason`, `usage`).
 * - upstream openai-chat with an Anthropic or Responses client: the Chat decoder's output goes through
 *   that client's encoder and official SDK (B36 name-after-id, B24-reverse reasoning, B30 ids).
 */
import { describe, expect, test } from "bun:test";
import { codecFor } from "../../../formats/index.ts";
import { openaiChat } from "../../../formats/openai-chat/index.ts";
import { EventNormalizer } from "../../../formats/normalize.ts";
import type { ProviderKind } from "../../../formats/codec.ts";
import type { WireFormat } from "../../../formats/hub.ts";
import { caseIds, regressionCase } from "../../support/fixtures.ts";
import { sdkFinalChatCompletion } from "../../support/openai-chat-helpers.ts";
import { expectUpstream } from "../../support/json.ts";
import { eventTypes, sdkFinalMessage } from "../../support/anthropic-sdk.ts";
import { fakeOpenAI } from "../../support/openai-responses-helpers.ts";

const utf8 = new TextEncoder();
const DEFAULT_KIND: Record<WireFormat, ProviderKind> = {
  "openai-chat": "openai-compatible",
  "openai-responses": "openai-responses",
  "anthropic-messages": "anthropic-compatible",
  gemini: "gemini",
};

/** Plays upstream SSE through the upstream decoder, the normalizer and the client encoder. */
function translate(sse: string, upstream: WireFormat, client: WireFormat, includeUsage?: boolean): string {
  let out = "";
  const enc = codecFor(client).createEncoder!({ model: "client-model", includeUsage }, (t) => (out += t));
  const n = new EventNormalizer((e) => enc.event(e));
  const d = codecFor(upstream).createDecoder({ family: upstream === "anthropic-messages" ? "anthropic" : "openai" }, (e) => n.event(e));
  d.push(utf8.encode(sse));
  d.end();
  n.end();
  enc.end();
  return out;
}

const all = await Promise.all((await caseIds()).map((id) => regressionCase(id)));

describe("cases with a Chat client", () => {
  // Cases whose upstream answers with a JSON body (no stream) are played through the gateway only (test/e2e/cases.test.ts).
  for (const c of all.filter((c) => c.client_format === "openai-chat" && c.upstream.response.sse !== undefined)) {
    test(`${c.id}: ${c.title}`, async () => {
      const hub = openaiChat.parseRequest!(c.request);
      const up = c.upstream.format as WireFormat;
      if (c.expect.upstream_request) {
        const kind = (c.upstream.kind ?? DEFAULT_KIND[up]) as ProviderKind;
        const built = codecFor(up).buildRequest(hub, { model: c.request.model ?? "up-model", kind, family: up === "anthropic-messages" ? "anthropic" : "openai", stream: true }).body;
        expectUpstream(built, c.expect.upstream_request);
      }
      const sse = translate(c.upstream.response.sse, up, "openai-chat", hub.includeUsage);
      const done = await sdkFinalChatCompletion(sse, hub.includeUsage === true);
      if (c.expect.text !== undefined) expect(done.choices[0].message.content ?? "").toBe(c.expect.text);
      if (c.expect.refusal !== undefined) expect(done.choices[0].message.refusal).toBe(c.expect.refusal);
      if (c.expect.stop_reason !== undefined) expect(done.choices[0].finish_reason).toBe(c.expect.stop_reason);
      if (c.expect.usage !== undefined) expect(done.usage).toMatchObject(c.expect.usage);
      else if (!hub.includeUsage) expect(done.usage ?? undefined).toBeUndefined();
    });
  }
});

describe("cases with a Chat upstream and another client", () => {
  for (const id of ["B36", "B24-reverse"]) {
    test(`${id} (Anthropic client ← Chat upstream)`, async () => {
      const c = all.find((x) => x.id === id)!;
      const sse = translate(c.upstream.response.sse, "openai-chat", "anthropic-messages");
      if (c.expect.event_types) expect(eventTypes(sse)).toEqual(c.expect.event_types);
      const msg = await sdkFinalMessage(sse);
      const text = msg.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      expect(text).toBe(c.expect.text);
      expect(msg.stop_reason).toBe(c.expect.stop_reason);
      if (c.expect.tool_calls) {
        expect(msg.content.filter((b) => b.type === "tool_use").map((b) => (b.type === "tool_use" ? { name: b.name, arguments: b.input } : null))).toEqual(c.expect.tool_calls);
      }
    });
  }

  test("B30 (Responses client ← Chat upstream): call_id kept, prefixed ids, completed", async () => {
    const c = all.find((x) => x.id === "B30")!;
    const sse = translate(c.upstream.response.sse, "openai-chat", "openai-responses");
    const final = await fakeOpenAI(sse).responses.stream({ model: "gpt-x", input: "hi" }).finalResponse();
    expect(final.status).toBe(c.expect.stop_reason);
    expect(final.output_text).toBe(c.expect.text);
    const calls = final.output.filter((o: any) => o.type === "function_call") as any[];
    expect(calls.map((f) => ({ id: f.call_id, name: f.name, arguments: JSON.parse(f.arguments) }))).toEqual(c.expect.tool_calls);
    expect(final.id).toMatch(/^resp_/);
    expect(calls[0].id).toMatch(/^fc_/);
  });
});
