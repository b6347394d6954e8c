/**
 * The regression cases whose stream crosses the Responses codec (fixtures/cases: B09, B09-chat,
 * B12-responses, B18, B18-chat, B24-responses, B30), played at the format level: the upstream bytes
 * through the upstream format's real decoder, the normalizer, and the client format's real encoder,
 * then read with the client's official SDK. (The gateway harness plays the same cases end to end.)
 */
import { describe, expect, test } from "bun:test";
import { regressionCase } from "../../support/fixtures.ts";
import { parseSse, sdkStream } from "../../support/openai-responses-helpers.ts";
import { eventTypes, sdkFinalMessage } from "../../support/anthropic-sdk.ts";
import { sdkFinalChatCompletion } from "../../support/openai-chat-helpers.ts";
import { codecFor } from "../../../formats/index.ts";
import { EventNormalizer } from "../../../formats/normalize.ts";
import type { WireFormat } from "../../../formats/hub.ts";

const utf8 = new TextEncoder();

/** upstream bytes → upstream decoder → normalizer → client encoder, all in one synchronous pass. */
function translate(c: any): string {
  const client = codecFor(c.client_format as WireFormat);
  const upstream = codecFor(c.upstream.format as WireFormat);
  const request = client.parseRequest!(c.request);
  let out = "";
  const enc = client.createEncoder!({ model: c.request.model, request, includeUsage: request.includeUsage, newId: (p) => `${p}test1`, now: () => 1_750_000_000_000 }, (t) => (out += t));
  const norm = new EventNormalizer((e) => enc.event(e));
  const family = upstream.format === "anthropic-messages" ? "anthropic" : upstream.format === "gemini" ? "gemini" : "openai";
  const dec = upstream.createDecoder({ family }, (e) => norm.event(e));
  const bytes = utf8.encode(c.upstream.response.sse);
  const splits: number[] = [...(c.upstream.response.split_at ?? []), bytes.length];
  let last = 0;
  for (const at of splits) {
    dec.push(bytes.subarray(last, at));
    last = at;
  }
  dec.end();
  norm.end();
  enc.end();
  return out;
}

describe("Responses client ← other upstreams", () => {
  for (const id of ["B12-responses", "B24-responses", "B30"]) {
    test(id, async () => {
      const c = await regressionCase(id);
      const sse = translate(c);
      const wire = parseSse(sse);
      expect(wire.map((w) => w.event)).toEqual(c.expect.event_types);
      wire.forEach((w, i) => expect(w.data.sequence_number).toBe(i));
      const { final, error } = await sdkStream(sse);
      expect(error).toBeUndefined();
      expect(final.output_text).toBe(c.expect.text);
      expect(final.status).toBe(c.expect.stop_reason);
      if (c.expect.tool_calls) {
        const calls = final.output.filter((o: any) => o.type === "function_call");
        expect(calls.map((o: any) => ({ id: o.call_id, name: o.name, arguments: JSON.parse(o.arguments) }))).toEqual(c.expect.tool_calls);
        for (const o of final.output) expect(o.id).toMatch(/^(msg_|fc_|rs_)/);
        expect(final.id).toMatch(/^resp_/);
      }
    });
  }
});

describe("other clients ← Responses upstream", () => {
  for (const id of ["B09", "B18"]) {
    test(`${id} (Anthropic client)`, async () => {
      const c = await regressionCase(id);
      const sse = translate(c);
      if (c.expect.event_types) expect(eventTypes(sse)).toEqual(c.expect.event_types);
      const msg = await sdkFinalMessage(sse);
      expect(msg.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("")).toBe(c.expect.text);
      expect(msg.stop_reason).toBe(c.expect.stop_reason);
      if (c.expect.usage) expect(msg.usage).toMatchObject(c.expect.usage);
    });
  }

  for (const id of ["B09-chat", "B18-chat"]) {
    test(`${id} (Chat client)`, async () => {
      const c = await regressionCase(id);
      const sse = translate(c);
      const done = await sdkFinalChatCompletion(sse, c.request.stream_options?.include_usage === true);
      expect(done.choices[0]!.message.content).toBe(c.expect.text);
      expect(done.choices[0]!.finish_reason).toBe(c.expect.stop_reason);
      if (c.expect.usage) expect(done.usage).toMatchObject(c.expect.usage);
    });
  }
});
