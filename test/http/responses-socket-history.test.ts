/**
 * A Responses WebSocket session remembers only its most recent responses for `previous_response_id`
 * (src/http/responses-socket.ts, RESPONSES_SOCKET_HISTORY): an aged-out id is a 400
 * `previous_response_not_found` frame, a remembered one still carries its whole conversation upstream.
 */
import { expect, test } from "bun:test";
import { ResponsesSocketSession, type SocketLike } from "../../src/http/responses-socket.ts";
import type { Gateway } from "../../pipeline/index.ts";

type Frame = Record<string, any>;

function session(historyLimit: number) {
  const frames: Frame[] = [];
  const upstreamBodies: Frame[] = [];
  const ws: SocketLike = { send: (d) => frames.push(JSON.parse(d)), close: () => {} };
  const gateway = {
    handle: async ({ request }: { request: Request }) => {
      upstreamBodies.push((await request.json()) as Frame);
      const done = { type: "response.completed", response: { id: "resp_up", status: "completed", output: [] } };
      return new Response(`event: response.completed\ndata: ${JSON.stringify(done)}\n\n`, { headers: { "content-type": "text/event-stream" } });
    },
  } as unknown as Gateway;
  const upgrade = new Request("http://127.0.0.1:1/v1/responses", { headers: { upgrade: "websocket" } });
  const s = new ResponsesSocketSession(ws, { gateway, upgrade, peer: "127.0.0.1", historyLimit });
  return { s, frames, upstreamBodies };
}

const flush = () => new Promise((r) => setTimeout(r, 20));
const say = (text: string) => [{ type: "message", role: "user", content: [{ type: "input_text", text }] }];

test("previous_response_id names one of the last N responses; older ids are forgotten", async () => {
  const { s, frames, upstreamBodies } = session(2);
  const ids: string[] = [];
  for (const text of ["one", "two", "three"]) {
    s.message(JSON.stringify({ type: "response.create", model: "m", generate: false, input: say(text) }));
    await flush();
    ids.push(frames.findLast((f) => f.type === "response.completed")!.response.id);
  }
  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: ids[0], input: say("again") }));
  await flush();
  expect(frames.at(-1)).toMatchObject({ type: "error", status: 400, error: { code: "previous_response_not_found" } });
  expect(upstreamBodies).toHaveLength(0);

  s.message(JSON.stringify({ type: "response.create", model: "m", previous_response_id: ids[2], input: say("four") }));
  await flush();
  expect(upstreamBodies).toHaveLength(1);
  expect(upstreamBodies[0]!.input.map((i: Frame) => i.content[0].text)).toEqual(["three", "four"]);
  expect(upstreamBodies[0]!.previous_response_id).toBeUndefined();
  s.close();
});
