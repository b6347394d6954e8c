#!/usr/bin/env bun
/**
 * Where switchyard's CPU goes on one bench lane: starts the bench upstream and switchyard under
 * `bun --cpu-prof`, drives one lane at concurrency 32 (wrk when installed, else a Bun load client) after
 * a warm-up, stops switchyard (SIGINT writes the profile) and prints the functions with the most self
 * and inclusive time. Start-up is excluded as far as possible by the warm-up and a long run.
 *
 * Usage: bun scripts/bench-profile.ts [--lane chat|messages|gemini|messages-chat|responses-chat|responses-ws-chat|codex-chat]
 *          [--stream] [--seconds N] [--top N] [--keep DIR]
 * `gemini` is the native Gemini lane (`POST /v1beta/models/gemini-bench:generateContent`, with `--stream`
 * `:streamGenerateContent?alt=sse`: the model and the stream mode in the URL, as scripts/bench-lanes.ts sends it).
 * The self time is also printed grouped by module (pipeline/<stage>.ts, formats/<format>/, src/<dir>/,
 * node_modules/<package>, Bun's built-ins; scripts/lib/profile-groups.ts), over the whole profile.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { profileGroups } from "./lib/profile-groups.ts";
import { loadWs } from "./bench-load.ts";

const ROOT = join(import.meta.dir, "..");
const argv = process.argv.slice(2);
const opt = (n: string) => (argv.includes(n) ? argv[argv.indexOf(n) + 1] : undefined);
const lane = opt("--lane") ?? "chat";
const stream = argv.includes("--stream");
const seconds = Number(opt("--seconds") ?? 15);
const top = Number(opt("--top") ?? 40);
const keep = opt("--keep");

const LANES: Record<string, { path: string; body: Record<string, unknown>; ws?: true; gemini?: true }> = {
  chat: { path: "/v1/chat/completions", body: { model: "gpt-bench", messages: [{ role: "user", content: "Summarise the change in one sentence." }], max_tokens: 256 } },
  messages: { path: "/v1/messages", body: { model: "claude-bench", max_tokens: 256, messages: [{ role: "user", content: "Summarise the change in one sentence." }] } },
  // Gemini names the model and the stream mode in the path (`gemini: true`: `:generateContent` or `:streamGenerateContent?alt=sse` appended).
  gemini: { path: "/v1beta/models/gemini-bench", gemini: true, body: { contents: [{ role: "user", parts: [{ text: "Summarise the change in one sentence." }] }], generationConfig: { maxOutputTokens: 256 } } },
  "messages-chat": { path: "/v1/messages", body: { model: "gpt-bench", max_tokens: 256, messages: [{ role: "user", content: "Summarise the change in one sentence." }] } },
  "responses-chat": { path: "/v1/responses", body: { model: "cchat/gpt-bench", input: "Summarise the change in one sentence.", max_output_tokens: 256 } },
  // Codex's transport: `response.create` frames over the Responses WebSocket (32 sockets, one frame at a time each; always streamed).
  "responses-ws-chat": { path: "/v1/responses", ws: true, body: { model: "cchat/gpt-bench", instructions: "You are a careful coding assistant. Answer briefly and precisely. ".repeat(25), input: "Summarise the change in one sentence.", max_output_tokens: 256 } },
  // Codex's recorded second turn (47 KB: 9 tools, ~18 KB echoed by every response object of the reply) on responses→chat.
  "codex-chat": { path: "/v1/responses", body: { ...(await Bun.file(join(ROOT, "test", "fixtures", "shared", "clients", "codex-tool-use-2.json")).json()), model: "cchat/gpt-bench" } },
};

/** A cpuprofile's top functions by self and by inclusive time, as text. */
export function summarise(profile: { nodes: any[]; samples: number[]; timeDeltas: number[] }, n: number): string {
  const nodes = new Map<number, any>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    nodes.set(node.id, node);
    for (const c of node.children ?? []) parent.set(c, node.id);
  }
  const selfById = new Map<number, number>();
  profile.samples.forEach((id, i) => selfById.set(id, (selfById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const key = (node: any) => `${node.callFrame.functionName || "(anonymous)"} ${String(node.callFrame.url).replace(ROOT + "/", "").replace(/^.*node_modules\//, "")}:${node.callFrame.lineNumber + 1}`;
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let total = 0;
  for (const [id, t] of selfById) {
    total += t;
    const k = key(nodes.get(id));
    self.set(k, (self.get(k) ?? 0) + t);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const ck = key(nodes.get(cur));
      if (seen.has(ck)) continue;
      seen.add(ck);
      incl.set(ck, (incl.get(ck) ?? 0) + t);
    }
  }
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${((100 * v) / total).toFixed(1).padStart(5)} %  ${k}`)
      .join("\n");
  return `sampled ${(total / 1000).toFixed(0)} ms\n\nself time\n${list(self)}\n\ninclusive time\n${list(incl)}`;
}

async function main() {
  const l = LANES[lane];
  if (!l) throw new Error(`unknown lane ${lane}`);
  const dir = keep ?? mkdtempSync(join(tmpdir(), "switchyard-profile-"));
  if (keep) mkdirSync(keep, { recursive: true });
  const up = Bun.spawn(["bun", join(ROOT, "scripts/bench-upstream.ts")], { stdout: "pipe", stderr: "inherit" });
  const upLine = await new Response(up.stdout).body!.getReader().read();
  const upstream = `http://127.0.0.1:${JSON.parse(new TextDecoder().decode(upLine.value!).split("\n")[0]).port}`;
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `providers:\n  - id: openai\n    kind: openai\n    base_url: "${upstream}/v1"\n  - id: anthropic\n    kind: anthropic\n    base_url: "${upstream}"\n  - id: cchat\n    kind: openai-compatible\n    base_url: "${upstream}/v1"\n  - id: gemini\n    kind: gemini\n    base_url: "${upstream}"\naccounts:\n  - id: openai-bench\n    provider: openai\n    api_key: env:BENCH_UPSTREAM_KEY\n  - id: anthropic-bench\n    provider: anthropic\n    api_key: env:BENCH_UPSTREAM_KEY\n  - id: cchat-bench\n    provider: cchat\n    api_key: env:BENCH_UPSTREAM_KEY\n  - id: gemini-bench\n    provider: gemini\n    api_key: env:BENCH_UPSTREAM_KEY\n`,
  );
  const port = 20000 + Math.floor(Math.random() * 20000);
  const sy = Bun.spawn(["bun", "--cpu-prof", `--cpu-prof-dir=${dir}`, join(ROOT, "src/main.ts"), "start", "--config", config, "--host", "127.0.0.1", "--port", String(port), "--data-dir", join(dir, "data")], {
    stdout: "ignore",
    stderr: "ignore",
    env: { ...process.env, BENCH_UPSTREAM_KEY: "sk-bench-not-a-secret", BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" },
  });
  try {
    const url = `http://127.0.0.1:${port}${l.path}${l.gemini ? (stream ? ":streamGenerateContent?alt=sse" : ":generateContent") : ""}`;
    for (let i = 0; i < 100; i++) {
      try {
        await fetch(`http://127.0.0.1:${port}/health`);
        break;
      } catch {
        await Bun.sleep(100);
      }
    }
    const body = JSON.stringify(l.gemini ? l.body : { ...l.body, stream });
    const run = async (secs: number) => {
      if (l.ws) {
        const r = await loadWs(url.replace(/^http/, "ws"), JSON.stringify({ type: "response.create", ...l.body }), secs);
        return `${r.requests} requests in ${secs}s (${r.errors} errors)`;
      }
      const wrk = Bun.which("wrk");
      if (wrk) {
        const bodyFile = join(dir, "body.json");
        writeFileSync(bodyFile, body);
        const lua = join(dir, "wrk.lua");
        writeFileSync(lua, `wrk.method = "POST"\nlocal f = io.open(${JSON.stringify(bodyFile)}, "rb")\nwrk.body = f:read("*a")\nf:close()\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["anthropic-version"] = "2023-06-01"\n`);
        const p = Bun.spawn([wrk, "-t1", "-c32", `-d${secs}s`, "-s", lua, url], { stdout: "pipe" });
        return (await new Response(p.stdout).text()).match(/\d+ requests in [\d.]+\w+/)?.[0] ?? "";
      }
      const end = performance.now() + secs * 1000;
      let n = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (performance.now() < end) {
            await (await fetch(url, { method: "POST", headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" }, body })).arrayBuffer();
            n++;
          }
        }),
      );
      return `${n} requests in ${secs}s`;
    };
    await run(3);
    process.stderr.write(`profiling ${lane}${stream ? " (stream)" : ""}: ${await run(seconds)}\n`);
  } finally {
    sy.kill("SIGINT");
    await sy.exited;
    up.kill();
    await up.exited;
  }
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error("no profile was written");
  const profile = JSON.parse(await Bun.file(join(dir, file)).text());
  process.stdout.write(summarise(profile, top) + "\n");
  const g = profileGroups(profile, ROOT);
  const pct = (us: number) => `${((100 * us) / g.total).toFixed(1).padStart(5)} %`;
  process.stdout.write(`\nself time by module (natives charged to their caller; ${pct(g.native).trim()} native)\n${g.groups.slice(0, top).map(([k, us]) => `${pct(us)}  ${k}`).join("\n")}\n`);
  if (keep) process.stderr.write(`profile kept in ${join(dir, file)}\n`);
  else rmSync(dir, { recursive: true, force: true });
}

if (import.meta.main) await main();
