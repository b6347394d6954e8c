/**
 * The Anthropic codec against the other formats' codecs: every regression case whose client speaks
 * Anthropic Messages (cases/README.md), played without a server — the client body through this
 * parser and the upstream format's builder (`expect.upstream_request`), the upstream stream through
 * that format's decoder, the normalizer and this encoder, read by the official SDK (`expect.*`).
 * Plus: every recorded stream of every format comes out as a stream the SDK accepts or rejects with
 * an APIError, never a half message.
 */
import { describe, expect, test } from "bun:test";
import { APIError } from "@anthropic-ai/sdk";
import { anthropicMessages } from "../../../formats/anthropic-messages/index.ts";
import type { ProviderKind } from "../../../formats/codec.ts";
import type { HubEvent, ProviderFamily, WireFormat } from "../../../formats/hub.ts";
import { codecFor } from "../../../formats/index.ts";
import { normalizeEvents } from "../../../formats/normalize.ts";
import { caseIds, manifest, recordedBytes, regressionCase } from "../../support/fixtures.ts";
import { eventTypes, sdkFinalMessage } from "../../support/anthropic-sdk.ts";
import { pointer as at, expectUpstream } from "../../support/json.ts";

const DEFAULT_KIND: Record<WireFormat, ProviderKind> = {
  "openai-chat": "openai-compatible",
  "openai-responses": "openai-responses",
  "anthropic-messages": "anthropic-compatible",
  gemini: "gemini",
};

function familyOf(kind: ProviderKind): ProviderFamily {
  switch (kind) {
    case "anthropic":
    case "claude-code":
      return "anthropic";
    case "openai":
    case "openai-responses":
    case "codex":
      return "openai";
    case "gemini":
      return "gemini";
    default:
      return "provider:fake";
  }
}

/** Upstream bytes in `format` → canonical hub events → Anthropic SSE text. */
function translateStream(format: WireFormat, family: ProviderFamily, bytes: Uint8Array): string {
  const loose: HubEvent[] = [];
  const d = codecFor(format).createDecoder({ family }, (e) => loose.push(e));
  d.push(bytes);
  d.end();
  let out = "";
  const enc = anthropicMessages.createEncoder!({ model: "client-model" }, (t) => (out += t));
  for (const e of normalizeEvents(loose)) enc.event(e);
  enc.end();
  return out;
}

const cases: any[] = [];
for (const id of await caseIds()) {
  const c = await regressionCase(id);
  if (c.client_format === "anthropic-messages") cases.push(c);
}

describe("regression cases with an Anthropic client", () => {
  test("there are such cases", () => expect(cases.length).toBeGreaterThanOrEqual(8));

  for (const c of cases) {
    test(`${c.id}: ${c.title}`, async () => {
      const format = c.upstream.format as WireFormat;
      const kind = (c.upstream.kind ?? DEFAULT_KIND[format]) as ProviderKind;
      const family = familyOf(kind);
      const hub = anthropicMessages.parseRequest!(c.request);

      const spec = c.expect.upstream_request;
      if (spec && format !== "anthropic-messages") {
        const built = codecFor(format).buildRequest(hub, { model: c.request.model ?? "upstream-model", kind, family, stream: true });
        expectUpstream(built.body, spec);
      }

      const out = translateStream(format, family, new TextEncoder().encode(c.upstream.response.sse));
      const e = c.expect;
      if (e.event_types) expect(eventTypes(out)).toEqual(e.event_types);
      const msg = await sdkFinalMessage(out);
      if (e.text !== undefined) expect(msg.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")).toBe(e.text);
      if (e.tool_calls) {
        const calls = msg.content.flatMap((b) => (b.type === "tool_use" ? [{ name: b.name, arguments: b.input }] : []));
        expect(calls).toEqual(e.tool_calls.map((t: any) => ({ name: t.name, arguments: t.arguments })));
        for (const b of msg.content) if (b.type === "tool_use") expect(b.id).toMatch(/^[a-zA-Z0-9_-]+$/);
      }
      if (e.stop_reason !== undefined) expect(msg.stop_reason).toBe(e.stop_reason);
      if (e.usage) for (const [k, v] of Object.entries(e.usage)) expect({ k, v: (msg.usage as any)[k] }).toEqual({ k, v });
    });
  }
});

describe("every recorded stream of every format, encoded for an Anthropic client", () => {
  const FAMILY: Record<WireFormat, ProviderFamily> = {
    "anthropic-messages": "anthropic",
    "openai-chat": "provider:fake",
    "openai-responses": "openai",
    gemini: "gemini",
  };
  test("finishes as a valid message, or ends with exactly one event: error that the SDK raises", async () => {
    const entries = (await manifest()).filter((e) => e.kind === "sse");
    expect(entries.length).toBeGreaterThan(30);
    for (const entry of entries) {
      const out = translateStream(entry.format, FAMILY[entry.format], await recordedBytes(entry.file));
      const types = eventTypes(out);
      const errors = types.filter((t) => t === "error").length;
      const result = await sdkFinalMessage(out).then(
        (m) => ({ ok: true as const, m }),
        (e) => ({ ok: false as const, e }),
      );
      if (errors > 0) {
        expect({ file: entry.file, errors, last: types.at(-1), stop: types.includes("message_stop") }).toEqual({
          file: entry.file,
          errors: 1,
          last: "error",
          stop: false,
        });
        expect({ file: entry.file, apiError: !result.ok && result.e instanceof APIError }).toEqual({ file: entry.file, apiError: true });
      } else {
        expect({ file: entry.file, ok: result.ok, last: types.at(-1) }).toEqual({ file: entry.file, ok: true, last: "message_stop" });
        if (!result.ok) continue;
        const m = result.m;
        // stop_reason is tool_use exactly when a tool_use block exists (REFERENCE §7.1), unless max_tokens cut it.
        const hasTool = m.content.some((b) => b.type === "tool_use");
        if (m.stop_reason !== "max_tokens") expect({ file: entry.file, tool: m.stop_reason === "tool_use" }).toEqual({ file: entry.file, tool: hasTool });
        for (const b of m.content) if (b.type === "text") expect(b.text.length).toBeGreaterThan(0);
      }
    }
  });
});
