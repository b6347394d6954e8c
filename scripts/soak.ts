#!/usr/bin/env bun
/**
 * A soak run: switchyard as its own process (`bun src/main.ts start`, the environment scripts/start
 * sets) in front of the test fake upstream, sent a steady mix of requests for minutes, as an operator's
 * day behind several agents would: the four client formats, streamed and not, translated and native,
 * a tool call, a client that hangs up mid-stream, a combo whose first target answers 500, bad JSON, an
 * unknown model. Every 30 s (5 s with --smoke) it prints the process's RSS, open file descriptors, the
 * database and its -wal file's size and CPU seconds; at the end each kind's statuses, the RSS 3 s and
 * 43 s after the load stops, and `switchyard usage --by account`.
 *
 * It exits 1 when something a user would notice went wrong: a request that failed to complete (a
 * fetch error), a status other than the kind's expected one, usage rows that do not add up to the
 * requests sent (every request is one row: served, refused or failed), or file descriptors that grew by
 * more than 50 over the run (a leak). Memory and CPU are printed, not judged (docs/performance.md keeps
 * the targets; the idle trim needs 30 s of quiet).
 *
 *   bun scripts/soak.ts [--minutes 15] [--rps 60] [--smoke]
 *   --smoke: 8 s at 30 requests/s, the kinds in turn, no 43 s idle wait (test/scripts/soak.test.ts: the
 *            invariants, no figures)
 *
 * Test tooling only: the fake upstream is never a provider users configure.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { simpleReply, startFakeUpstream, type FakeReply, type ReceivedRequest } from "../test/support/fake-upstream.ts";

const { values } = parseArgs({ args: process.argv.slice(2), options: { minutes: { type: "string" }, rps: { type: "string" }, smoke: { type: "boolean" } }, strict: true });
const smoke = values.smoke === true;
const seconds = smoke ? 8 : Number(values.minutes ?? 15) * 60;
const rps = smoke ? 30 : Number(values.rps ?? 60);
const sampleMs = smoke ? 5_000 : 30_000;
const MAIN = join(import.meta.dir, "../src/main.ts");

/** The fake's answer by model name: `err500` a 500, `tool` a tool call, `slow` a stream in 20 pieces 20 ms apart. */
function reply(req: ReceivedRequest): FakeReply | undefined {
  const m = req.model ?? "";
  if (m.includes("err500")) return { status: 500, json: { error: { message: "upstream failure (soak)", type: "server_error" } } };
  if (m.includes("tool")) return simpleReply(req.format!, { text: "", toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "/etc/hosts", n: 3 } }], model: m }, req.stream);
  if (m.includes("slow")) {
    const r = simpleReply(req.format!, { text: "one two three four five six seven eight nine ten", model: m }, req.stream);
    if (r.sse) {
      r.split_at = Array.from({ length: 20 }, (_, i) => Math.floor((r.sse!.length * (i + 1)) / 21));
      r.delay_ms = 20;
    }
    return r;
  }
  return undefined;
}

const fake = await startFakeUpstream({ defaultText: "Soak reply with a few words in it." });
fake.handle(reply);
const trim = setInterval(() => void (fake.requests.length = 0), 5_000); // the fake records every request: keep its memory flat
const dir = mkdtempSync(join(tmpdir(), "switchyard-soak-"));
writeFileSync(
  join(dir, "config.yaml"),
  `providers:
  - { id: p-anth, kind: anthropic-compatible, base_url: "${fake.url}" }
  - { id: p-chat, kind: openai-compatible, base_url: "${fake.url}/v1" }
  - { id: p-gem, kind: gemini, base_url: "${fake.url}" }
  - { id: p-bad, kind: openai-compatible, base_url: "${fake.url}/v1" }
accounts:
  - { id: anth-1, provider: p-anth, api_key: soak-not-a-key-1 }
  - { id: anth-2, provider: p-anth, api_key: soak-not-a-key-2 }
  - { id: chat-1, provider: p-chat, api_key: soak-not-a-key-3 }
  - { id: gem-1, provider: p-gem, api_key: soak-not-a-key-4 }
  - { id: bad-1, provider: p-bad, api_key: soak-not-a-key-5 }
combos:
  - name: mixed
    targets:
      - model: p-bad/err500
      - model: p-chat/gpt-ok
`,
);
const proc = Bun.spawn([process.execPath, MAIN, "start", "--config", join(dir, "config.yaml"), "--data-dir", dir, "--host", "127.0.0.1", "--port", "0"], {
  stdout: "ignore",
  stderr: Bun.file(join(dir, "stderr.log")),
  env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: "4096", MIMALLOC_PURGE_DELAY: "1000", MIMALLOC_PURGE_HOLES_MIN_INTERVAL: "1000", MIMALLOC_PURGE_HOLES: "0" },
});
let url = "";
for (let i = 0; i < 300 && !url; i++) {
  await Bun.sleep(100);
  try {
    url = JSON.parse(readFileSync(join(dir, "instance.json"), "utf8")).url;
  } catch {}
}
const problems: string[] = [];
if (!url) problems.push(`switchyard did not start: ${existsSync(join(dir, "stderr.log")) ? readFileSync(join(dir, "stderr.log"), "utf8") : ""}`);

