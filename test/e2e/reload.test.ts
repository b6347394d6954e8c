/**
 * Hot reload of a running `switchyard start` (SPEC 2.3): editing the config file takes effect without a
 * restart; an invalid file is rejected with a logged error while the old config keeps serving; SIGHUP
 * re-reads (and does not stop the process); a request in flight during a reload completes; a rejected
 * edit undone (the file exactly as in force again) is said in the log and on the event stream; a config
 * path that is a symlink follows edits of the file it points at.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dataDirInstances } from "../support/data-dir-instances.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { SOURCE_CLI, type Instance } from "../support/instance.ts";

let inst: Instance;

const BASE = (fake: string, extra = "") => `
providers:
  - id: oai
    kind: openai
    base_url: "${fake}/v1"
  - id: slow
    kind: anthropic
    base_url: "${fake}"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
  - { id: slow-1, provider: slow, api_key: "env:FAKE_KEY" }
${extra}`;

const instances = dataDirInstances("fake-key-reload", { yaml: BASE });
beforeAll(async () => {
  inst = await instances.start();
});

const chat = (model: string) =>
  fetch(`${inst.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });

const logs = () => inst.stdout.map((l) => JSON.parse(l) as Record<string, unknown>);
const reloads = () => logs().filter((l) => l.msg === "config reloaded").length;
const rejections = () => logs().filter((l) => l.level === "error" && String(l.msg).includes("rejected")).length;

/** Polls until `fn` is true or `ms` passed. */
async function until(fn: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await fn()) return true;
    await Bun.sleep(50);
  }
  return fn();
}

