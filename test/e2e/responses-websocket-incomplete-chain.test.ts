/**
 * Found by a tryout (Codex over the Responses WebSocket, SPEC 2.5): a response that ends with
 * `response.incomplete` (the model hit its output limit: Anthropic `stop_reason: "max_tokens"`, Chat
 * `finish_reason: "length"`, Gemini `MAX_TOKENS`, or a native Responses upstream's own
 * `response.incomplete`) is an earlier response of the socket, with output, and its id came to the
 * client in `response.created` and `response.incomplete`. SPEC 2.5: "`previous_response_id` within one
 * socket refers to that socket's earlier responses; the gateway keeps their input and output". OpenAI's
 * API takes an incomplete response as `previous_response_id` (the usual way to ask it to go on).
 *
 * Until this fix the socket remembered a response only when it saw `response.completed`
 * (src/http/responses-socket.ts `run`: `if (completed && responseId) this.remember(…)`), so the next
 * turn chained to an incomplete response was refused with 400 `previous_response_not_found`, and the
 * model's partial answer was lost to the conversation. A `response.failed` stays unchainable.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { simpleReply } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { connect } from "../support/responses-socket.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["anth", "anthropic"], ["resp", "openai-responses"]]));
});
afterAll(async () => {
  await gw?.stop();
});

const userText = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];

test("a turn chained to a response.incomplete of the same socket is served with that response's conversation", async () => {
  // The first reply stops at the output limit: a translated lane makes it response.incomplete.
  const cut = simpleReply("anthropic-messages", { text: "The first half of a long answer" }, true);
  gw.fake.enqueue({ sse: cut.sse!.replace('"stop_reason":"end_turn"', '"stop_reason":"max_tokens"') });
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "anth/claude-test", input: userText("write a long answer"), store: false });
    const first = await c.untilTerminal();
    expect(first.at(-1).type).toBe("response.incomplete");
    const id = first.at(-1).response.id;
    expect(typeof id).toBe("string");

    c.send({ type: "response.create", model: "anth/claude-test", input: userText("go on"), previous_response_id: id, store: false });
    const second = await c.untilTerminal();
    // Before the fix: [{type:"error",status:400,error:{code:"previous_response_not_found",…}}]
    expect(second.at(-1).type).toBe("response.completed");
    // The upstream got the whole conversation: the first question, the partial answer, the new turn.
    const sent = JSON.stringify(gw.fake.requests.at(-1)!.body.messages);
    expect(sent).toContain("write a long answer");
    expect(sent).toContain("The first half of a long answer");
    expect(sent).toContain("go on");
  } finally {
    c.ws.close();
  }
});

/** The fake native Responses stream of `text`, ended with `end` (its event name, type and status) instead of response.completed. */
function nativeEndingWith(text: string, end: "incomplete" | "failed"): string {
  const sse = simpleReply("openai-responses", { text }, true).sse!;
  const [head, last] = [sse.slice(0, sse.lastIndexOf("event: response.completed")), sse.slice(sse.lastIndexOf("event: response.completed"))];
  const extra = end === "incomplete" ? '"incomplete_details":{"reason":"max_output_tokens"}' : '"error":{"code":"server_error","message":"boom"}';
  return head + last.replaceAll("response.completed", `response.${end}`).replace('"status":"completed","model"', `"status":"${end}","model"`).replace(end === "incomplete" ? '"incomplete_details":null' : '"error":null', extra);
}

test("a native Responses upstream's own response.incomplete is chainable too: the next turn carries its input and output", async () => {
  gw.fake.enqueue({ sse: nativeEndingWith("A native partial answer", "incomplete") });
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "resp/gpt-test", input: userText("first question"), store: false });
    const first = await c.untilTerminal();
    expect(first.at(-1)).toMatchObject({ type: "response.incomplete", response: { status: "incomplete" } });
    c.send({ type: "response.create", model: "resp/gpt-test", input: userText("go on"), previous_response_id: first.at(-1).response.id, store: false });
    expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
    const sent = gw.fake.requests.at(-1)!.body;
    expect(sent.previous_response_id).toBeUndefined();
    expect(JSON.stringify(sent.input)).toContain("first question");
    expect(JSON.stringify(sent.input)).toContain("A native partial answer");
    expect(JSON.stringify(sent.input)).toContain("go on");
  } finally {
    c.ws.close();
  }
});

test("a response that ended response.failed stays unchainable: previous_response_not_found, nothing upstream", async () => {
  gw.fake.enqueue({ sse: nativeEndingWith("A broken answer", "failed") });
  const c = await connect(gw.url);
  try {
    c.send({ type: "response.create", model: "resp/gpt-test", input: userText("first question"), store: false });
    const first = await c.untilTerminal();
    expect(first.at(-1).type).toBe("response.failed");
    const before = gw.fake.requests.length;
    c.send({ type: "response.create", model: "resp/gpt-test", input: userText("go on"), previous_response_id: first.at(-1).response.id, store: false });
    expect((await c.untilTerminal()).at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
    expect(gw.fake.requests.length).toBe(before);
  } finally {
    c.ws.close();
  }
});