const HEADERS = { "content-type": "application/json", "anthropic-version": "2023-06-01" };
/** POSTs `body`, reads the reply to its end (or hangs up after the first read); the status, `:tool` when a tool call came back. */
async function send(path: string, body: unknown, hangUp = false): Promise<string> {
  const ac = new AbortController();
  const res = await fetch(url + path, { method: "POST", headers: HEADERS, body: typeof body === "string" ? body : JSON.stringify(body), signal: ac.signal });
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let text = "";
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    text += dec.decode(r.value, { stream: true });
    if (hangUp) {
      ac.abort();
      return `${res.status}:hung-up`;
    }
  }
  return `${res.status}${res.status === 200 && text.includes("read_file") ? ":tool" : ""}`;
}

const msgs = [{ role: "user", content: "hi there" }];
const gem = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };
/** Each kind of request: its weight in the mix and the one outcome it must have. */
const KINDS: Array<{ name: string; weight: number; expect: string; run: () => Promise<string> }> = [
  { name: "chat json", weight: 12, expect: "200", run: () => send("/v1/chat/completions", { model: "p-chat/gpt-ok", messages: msgs }) },
  { name: "chat stream", weight: 12, expect: "200", run: () => send("/v1/chat/completions", { model: "p-chat/gpt-ok", messages: msgs, stream: true, stream_options: { include_usage: true } }) },
  { name: "messages stream", weight: 12, expect: "200", run: () => send("/v1/messages", { model: "p-anth/claude-ok", max_tokens: 100, messages: msgs, stream: true }) },
  { name: "messages→chat stream", weight: 10, expect: "200", run: () => send("/v1/messages", { model: "p-chat/gpt-ok", max_tokens: 100, messages: msgs, stream: true }) },
  { name: "responses→messages stream", weight: 8, expect: "200", run: () => send("/v1/responses", { model: "p-anth/claude-ok", input: "hi", stream: true }) },
  { name: "responses→chat json", weight: 6, expect: "200", run: () => send("/v1/responses", { model: "p-chat/gpt-ok", input: "hi" }) },
  { name: "gemini→messages stream", weight: 6, expect: "200", run: () => send("/v1beta/models/p-anth/claude-ok:streamGenerateContent?alt=sse", gem) },
  { name: "gemini json", weight: 6, expect: "200", run: () => send("/v1beta/models/p-gem/gemini-ok:generateContent", gem) },
  {
    name: "tool call messages→chat",
    weight: 8,
    expect: "200:tool",
    run: () => send("/v1/messages", { model: "p-chat/gpt-tool", max_tokens: 100, messages: msgs, stream: true, tools: [{ name: "read_file", description: "reads a file", input_schema: { type: "object", properties: { path: { type: "string" } } } }] }),
  },
  { name: "client hangs up mid-stream", weight: 5, expect: "200:hung-up", run: () => send("/v1/chat/completions", { model: "p-anth/claude-slow", messages: msgs, stream: true }, true) },
  { name: "slow stream", weight: 3, expect: "200", run: () => send("/v1/messages", { model: "p-anth/claude-slow", max_tokens: 100, messages: msgs, stream: true }) },
  { name: "combo, first target 500", weight: 5, expect: "200", run: () => send("/v1/chat/completions", { model: "mixed", messages: msgs }) },
  { name: "bad JSON", weight: 3, expect: "400", run: () => send("/v1/chat/completions", "{not json") },
  { name: "unknown model", weight: 2, expect: "404", run: () => send("/v1/chat/completions", { model: "nope/nothing", messages: msgs }) },
];
const totalWeight = KINDS.reduce((a, k) => a + k.weight, 0);
let turn = 0;
/** A kind by weight; in a smoke run every kind in turn, so that each is seen in a few seconds. */
const pick = () => {
  if (smoke) return KINDS[turn++ % KINDS.length]!;
  let r = Math.random() * totalWeight;
  for (const k of KINDS) if ((r -= k.weight) < 0) return k;
  return KINDS[0]!;
};

