#!/usr/bin/env bun
/**
 * switchyard's own CPU per request, without the network: the real app (startApp, the same config as
 * scripts/bench) with its upstream `fetch` replaced by the bench upstream's replies made in process
 * (scripts/bench-upstream.ts `benchReply`), driven through `gateway.handle` by 32 concurrent loops.
 * What it prints is the pipeline's cost (guard … re-translate, usage, trace, metrics, log line, the
 * store's flushes) per request, in CPU µs of this process; Bun's HTTP server and a real `fetch` are
 * not in it (scripts/bench measures those end to end). Every reply is ready at once, so requests do
 * not overlap the way they do behind a network: the figures are a floor (with a fake upstream that
 * answers after one event-loop hop the same work measured up to twice as much; docs/performance.md).
 * Compare medians of runs made one after the other; on a shared machine a round can be off by 2×.
 *
 * Usage: bun scripts/bench-pipeline.ts [--lane chat|messages|messages-chat|responses-chat|gemini|gemini-chat|responses|codex-chat|claude-code-chat|all]
 *          [--stream|--both] [--requests N] [--rounds N] [--concurrency N] [--window]
 *          [--database postgres://…]   (the PostgreSQL store instead of SQLite: its flushes are in the figure)
 * `--window` also prints, per lane and mode, a line `window {"from":ms,"to":ms}` (Date.now() around the
 * measured rounds, warm-up excluded), for a profile taken of this run (scripts/bench-budget.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp } from "../src/app.ts";
import type { Endpoint } from "../pipeline/context.ts";
import { benchReply, benchToolReply } from "./bench-upstream.ts";

const SYSTEM = "You are a careful coding assistant. Answer briefly and precisely. ".repeat(25);
const USER = "Summarise the change in one sentence.";
const CODEX_TURN: Record<string, unknown> = JSON.parse(readFileSync(join(import.meta.dir, "..", "test", "fixtures", "shared", "clients", "codex-tool-use-2.json"), "utf8"));
const CLAUDE_CODE_TURN: Record<string, unknown> = JSON.parse(readFileSync(join(import.meta.dir, "..", "test", "fixtures", "shared", "clients", "claude-code-tool-use-2.json"), "utf8"));
/** The lanes of scripts/bench: client endpoint, and the body for a stream flag. */
export const LANES: Record<string, { endpoint: Endpoint; path: string; body: (stream: boolean) => unknown; gemini?: true }> = {
  chat: { endpoint: "chat", path: "/v1/chat/completions", body: (stream) => ({ model: "gpt-bench", stream, messages: [{ role: "system", content: SYSTEM }, { role: "user", content: USER }], max_tokens: 256 }) },
  messages: { endpoint: "messages", path: "/v1/messages", body: (stream) => ({ model: "claude-bench", stream, max_tokens: 256, system: SYSTEM, messages: [{ role: "user", content: USER }] }) },
  "messages-chat": { endpoint: "messages", path: "/v1/messages", body: (stream) => ({ model: "gpt-bench", stream, max_tokens: 256, system: SYSTEM, messages: [{ role: "user", content: USER }] }) },
  "responses-chat": { endpoint: "responses", path: "/v1/responses", body: (stream) => ({ model: "cchat/gpt-bench", stream, instructions: SYSTEM, input: USER, max_output_tokens: 256 }) },
  // Gemini names the model and the stream flag in the path (`gemini: true`); the body has neither.
  gemini: {
    endpoint: "gemini",
    path: "/v1beta/models/gemini-bench",
    gemini: true,
    body: () => ({ systemInstruction: { parts: [{ text: SYSTEM }] }, contents: [{ role: "user", parts: [{ text: USER }] }], generationConfig: { maxOutputTokens: 256 } }),
  },
  "gemini-chat": {
    endpoint: "gemini",
    path: "/v1beta/models/gpt-bench",
    gemini: true,
    body: () => ({ systemInstruction: { parts: [{ text: SYSTEM }] }, contents: [{ role: "user", parts: [{ text: USER }] }], generationConfig: { maxOutputTokens: 256 } }),
  },
};

/**
 * Lanes that are not scripts/bench's, measured on request (bench-alloc.ts): a Responses client served
 * natively (the `openai` provider speaks Responses), for the `--tool` upstream's replies; Codex's
 * recorded second turn on the responses→chat route (47 KB: 9 tools, ~18 KB echoed by every response
 * object of the reply); Claude Code's recorded second turn on the messages→chat route (94 KB, ~60 KB of
 * it tools).
 */
export const EXTRA_LANES: Record<string, (typeof LANES)[string]> = {
  responses: { endpoint: "responses", path: "/v1/responses", body: (stream) => ({ model: "gpt-bench", stream, instructions: SYSTEM, input: USER, max_output_tokens: 256 }) },
  "codex-chat": { endpoint: "responses", path: "/v1/responses", body: (stream) => ({ ...CODEX_TURN, model: "cchat/gpt-bench", stream }) },
  "claude-code-chat": { endpoint: "messages", path: "/v1/messages", body: (stream) => ({ ...CLAUDE_CODE_TURN, model: "gpt-bench", stream }) },
};

/**
 * The real app on a scratch data dir with one account per lane's provider and the in-process upstream
 * (`fetchImpl`, {@link fakeFetch} unless given); `shutdown` removes the dir.
 */
