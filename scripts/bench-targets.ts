#!/usr/bin/env bun
/**
 * scripts/bench targets: the speed targets that used to be assertions inside tests (tests assert
 * behaviour; speed is measured here, where a slow shared machine cannot turn it into a red test).
 *
 * - token savers, no-op path: `saveTokens` on 300 fresh contexts of Claude Code's ~100 KB first turn
 *   sent to an `openai-compatible` target (nothing to compress) — target < 0.05 ms per request;
 * - Gemini schema cleaning of a `$ref` chain used 2^30 times (L30 → L29 … each referenced twice) —
 *   target < 2 s (the behaviour, that it finishes at all, is tested in test/formats/gemini);
 * - scrubbing and redacting 1 MB of unfinished PEM BEGIN lines (a text an error answer can echo: the
 *   model name of a 404) — target < 200 ms each (a lazy BEGIN…END regex took ~5 s for 200 KB, review15
 *   R0; that every block is still replaced is tested in test/pipeline);
 * - SIGTERM with nothing in flight: a started gateway (`bun src/main.ts start`) until it has exited —
 *   target < 3 s;
 * - sustained streamed requests: 4 clients streaming Chat requests through a gateway to a local fake
 *   upstream for 2 s — requests/s (the kill -9 test in test/e2e/lifecycle.test.ts needs ≥ 20 requests
 *   finished before its kill; it now waits for them instead of counting on a rate).
 *
 * Prints one line per target (measured, target, met / missed) and exits 0; `--json FILE` writes them.
 * Usage: `scripts/bench targets [--json FILE]` or `bun scripts/bench-targets.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanSchema } from "../formats/gemini/schema-clean.ts";
import { saveTokens } from "../pipeline/save-tokens.ts";
import { translate, type Translated } from "../pipeline/translate.ts";
import { scrubText } from "../pipeline/scrub.ts";
import { Redactor } from "../pipeline/redact.ts";
import { guardedContext } from "./lib/context.ts";
import { clientRequest } from "../test/support/fixtures.ts";
import { provider, target } from "../test/pipeline/routing-helpers.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const jsonOut = argv.includes("--json") ? argv[argv.indexOf("--json") + 1] : undefined;

interface Row {
  name: string;
  measured: number;
  unit: string;
  target: string;
  met: boolean;
}
const rows: Row[] = [];

/** Token savers' no-op path, ms per request (median of 5 runs of 300). */
async function saverNoOp(): Promise<void> {
  const body = await clientRequest("claude-code-default.json");
  const t = target(provider("p", "openai-compatible"), "glm-5");
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const ctxs = Array.from({ length: 300 }, () => guardedContext("messages", body));
    const built = translate(ctxs[0], t, "strip_with_warning") as Translated;
    const start = performance.now();
    for (const ctx of ctxs) saveTokens(ctx, t, built, { compressToolResults: true });
    runs.push((performance.now() - start) / ctxs.length);
  }
  const ms = runs.sort((a, b) => a - b)[2];
  rows.push({ name: "token savers, no-op path (Claude Code 100 KB first turn)", measured: ms, unit: "ms/request", target: "< 0.05", met: ms < 0.05 });
}

/** Gemini schema cleaning of a doubly referenced 30-level $ref chain, ms. */
function schemaClean(): void {
  const defs: Record<string, unknown> = { L0: { type: "string" } };
  for (let i = 1; i <= 30; i++) defs[`L${i}`] = { type: "object", properties: { a: { $ref: `#/$defs/L${i - 1}` }, b: { $ref: `#/$defs/L${i - 1}` } } };
  const start = performance.now();
  cleanSchema({ $ref: "#/$defs/L30", $defs: defs });
  const ms = performance.now() - start;
  rows.push({ name: "Gemini schema clean, $ref used 2^30 times", measured: ms, unit: "ms", target: "< 2000", met: ms < 2000 });
}

/** scrubText and redaction over 1 MB of PEM BEGIN lines without an END, ms. */
function pemMarkers(): void {
  const text = "-----BEGIN PRIVATE KEY-----x".repeat(Math.ceil(1_000_000 / 28));
  for (const [name, run] of [
    ["secret scrubber", () => scrubText(text)],
    ["redaction", () => new Redactor().redact(text)],
  ] as const) {
    const start = performance.now();
    run();
    const ms = performance.now() - start;
    rows.push({ name: `${name}, 1 MB of PEM BEGIN lines without an END`, measured: ms, unit: "ms", target: "< 200", met: ms < 200 });
  }
}

/** A fake upstream answering every Chat request with a short stream. */
function fakeUpstream() {
  const frames = ['{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"hi"}}]}', '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}'];
  const body = frames.map((f) => `data: ${f}\n\n`).join("") + "data: [DONE]\n\n";
  return Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(body, { headers: { "content-type": "text/event-stream" } }) });
}

/** Starts the gateway as a process (the CLI), resolves with its URL once listening. */
async function startGateway(upstream: string, dir: string) {
  const config = join(dir, "config.yaml");
  writeFileSync(config, `providers:\n  - id: oai\n    kind: openai-compatible\n    base_url: "${upstream}/v1"\naccounts:\n  - id: a1\n    provider: oai\n    api_key: sk-bench\n`);
  const proc = Bun.spawn([process.execPath, join(ROOT, "src/main.ts"), "start", "--config", config, "--port", "0", "--data-dir", dir], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir } });
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const file = Bun.file(join(dir, "instance.json"));
    if (await file.exists()) {
      try {
        return { proc, url: ((await file.json()) as { url: string }).url };
      } catch {
        // written but not complete yet
      }
    }
    await Bun.sleep(50);
  }
  proc.kill();
  throw new Error("the gateway did not start within 20 s");
}

/** Streamed requests per second with 4 clients for 2 s, and the SIGTERM exit time afterwards. */
async function lifecycle(): Promise<void> {
  const upstream = fakeUpstream();
  const dir = mkdtempSync(join(tmpdir(), "switchyard-bench-targets-"));
  try {
    const gw = await startGateway(upstream.url.origin, dir);
    let done = 0;
    const until = Date.now() + 2000;
    const worker = async () => {
      while (Date.now() < until) {
        const res = await fetch(`${gw.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "oai/gpt-x", stream: true, messages: [{ role: "user", content: "hi" }] }) });
        await res.arrayBuffer();
        if (res.status === 200) done++;
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    const rps = done / 2;
    rows.push({ name: "streamed requests, 4 clients, 2 s", measured: rps, unit: "requests/s", target: "≥ 14 (20 in ~1.4 s)", met: rps >= 14 });
    const t0 = performance.now();
    gw.proc.kill("SIGTERM");
    await gw.proc.exited;
    const ms = performance.now() - t0;
    rows.push({ name: "SIGTERM with nothing in flight, until exit", measured: ms, unit: "ms", target: "< 3000", met: ms < 3000 });
  } finally {
    upstream.stop(true);
    rmSync(dir, { recursive: true, force: true });
  }
}

await saverNoOp();
schemaClean();
pemMarkers();
await lifecycle();
for (const r of rows) console.log(`${r.met ? "met   " : "MISSED"} ${r.name}: ${r.measured.toFixed(r.measured < 1 ? 4 : 1)} ${r.unit} (target ${r.target})`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ at: new Date().toISOString(), rows }, null, 2) + "\n");
