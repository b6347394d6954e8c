/**
 * A Responses WebSocket `response.create` frame's text reaches the gateway beside the frame it was
 * parsed into (src/http/responses-socket.ts FrameBody.requestText, docs/performance.md item 167), so
 * the tools memo finds Codex's tool list by that text on the socket as it does by the bytes of an HTTP
 * body (formats/write-body-json.ts `RequestText`): the Responses echo and Codex's own upstream body
 * are `JSON.stringify`'s text, and a frame in another layout is a miss with the same text.
 */
import { expect, test } from "bun:test";
import { ResponsesSocketSession, type SocketLike } from "../../src/http/responses-socket.ts";
import type { Gateway, IncomingRequest, ReceivedBody } from "../../pipeline/index.ts";
import { requestTextOf, type RequestContext } from "../../pipeline/context.ts";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { echoMembers } from "../../formats/openai-responses/echo-memo.ts";
import { responseEcho } from "../../formats/openai-responses/response.ts";
import { bodyJson, toolsJson } from "../../formats/write-body-json.ts";
import { clientRequest } from "../support/fixtures.ts";

type Json = Record<string, any>;

/** A socket session whose gateway keeps each request's body and answers 503 (no reply needed here). */
function session() {
  const bodies: ReceivedBody[] = [];
  const ws: SocketLike = { send: () => {}, close: () => {}, getBufferedAmount: () => 0, cork: (f) => f() };
  const gateway = {
    handle: async ({ body }: IncomingRequest) => {
      bodies.push(body!);
      return Response.json({ error: { message: "no upstream here" } }, { status: 503 });
    },
  } as unknown as Gateway;
  const upgrade = new Request("http://127.0.0.1:1/v1/responses", { headers: { upgrade: "websocket" } });
  return { s: new ResponsesSocketSession(ws, { gateway, upgrade, peer: "127.0.0.1" }), bodies };
}

/** Polls until `n` bodies reached the gateway (no fixed sleep). */
async function received(bodies: ReceivedBody[], n: number): Promise<void> {
  for (let i = 0; i < 1000 && bodies.length < n; i++) await new Promise((r) => setTimeout(r, 1));
  expect(bodies).toHaveLength(n);
}

/** What the pipeline reads for the tools memo on an event transport's context whose `rawBody` is empty. */
const textOf = (body: ReceivedBody) => requestTextOf({ rawBody: new Uint8Array(0), received: body, body: body.value } as unknown as RequestContext);

test("Codex's recorded turns as response.create frames: the echo's and the upstream body's tools are found by the frame's text, and are JSON.stringify's", async () => {
  const { s, bodies } = session();
  let n = 0;
  for (const file of ["codex-default.json", "codex-tool-use-1.json", "codex-tool-use-2.json"]) {
    const request = await clientRequest(file);
    s.message(JSON.stringify({ type: "response.create", ...request }));
    await received(bodies, ++n);
    const body = bodies.at(-1)!;
    const text = textOf(body);
    expect(text).toBeDefined();
    const echo = responseEcho(openaiResponses.parseRequest!(body.value));
    expect(echoMembers(echo, text)).toBe(JSON.stringify(echo).slice(1, -1) + ",");
    // Once remembered, the frame's text decides the hit (the envelope's `type` before the request's members is no obstacle).
    expect(text!.holdsTools({ json: toolsJson(echo.tools) }, echo.tools)).toBe(true);
    const tidied = openaiResponses.tidyRequest!(body.value as Json, { model: "m", kind: "codex", family: "openai", stream: true, promptCacheKey: "k" }).body as Json;
    expect(text!.holdsTools({ json: toolsJson(tidied.tools) }, tidied.tools)).toBe(true);
    expect(bodyJson(tidied, text)).toBe(JSON.stringify(tidied));
  }
  s.close();
});

test("a frame in another layout (spaces), or with a later member JSON.stringify writes otherwise, is a miss with JSON.stringify's text", async () => {
  const { s, bodies } = session();
  const request = await clientRequest("codex-default.json");
  // Spaced out: the remembered text is nowhere in the frame.
  s.message(JSON.stringify({ type: "response.create", ...request }, null, 1));
  // A member after tools written with an escape JSON.stringify does not use: the end of the frame is not the stringified members.
  const compact = JSON.stringify({ type: "response.create", ...request, zz: "a/b" });
  s.message(compact.replace('"a/b"', '"a\\/b"'));
  await received(bodies, 2);
  for (const body of bodies) {
    const text = textOf(body)!;
    const echo = responseEcho(openaiResponses.parseRequest!(body.value));
    expect(text.holdsTools({ json: toolsJson(echo.tools) }, echo.tools)).toBe(false);
    expect(echoMembers(echo, text)).toBe(JSON.stringify(echo).slice(1, -1) + ",");
    // A remembered text that is not the frame's own list: a miss.
    expect(text.holdsTools({ json: JSON.stringify(echo.tools).replace("]", ",{}]") }, echo.tools)).toBe(false);
  }
  s.close();
});
