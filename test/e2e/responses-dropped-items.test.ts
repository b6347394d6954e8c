/**
 * SPEC F-2 (dropped explicitly, never silently) for a Responses client's input items the hub has no slot
 * for (`item_reference`, `web_search_call`, a type this code does not know): sent to a provider of
 * another format they are left out, and the reply's `X-Switchyard-Warning` names them (they were left
 * out without a word, so the model answered a conversation missing them); a Responses provider gets the
 * client's items as sent, with no such warning.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  // the default config: chat (openai-compatible) and resp (openai-responses) among one provider per format
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

const input = [
  { role: "user", content: "look this up" },
  { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "switchyard" } },
  { type: "item_reference", id: "msg_earlier" },
  { type: "brand_new_item", id: "x_1" },
  { role: "user", content: "and answer" },
];

/** Sends the Responses body with `input` to `model`; answers the status, the warnings and what the upstream got. */
async function send(model: string) {
  gw.fake.reset();
  const res = await fetch(`${gw.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model, input }) });
  await res.text();
  const warnings = JSON.parse(res.headers.get("x-switchyard-warning") ?? "[]") as Array<{ code: string; message: string }>;
  return { status: res.status, warnings, upstream: gw.fake.requests.map((r) => JSON.stringify(r.body)) };
}

test("to a Chat provider the items without an equivalent are left out and the warning names their types, each once", async () => {
  const r = await send("chat/gpt-x");
  expect(r.status).toBe(200);
  expect(r.warnings.filter((w) => w.code === "dropped_input_item")).toEqual([
    { code: "dropped_input_item", message: "Input items with no equivalent in the request to chat/gpt-x were not sent: web_search_call, item_reference, brand_new_item." },
  ]);
  expect(r.upstream).toHaveLength(1);
  expect(r.upstream[0]).toContain("and answer");
  expect(r.upstream[0]).not.toContain("msg_earlier");
});

test("to a Responses provider the items go as sent, with no such warning", async () => {
  const r = await send("resp/gpt-x");
  expect(r.status).toBe(200);
  expect(r.warnings.map((w) => w.code)).not.toContain("dropped_input_item");
  expect(r.upstream[0]).toContain("msg_earlier");
  expect(r.upstream[0]).toContain("brand_new_item");
});
