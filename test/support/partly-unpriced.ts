/**
 * A partly unpriced call (README "Cost"): combo `mix` tries `ant/claude-sonnet-4-5` (priced by the
 * price table), whose stream reports 2000 input tokens and 1 output in `message_start` and then breaks
 * before any content, four attempts (0.006015 USD each: 2000 × $3 + 1 × $15 per million, 0.02406 in
 * all, counted as the provider bills them), then `ant/house-model` (no price) serves 1000 input and
 * 50 output tokens. The call is `unpriced` with `costUsd` 0.02406, the part that had a price. A
 * non-streamed request gets a whole reply of 1000 input and 500 output tokens, with 2 server-side web
 * searches from claude-sonnet-4-5 (0.0105 + 2 × $10 / 1000 = $0.0305).
 */
import { providersAtFake } from "./configs.ts";
import type { FakeReply, ReceivedRequest } from "./fake-upstream.ts";

/** One Anthropic provider `ant` at the fake upstream (account `ant-1`) and the combo `mix`. */
export const PARTLY_UNPRICED_YAML = `${providersAtFake(["ant", "anthropic"])}
accounts:
  - { id: ant-1, provider: ant, api_key: env:FAKE_KEY }
combos:
  - name: mix
    targets:
      - model: ant/claude-sonnet-4-5
      - model: ant/house-model
`;

const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
const start = (model: string, usage: Record<string, number>) =>
  ev("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage } });
const whole = (model: string) =>
  start(model, { input_tokens: 1000, output_tokens: 1 }) +
  ev("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
  ev("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hello" } }) +
  ev("content_block_stop", { type: "content_block_stop", index: 0 }) +
  ev("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 50 } }) +
  ev("message_stop", { type: "message_stop" });
const broken = start("claude-sonnet-4-5", { input_tokens: 2000, output_tokens: 1 });

/** The fake upstream's answers (`fake.handle`): claude-sonnet-4-5's streams break after `message_start`; every other reply is whole. */
export function partlyUnpricedReplies(req: ReceivedRequest): FakeReply {
  if (req.stream) return req.model === "claude-sonnet-4-5" ? { sse: broken, reset_after_bytes: Buffer.byteLength(broken) } : { sse: whole(req.model!) };
  const searches = req.model === "claude-sonnet-4-5" ? { server_tool_use: { web_search_requests: 2 } } : {};
  return { json: { id: "msg_2", type: "message", role: "assistant", model: req.model, content: [{ type: "text", text: "found it" }], stop_reason: "end_turn", usage: { input_tokens: 1000, output_tokens: 500, ...searches } } };
}

/** Sends `model` (`ant/claude-sonnet-4-5`, `mix`, `ant/house-model`) to the gateway at `url` as a Messages request; throws unless it answers 200. */
export async function sendMessages(url: string, model: string, stream: boolean): Promise<void> {
  const r = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, stream, max_tokens: 100, messages: [{ role: "user", content: "search" }] }) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${model}: ${r.status} ${text}`);
}
