/**
 * A native stream's exact output and observations, pinned (docs/performance.md items 122 and 123): the
 * passthrough reply driver (`passthroughDriver` around each format's `createTap`, what the commit point
 * uses when client and provider speak the same format) forwards the provider's bytes, withholds what
 * it must (Chat's usage-only chunk the client did not ask for, a premature `message_stop`, a repeated
 * Anthropic `message_start`), appends the format's in-band error or closing frames at the end (SPEC
 * 6.4), and reads usage (O-1), the stop reason, the first content (R-8's commit point) and in-band
 * errors on the way. A change made for
 * speed in a tap or the driver must leave all of that as it was: the client's bytes, and what the
 * driver reports after every read (`contentSeen`, `earlyError`, `stopReason`) and at the end (`usage`,
 * `usageSeen`, `lateError`, `outputChars`).
 *
 * Inputs: every recorded upstream SSE of the shared fixtures (four formats), every regression case's
 * upstream stream, the bench upstream's streams (scripts/bench-upstream.ts: the bench lanes), and
 * hand-made Anthropic streams for what no recording has (CRLF and CR line ends, comments, pings, an
 * unnamed event, `event:` without a space, two `event:` lines, an event line without a colon, a
 * premature `message_stop`, an in-band error, a stream cut short, a torn last event, a BOM, extra blank
 * lines, multi-line data, several blocks), and hand-made Responses streams (the same framings, empty
 * and `[DONE]` data, empty deltas, sequence numbers in the text, hosted tools, more lifecycle events
 * than the tap keeps, errors, cuts; item 222). Each is read whole (as the commit point gets a short reply),
 * in 7-byte reads and one byte at a time, for a client that asked for usage and one that did not (a
 * Responses stream also with the keep-alive bound looking before every read, its counts shown); each
 * run's transcript is hashed (SHA-256) and compared with the one recorded before those items
 * (test/fixtures/native-stream-bytes.json; `UPDATE_NATIVE_GOLDEN=1` rewrites it, for a change that
 * means to change behaviour).
 */
import { describe, expect, test } from "bun:test";
import { expectPinnedDigests } from "../support/pinned-digests.ts";
import { join } from "node:path";
import { caseIds, manifest, recordedBytes, regressionCase } from "../support/fixtures.ts";
import { codecFor } from "../../formats/index.ts";
import type { WireFormat } from "../../formats/hub.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import type { PassthroughDriver } from "../../pipeline/passthrough-driver.ts";
import { byteSample } from "../../pipeline/output-estimate.ts";
import { benchReply } from "../../scripts/bench-upstream.ts";

const GOLDEN = join(import.meta.dir, "..", "fixtures", "native-stream-bytes.json");
const UPDATE = process.env.UPDATE_NATIVE_GOLDEN === "1";
const utf8 = new TextEncoder();

