/**
 * The Responses encoder's exact output, pinned (docs/performance.md items 99–100): the bytes a client
 * reads are part of the contract (SDKs, Codex and recorded clients compare ids, order and members), so
 * a change made for speed must leave every byte as it was. Every recorded upstream stream and reply of
 * the shared fixtures (all four formats, decoded by their own decoders and normalized), every
 * regression case's upstream stream, and hand-made event lists for what no recording has (log
 * probabilities, refusals, phases, text needing escapes, namespaced, custom and local-shell calls,
 * failures, an end without a finish) are encoded — with several client requests (none, the bench's,
 * Codex's recorded ones, one with every kind of tool) — by the SSE encoder and by the event encoder
 * (Codex's WebSocket), and each output's SHA-256 is compared with the one recorded from the encoder
 * before those items (test/fixtures/responses-encoder-bytes.json; `UPDATE_RESPONSES_GOLDEN=1`
 * rewrites it, for a change that means to change the bytes).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { caseIds, manifest, recordedBytes, regressionCase } from "../../support/fixtures.ts";
import { counterIds, decodeSse, familyOf, responsesClientRequests, sha } from "../../support/responses-bytes.ts";
import { codecFor } from "../../../formats/index.ts";
import { normalizeEvents } from "../../../formats/normalize.ts";
import { responseToEvents } from "../../../formats/accumulate.ts";
import type { HubEvent, HubRequest } from "../../../formats/hub.ts";
import { openaiResponses } from "../../../formats/openai-responses/index.ts";

const GOLDEN = join(import.meta.dir, "..", "..", "fixtures", "responses-encoder-bytes.json");
const UPDATE = process.env.UPDATE_RESPONSES_GOLDEN === "1";
const utf8 = new TextEncoder();

const lp = (token: string) => ({ token, logprob: -0.5, bytes: [...utf8.encode(token)], top: [{ token, logprob: -0.5 }] });
const start = { type: "message_start", usage: { inputTokens: 7 } } as const;
const fin = (reason: string): HubEvent[] => [{ type: "usage", usage: { outputTokens: 3, reasoningTokens: 1 } }, { type: "finish", reason } as HubEvent];

/** Event lists no recording has. */
const SYNTHETIC: Record<string, HubEvent[]> = {
  "plain text, many deltas": [
    start,
    { type: "block_start", index: 0, block: { type: "text" } },
    ...Array.from({ length: 30 }, (_, i): HubEvent => ({ type: "block_delta", index: 0, delta: { type: "text", text: ` w${i}` } })),
    { type: "block_stop", index: 0 },
    ...fin("end_turn"),
  ],
  "text needing escapes and unicode": [
    start,
    { type: "block_start", index: 0, block: { type: "text", phase: "commentary" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: 'say "hi"\n' } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "back\\slash \u0001 café ☕ 😀" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "x".repeat(300) } },
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "text", phase: "final_answer" } },
    { type: "block_delta", index: 1, delta: { type: "text", text: "done" } },
    { type: "block_stop", index: 1 },
    ...fin("max_tokens"),
  ],
  "log probabilities": [
    start,
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "Hi", logprobs: [lp("Hi")] } },
    { type: "block_delta", index: 0, delta: { type: "text", text: " there" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: '"q"', logprobs: [lp('"'), lp("q"), lp('"')] } },
    { type: "block_stop", index: 0 },
    ...fin("end_turn"),
  ],
  refusal: [
    start,
    { type: "block_start", index: 0, block: { type: "text", refusal: true } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "I can't" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: ' "help"' } },
    { type: "block_stop", index: 0 },
    ...fin("refusal"),
  ],
  "reasoning, calls of every kind": [
    start,
    { type: "block_start", index: 0, block: { type: "thinking", itemId: "rs_upstream1" } },
    { type: "block_delta", index: 0, delta: { type: "thinking", text: "first part" } },
    { type: "block_delta", index: 0, delta: { type: "thinking_part" } },
    { type: "block_delta", index: 0, delta: { type: "thinking", text: 'second "part"' } },
    { type: "block_delta", index: 0, delta: { type: "signature", signature: { family: "anthropic", value: "sig1" } } },
    { type: "block_stop", index: 0 },
    { type: "block_start", index: 1, block: { type: "redacted_thinking", data: { family: "anthropic", value: "opaque" } } },
    { type: "block_stop", index: 1 },
    { type: "block_start", index: 2, block: { type: "tool_call", id: "call_1", name: "get_weather" } },
    { type: "block_delta", index: 2, delta: { type: "tool_args", json: '{"city":' } },
    { type: "block_delta", index: 2, delta: { type: "tool_args", json: '"Paris"}' } },
    { type: "block_stop", index: 2 },
    { type: "block_start", index: 3, block: { type: "tool_call", id: "call_2", name: "inner", itemId: "fc_up2" } },
    { type: "block_stop", index: 3 },
    { type: "block_start", index: 4, block: { type: "tool_call", id: "call_3", name: "ns__inner" } },
    { type: "block_delta", index: 4, delta: { type: "tool_args", json: "{}" } },
    { type: "block_stop", index: 4 },
    { type: "block_start", index: 5, block: { type: "tool_call", id: "call_4", name: "apply_patch" } },
    { type: "block_delta", index: 5, delta: { type: "tool_args", json: '{"input":"*** Begin Patch\\n*** End Patch"}' } },
    { type: "block_stop", index: 5 },
    { type: "block_start", index: 6, block: { type: "tool_call", id: "call_5", name: "local_shell" } },
    { type: "block_delta", index: 6, delta: { type: "tool_args", json: '{"command":["ls","-la"],"workdir":"/tmp"}' } },
    { type: "block_stop", index: 6 },
    ...fin("tool_use"),
  ],
  "failure after text": [
    start,
    { type: "block_start", index: 0, block: { type: "text" } },
    { type: "block_delta", index: 0, delta: { type: "text", text: "partial" } },
    { type: "block_stop", index: 0 },
    { type: "error", error: { kind: "overloaded", message: 'Overloaded "now"', status: 529 } },
  ],
  "failure before anything": [{ type: "error", error: { kind: "rate_limit", message: "slow down", status: 429, param: "model" } }],
  "end without a finish": [start, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "cut" } }],
  "error after the finish": [start, { type: "block_start", index: 0, block: { type: "text" } }, { type: "block_delta", index: 0, delta: { type: "text", text: "ok" } }, { type: "block_stop", index: 0 }, ...fin("context_window_exceeded"), { type: "error", error: { kind: "api_error", message: "late", status: 502 } }],
};

