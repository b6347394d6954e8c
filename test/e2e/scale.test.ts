/**
 * SPEC D-4: one instance holds many concurrent streams without queueing inside the gateway. Bun's
 * fetch caps concurrent requests at 256 unless BUN_CONFIG_MAX_HTTP_REQUESTS is raised, and reads
 * the variable only when the process starts, so the launchers set it (scripts/start, the service unit).
 * This test starts switchyard the way a user does (`scripts/start`, without the variable in the
 * environment it inherits), opens more than 256 streams through it to a fake upstream that sends the
 * first event of each and then holds every stream open, and asserts that all of them have received
 * their first event before any is released: a gateway that queued at 256 would never get there.
 *
 * Not timed: the only bound is a generous deadline. The client side uses raw TCP sockets, so the test
 * process's own fetch cap plays no part.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server, Subprocess } from "bun";

const STREAMS = 320;
const ROOT = join(import.meta.dir, "..", "..");

const FIRST = 'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_scale","type":"message","role":"assistant","model":"claude-scale","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}\n\n';
const REST = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';

let upstream: Server<unknown>;
let gateway: Subprocess;
let gatewayPort = 0;
let dir = "";
let upstreamOpen = 0;
let release!: () => void;
const released = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  const enc = new TextEncoder();
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      await req.arrayBuffer();
      upstreamOpen++;
      const body = new ReadableStream<Uint8Array>({
        async start(c) {
          c.enqueue(enc.encode(FIRST));
          await released;
          c.enqueue(enc.encode(REST));
          c.close();
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  dir = mkdtempSync(join(tmpdir(), "switchyard-scale-"));
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `providers:\n  - id: anthropic\n    kind: anthropic\n    base_url: "http://127.0.0.1:${upstream.port}"\naccounts:\n  - id: anth-scale\n    provider: anthropic\n    api_key: env:SCALE_KEY\n`,
  );
  const env: Record<string, string | undefined> = { ...process.env, SCALE_KEY: "sk-scale-test" };
  delete env.BUN_CONFIG_MAX_HTTP_REQUESTS;
  gateway = Bun.spawn([join(ROOT, "scripts/start"), "--config", config, "--host", "127.0.0.1", "--port", "0", "--data-dir", join(dir, "data")], {
    stdout: "ignore",
    stderr: "pipe",
    env,
  });
  const reader = (gateway.stderr as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = "";
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && gatewayPort === 0) {
    const r = await reader.read();
    if (r.done) break;
    buf += dec.decode(r.value, { stream: true });
    const m = /"switchyard listening","url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(buf);
    if (m) gatewayPort = Number(m[1]);
  }
  reader.releaseLock();
  void (gateway.stderr as ReadableStream<Uint8Array>).pipeTo(new WritableStream()).catch(() => {});
  if (gatewayPort === 0) throw new Error(`switchyard did not start: ${buf.slice(0, 500)}`);
}, 40_000);

afterAll(async () => {
  release();
  gateway?.kill("SIGTERM");
  await gateway?.exited;
  await upstream?.stop(true);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One streaming request over a raw socket; resolves `first` at the first SSE event, `done` at the end. */
function openStream(port: number, body: string) {
  let firstSeen!: () => void;
  let finished!: (text: string) => void;
  const first = new Promise<void>((r) => (firstSeen = r));
  const done = new Promise<string>((r) => (finished = r));
  let text = "";
  let gotFirst = false;
  const request = `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nanthropic-version: 2023-06-01\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  const dec = new TextDecoder();
  void Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      open(s) {
        s.write(request);
      },
      data(_s, chunk) {
        text += dec.decode(chunk, { stream: true });
        if (!gotFirst && text.includes("event: message_start")) {
          gotFirst = true;
          firstSeen();
        }
        if (text.includes("event: message_stop")) finished(text);
      },
      close() {
        finished(text);
      },
      error() {
        finished(text);
      },
    },
  });
  return { first, done, firstSeen: () => gotFirst };
}

test(`${STREAMS} concurrent streams all get their first event before any is released (no queueing at 256)`, async () => {
  const body = JSON.stringify({ model: "claude-scale", stream: true, max_tokens: 16, messages: [{ role: "user", content: "hi" }] });
  const streams = Array.from({ length: STREAMS }, () => openStream(gatewayPort, body));
  const all = Promise.all(streams.map((s) => s.first));
  const deadline = Bun.sleep(30_000).then(() => "deadline" as const);
  const outcome = await Promise.race([all.then(() => "all" as const), deadline]);
  const withFirst = streams.filter((s) => s.firstSeen()).length;
  const openUpstream = upstreamOpen;
  release();
  expect({ outcome, withFirst, openUpstream }).toEqual({ outcome: "all", withFirst: STREAMS, openUpstream: STREAMS });
  const texts = await Promise.all(streams.map((s) => s.done));
  expect(texts.filter((t) => t.includes("event: message_stop")).length).toBe(STREAMS);
}, 60_000);