const familyOf = (f: WireFormat) => (f === "anthropic-messages" ? "anthropic" : f === "gemini" ? "gemini" : "openai");

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
const start = ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, usage: { input_tokens: 12, output_tokens: 1, cache_read_input_tokens: 3 } } });
const blockStart = (i: number, type = "text") => ev("content_block_start", { type: "content_block_start", index: i, content_block: type === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" } });
const text = (i: number, t: string) => ev("content_block_delta", { type: "content_block_delta", index: i, delta: { type: "text_delta", text: t } });
const blockStop = (i: number) => ev("content_block_stop", { type: "content_block_stop", index: i });
const delta = (reason = "end_turn", out = 7) => ev("message_delta", { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: out } });
const stop = ev("message_stop", { type: "message_stop" });
const ping = ev("ping", { type: "ping" });
const whole = start + blockStart(0) + text(0, "Hello") + ping + text(0, " world") + blockStop(0) + delta() + stop;

/** Anthropic streams no recording has. */
const SYNTHETIC_MESSAGES: Record<string, string> = {
  plain: whole,
  "CRLF line ends": whole.replaceAll("\n", "\r\n"),
  "CR line ends": whole.replaceAll("\n", "\r"),
  "comments and pings": ": hello\n\n" + start + ping + ": keep-alive\n\n" + blockStart(0) + text(0, "a") + ": x\n" + text(0, "b").slice(0) + blockStop(0) + ping + delta() + stop,
  "unnamed events": start + 'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' + text(0, "x") + 'data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":3}}\n\n' + 'data: {"type":"message_stop"}\n\n',
  "event: without a space": start + "event:content_block_start\ndata: " + JSON.stringify({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) + "\n\n" + text(0, "y") + "event:message_delta\ndata: " + JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }) + "\n\n" + "event:message_stop\ndata: {}\n\n",
  "two event lines": start + "event: ping\nevent: content_block_start\ndata: {}\n\n" + text(0, "z") + "event: content_block_delta\nevent: message_delta\ndata: " + JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 4 } }) + "\n\n" + stop,
  "event line without a colon": start + "event: content_block_delta\nevent\ndata: " + JSON.stringify({ type: "content_block_start", index: 0 }) + "\n\n" + text(0, "q") + delta() + stop,
  "ignorable name, then a data line naming another type": start + "event: content_block_delta\ndata: " + JSON.stringify({ type: "message_delta", delta: { stop_reason: "end_turn" } }) + "\n\n" + blockStart(0) + text(0, "w") + delta() + stop,
  "a ping before the first block, without data": start + "event: ping\n\n" + "event: content_block_start\n\n" + blockStart(0) + text(0, "v") + blockStop(0) + delta() + stop,
  "id and retry lines": start + "id: 1\nevent: content_block_start\nretry: 5\ndata: {}\n\n" + "event: content_block_delta\nid: 2\ndata: {}\n\n" + delta() + stop,
  "premature message_stop": start + blockStart(0) + text(0, "cut") + blockStop(0) + stop + text(0, "after") + delta(),
  "premature message_stop, then more in the same read": start + blockStart(0) + text(0, "a") + stop + ping + delta("end_turn", 9) + stop,
  "in-band error after text": start + blockStart(0) + text(0, "so far") + ev("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  "in-band error first": ev("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }),
  "cut short": start + blockStart(0) + text(0, "partial"),
  "stop reason, no message_stop": start + blockStart(0) + text(0, "done") + blockStop(0) + delta(),
  "torn last event": start + blockStart(0) + text(0, "t") + 'event: content_block_delta\ndata: {"type":"content_block_de',
  "last event without its blank line": start + blockStart(0) + text(0, "t") + blockStop(0) + delta() + stop.trimEnd(),
  "a BOM": "\ufeff" + whole,
  "a BOM-like character mid-stream": start + "\ufeff" + blockStart(0) + text(0, "b") + delta() + stop,
  "a ping first, then a BOM-like character": ping + "\ufeff" + "event: message_delta\ndata: " + JSON.stringify({ type: "ping", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 5 } }) + "\n\n" + start + blockStart(0) + text(0, "p") + blockStop(0) + stop,
  "extra blank lines": "\n\n" + start + "\n" + blockStart(0) + "\n\n\n" + text(0, "e") + blockStop(0) + "\n" + delta() + stop + "\n\n",
  "multi-line data": start + "event: message_delta\ndata: {\"type\":\"message_delta\",\ndata: \"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n" + stop,
  "thinking then text, several blocks": start + blockStart(0, "thinking") + ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }) + blockStop(0) + blockStart(1) + text(1, "A ☕ 😀 café") + blockStop(1) + blockStart(2) + text(2, "B") + blockStop(2) + delta("tool_use", 30) + stop,
  "not JSON in a message_delta": start + blockStart(0) + text(0, "n") + "event: message_delta\ndata: {broken\n\n" + stop,
  "message_start twice, usage replaced": start + start + blockStart(0) + text(0, "u") + delta("end_turn", 2) + delta("end_turn", 11) + stop,
  "only pings": ping + ping,
  empty: "",
};

