/**
 * The non-streamed Responses body's exact text, pinned (docs/performance.md item 114): the gateway
 * writes a whole reply with `encodeResponseText` (the request echo's tools from echo-memo.ts, as the
 * stream encoder does), which must be the text `JSON.stringify(encodeResponse(…))` wrote before. Every
 * recorded upstream stream and reply of the shared fixtures (all four formats, decoded by their own
 * decoders), every regression case's upstream stream and hand-made replies for what no recording has
 * (refusals, phases, signed reasoning, namespaced, custom and local-shell calls, log probabilities,
 * text needing escapes, max tokens, no stop reason) are written for several client requests (none, the
 * bench's, Codex's three recorded ones, one with every kind of tool), twice each (the second time
 * Codex's tools come from the memo); each text's SHA-256 is compared with the one recorded from
 * `JSON.stringify(encodeResponse(…))` before that item (test/fixtures/responses-body-bytes.json;
 * `UPDATE_RESPONSES_GOLDEN=1` rewrites it, for a change that means to change the bytes).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { caseIds, manifest, recordedBytes, regressionCase } from "../../support/fixtures.ts";
import { counterIds, decodeSse, familyOf, responsesClientRequests, sha } from "../../support/responses-bytes.ts";
import { codecFor } from "../../../formats/index.ts";
import { accumulate } from "../../../formats/accumulate.ts";
import { encodeResponseJson } from "../../../formats/codec.ts";
import type { HubRequest, HubResponse, WireFormat } from "../../../formats/hub.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

const GOLDEN = join(import.meta.dir, "..", "..", "fixtures", "responses-body-bytes.json");
const UPDATE = process.env.UPDATE_RESPONSES_GOLDEN === "1";
const utf8 = new TextEncoder();

/** Upstream SSE bytes → that format's decoder → canonical events → the reply a JSON client gets. */
const replyOf = (format: WireFormat, bytes: Uint8Array): HubResponse => accumulate(decodeSse(format, bytes)).response;

const lp = (token: string) => ({ token, logprob: -0.5, bytes: [...utf8.encode(token)], top: [{ token, logprob: -0.5 }] });

/** Replies no recording has. */
const SYNTHETIC: Record<string, HubResponse> = {
  "text needing escapes": { content: [{ type: "text", text: 'quote " backslash \\ newline \n tab \t ☕ \u2028 \u0001' }], stopReason: "end_turn", usage: { inputTokens: 7, outputTokens: 3 } },
  "refusal": { content: [{ type: "text", text: "I can't.", refusal: true }], stopReason: "refusal", usage: {} },
  "phase and log probabilities": { content: [{ type: "text", text: "Hi there", phase: "final_answer", logprobs: [lp("Hi"), lp(" there")] }], stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 2 } },
  "signed reasoning then text": {
    content: [
      { type: "thinking", text: "hmm", summary: ["first", "second"], signature: { family: "openai", value: "enc" }, itemId: "rs_up" },
      { type: "thinking", text: "raw only", signature: { family: "anthropic", value: "sig" } },
      { type: "text", text: "done" },
    ],
    stopReason: "end_turn",
    usage: { inputTokens: 10, cacheReadTokens: 5, outputTokens: 7, reasoningTokens: 2 },
  },
  "calls of every kind": {
    content: [
      { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}', itemId: "fc_up" },
      { type: "tool_call", id: "call_2", name: "inner", arguments: "" },
      { type: "tool_call", id: "call_3", name: "ns__inner", arguments: "{}" },
      { type: "tool_call", id: "call_4", name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' },
      { type: "tool_call", id: "call_5", name: "local_shell", arguments: '{"command":["ls","-l"]}' },
    ],
    stopReason: "tool_use",
    usage: { inputTokens: 3 },
  },
  "max tokens": { content: [{ type: "text", text: "cut" }], stopReason: "max_tokens", usage: { outputTokens: 1 } },
  "no stop reason": { content: [{ type: "text", text: "partial" }], stopReason: null, usage: {} },
  "empty": { content: [], stopReason: "end_turn", usage: {} },
};

/** Every reply: name → hub reply. */
async function replies(): Promise<[string, HubResponse][]> {
  const out: [string, HubResponse][] = [];
  for (const e of await manifest()) {
    const bytes = await recordedBytes(e.file);
    if (e.kind === "sse") out.push([`recorded ${e.file}`, replyOf(e.format, bytes)]);
    else {
      try {
        out.push([`recorded ${e.file}`, codecFor(e.format).decodeResponse(JSON.parse(new TextDecoder().decode(bytes)), { family: familyOf(e.format) } as never)]);
      } catch {
        // an error body: no reply to write
      }
    }
  }
  for (const id of await caseIds()) {
    const c = await regressionCase(id);
    const sse = c.upstream?.response?.sse;
    if (typeof sse === "string") out.push([`case ${id}`, replyOf(c.upstream.format, utf8.encode(sse))]);
  }
  for (const [name, r] of Object.entries(SYNTHETIC)) out.push([`synthetic ${name}`, r]);
  return out;
}

describe("the non-streamed Responses body's text is the pinned one", async () => {
  const golden: Record<string, string> = existsSync(GOLDEN) ? JSON.parse(readFileSync(GOLDEN, "utf8")) : {};
  const seen: Record<string, string> = {};
  const all = await replies();
  // The client requests each reply is written for (their echo is in the body).
  const reqs = await responsesClientRequests(false, [
    ["codex-default", "codex-default.json"],
    ["codex-tool-use-1", "codex-tool-use-1.json"],
    ["codex-tool-use-2", "codex-tool-use-2.json", { previous_response_id: "resp_prev" }],
  ]);
  const opts = (request: HubRequest | undefined) => ({ model: "client-model", request, newId: counterIds(), now: () => 1_750_000_000_000 });

  test("every reply was read (the fixtures are there)", () => {
    expect(all.filter(([n]) => n.startsWith("recorded ") && !n.endsWith(".sse")).length).toBeGreaterThan(5);
    expect(all.filter(([n]) => n.startsWith("recorded ")).length).toBeGreaterThan(40);
    expect(all.filter(([n]) => n.startsWith("case ")).length).toBeGreaterThan(20);
  });

  for (const [name, resp] of all) {
    test(name, () => {
      for (const [reqName, req] of reqs) {
        const whole = JSON.stringify(openaiResponses.encodeResponse!(resp, opts(req)));
        // What the gateway sends (re-translate.ts), twice: the second time a large tool list is remembered.
        for (let i = 0; i < 2; i++) expect(encodeResponseJson(openaiResponses, resp, opts(req))).toBe(whole);
        expect(openaiResponses.encodeResponseText?.(resp, opts(req))).toBe(whole);
        const key = `${name} | ${reqName}`;
        seen[key] = sha(whole);
        if (!UPDATE) expect(`${key}: ${sha(whole)}`).toBe(`${key}: ${golden[key]}`);
      }
    });
  }

  test("the pinned set is complete", () => {
    if (UPDATE) writeFileSync(GOLDEN, JSON.stringify(seen, Object.keys(seen).sort(), 1) + "\n");
    expect(Object.keys(seen).sort()).toEqual(Object.keys(UPDATE ? seen : golden).sort());
  });
});
