/**
 * scripts/bench's kept Responses WebSocket (scripts/bench-load.ts `keptSocket`): the sequential sections
 * send one frame at a time on one socket per URL; a socket the gateway closed as idle (10 minutes, which
 * a loaded machine's run can pass between the latency and the streams section) is opened again instead
 * of failing the whole run with "the socket closed (1000 idle)".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { BenchSocket, keptSocket } from "../../scripts/bench-load.ts";

let server: ReturnType<typeof Bun.serve>;
let opened = 0;
beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req, srv) {
      return srv.upgrade(req, { data: undefined }) ? undefined : new Response("no", { status: 400 });
    },
    websocket: {
      open() {
        opened++;
      },
      // answers one response.create, then closes the socket as the gateway does an idle one
      message(ws) {
        ws.send(JSON.stringify({ type: "response.completed", response: { id: "resp_1" } }));
        ws.close(1000, "idle");
      },
    },
  });
});
afterAll(() => server?.stop(true));

test("a kept socket the server closed is opened again for the next frame", async () => {
  const url = `ws://127.0.0.1:${server.port}/v1/responses`;
  const sockets = new Map<string, Promise<BenchSocket>>();
  const frame = JSON.stringify({ type: "response.create", model: "m", input: "hi" });
  const first = await (await keptSocket(sockets, url)).send(frame);
  expect(first.status).toBe(200);
  const kept = await sockets.get(url)!;
  for (let i = 0; i < 100 && !kept.closed; i++) await Bun.sleep(10);
  expect(kept.closed).toBe(true);
  const second = await (await keptSocket(sockets, url)).send(frame);
  expect(second.status).toBe(200);
  expect(opened).toBe(2);
});