describe("hot reload", () => {
  test("adding an alias to the file works without a restart", async () => {
    const pid = inst.proc.pid;
    const before = await chat("fast");
    expect(before.status).not.toBe(200); // `fast` is guessed as openai/fast, which has no account
    await before.arrayBuffer();
    writeFileSync(inst.configPath, BASE(instances.fake.url, "aliases:\n  fast: oai/gpt-fast\n"));
    expect(await until(async () => (await chat("fast")).status === 200)).toBe(true);
    expect(instances.fake.requests.at(-1)!.model).toBe("gpt-fast");
    expect(reloads()).toBeGreaterThanOrEqual(1);
    // `switchyard reload` after the edit finds it in force: it says what the instance's own re-read changed, and when
    const read = reloads();
    const cli = Bun.spawnSync([...SOURCE_CLI, "reload", "--data-dir", inst.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir }, timeout: 20_000 });
    expect(await until(() => reloads() > read)).toBe(true); // its log line is in before the next test counts
    expect({ code: cli.exitCode, out: cli.stdout.toString().replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, "TIME") }).toEqual({
      code: 0,
      out: `reloaded ${inst.configPath}: nothing changed since the file was last read (at TIME: alias fast added)\n`,
    });
    expect(inst.proc.pid).toBe(pid);
    expect(inst.proc.exitCode).toBeNull();
  }, 30_000);

  test("an invalid file is rejected with a logged error naming the path; the old config still serves", async () => {
    const n = reloads();
    writeFileSync(inst.configPath, BASE(instances.fake.url, "aliases:\n  fast: oai/gpt-fast\n  broken: 42\nserver:\n  port: not-a-port\n"));
    expect(await until(() => logs().some((l) => l.level === "error" && String(l.msg).includes("rejected")))).toBe(true);
    const err = logs().find((l) => l.level === "error" && String(l.msg).includes("rejected"))!;
    expect(String(err.error)).toContain("server.port");
    expect(reloads()).toBe(n);
    const res = await chat("fast");
    expect(res.status).toBe(200);
    expect(instances.fake.requests.at(-1)!.model).toBe("gpt-fast");

    // YAML that does not even parse: the same.
    writeFileSync(inst.configPath, "providers: [\n  - nope: {\n");
    expect(await until(() => logs().filter((l) => l.level === "error").length >= 2)).toBe(true);
    expect((await chat("fast")).status).toBe(200);
    expect(inst.proc.exitCode).toBeNull();

    // A valid file again is picked up.
    writeFileSync(inst.configPath, BASE(instances.fake.url, "aliases:\n  fast: oai/gpt-faster\n"));
    expect(await until(async () => (await chat("fast")).status === 200 && instances.fake.requests.at(-1)!.model === "gpt-faster")).toBe(true);
  }, 30_000);

  test("SIGHUP re-reads the file and the process keeps running", async () => {
    const n = reloads();
    inst.kill("SIGHUP");
    expect(await until(() => reloads() > n)).toBe(true);
    expect(inst.proc.exitCode).toBeNull();
    expect((await chat("fast")).status).toBe(200);
  }, 30_000);

  test("a changed server.port waits for a restart, and the reload says so (it was listed among the changes as if in force): the admin API's restartNeeded, `switchyard reload`, one warning in the log", async () => {
    const port = Number(new URL(inst.url).port);
    const other = port === 65000 ? 65001 : 65000;
    // this instance was started with --port 0 (test/support/instance.ts), which wins over the file
    const message = `server.port is now ${other} in the file, but this instance was started with --port, which wins over the file; it listens on ${inst.url}`;
    const reload = () => Bun.spawnSync([...SOURCE_CLI, "reload", "--data-dir", inst.dataDir], { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: inst.dataDir }, timeout: 20_000 });
    writeFileSync(inst.configPath, BASE(instances.fake.url, `aliases:\n  fast: oai/gpt-faster\nserver:\n  port: ${other}\n`));
    const cli = reload();
    expect(cli.exitCode).toBe(0);
    const lines = cli.stdout.toString().trimEnd().split("\n");
    expect(lines[0]).toStartWith(`reloaded ${inst.configPath}: `);
    expect(lines.slice(1)).toEqual([`restart needed: ${message}`]);
    const answer = (await (await fetch(`${inst.url}/admin/api/config/reload`, { method: "POST" })).json()) as { restartNeeded: unknown };
    expect(answer.restartNeeded).toEqual([{ path: "server.port", message }]);
    // the re-read that changed it (the watcher's or the command's) warns once; every re-read lists it
    expect(await until(() => logs().some((l) => l.level === "warn" && l.path === "server.port"))).toBe(true);
    expect(logs().filter((l) => l.level === "warn" && l.path === "server.port").map((l) => l.msg)).toEqual([message]);
    expect(logs().filter((l) => l.msg === "config reloaded").at(-1)!.restartNeeded).toEqual(["server.port"]);
    // the port is as it was: nothing waits
    writeFileSync(inst.configPath, BASE(instances.fake.url, "aliases:\n  fast: oai/gpt-faster\n"));
    const back = reload();
    expect(back.stdout.toString().trimEnd().split("\n")).toHaveLength(1);
    expect(((await (await fetch(`${inst.url}/admin/api/config/reload`, { method: "POST" })).json()) as { restartNeeded: unknown }).restartNeeded).toEqual([]);
    expect((await chat("fast")).status).toBe(200);
  }, 30_000);

  test("a stream in flight during reloads (valid, invalid, and one removing its provider) completes", async () => {
    const text = "alpha beta gamma delta epsilon zeta eta theta";
    const sse = simpleReply("anthropic-messages", { text, model: "claude-slow" }, true).sse!;
    // The reply up to its first text (the gateway commits on it), then the rest, in six pieces, once
    // the three reloads are done (not over a fixed 6 × 250 ms): the stream is in flight during each of
    // them however slow the machine.
    const reloaded = Promise.withResolvers<void>();
    const first = sse.indexOf("\n\n", sse.indexOf("content_block_delta")) + 2;
    const rest = Array.from({ length: 5 }, (_, i) => first + Math.floor(((i + 1) * (sse.length - first)) / 6));
    instances.fake.enqueue({ sse, split_at: [first, ...rest], resume_after_first: reloaded.promise, delay_ms: 20 });
    const res = await fetch(`${inst.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ model: "slow/claude-slow", max_tokens: 50, stream: true, messages: [{ role: "user", content: "go" }] }),
    });
    expect(res.status).toBe(200);
    const body = res.text();
    const n = reloads();
    const rejected = rejections();
    writeFileSync(inst.configPath, BASE(instances.fake.url, "aliases:\n  fast: oai/gpt-x\n"));
    expect(await until(() => reloads() > n)).toBe(true);
    writeFileSync(inst.configPath, "server: [");
    expect(await until(() => rejections() > rejected)).toBe(true);
    // The provider serving the stream disappears from the config.
    writeFileSync(inst.configPath, `
providers:
  - id: oai
    kind: openai
    base_url: "${instances.fake.url}/v1"
accounts:
  - { id: oai-1, provider: oai, api_key: "env:FAKE_KEY" }
`);
    expect(await until(() => reloads() > n + 1)).toBe(true);
    reloaded.resolve();
    const got = await body;
    expect([...got.matchAll(/"text":"([^"]*)"/g)].map((m) => m[1]).join("")).toBe(text);
    expect(got).toContain("message_stop");
    // New requests see the new config: the removed provider is unknown now.
    const gone = await fetch(`${inst.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "slow/claude-slow", max_tokens: 5, messages: [{ role: "user", content: "x" }] }) });
    expect(gone.status).toBe(404);
    const calls = (await (await fetch(`${inst.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; outcome: string }> };
    expect(calls.calls.find((c) => c.requestId === res.headers.get("x-request-id"))).toMatchObject({ outcome: "ok" });
  }, 30_000);
  test("a rejected edit undone (the file put back exactly as it is in force) is logged and announced as config_reloaded without error (try19 D2: it was silent, and the dashboard kept saying rejected)", async () => {
    const stream = await fetch(`${inst.url}/admin/api/events?types=config_reloaded`, { headers: { accept: "text/event-stream" } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let sse = "";
    const pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        sse += new TextDecoder().decode(value);
      }
    })();
    const events = () => sse.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as { type: string; error?: string; changed: object });
    try {
      const running = readFileSync(inst.configPath, "utf8");
      const rejected = rejections();
      writeFileSync(inst.configPath, running.replace("accounts:", "accounts")); // the typo of try19's D2
      expect(await until(() => rejections() > rejected)).toBe(true);
      expect(await until(() => events().some((e) => e.error !== undefined))).toBe(true);
      const n = reloads();
      writeFileSync(inst.configPath, running); // the typo fixed
      const back = "config file matches the running config again; the rejected edit is gone";
      expect(await until(() => logs().some((l) => l.msg === back) && reloads() > n)).toBe(true);
      expect(logs().find((l) => l.msg === back)).toMatchObject({ level: "info", path: inst.configPath });
      expect(await until(() => events().at(-1)?.error === undefined)).toBe(true);
      expect(events().at(-1)).toMatchObject({ type: "config_reloaded", changed: {} });
      expect((await chat("oai/gpt-x")).status).toBe(200); // the running config still serves
    } finally {
      await reader.cancel();
      await pump.catch(() => {});
    }
  }, 30_000);
  test("a config file that is a symlink to a file in another folder: editing that file is picked up (try19 D8: only the link's folder was watched)", async () => {
    const dotfiles = mkdtempSync(join(tmpdir(), "switchyard-dotfiles-"));
    try {
      const target = join(dotfiles, "config.yaml");
      const running = readFileSync(inst.configPath, "utf8");
      // the config path becomes a link to the file in the other folder (with an alias more, so that the
      // gateway's re-read of the swapped link is seen before the target is edited)
      writeFileSync(target, running.replace("accounts:", "aliases:\n  viaSwap: oai/gpt-swap\naccounts:"));
      symlinkSync(target, `${inst.configPath}.link`);
      renameSync(`${inst.configPath}.link`, inst.configPath);
      expect(await until(async () => (await chat("viaSwap")).status === 200)).toBe(true);
      const before = await chat("viaLink");
      expect(before.status).not.toBe(200);
      await before.arrayBuffer();
      writeFileSync(target, running.replace("accounts:", "aliases:\n  viaSwap: oai/gpt-swap\n  viaLink: oai/gpt-link\naccounts:"));
      expect(await until(async () => (await chat("viaLink")).status === 200)).toBe(true);
      expect(instances.fake.requests.at(-1)!.model).toBe("gpt-link");
    } finally {
      // the instance keeps a regular file (afterAll removes the data dir)
      writeFileSync(`${inst.configPath}.tmp`, readFileSync(inst.configPath, "utf8"));
      renameSync(`${inst.configPath}.tmp`, inst.configPath);
      rmSync(dotfiles, { recursive: true, force: true });
    }
  }, 30_000);
});