/** Responses streams no recording has (docs/performance.md item 222: events read by their bytes). */
const rev = (name: string, data: Record<string, unknown>) => ev(name, { type: name, ...data });
const resp = (status: string, more: Record<string, unknown> = {}) => ({ id: "resp_1", object: "response", status, model: "gpt-x", output: [], usage: null, ...more });
const rStart = rev("response.created", { sequence_number: 0, response: resp("in_progress") }) + rev("response.in_progress", { sequence_number: 1, response: resp("in_progress") });
const rItem = (seq: number, type = "message", status = "in_progress") => rev(status === "in_progress" ? "response.output_item.added" : "response.output_item.done", { sequence_number: seq, output_index: 0, item: { id: "it_1", type, status } });
const rDelta = (seq: number, d: string, name = "response.output_text.delta") => rev(name, { sequence_number: seq, item_id: "it_1", output_index: 0, content_index: 0, delta: d });
const rDone = (seq: number, out: unknown[] = [{ type: "message" }]) => rev("response.completed", { sequence_number: seq, response: resp("completed", { output: out, usage: { input_tokens: 11, output_tokens: 7, total_tokens: 18, input_tokens_details: { cached_tokens: 2 } } }) });
const rWhole = rStart + rItem(2) + rDelta(3, "Hel") + rDelta(4, "lo") + rev("response.output_text.done", { sequence_number: 5, text: "Hello" }) + rItem(6, "message", "completed") + rDone(7);
const SYNTHETIC_RESPONSES: Record<string, string> = {
  plain: rWhole,
  "CRLF line ends": rWhole.replaceAll("\n", "\r\n"),
  "CR line ends": rWhole.replaceAll("\n", "\r"),
  "CR only from the middle": rStart + rItem(2) + rDelta(3, "a") + (rDelta(4, "b") + rDone(5)).replaceAll("\n", "\r\n"),
  "a BOM": "\ufeff" + rWhole,
  "a delta first, then a BOM-like character": rDelta(0, "x") + "\ufeff" + rDelta(1, "y") + rDone(2),
  "event: and data: without a space": rStart + "event:response.output_text.delta\ndata:" + JSON.stringify({ type: "response.output_text.delta", sequence_number: 3, delta: "z" }) + "\n\n" + rDone(4),
  "an empty event name": rStart + "event:\ndata: " + JSON.stringify({ type: "response.output_text.delta", sequence_number: 3, delta: "e" }) + "\n\n" + "event: \ndata: " + JSON.stringify({ type: "response.completed", sequence_number: 4, response: resp("completed") }) + "\n\n",
  "unnamed events": 'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_u","model":"m-u"}}\n\n' + 'data: {"type":"response.output_text.delta","sequence_number":1,"delta":"u"}\n\n',
  "id and retry lines": rStart + "id: 7\n" + rDelta(2, "i") + "event: response.output_text.delta\nretry: 5\ndata: " + JSON.stringify({ type: "response.output_text.delta", sequence_number: 3, delta: "j" }) + "\n\n",
  "two event lines": rStart + "event: response.output_text.delta\nevent: response.completed\ndata: " + JSON.stringify({ type: "response.completed", sequence_number: 2, response: resp("completed") }) + "\n\n",
  "a delta named as the terminal event": rStart + "event: response.output_text.delta\ndata: " + JSON.stringify({ type: "response.completed", sequence_number: 2, response: resp("completed") }) + "\n\n",
  "multi-line data": rStart + 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\ndata: "sequence_number":2,"delta":"m"}\n\n',
  "empty and [DONE] data": rStart + "event: response.output_text.delta\ndata:\n\n" + "event: response.output_text.delta\ndata: [DONE]\n\n" + rDelta(2, "d"),
  "empty deltas, spaced members": rStart + rDelta(2, "") + 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta", "delta" : "" , "sequence_number" : 3}\n\n' + 'event: response.function_call_arguments.delta\ndata: {"delta": "", "sequence_number":4}\n\n' + rDelta(5, "", "response.reasoning_summary_text.delta") + rDelta(6, "k"),
  "sequence numbers in the delta text": rStart + rDelta(2, '"sequence_number":99') + rDelta(3, "x\"sequence_number\":98 "),
  "sequence numbers going down": rStart + rDelta(9, "a") + rDelta(4, "b"),
  "a hosted tool in flight": rStart + rItem(2, "web_search_call") + rev("response.web_search_call.searching", { sequence_number: 3, item_id: "ws_1" }) + "event: keepalive\ndata: {\"type\":\"keepalive\"}\n\n" + rev("response.output_text.annotation.added", { sequence_number: 4 }) + rItem(5, "web_search_call", "completed") + rDelta(6, "found") + rDone(7),
  "non-ASCII text": rStart + rDelta(2, "A ☕ 😀 café") + rDelta(3, "é") + rDone(4),
  "more lifecycle events than the tap keeps, then cut": rStart + Array.from({ length: 10 }, (_, i) => rev("response.in_progress", { sequence_number: 2 + i, response: resp("in_progress", { id: `resp_${i}`, model: `m-${i}` }) })).join("") + rDelta(12, "c"),
  "lifecycle after content, then cut": rStart + rDelta(2, "a") + rev("response.queued", { sequence_number: 3, response: resp("queued", { id: "resp_q", model: "m-q" }) }) + rDelta(4, "b"),
  "in-band error after text": rStart + rDelta(2, "so far") + ev("error", { type: "error", sequence_number: 3, error: { type: "server_error", message: "boom" } }),
  "failed": rStart + rev("response.failed", { sequence_number: 2, response: resp("failed", { error: { code: "server_error", message: "x" } }) }),
  "incomplete with a tool call": rStart + rItem(2, "function_call") + rDelta(3, '{"a":', "response.function_call_arguments.delta") + rev("response.incomplete", { sequence_number: 4, response: resp("incomplete", { output: [{ type: "function_call" }], incomplete_details: { reason: "max_output_tokens" } }) }),
  "cut short": rStart + rItem(2) + rDelta(3, "partial"),
  "torn last event": rStart + rDelta(2, "t") + 'event: response.output_text.delta\ndata: {"type":"response.output_text.de',
  "last event without its blank line": rWhole.trimEnd(),
  "extra blank lines": "\n\n" + rStart + "\n" + rDelta(2, "e") + "\n\n\n" + rDone(3) + "\n\n",
  "only keepalives": "event: keepalive\ndata: {\"type\":\"keepalive\"}\n\n".repeat(3),
};