const pid = proc.pid;
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const fds = () => readdirSync(`/proc/${pid}/fd`).length;
const mb = (f: string) => (existsSync(join(dir, f)) ? statSync(join(dir, f)).size / 1e6 : 0);
const cpuS = () => {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
};

const outcomes = new Map<string, Map<string, number>>();
let sent = 0;
let failed = 0;
if (url) {
  const fdsAtStart = fds();
  const t0 = Date.now();
  const sample = () =>
    console.log(JSON.stringify({ s: Math.round((Date.now() - t0) / 1000), sent, rssMB: +rssMb().toFixed(1), fds: fds(), dbMB: +mb("switchyard.db").toFixed(2), walMB: +mb("switchyard.db-wal").toFixed(2), cpuS: cpuS() }));
  const sampler = setInterval(sample, sampleMs);
  const inFlight = new Set<Promise<void>>();
  const end = t0 + seconds * 1000;
  while (Date.now() < end) {
    const k = pick();
    sent++;
    const p: Promise<void> = k
      .run()
      .catch((e) => {
        failed++;
        return `fetch error: ${String(e).slice(0, 80)}`;
      })
      .then((s) => {
        const m = outcomes.get(k.name) ?? new Map<string, number>();
        m.set(s, (m.get(s) ?? 0) + 1);
        outcomes.set(k.name, m);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    await Bun.sleep(1000 / rps);
  }
  await Promise.all(inFlight);
  clearInterval(sampler);
  sample();
  console.log(`\n${sent} requests in ${seconds} s; ${failed} did not complete`);
  for (const k of KINDS) {
    const m = outcomes.get(k.name);
    if (!m) continue;
    console.log(`${k.name.padEnd(28)} ${[...m].map(([s, n]) => `${s} ×${n}`).join(", ")}`);
    for (const [s, n] of m) if (s !== k.expect) problems.push(`${k.name}: ${n} answered ${s}, expected ${k.expect}`);
  }
  const grown = fds() - fdsAtStart;
  if (grown > 50) problems.push(`open file descriptors grew by ${grown} over the run`);
  await Bun.sleep(3_000);
  console.log(`RSS 3 s after the load: ${rssMb().toFixed(1)} MB`);
  if (!smoke) {
    await Bun.sleep(40_000);
    console.log(`RSS 43 s after the load: ${rssMb().toFixed(1)} MB; ${fds()} open file descriptors`);
  }
  // every request is one usage row (served, refused or failed); the store flushes its rows each second
  await Bun.sleep(1_500);
  const usage = Bun.spawnSync([process.execPath, MAIN, "usage", "--since", "24h", "--by", "account", "--json", "--data-dir", dir]);
  let rows = -1;
  try {
    const u = JSON.parse(usage.stdout.toString()) as { rows?: Array<{ requests?: number }> };
    rows = (u.rows ?? []).reduce((a, r) => a + (r.requests ?? 0), 0);
  } catch {
    problems.push(`switchyard usage --json did not answer JSON: ${usage.stderr.toString().slice(0, 200)}`);
  }
  console.log(Bun.spawnSync([process.execPath, MAIN, "usage", "--since", "24h", "--by", "account", "--data-dir", dir]).stdout.toString());
  if (rows >= 0 && rows !== sent) problems.push(`usage counts ${rows} requests, ${sent} were sent`);
}
clearInterval(trim);
proc.kill("SIGTERM");
await proc.exited;
await fake.stop();
rmSync(dir, { recursive: true, force: true });
for (const p of problems) console.log(`problem: ${p}`);
console.log(problems.length === 0 ? "soak: ok" : `soak: ${problems.length} problem(s)`);
process.exit(problems.length === 0 ? 0 : 1);