export async function startPipelineBenchApp(database?: string, fetchImpl: typeof fetch = fakeFetch) {
const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-pipeline-"));
writeFileSync(
  join(dir, "config.yaml"),
  `providers:
  - { id: openai, kind: openai, base_url: "http://bench.invalid/v1" }
  - { id: anthropic, kind: anthropic, base_url: "http://bench.invalid" }
  - { id: cchat, kind: openai-compatible, base_url: "http://bench.invalid/v1" }
  - { id: gemini, kind: gemini, base_url: "http://bench.invalid" }
accounts:
  - { id: openai-bench, provider: openai, api_key: sk-bench-not-a-secret }
  - { id: anthropic-bench, provider: anthropic, api_key: sk-bench-not-a-secret }
  - { id: cchat-bench, provider: cchat, api_key: sk-bench-not-a-secret }
  - { id: gemini-bench, provider: gemini, api_key: sk-bench-not-a-secret }
`,
);

let logged = 0;
// No idle trim: a pause between benchmark phases must not drop the JIT's compiled code mid-measurement.
const app = await startApp({ configPath: join(dir, "config.yaml"), dataDir: join(dir, "data"), host: "127.0.0.1", port: 0, fetchImpl, writeInstanceFile: false, log: () => void logged++, idleTrimMs: 0, database });
return {
  app,
  logged: () => logged,
  async shutdown() {
    await app.shutdown(1000);
    rmSync(dir, { recursive: true, force: true });
  },
};
}

/** The upstream: the bench upstream's reply, made in process (no socket, no HTTP parsing). */
export const fakeFetch = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const body = typeof init?.body === "string" ? init.body : new TextDecoder().decode(init?.body as Uint8Array);
  return benchReply(new URL(url).pathname, body, init?.signal ?? undefined) ?? new Response("not found", { status: 404 });
}) as typeof fetch;

/** An upstream that answers every JSON request with the bench upstream's tool-call reply (`benchToolReply`). */
export const toolFetch = (async (input: string | URL | Request) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  return benchToolReply(new URL(url).pathname) ?? new Response("not found", { status: 404 });
}) as typeof fetch;

type BenchApp = Awaited<ReturnType<typeof startPipelineBenchApp>>["app"];

/**
 * Each loop lets the event loop turn (timers, immediates) after this many of its requests: with 32
 * loops ~256 requests per turn (the SQLite store's early flush comes every fourth turn: 1,024 rows).
 */
const YIELD_EVERY = 8;

/**
 * Runs `n` requests of one lane through `app.gateway.handle`, `concurrency` at a time; returns CPU µs and
 * wall µs per request. The event loop turns every {@link YIELD_EVERY} requests of a loop, so the store's
 * flushes run inside the round (before 2026-12-02 they never did: the rows waited for the shutdown).
 */
export async function runPipelineLane(app: BenchApp, lane: (typeof LANES)[string], stream: boolean, n: number, concurrency: number) {
  const text = JSON.stringify(lane.body(stream));
  const headers = { "content-type": "application/json", "anthropic-version": "2023-06-01", "content-length": String(Buffer.byteLength(text)) };
  const url = app.url + lane.path + (lane.gemini ? (stream ? ":streamGenerateContent?alt=sse" : ":generateContent") : "");
  const pathModel = lane.gemini ? lane.path.slice(lane.path.lastIndexOf("/") + 1) : undefined;
  let next = 0;
  let failed = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      let mine = 0;
      while (next++ < n) {
        const request = new Request(url, { method: "POST", headers, body: text });
        const res = await app.gateway.handle(pathModel ? { request, endpoint: lane.endpoint, peer: "127.0.0.1", pathModel, pathStream: stream } : { request, endpoint: lane.endpoint, peer: "127.0.0.1" });
        await res.arrayBuffer();
        if (res.status !== 200) failed++;
        // Every reply here is ready at once, so without this the loops never leave the microtask queue
        // and no timer runs during a round: the store's flushes (an early flush every 1,024 rows, on a
        // timer) and everything else a real server does between socket reads would be left out.
        if (++mine % YIELD_EVERY === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }),
  );
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  if (failed) throw new Error(`${failed} requests failed`);
  return { cpuUs: (c.user + c.system) / n, wallUs: (wall * 1000) / n };
}

if (import.meta.main) {
const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const laneArg = opt("--lane") ?? "all";
const modes = argv.includes("--both") ? [false, true] : [argv.includes("--stream")];
const requests = Number(opt("--requests") ?? 20_000);
const rounds = Number(opt("--rounds") ?? 5);
const concurrency = Number(opt("--concurrency") ?? 32);
const { app, logged, shutdown } = await startPipelineBenchApp(opt("--database"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const names = laneArg === "all" ? Object.keys(LANES) : laneArg.split(",");
console.log(`${requests} requests per round, ${rounds} rounds, concurrency ${concurrency}; CPU µs per request (median, min–max)`);
for (const name of names) {
  const lane = LANES[name] ?? EXTRA_LANES[name];
  if (!lane) throw new Error(`unknown lane ${name}: one of ${[...Object.keys(LANES), ...Object.keys(EXTRA_LANES)].join(", ")}`);
  for (const stream of modes) {
    await runPipelineLane(app, lane, stream, Math.min(requests, 5000), concurrency); // warm-up (JIT, caches, the first flushes)
    const cpu: number[] = [];
    const from = Date.now();
    for (let r = 0; r < rounds; r++) cpu.push((await runPipelineLane(app, lane, stream, requests, concurrency)).cpuUs);
    if (argv.includes("--window")) console.log(`window ${JSON.stringify({ from, to: Date.now() })}`);
    console.log(`${name.padEnd(15)} ${stream ? "stream" : "json  "}  ${median(cpu).toFixed(1).padStart(6)} µs  (${Math.min(...cpu).toFixed(1)}–${Math.max(...cpu).toFixed(1)})`);
  }
}
await shutdown();
if (logged() === 0) throw new Error("no request was logged");
}