/** What one run of the driver over `bytes` (read whole or in `piece`-byte reads) shows: a transcript to hash. */
function run(format: WireFormat, bytes: Uint8Array, includeUsage: boolean, piece?: number, look = false): string {
  const codec = codecFor(format);
  const driver = passthroughDriver(codec.createTap({ family: familyOf(format), includeUsage }), byteSample(codec, { family: familyOf(format) }));
  const lines: string[] = [];
  const out: Uint8Array[] = [];
  const step = piece ?? Math.max(1, bytes.length);
  // `look`: the keep-alive bound asks before every read (TapState.looking), and what the tap counted is shown too.
  const seen = () => JSON.stringify(look ? [driver.contentSeen, driver.earlyError ?? null, driver.stopReason, driver.contentEvents, driver.serverToolRunning] : [driver.contentSeen, driver.earlyError ?? null, driver.stopReason]);
  try {
    for (let i = 0; i < bytes.length; i += step) {
      if (look) (driver as PassthroughDriver<Uint8Array>).tapState.looking = true;
      const o = driver.push(bytes.subarray(i, i + step));
      out.push(o);
      lines.push(`${i}:${o.length}:${seen()}`);
    }
  } catch (e) {
    lines.push(`threw ${(e as Error).message}`);
  }
  out.push(driver.end());
  lines.push(`end:${seen()}:${JSON.stringify([driver.usage, driver.usageSeen, driver.lateError ?? null, driver.outputChars])}`);
  lines.push(new TextDecoder().decode(Buffer.concat(out)));
  return lines.join("\n");
}

/** Every input stream: name, format, bytes. */
async function streams(): Promise<[string, WireFormat, Uint8Array][]> {
  const out: [string, WireFormat, Uint8Array][] = [];
  for (const e of await manifest()) if (e.kind === "sse") out.push([`recorded ${e.file}`, e.format, await recordedBytes(e.file)]);
  for (const id of await caseIds()) {
    const c = await regressionCase(id);
    const sse = c.upstream?.response?.sse;
    if (typeof sse === "string") out.push([`case ${id}`, c.upstream.format, utf8.encode(sse)]);
  }
  const bench: [WireFormat, string, string][] = [
    ["openai-chat", "/v1/chat/completions", '{"model":"gpt-bench","stream":true,"stream_options":{"include_usage":true}}'],
    ["openai-chat", "/v1/chat/completions", '{"model":"gpt-bench","stream":true}'],
    ["anthropic-messages", "/v1/messages", '{"model":"claude-bench","stream":true}'],
    ["openai-responses", "/v1/responses", '{"model":"gpt-bench","stream":true}'],
    ["gemini", "/v1beta/models/gemini-bench:streamGenerateContent", "{}"],
  ];
  for (const [format, path, body] of bench) out.push([`bench ${path} ${body}`, format, new Uint8Array(await benchReply(path, body)!.arrayBuffer())]);
  for (const [name, t] of Object.entries(SYNTHETIC_MESSAGES)) out.push([`synthetic messages ${name}`, "anthropic-messages", utf8.encode(t)]);
  for (const [name, t] of Object.entries(SYNTHETIC_RESPONSES)) out.push([`synthetic responses ${name}`, "openai-responses", utf8.encode(t)]);
  return out;
}

describe("native streams: the client's bytes and the driver's observations are pinned", () => {
  test("every stream, read whole, in 7-byte reads and byte by byte, matches its recorded SHA-256", async () => {
    const got: Record<string, string> = {};
    const hash = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");
    for (const [name, format, bytes] of await streams()) {
      for (const includeUsage of format === "openai-chat" ? [false, true] : [false]) {
        const key = `${name}${format === "openai-chat" ? (includeUsage ? " (usage asked)" : " (usage not asked)") : ""}`;
        got[`${key} whole`] = hash(run(format, bytes, includeUsage));
        got[`${key} 7-byte reads`] = hash(run(format, bytes, includeUsage, 7));
        got[`${key} 1-byte reads`] = hash(run(format, bytes, includeUsage, 1));
        if (format === "openai-responses") {
          got[`${key} looking, whole`] = hash(run(format, bytes, includeUsage, undefined, true));
          got[`${key} looking, 7-byte reads`] = hash(run(format, bytes, includeUsage, 7, true));
          got[`${key} looking, 1-byte reads`] = hash(run(format, bytes, includeUsage, 1, true));
        }
      }
    }
    expectPinnedDigests(GOLDEN, got, UPDATE);
    // CPU-bound (every stream byte by byte): 20.1 s in a full run at load 35, past the suite's 20 s.
  }, 60_000);
});
