/**
 * The single binary (SPEC K-1): `scripts/build` compiles dist/switchyard; a copy of it, run from an
 * empty temporary directory (no node_modules, no sources), starts, serves a request to the fake
 * upstream, prices it from the embedded price table, stores usage, serves the dashboard from its
 * embedded assets, and answers `version` and `check-config`; after the idle trim has given back the
 * executable's pages (src/memory/file-pages.ts) it still serves JSON and streamed replies.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { viewReply, type ClientFormat } from "../support/client-reply.ts";
import { ROOT, startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { checkoutCommit } from "../../src/version.ts";

let fake: FakeUpstream;
let dir: string;
let bin: string;
let inst: Instance | undefined;
const env = () => ({ PATH: "/usr/bin:/bin", HOME: dir });

beforeAll(async () => {
  fake = await startFakeUpstream();
  const build = Bun.spawnSync([join(ROOT, "scripts/build")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (build.exitCode !== 0) throw new Error(`scripts/build failed:\n${build.stderr.toString()}`);
  expect(build.stdout.toString().trim()).toBe(join(ROOT, "dist/switchyard"));
  dir = mkdtempSync(join(tmpdir(), "switchyard-bin-"));
  bin = join(dir, "switchyard");
  copyFileSync(join(ROOT, "dist/switchyard"), bin);
  Bun.spawnSync(["chmod", "+x", bin]);
}, 120_000);

afterAll(async () => {
  await stopInstance(inst);
  await fake?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("dist/switchyard", () => {
  test("is one executable file, not stripped, run from a directory with nothing else in it", () => {
    expect(statSync(bin).size).toBeGreaterThan(10 * 1024 * 1024);
    expect(readdirSync(dir)).toEqual(["switchyard"]);
    expect(existsSync(join(dir, "node_modules"))).toBe(false);
    // Not stripped: the symbol table is still there (`file` says so when it is installed).
    const file = Bun.spawnSync(["sh", "-c", `command -v file >/dev/null && file -b '${bin}' || echo unknown`], { stdout: "pipe" }).stdout.toString();
    expect(file).not.toContain(", stripped");
  });

  test("`switchyard version` prints the version and build info: the commit and time it was built from, the store schema", () => {
    const r = Bun.spawnSync([bin, "version"], { cwd: dir, env: env(), stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(0);
    const pkg = require(join(ROOT, "package.json")) as { version: string };
    // run from a directory outside any checkout: the commit is the one scripts/build compiled, not read at run time
    const commit = checkoutCommit(ROOT)?.commit ?? "unknown";
    const m = /^switchyard (\S+) \(commit (\S+), built (\S+); store schema SQLite (\d+), PostgreSQL (\d+); bun \d+\.\d+\.\d+, \w+-\w+\)\n$/.exec(r.stdout.toString());
    expect(m?.slice(1, 3)).toEqual([pkg.version, commit]);
    const builtAgoMs = Date.now() - Date.parse(m![3]!);
    expect(builtAgoMs).toBeGreaterThanOrEqual(-1000);
    expect(builtAgoMs).toBeLessThan(30 * 60_000);
    expect(Number(m![4])).toBeGreaterThanOrEqual(15);
    expect(Number(m![5])).toBeGreaterThanOrEqual(15);
  });

  test("`switchyard check-config` works from the binary", () => {
    const good = join(dir, "good.yaml");
    writeFileSync(good, "aliases:\n  fast: openai/gpt-5-mini\n");
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "server:\n  port: nope\n");
    expect(Bun.spawnSync([bin, "check-config", good], { cwd: dir, env: env() }).exitCode).toBe(0);
    const r = Bun.spawnSync([bin, "check-config", bad], { cwd: dir, env: env(), stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(1);
    expect(r.stdout.toString() + r.stderr.toString()).toContain("server.port");
    rmSync(good);
    rmSync(bad);
  });

  test("starts, serves one request through the fake upstream, records usage, stops cleanly", async () => {
    const data = join(dir, "data");
    inst = await startInstance({
      cli: [bin],
      cwd: dir,
      dataDir: data,
      env: { FAKE_KEY: "fake-key-binary" },
      yaml: `
providers:
  - id: anth
    kind: anthropic
    base_url: "${fake.url}"
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
`,
    });
    const res = await fetch(`${inst.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ model: "anth/claude-bin", max_tokens: 20, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("message_stop");
    expect(fake.requests.at(-1)).toMatchObject({ path: "/v1/messages", model: "claude-bin" });
    expect(fake.requests.at(-1)!.headers["x-api-key"]).toBe("fake-key-binary");
    // SPEC 9.5: the price table comes out of the binary too (loaded on the first priced request,
    // src/pricing/prices.ts): claude-sonnet-4-5 at $3 in and $15 out per million, 11 in + 7 out.
    const priced = await fetch(`${inst.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ model: "anth/claude-sonnet-4-5", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(priced.status).toBe(200);
    expect(((await priced.json()) as { usage: unknown }).usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    const calls = (await (await fetch(`${inst.url}/admin/api/calls`)).json()) as { calls: Array<{ model: string; outcome: string; costUsd?: number; unpriced?: boolean }> };
    const unknown = calls.calls.find((c) => c.model === "claude-bin");
    expect(unknown).toMatchObject({ outcome: "ok", unpriced: true });
    expect(unknown?.costUsd).toBeUndefined();
    const sonnet = calls.calls.find((c) => c.model === "claude-sonnet-4-5");
    expect(sonnet).toMatchObject({ outcome: "ok" });
    expect(sonnet?.unpriced).not.toBe(true);
    expect(sonnet?.costUsd).toBeCloseTo((11 * 3 + 7 * 15) / 1e6, 12);
    expect(inst.stdout.some((l) => l.includes('"msg":"request"'))).toBe(true);
    // SPEC 9.4: the dashboard's page and its bundled script and stylesheet come out of the binary.
    const page = await fetch(`${inst.url}/dashboard/accounts`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.filter((a) => a.endsWith(".js")).length).toBe(1);
    expect(assets.filter((a) => a.endsWith(".css")).length).toBe(1);
    for (const a of assets) {
      const r = await fetch(`${inst.url}${a}`);
      expect(r.status).toBe(200);
      expect((await r.text()).length).toBeGreaterThan(a.endsWith(".js") ? 20_000 : 1_000);
    }
    await stopInstance(inst);
    expect(await inst.exited).toBe(0);
    expect(existsSync(join(data, "switchyard.db"))).toBe(true);
  }, 30_000);

  test("after the idle trim has dropped the executable's clean pages (Linux), serves JSON and streamed replies in two formats", async () => {
    if (process.platform !== "linux") return;
    const data = join(dir, "data-trim");
    // A trim 1.5 s after the last request (src/memory/idle-trim.ts; 30 s when not set).
    inst = await startInstance({
      cli: [bin],
      cwd: dir,
      dataDir: data,
      env: { FAKE_KEY: "fake-key-binary", SWITCHYARD_IDLE_TRIM_MS: "1500" },
      yaml: `
providers:
  - id: anth
    kind: anthropic
    base_url: "${fake.url}"
accounts:
  - { id: anth-1, provider: anth, api_key: "env:FAKE_KEY" }
`,
    });
    const pid = inst.proc.pid;
    // Resident kB of the executable's machine code (its r-xp mapping), from the process's smaps.
    const exe = readlinkSync(`/proc/${pid}/exe`);
    const codeKb = () => {
      let kb = 0;
      let inCode = false;
      for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
        const head = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
        if (head) inCode = head[1] === "r-xp" && head[2] === exe;
        else if (inCode && line.startsWith("Rss:")) kb += Number(/(\d+)/.exec(line)![1]);
      }
      return kb;
    };
    const ask = async (format: ClientFormat, stream: boolean) => {
      const body = { model: "anth/claude-bin", max_tokens: 20, stream, messages: [{ role: "user", content: "hi" }] };
      const res = await fetch(`${inst!.url}${format === "anthropic-messages" ? "/v1/messages" : "/v1/chat/completions"}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      return viewReply(format, res, body);
    };
    for (const stream of [false, true]) expect((await ask("anthropic-messages", stream)).status).toBe(200);
    // The requests' code is resident now; the trim (1.5 s later) gives most of it back.
    let most = codeKb();
    let least = most;
    for (let i = 0; i < 300 && least > most / 2; i++) {
      await Bun.sleep(100);
      const kb = codeKb();
      most = Math.max(most, kb);
      least = Math.min(least, kb);
    }
    expect(least).toBeLessThan(most / 2);
    // What a client gets after it: the same replies, whole, in both formats, JSON and stream.
    for (const format of ["anthropic-messages", "openai-chat"] as const) {
      for (const stream of [false, true]) {
        const v = await ask(format, stream);
        expect({ format, stream, status: v.status, text: v.text, error: v.error }).toEqual({ format, stream, status: 200, text: "Hello from the fake upstream.", error: undefined });
        expect(v.stopReason).toBe(format === "anthropic-messages" ? "end_turn" : "stop");
      }
    }
    await stopInstance(inst);
    expect(await inst.exited).toBe(0);
  }, 60_000);
});
