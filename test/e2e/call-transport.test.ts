/**
 * How a call came (try17's tryout): a request over HTTP and one over Codex's Responses WebSocket (a raw
 * WebSocket client, SPEC 2.5) through a real `switchyard start`, on the embedded store and on a real
 * PostgreSQL. `GET /admin/api/calls` says `http` / `websocket` (and `?transport=` filters by it), the route
 * trace says it, `switchyard calls list` has a transport column, `calls inspect` a transport line, and
 * `calls inspect --bodies` of the WebSocket call shows its reply as the JSON frames the client received,
 * one a line, saying so (it showed them as SSE `event:`/`data:` text, which never went over the socket).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { cliOn } from "../support/source-cli.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { connect } from "../support/responses-socket.ts";

const ENV = { UP_KEY: "sk-upstream-call-transport" };
const yamlOf = (fake: string) => `
providers:
  - { id: anth, kind: anthropic, base_url: "${fake}" }
accounts:
  - { id: anth-1, provider: anth, api_key: env:UP_KEY }
settings:
  flight_recorder: { enabled: true }
`;
const input = [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }];

/** The CLI from source against `inst` (its data directory's instance.json). */
const cli = (inst: Instance, args: string[]) => cliOn(inst.dataDir, args);

for (const store of ["sqlite", "postgres"] as const) {
  describe(`on the ${store} store`, () => {
    let pg: TestPostgres | undefined;
    let fake: FakeUpstream;
    let inst: Instance;
    beforeAll(async () => {
      fake = await startFakeUpstream();
      const args = store === "postgres" ? ["--database", await (pg = await startPostgres()).createDatabase("call_transport")] : [];
      inst = await startInstance({ yaml: yamlOf(fake.url), env: ENV, args, timeoutMs: 60_000 });
    }, 180_000);
    afterAll(async () => {
      await stopInstance(inst);
      await fake?.stop();
      await pg?.destroy();
      if (inst) rmSync(inst.dataDir, { recursive: true, force: true });
    }, 60_000);

    const admin = async (path: string) => {
      const res = await fetch(`${inst.url}/admin/api${path}`);
      expect(res.status).toBe(200);
      return (await res.json()) as any;
    };

    test("an HTTP call and a WebSocket call say how they came: admin API, its filter, the trace, calls list, calls inspect and the WebSocket reply's frames in --bodies", async () => {
      const http = await fetch(`${inst.url}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "anth/claude-over-http", input, stream: true }),
      });
      expect(http.status).toBe(200);
      await http.text();
      const c = await connect(inst.url);
      c.send({ type: "response.create", model: "anth/claude-over-ws", input, store: false });
      expect((await c.untilTerminal()).at(-1).type).toBe("response.completed");
      c.ws.close();
      await c.closed;

      // both listed once the usage rows are flushed (each second)
      let calls: any[] = [];
      for (let i = 0; i < 150 && calls.length < 2; i++, await Bun.sleep(100)) calls = (await admin("/calls?limit=20")).calls;
      const byModel = Object.fromEntries(calls.map((x) => [x.requestedModel, x]));
      expect([byModel["anth/claude-over-http"]?.transport, byModel["anth/claude-over-ws"]?.transport]).toEqual(["http", "websocket"]);
      const wsRoute: string = byModel["anth/claude-over-ws"].routeId;
      const httpRoute: string = byModel["anth/claude-over-http"].routeId;
      expect(httpRoute).toBe(http.headers.get("x-switchyard-route-id")!);
      const only = async (t: string) => (await admin(`/calls?transport=${t}`)).calls.map((x: any) => x.requestedModel);
      expect([await only("websocket"), await only("http"), await only("unknown")]).toEqual([["anth/claude-over-ws"], ["anth/claude-over-http"], []]);
      expect([(await admin(`/route-traces/${wsRoute}`)).transport, (await admin(`/route-traces/${httpRoute}`)).transport]).toEqual(["websocket", "http"]);

      // calls list: a transport column
      const list = cli(inst, ["calls", "list"]);
      expect(list.code).toBe(0);
      const [head, ...rows] = list.stdout.trim().split("\n").map((l) => l.split(/ {2,}/));
      const at = head!.indexOf("transport");
      expect(at).toBeGreaterThan(0);
      expect(Object.fromEntries(rows.map((r) => [r[2], r[at]]))).toEqual({ "anth/claude-over-http": "http", "anth/claude-over-ws": "websocket" });

      // calls inspect: the transport line; with --bodies, the frames as the client received them, one a line
      const ws = cli(inst, ["calls", "inspect", wsRoute, "--bodies"]);
      expect(ws.code).toBe(0);
      const lines = ws.stdout.split("\n");
      expect(lines).toContain("transport   websocket (Codex's Responses WebSocket: one response.create frame in, the reply's events out as JSON frames)");
      const said = lines.indexOf("the reply went over Codex's Responses WebSocket as response.* JSON frames, one per event (no SSE event:/data: lines); one frame a line:");
      expect(said).toBeGreaterThan(0);
      const bytes = c.raw.reduce((n, f) => n + Buffer.byteLength(f), 0);
      expect(lines[said - 1]).toBe(`=== sent to the client over the WebSocket: ${c.raw.length} JSON text frames (${bytes} bytes)`);
      expect(lines.slice(said + 1, said + 1 + c.raw.length)).toEqual(c.raw);
      expect(lines.slice(said + 1).filter((l) => l.startsWith("event:") || l.startsWith("data:"))).toEqual([]);
      const overHttp = cli(inst, ["calls", "inspect", httpRoute, "--bodies"]);
      expect(overHttp.code).toBe(0);
      expect(overHttp.stdout).toContain("\ntransport   http\n");
      // the HTTP call's reply is the SSE it got
      expect(overHttp.stdout).toContain("event: response.completed\ndata: {");
    }, 120_000);
  });
}