/** Every input stream: name → canonical hub events. */
async function streams(): Promise<[string, HubEvent[]][]> {
  const out: [string, HubEvent[]][] = [];
  for (const e of await manifest()) {
    const bytes = await recordedBytes(e.file);
    if (e.kind === "sse") {
      out.push([`recorded ${e.file}`, decodeSse(e.format, bytes)]);
      out.push([`recorded ${e.file} in 7-byte reads`, decodeSse(e.format, bytes, 7)]);
    } else {
      try {
        const resp = codecFor(e.format).decodeResponse(bytes, { family: familyOf(e.format) } as never);
        out.push([`recorded ${e.file}`, normalizeEvents(responseToEvents(resp))]);
      } catch {
        // an error body: no reply to encode
      }
    }
  }
  for (const id of await caseIds()) {
    const c = await regressionCase(id);
    const sse = c.upstream?.response?.sse;
    if (typeof sse !== "string") continue;
    out.push([`case ${id}`, decodeSse(c.upstream.format, utf8.encode(sse))]);
  }
  for (const [name, evs] of Object.entries(SYNTHETIC)) out.push([`synthetic ${name}`, normalizeEvents(evs)]);
  return out;
}

/** `sse` as the event encoder writes it: a failure's `error` event left out, `response.failed` taking its sequence number. */
function withoutErrorEvent(sse: string): string {
  return sse.replace(
    /event: error\ndata: \{"type":"error","sequence_number":(\d+),[^\n]*\n\nevent: response\.failed\ndata: \{"type":"response\.failed","sequence_number":\d+,/,
    (_, n) => `event: response.failed\ndata: {"type":"response.failed","sequence_number":${n},`,
  );
}

/** The SSE encoder's text and the event encoder's events (as `event\ndata\n` lines) for one stream. */
function encodeBoth(events: HubEvent[], request: HubRequest | undefined): { sse: string; events: string } {
  const opts = () => ({ model: "client-model", request, newId: counterIds(), now: () => 1_750_000_000_000 });
  let sse = "";
  const a = openaiResponses.createEncoder!(opts(), (t) => (sse += t));
  let evs = "";
  const b = openaiResponses.createEventEncoder!(opts(), (event, data) => (evs += `${event}\n${data}\n`));
  for (const ev of events) {
    a.event(ev);
    b.event(ev);
  }
  a.end();
  b.end();
  return { sse, events: evs };
}

describe("the Responses encoder's bytes are the pinned ones", async () => {
  const golden: Record<string, string> = existsSync(GOLDEN) ? JSON.parse(readFileSync(GOLDEN, "utf8")) : {};
  const seen: Record<string, string> = {};
  const all = await streams();
  // The client requests each stream is encoded for (their echo is in every response object).
  const reqs = await responsesClientRequests(true, [
    ["codex-default", "codex-default.json"],
    ["codex-tool-use", "codex-tool-use-1.json"],
  ]);

  test("every stream was read (the fixtures are there)", () => {
    expect(all.filter(([n]) => n.startsWith("recorded ")).length).toBeGreaterThan(40);
    expect(all.filter(([n]) => n.startsWith("case ")).length).toBeGreaterThan(20);
  });

  for (const [name, events] of all) {
    test(name, () => {
      for (const [reqName, req] of reqs) {
        const { sse, events: evs } = encodeBoth(events, req);
        // The two encoders write the same events (the SSE one frames them), but for a failure's `error`
        // event, which only the SSE stream has: there `response.failed` takes its sequence number.
        const framed = evs.replace(/^([^\n]*)\n([^\n]*)\n/gm, "event: $1\ndata: $2\n\n");
        expect(framed).toBe(withoutErrorEvent(sse));
        const key = `${name} | ${reqName}`;
        seen[key] = sha(sse);
        if (!UPDATE) expect(`${key}: ${sha(sse)}`).toBe(`${key}: ${golden[key]}`);
      }
    });
  }

  test("the pinned set is complete", () => {
    if (UPDATE) writeFileSync(GOLDEN, JSON.stringify(seen, Object.keys(seen).sort(), 1) + "\n");
    expect(Object.keys(seen).sort()).toEqual(Object.keys(UPDATE ? seen : golden).sort());
  });
});
