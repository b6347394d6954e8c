/**
 * Every regression case in test/fixtures/shared/cases (format: CASES.md, notes: cases/README.md) played
 * through the real gateway and a fake upstream: the client's reply is read with the official SDK's
 * accumulating parser and its raw event order; what the gateway sent upstream is checked by JSON pointer,
 * and against the provider's API (the fake upstream is strict: test/support/strict-upstream.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { caseIds, regressionCase } from "../support/fixtures.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { endpointOf, viewReply, type ClientFormat } from "../support/client-reply.ts";
import { pointer } from "../support/json.ts";

const KINDS = ["openai-compatible", "openai", "openai-responses", "codex", "anthropic-compatible", "anthropic", "claude-code", "gemini"] as const;
const DEFAULT_KIND: Record<string, string> = {
  "openai-chat": "openai-compatible",
  "openai-responses": "openai-responses",
  "anthropic-messages": "anthropic-compatible",
  gemini: "gemini",
};

function baseUrl(kind: string): string {
  if (kind.startsWith("openai") ) return "{{FAKE}}/v1";
  if (kind === "codex") return "{{FAKE}}/backend-api/codex";
  return "{{FAKE}}";
}

const YAML = `
providers:
${KINDS.map((k) => `  - id: k-${k}\n    kind: ${k}\n    base_url: "${baseUrl(k)}"\n`).join("")}
accounts:
${KINDS.map((k) =>
  k === "codex" || k === "claude-code"
    ? `  - id: acct-${k}\n    provider: k-${k}\n    access_token: env:FAKE_KEY\n`
    : `  - id: acct-${k}\n    provider: k-${k}\n    api_key: env:FAKE_KEY\n`,
).join("")}
`;

let gw: TestGateway;
/** The provider kind of the case being played (the Chat path is OpenAI's API or an openai-compatible server's). */
let kindNow = "";
beforeAll(async () => {
  gw = await startGateway(YAML, { fakeOptions: { strict: { openaiCompatible: () => kindNow === "openai-compatible" } } });
});
afterAll(async () => {
  await gw?.stop();
});

const ids = await caseIds();

describe("regression cases through the gateway", () => {
  for (const id of ids) {
    test(id, async () => {
      const c = await regressionCase(id);
      const kind = c.upstream.kind ?? DEFAULT_KIND[c.upstream.format];
      kindNow = kind;
      gw.fake.reset();
      gw.fake.enqueue(c.upstream.response);
      const body = { ...c.request, model: `k-${kind}/${c.request.model ?? "model-x"}` };
      const res = await fetch(`${gw.url}${endpointOf(c.client_format)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const view = await viewReply(c.client_format as ClientFormat, res, body);
      const e = c.expect;
      const ctx = `${id}: ${c.title}\n--- client got:\n${view.raw.slice(0, 3000)}`;
      // What the gateway sent is a body the provider's API takes (the fake is strict).
      expect(gw.fake.violations, ctx).toEqual([]);
      if (e.status !== undefined) expect(view.status, ctx).toBe(e.status);
      if (e.event_types) expect(view.eventTypes, ctx).toEqual(e.event_types);
      if (e.error) {
        expect(view.error, ctx).toBeDefined();
        expect(view.error!.inBand, ctx).toBe(e.error.in_band);
        for (const k of ["type", "code", "param"] as const) if (e.error[k] !== undefined) expect(view.error![k], ctx).toBe(e.error[k]);
      } else if (e.status === undefined || e.status < 400) {
        expect(view.error, ctx).toBeUndefined();
      }
      if (e.text !== undefined) expect(view.text, ctx).toBe(e.text);
      if (e.refusal !== undefined) expect(view.refusal, ctx).toBe(e.refusal);
      if (e.logprobs !== undefined) expect(view.logprobs, ctx).toEqual(e.logprobs);
      if (e.tool_calls) {
        expect(view.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments })), ctx).toEqual(e.tool_calls.map((t: any) => ({ name: t.name, arguments: t.arguments })));
        e.tool_calls.forEach((t: any, i: number) => {
          if (t.id !== undefined) expect(view.toolCalls[i].id, ctx).toBe(t.id);
        });
      }
      if (e.stop_reason !== undefined) expect(view.stopReason, ctx).toBe(e.stop_reason);
      if (e.usage) expect(view.usage, ctx).toMatchObject(e.usage);
      if (e.upstream_request) {
        const sent = gw.fake.requests.at(-1)?.body;
        expect(sent, `${id}: nothing reached the upstream`).toBeDefined();
        for (const [ptr, value] of Object.entries(e.upstream_request.equals ?? {})) {
          expect(pointer(sent, ptr), `${id}: upstream ${ptr}\n${JSON.stringify(sent).slice(0, 2000)}`).toEqual(value);
        }
        for (const ptr of e.upstream_request.absent ?? []) {
          expect(pointer(sent, ptr), `${id}: upstream ${ptr} must be absent\n${JSON.stringify(sent).slice(0, 2000)}`).toBeUndefined();
        }
      }
    });
  }
});
